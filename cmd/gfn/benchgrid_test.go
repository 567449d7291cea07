package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gfn bench grid runs its jobs as gfn processes, so this test builds the
// binary and runs a quick table on a tiny grid end to end.
func TestBenchGridQuickSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gfn and runs six trainings")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "gfn")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "bench")
	cmd := exec.Command(bin, "bench", "grid", "--table", "tb", "--quick", "--grids", "d2H8", "--jobs", "2", "--out", out)
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench grid: %v\n%s", err, stdout)
	}
	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"tb", "eps", "gafn", "prt", "per", "teacher"} {
		if !strings.Contains(string(md), "| "+m+" | 1 |") {
			t.Errorf("results.md lacks a row for %s:\n%s", m, md)
		}
	}
	for _, f := range []string{"results.csv", "figures/d2-H8-modes.png", "figures/d2-H8-l1.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	// Resumable: a second run trains nothing.
	cmd = exec.Command(bin, "bench", "grid", "--table", "tb", "--quick", "--grids", "d2H8", "--out", out)
	errOut, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(errOut), "6 already done") {
		t.Errorf("second run: %v\n%s", err, errOut)
	}
}
