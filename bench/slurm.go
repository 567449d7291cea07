package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gfngo/gfn/safefile"
)

// SlurmTask is one run of a table as a task of a Slurm array job. The
// task list is computed again, in the same order, when each array task
// starts, and Next decides then what the run's directory calls for, so
// that submitting the same array twice finishes what the first left.
type SlurmTask struct {
	Name string // the run, like "tfbind8 tb seed 0"
	Dir  string // the run's directory
	// Args are the gfn arguments of a fresh start (for the task list).
	Args []string
	// Next says what the run's directory calls for and the gfn arguments
	// that do it: nil for a finished run. It may finish the run itself
	// (the alpha table copies the main table's identical run) and say
	// RunDone.
	Next func() (RunStatus, []string, error)
}

// Files of a Slurm array job in SlurmArray.Dir.
const (
	SlurmScript = "gfn-bench.sbatch" // the batch script
	SlurmList   = "tasks.tsv"        // the runs, one per array task
	SlurmLogs   = "logs"             // the tasks' Slurm output, <job id>_<task>.out
)

// SlurmArray is a table's runs as a Slurm array job: one array task per
// run, each running `Bin Args... --slurm-task $SLURM_ARRAY_TASK_ID`,
// which computes the table's runs again and does the one of that index
// (RunTask). Slurm does the scheduling; gfn only writes the script.
type SlurmArray struct {
	Name string   // the table, like "bench grid tb"; the job is named after it
	Dir  string   // absolute directory of the script, the task list and the logs
	Bin  string   // absolute path of the gfn binary the tasks run
	Args []string // gfn arguments that select the table, with an absolute --out
	// CPUs is each task's --cpus-per-task (0: 1) and its GOMAXPROCS.
	CPUs int
	// MaxRunning is the most tasks that run at once (0: as many as
	// Slurm allows).
	MaxRunning int
	// Options are further sbatch options, like --time=2:00:00 or
	// --partition=cpu, each written as an #SBATCH line.
	Options []string
}

// JobName is the Slurm job name: Name with dashes for spaces.
func (a SlurmArray) JobName() string {
	return "gfn-" + strings.Join(strings.Fields(a.Name), "-")
}

func (a SlurmArray) cpus() int { return max(a.CPUs, 1) }

// Script returns the batch script of an array of n tasks.
func (a SlurmArray) Script(n int) string {
	var b strings.Builder
	array := fmt.Sprintf("0-%d", n-1)
	if a.MaxRunning > 0 {
		array += "%" + strconv.Itoa(a.MaxRunning)
	}
	fmt.Fprintf(&b, "#!/bin/sh\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", a.JobName())
	fmt.Fprintf(&b, "#SBATCH --array=%s\n", array)
	fmt.Fprintf(&b, "#SBATCH --ntasks=1\n")
	fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n", a.cpus())
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(a.Dir, SlurmLogs, "%A_%a.out"))
	for _, o := range a.Options {
		fmt.Fprintf(&b, "#SBATCH %s\n", o)
	}
	collect := append(append([]string{a.Bin}, a.Args...), "--collect-only")
	fmt.Fprintf(&b, `
# Written by gfn %s --slurm: one array task per run of the table, %d runs
# (listed in %s). Each task computes the table's runs again and does the
# one of its index as the run's directory calls for: a finished run
# (summary.json) is skipped, an interrupted one resumed from its checkpoint,
# any other started afresh. Submitting this script again thus finishes the
# runs a first submission left (cancelled, failed or out of time). The
# runs' own logs go to the table's logs directory.
#
# Submit:
#   sbatch %s
# Aggregate the finished runs:
#   %s

export GOMAXPROCS="${SLURM_CPUS_PER_TASK:-%d}"
exec %s --slurm-task "$SLURM_ARRAY_TASK_ID"
`, a.Name, n, SlurmList, ShellQuote(filepath.Join(a.Dir, SlurmScript)), ShellJoin(collect), a.cpus(),
		ShellJoin(append([]string{a.Bin}, a.Args...)))
	return b.String()
}

// Write writes the batch script and the task list of tasks to a.Dir and
// creates its logs directory (Slurm does not create the directory of a
// job's output, and a job whose output cannot be opened fails without a
// word).
func (a SlurmArray) Write(tasks []SlurmTask) error {
	if len(tasks) == 0 {
		return errors.New("bench: no runs to write a Slurm array of")
	}
	for _, p := range []string{a.Dir, a.Bin} {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("bench: Slurm array path %s is not absolute", p)
		}
	}
	// #SBATCH lines are split on white space, without quoting.
	if strings.ContainsAny(a.Dir, " \t\n\"'\\%") {
		return fmt.Errorf("bench: Slurm array directory %q has a space, quote, backslash or %%, which #SBATCH --output cannot hold", a.Dir)
	}
	if err := os.MkdirAll(filepath.Join(a.Dir, SlurmLogs), 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := safefile.Write(filepath.Join(a.Dir, SlurmList), func(w io.Writer) error {
		fmt.Fprintln(w, "task\trun\tdir\tfresh start")
		for i, t := range tasks {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", i, t.Name, t.Dir, ShellJoin(append([]string{a.Bin}, t.Args...)))
		}
		return nil
	}); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := safefile.WriteBytes(filepath.Join(a.Dir, SlurmScript), []byte(a.Script(len(tasks)))); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// RunTask does task i of the array: nothing if its run has finished, else
// the gfn command its directory calls for (Next), with run. If a.Dir holds
// the task list written with the script, task i must be the run it names:
// a table changed since (another binary, other flags) is an error rather
// than a run of the wrong index.
func (a SlurmArray) RunTask(ctx context.Context, tasks []SlurmTask, i int, run Runner, log io.Writer) error {
	if i < 0 || i >= len(tasks) {
		return fmt.Errorf("bench: Slurm task %d is out of range: %s has %d runs (tasks 0 to %d)", i, a.Name, len(tasks), len(tasks)-1)
	}
	t := tasks[i]
	if dir, n, err := listedDir(filepath.Join(a.Dir, SlurmList), i); err != nil {
		return fmt.Errorf("bench: %w", err)
	} else if n >= 0 && (dir != t.Dir || n != len(tasks)) {
		return fmt.Errorf("bench: %s now has %d runs and task %d is %s, but %s lists %d with %s: the table changed since the script was written; write it again with --slurm",
			a.Name, len(tasks), i, t.Dir, filepath.Join(a.Dir, SlurmList), n, dir)
	}
	what := fmt.Sprintf("%s: task %d of %d, %s", a.Name, i, len(tasks), t.Name)
	st, args, err := t.Next()
	if err != nil {
		return fmt.Errorf("bench: %s: %w", what, err)
	}
	if st == RunDone {
		fmt.Fprintf(log, "%s: already done (%s)\n", what, t.Dir)
		return nil
	}
	if st == RunResume {
		what += " (resumed)"
	}
	fmt.Fprintf(log, "%s: %s\n", what, strings.Join(args, " "))
	start := time.Now()
	if err := run(ctx, args); err != nil {
		return fmt.Errorf("bench: %s: %w", what, err)
	}
	fmt.Fprintf(log, "%s: done in %s\n", what, time.Since(start).Round(time.Second))
	return nil
}

// listedDir returns the directory of task i in the task list at path and
// the number of tasks it lists; n is -1 if there is no list.
func listedDir(path string, i int) (dir string, n int, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", -1, nil
	}
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 0; sc.Scan(); line++ {
		if line == 0 {
			continue // header
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 4 || fields[0] != strconv.Itoa(n) {
			return "", 0, fmt.Errorf("bench: %s line %d is not task %d's: %q", path, line+1, n, sc.Text())
		}
		if n == i {
			dir = fields[2]
		}
		n++
	}
	return dir, n, sc.Err()
}

// ShellQuote quotes s for a POSIX shell: unchanged if it is made of
// letters, digits and -_./:=,+@%, else in single quotes.
func ShellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellJoin quotes each of args with ShellQuote and joins them with
// spaces: a command line a POSIX shell splits back into args.
func ShellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}
