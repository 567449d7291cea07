package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gfngo/gfn/bench"
)

// slurmFlags are the flags with which a bench command writes its table
// as a Slurm array job (--slurm) or does one task of it (--slurm-task).
type slurmFlags struct {
	write      *bool
	task       *int
	cpus, most *int
	sbatch     *string
}

func addSlurmFlags(fs *flag.FlagSet) *slurmFlags {
	return &slurmFlags{
		write:  fs.Bool("slurm", false, "run nothing: write the runs as a Slurm array job (one task per run, each resumable) to <table dir>/slurm and print the commands that submit and aggregate it"),
		task:   fs.Int("slurm-task", -1, "do only run i of the table, as its directory calls for (skip, resume or start), and aggregate nothing: what the --slurm script's task i runs"),
		cpus:   fs.Int("slurm-cpus", 1, "with --slurm: CPUs per task (sbatch --cpus-per-task), each run's GOMAXPROCS"),
		most:   fs.Int("slurm-max", 0, "with --slurm: most tasks running at once (0 = as many as Slurm allows)"),
		sbatch: fs.String("slurm-args", "", "with --slurm: further sbatch options, like \"--time=2:00:00 --mem=2G --partition=cpu\",\neach written as an #SBATCH line"),
	}
}

// check rejects the flags' bad values and combinations.
func (s *slurmFlags) check(fs *flag.FlagSet, collect bool) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case *s.cpus < 1 || *s.most < 0:
		return usagef("slurm-cpus %d must be >= 1 and slurm-max %d >= 0", *s.cpus, *s.most)
	case given["slurm-task"] && *s.task < 0:
		return usagef("slurm-task %d must be >= 0", *s.task)
	case *s.write && (collect || given["slurm-task"]):
		return usagef("--slurm writes a job script: it goes with neither --collect-only nor --slurm-task")
	case given["slurm-task"] && collect:
		return usagef("--slurm-task does one run: it does not go with --collect-only")
	case !*s.write && (given["slurm-cpus"] || given["slurm-max"] || given["slurm-args"]):
		return usagef("--slurm-cpus, --slurm-max and --slurm-args shape the job script of --slurm")
	}
	return nil
}

// active reports whether the command writes or does a Slurm array job.
func (s *slurmFlags) active() bool { return *s.write || *s.task >= 0 }

// slurmExecutable is the gfn binary the job script runs (tests replace
// it: under go test, os.Executable is the test binary).
var slurmExecutable = os.Executable

// slurmRunner runs a task's gfn command (tests replace it).
var slurmRunner = benchRunner

// tableArgs returns the gfn arguments that select the same table: the
// command, then every flag set on the command line except --out (given
// as out), --jobs, --collect-only and the --slurm flags.
func tableArgs(command []string, fs *flag.FlagSet, out string) []string {
	args := slices.Clone(command)
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "out" || f.Name == "jobs" || f.Name == "collect-only" || strings.HasPrefix(f.Name, "slurm") {
			return
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() && f.Value.String() == "true" {
			args = append(args, "--"+f.Name)
			return
		}
		args = append(args, "--"+f.Name+"="+f.Value.String())
	})
	return append(args, "--out="+out)
}

// doSlurm writes the array job of tasks (--slurm) into dir/slurm, where
// dir is the table's directory, or does task i of it (--slurm-task i).
// command and fs are the bench command and its parsed flags, out the
// absolute --out.
func (s *slurmFlags) do(ctx context.Context, name string, command []string, fs *flag.FlagSet, out, dir string, tasks []bench.SlurmTask, stdout, stderr io.Writer) error {
	a := bench.SlurmArray{Name: name, Dir: filepath.Join(dir, "slurm")}
	if !*s.write {
		run, err := slurmRunner(dir, 1)
		if err != nil {
			return err
		}
		return a.RunTask(ctx, tasks, *s.task, run, stderr)
	}
	bin, err := slurmExecutable()
	if err != nil {
		return fmt.Errorf("the job script needs the gfn binary's path: %w", err)
	}
	a.Bin, a.Args = bin, tableArgs(command, fs, out)
	a.CPUs, a.MaxRunning, a.Options = *s.cpus, *s.most, strings.Fields(*s.sbatch)
	if err := a.Write(tasks); err != nil {
		return err
	}
	if strings.Contains(bin, string(filepath.Separator)+"go-build") {
		fmt.Fprintf(stderr, "warning: the job script runs %s, which go run deletes when it exits: go build gfn and run that binary with --slurm\n", bin)
	}
	args := append([]string{bin}, a.Args...)
	fmt.Fprintf(stdout, "%s: %d runs as a Slurm array job in %s:\n", name, len(tasks), a.Dir)
	fmt.Fprintf(stdout, "  %-16s the job, tasks 0-%d, %d CPU(s) each; it runs %s\n", bench.SlurmScript, len(tasks)-1, max(*s.cpus, 1), bin)
	fmt.Fprintf(stdout, "  %-16s the run of each task and its fresh-start command\n", bench.SlurmList)
	fmt.Fprintf(stdout, "  %-16s the tasks' output, <job id>_<task>.out (the runs' own logs go to %s)\n", bench.SlurmLogs+"/", filepath.Join(dir, "logs"))
	fmt.Fprintf(stdout, "Submit it (again to finish runs that were cancelled, failed or ran out of time):\n  sbatch %s\n", bench.ShellQuote(filepath.Join(a.Dir, bench.SlurmScript)))
	fmt.Fprintf(stdout, "Aggregate the finished runs (results.csv, results.md, figures):\n  %s\n", bench.ShellJoin(append(args, "--collect-only")))
	return nil
}
