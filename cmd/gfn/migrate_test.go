package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gfnrun "github.com/gfngo/gfn/run"
)

// TestMigrate converts format-1 run directories of two families (the
// fixtures their packages' own migration tests resume bit for bit),
// leaves a converted one as it is, and then resumes the grid run.
func TestMigrate(t *testing.T) {
	var dirs []string
	for _, src := range []string{"../../train/testdata/legacy/db-prt", "../../diffusion/testdata/legacy/run"} {
		dir := t.TempDir()
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var legacy *gfnrun.LegacyError
		if _, err := gfnrun.Open(dir); !errors.As(err, &legacy) || !strings.Contains(err.Error(), "gfn migrate "+dir) {
			t.Fatalf("%s before migrating: %v, want the format-1 error naming gfn migrate", src, err)
		}
		dirs = append(dirs, dir)
	}
	out, _, err := runCLI(append([]string{"migrate"}, dirs...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"grid checkpoint converted", "diffusion checkpoint converted"} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	for _, dir := range dirs {
		if _, err := gfnrun.Open(dir); err != nil {
			t.Errorf("%s after migrating: %v", dir, err)
		}
	}
	if out, _, err := runCLI("migrate", dirs[0]); err != nil || !strings.Contains(out, "already in format 2") {
		t.Errorf("migrating again: %q, %v", out, err)
	}
	if _, _, err := runCLI("train", "--resume", dirs[0], "--quiet"); err != nil {
		t.Errorf("resuming the migrated grid run: %v", err)
	}
	if _, _, err := runCLI("migrate"); err == nil {
		t.Error("migrate without directories: no error")
	}
}
