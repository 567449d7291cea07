package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	gfnrun "github.com/gfngo/gfn/run"
)

// usageError marks errors in the command line: exit status 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

const topUsage = `gfn trains amortized samplers (GFlowNets) with an adaptive Teacher.

Usage:
  gfn <command> [flags]

Commands:
  train    train a Student (and Teacher) sampler and write metrics, figures and a checkpoint:
           --task hypergrid (default), 25gmm, manywell, tfbind8, qm9str, sehstr, rna, or your
           own reward program (--reward-cmd)
  sample   draw samples from a checkpoint's Student to CSV
  eval     evaluate a checkpoint's Student (exact, bound and distance metrics) as JSON
  reward   print the score and reward of sequences of a sequence-design task
  bench    the paper's tables and speed: gfn bench grid|diffusion|biochem|speed (resumable
           runs, --status, --slurm)
  migrate  convert run directories of an earlier gfn to this one's checkpoint format
  version  print gfn's version, the Go version and the source revision
  help     show this help, or "gfn help <command>" for a command's flags

Run "gfn <command> --help" for the flags of a command; "gfn train --task 25gmm --help"
for a family's.
`

// run is the whole program; main only maps its error to an exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return usagef("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "train":
		err := runTrain(ctx, rest, stdout, stderr)
		if hint := interruptedHint(err); hint != "" {
			fmt.Fprintln(stderr, hint)
		}
		if hint := flagFamilyHint(ctx, err, rest); hint != "" {
			return usagef("%v: %s", err, hint)
		}
		return err
	case "sample":
		return runSample(ctx, rest, stdout, stderr)
	case "eval":
		return runEval(ctx, rest, stdout, stderr)
	case "bench":
		return runBench(ctx, rest, stdout, stderr)
	case "reward":
		return runReward(rest, stdout)
	case "migrate":
		return runMigrate(rest, stdout)
	case "version", "--version", "-version":
		return runVersion(rest, stdout)
	case "help", "-h", "--help", "-help":
		if len(rest) > 0 {
			return run(ctx, []string{rest[0], "--help"}, stdout, stderr)
		}
		fmt.Fprint(stdout, topUsage)
		return nil
	default:
		fmt.Fprint(stderr, topUsage)
		return usagef("unknown command %q (allowed: train, sample, eval, reward, bench, migrate, version, help)", cmd)
	}
}

// parse parses flags; --help prints the usage to stdout and returns
// errHelp, which callers turn into success.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	var pos []string
	err := parseWithArgs(fs, args, stdout, func(a string) { pos = append(pos, a) })
	if err == nil && len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	return err
}

// parseWithArgs is parse for a command that also takes positional
// arguments, passed to onArg in order as the flags before them are set:
// flags may come before, between or after them (the flag package alone
// stops at the first argument); after "--" all are arguments.
func parseWithArgs(fs *flag.FlagSet, args []string, stdout io.Writer, onArg func(string)) error {
	fs.SetOutput(io.Discard)
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return errHelp
		}
		if err != nil {
			return usageError{err}
		}
		if fs.NArg() == 0 {
			return nil
		}
		if used := len(args) - fs.NArg(); used > 0 && args[used-1] == "--" {
			for _, a := range fs.Args() {
				onArg(a)
			}
			return nil
		}
		onArg(fs.Arg(0))
		args = fs.Args()[1:]
	}
}

var errHelp = errors.New("help shown")

func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: gfn %s [flags]\n\n%s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// intList is a flag holding comma-separated positive integers.
type intList []int

func (l *intList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a list of positive integers like 256,256", v)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

// resumeFlags are the flags that still apply to a resumed run of any
// family: where it goes, how it reports, and a reward program's command.
var resumeFlags = []string{"resume", "out", "quiet", "cpuprofile", "reward-cmd", "reward-timeout"}

// checkResumeFlags returns a usage error naming the flags given beside
// --resume that a resumed run would ignore (its settings come from its
// checkpoint); also are the family's further flags that still apply.
// A --task other than the checkpoint's task is refused too.
func checkResumeFlags(fs *flag.FlagSet, dir, task string, also ...string) error {
	var allowed []string
	for _, name := range append(slices.Clone(resumeFlags), also...) {
		if fs.Lookup(name) != nil {
			allowed = append(allowed, name)
		}
	}
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		switch {
		case f.Name == "task":
			if v := f.Value.String(); v != task {
				bad = append(bad, fmt.Sprintf("--task %s (the run in %s is %s)", v, dir, task))
			}
		case !slices.Contains(allowed, f.Name):
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(allowed)
	return usagef("%s: a resumed run keeps the settings of its checkpoint (allowed with --resume: --%s)",
		strings.Join(bad, ", "), strings.Join(allowed, ", --"))
}

// checkFreshOut refuses to start a run in dir when dir holds an unfinished
// one (a checkpoint without a summary): starting afresh would overwrite the
// work that gfn train --resume can continue. A finished run is replaced,
// as running the same command again reproduces it; its summary goes first,
// so that the new run counts as unfinished (to this check, to --resume and
// to gfn bench) until it writes its own.
func checkFreshOut(dir string) error {
	summary := filepath.Join(dir, gfnrun.SummaryFile)
	_, ckErr := os.Stat(filepath.Join(dir, gfnrun.CheckpointFile))
	_, sumErr := os.Stat(summary)
	if ckErr == nil && sumErr != nil {
		return usagef("--out %s holds an unfinished run (a checkpoint, no summary): continue it with gfn train --resume %s, or give another --out", dir, dir)
	}
	if err := os.Remove(summary); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("replacing the finished run in %s: %w", dir, err)
	}
	return nil
}

// checkpointPresent reports a --resume directory without a checkpoint
// (none there, or a finished run whose checkpoint was deleted).
func checkpointPresent(dir string) error {
	_, err := os.Stat(filepath.Join(dir, gfnrun.CheckpointFile))
	if !errors.Is(err, os.ErrNotExist) {
		return nil // present, or unreadable: the family's reader reports it
	}
	if _, err := os.Stat(filepath.Join(dir, gfnrun.SummaryFile)); err == nil {
		return usagef("--resume %s: the run there is finished (%s) and has no %s to continue from", dir, gfnrun.SummaryFile, gfnrun.CheckpointFile)
	}
	return usagef("--resume %s: no %s there to continue from", dir, gfnrun.CheckpointFile)
}

// resumeOut is the directory a run resumed from dir writes to: out if set,
// after checkFreshOut when it is another directory, else dir.
func resumeOut(dir, out string) (string, error) {
	if out == "" || filepath.Clean(out) == filepath.Clean(dir) {
		return dir, nil
	}
	return out, checkFreshOut(out)
}
