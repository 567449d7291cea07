package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gfngo/gfn/bench"
)

// fakeGFN makes the job scripts name /opt/gfn/bin/gfn instead of the
// test binary, and runs the tasks' gfn commands in this process.
func fakeGFN(t *testing.T) {
	exe, runner := slurmExecutable, slurmRunner
	t.Cleanup(func() { slurmExecutable, slurmRunner = exe, runner })
	slurmExecutable = func() (string, error) { return "/opt/gfn/bin/gfn", nil }
	slurmRunner = func(string, int) (bench.Runner, error) {
		return func(ctx context.Context, args []string) error {
			return run(ctx, args, io.Discard, io.Discard)
		}, nil
	}
}

// gfn bench grid --slurm writes the job script and task list of a quick
// table (golden, with the output directory as $OUT); --slurm-task i
// trains run i alone, and nothing once it has finished; --collect-only
// aggregates what the tasks finished.
func TestBenchGridSlurmGolden(t *testing.T) {
	fakeGFN(t)
	out := filepath.Join(t.TempDir(), "grid")
	table := []string{"bench", "grid", "--table", "tb", "--quick", "--grids", "d2H8", "--methods", "tb,teacher", "--out", out}
	stdout, stderr, err := runCLI(append(table, "--slurm", "--jobs", "7", "--slurm-max", "2", "--slurm-cpus", "2",
		"--slurm-args", "--time=0:10:00 --mem=1G")...)
	if err != nil {
		t.Fatal(err, stderr)
	}
	script, err := os.ReadFile(filepath.Join(out, "slurm", bench.SlurmScript))
	if err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile(filepath.Join(out, "slurm", bench.SlurmList))
	if err != nil {
		t.Fatal(err)
	}
	all := "$ gfn " + strings.Join(table, " ") + " --slurm ...\n" + stdout +
		"\n==> " + bench.SlurmScript + " <==\n" + string(script) + "\n==> " + bench.SlurmList + " <==\n" + string(list)
	golden(t, "bench-grid-slurm", strings.ReplaceAll(all, out, "$OUT"))

	task := append(table, "--slurm-task", "1")
	if _, stderr, err = runCLI(task...); err != nil {
		t.Fatal(err, stderr)
	}
	if !strings.Contains(stderr, "task 1 of 2, teacher d2 H8 seed 0: done in") {
		t.Errorf("task 1 log:\n%s", stderr)
	}
	for _, c := range []struct {
		run  string
		done bool
	}{{"tb-d2-H8-seed0", false}, {"teacher-d2-H8-seed0", true}} {
		if _, err := os.Stat(filepath.Join(out, c.run, "summary.json")); (err == nil) != c.done {
			t.Errorf("%s finished: %v, want %v", c.run, err == nil, c.done)
		}
	}
	if _, stderr, err = runCLI(task...); err != nil || !strings.Contains(stderr, "already done") {
		t.Errorf("task 1 again: %v\n%s", err, stderr)
	}
	if _, _, err = runCLI(append(table, "--slurm-task", "2")...); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("task 2 of 2: %v", err)
	}
	if _, stderr, err = runCLI(append(table, "--collect-only")...); err != nil {
		t.Fatal(err, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "results.csv"))
	if rows := strings.Split(strings.TrimSpace(string(b)), "\n"); err != nil || len(rows) != 2 || !strings.HasPrefix(rows[1], "tb,teacher,2,8,0,") {
		t.Errorf("results.csv after task 1: %v\n%s", err, b)
	}
}

// gfn bench biochem and bench diffusion --slurm write one task per run
// into their table's directory.
func TestBenchSlurmBiochemDiffusion(t *testing.T) {
	fakeGFN(t)
	root := t.TempDir()
	for _, c := range []struct {
		args []string
		dir  string
		runs int
	}{
		{[]string{"bench", "biochem", "--task", "tfbind8,rna", "--methods", "tb,teacher-per", "--seeds", "2", "--quick", "--out", root}, filepath.Join(root, "biochem"), 8},
		{[]string{"bench", "diffusion", "--table", "main", "--methods", "tb,teacher", "--quick", "--out", root}, filepath.Join(root, "main"), 4},
	} {
		stdout, stderr, err := runCLI(append(c.args, "--slurm")...)
		if err != nil {
			t.Fatal(err, stderr)
		}
		if want := "sbatch " + filepath.Join(c.dir, "slurm", bench.SlurmScript); !strings.Contains(stdout, want) {
			t.Errorf("%s: output lacks %q:\n%s", c.args[1], want, stdout)
		}
		script, _ := os.ReadFile(filepath.Join(c.dir, "slurm", bench.SlurmScript))
		list, _ := os.ReadFile(filepath.Join(c.dir, "slurm", bench.SlurmList))
		if !strings.Contains(string(script), "#SBATCH --array=0-"+string(rune('0'+c.runs-1))+"\n") ||
			strings.Count(string(list), "\n") != c.runs+1 || !strings.Contains(string(script), "--out="+root+" --slurm-task") {
			t.Errorf("%s:\n%s\n%s", c.args[1], script, list)
		}
	}
}

// Bad --slurm flags are usage errors before any work.
func TestBenchSlurmUsageErrors(t *testing.T) {
	fakeGFN(t)
	out := filepath.Join(t.TempDir(), "bench")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"grid", "--table", "tb", "--slurm", "--collect-only"}, "--slurm writes a job script"},
		{[]string{"grid", "--table", "tb", "--slurm", "--slurm-task", "0"}, "--slurm writes a job script"},
		{[]string{"diffusion", "--table", "main", "--slurm-task", "0", "--collect-only"}, "--slurm-task does one run"},
		{[]string{"biochem", "--slurm-task", "-1"}, "slurm-task -1 must be >= 0"},
		{[]string{"biochem", "--slurm", "--slurm-cpus", "0"}, "slurm-cpus 0 must be >= 1"},
		{[]string{"grid", "--table", "tb", "--slurm", "--slurm-max", "-1"}, "slurm-max -1 >= 0"},
		{[]string{"grid", "--table", "tb", "--slurm-args", "--time=1:00:00"}, "shape the job script of --slurm"},
	} {
		_, _, err := runCLI(append(append([]string{"bench"}, c.args...), "--out", out)...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want a usage error with %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a usage error created %s", out)
	}
}
