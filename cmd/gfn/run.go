package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
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
  bench    the paper's tables and speed: gfn bench grid|diffusion|biochem|objectives|speed (resumable
           runs, --status, --slurm)
  view     a live dashboard of the runs under directories in the web browser: curves
           overlaid, states, figures, summaries, bench tables (gfn view runs)
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
	case "view":
		return runView(ctx, rest, stdout)
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
		return usagef("unknown command %q (allowed: train, sample, eval, reward, bench, view, migrate, version, help)", cmd)
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
