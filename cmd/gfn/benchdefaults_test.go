package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Every bench command runs on its defaults: without --table, grid and
// diffusion take the paper's main table (collected here from an empty
// directory, so that nothing trains).
func TestBenchDefaultTables(t *testing.T) {
	for _, c := range []struct {
		cmd, want string
	}{
		{"grid", "bench grid tb: 0 of 120 runs finished"},
		{"diffusion", "main"},
		{"biochem", "biochem"},
	} {
		dir := t.TempDir()
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"bench", c.cmd, "--collect-only", "--out", dir}, &stdout, &stderr)
		if err != nil {
			t.Fatalf("gfn bench %s --collect-only: %v\n%s", c.cmd, err, stderr.String())
		}
		out := stdout.String() + stderr.String()
		if !strings.Contains(out, c.want) {
			t.Errorf("gfn bench %s without --table: output lacks %q:\n%s", c.cmd, c.want, out)
		}
		if c.cmd == "diffusion" && !strings.Contains(out, filepath.Join(dir, "main")) {
			t.Errorf("gfn bench diffusion without --table wrote elsewhere than %s:\n%s", filepath.Join(dir, "main"), out)
		}
	}
}

// bench biochem takes its tasks as --task or, as bench diffusion names
// it, --tasks.
func TestBenchBiochemTasksAlias(t *testing.T) {
	for _, flag := range []string{"--task", "--tasks"} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"bench", "biochem", flag, "chess", "--collect-only", "--out", t.TempDir()}, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), `task "chess" is unknown`) {
			t.Errorf("bench biochem %s chess: %v", flag, err)
		}
	}
}
