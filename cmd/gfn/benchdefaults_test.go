package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
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

// --status lists a table's runs and runs nothing.
func TestBenchStatus(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"grid", "--table", "multi", "--seeds", "1"}, "bench grid multi (%s): 9 runs, 0 finished (0.0s of wall time), 0 with a checkpoint (interrupted or running), 9 not started"},
		{[]string{"diffusion", "--seeds", "1"}, "bench diffusion main (%s/main): 16 runs, 0 finished"},
		{[]string{"biochem", "--seeds", "1"}, "bench biochem (%s/biochem): 24 runs, 0 finished"},
	} {
		dir := t.TempDir()
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"bench"}, c.args...), "--status", "--out", dir)
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("gfn %v: %v\n%s", args, err, stderr.String())
		}
		if want := fmt.Sprintf(c.want, dir); !strings.HasPrefix(stdout.String(), want) || !strings.Contains(stdout.String(), "seed 0  not started") {
			t.Errorf("gfn %v:\n%s\nwant it to start with %q", args, stdout.String(), want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			t.Errorf("gfn %v wrote %d entries into %s", args, len(ents), dir)
		}
	}
}

// A --quick table lists, runs and collects one seed in its own default
// directory, apart from the full table's runs.
func TestBenchQuickStatus(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		cmd, want string
	}{
		{"grid", "bench grid tb (runs/bench-grid-tb-quick): 24 runs, 0 finished"},
		{"diffusion", "bench diffusion main (runs/bench-diffusion-quick/main): 16 runs, 0 finished"},
		{"biochem", "bench biochem (runs/bench-biochem-quick/biochem): 24 runs, 0 finished"},
		{"objectives", "bench objectives (runs/bench-objectives-quick/objectives): "},
	} {
		var stdout, stderr bytes.Buffer
		args := []string{"bench", c.cmd, "--quick", "--status"}
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("gfn %v: %v\n%s", args, err, stderr.String())
		}
		if !strings.HasPrefix(stdout.String(), c.want) || strings.Contains(stdout.String(), "seed 1 ") {
			t.Errorf("gfn %v:\n%s\nwant it to start with %q and list seed 0 only", args, stdout.String(), c.want)
		}
	}
	// An --out on the command line is kept as given.
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"bench", "grid", "--quick", "--status", "--out", "mine"}, &stdout, &stderr); err != nil || !strings.HasPrefix(stdout.String(), "bench grid tb (mine): 24 runs") {
		t.Errorf("gfn bench grid --quick --status --out mine: %v\n%s", err, stdout.String())
	}
}
