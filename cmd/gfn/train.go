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
	"strings"
	"time"

	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/progress"
	gfnrun "github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
)

// trainCmd is one gfn train command line: what it asks for, the flags
// every family shares, and the hooks the family's setup adds.
type trainCmd struct {
	fs             *flag.FlagSet
	ck             *gfnrun.Header // the resumed run's checkpoint header
	fam            *family
	args           []string
	task           string // the task (on --resume, the run's)
	resume         string // the run directory --resume continues, or ""
	u              *userReward
	stdout, stderr io.Writer

	// The shared flags, their defaults set by the family's setup.
	out, cpuprofile    string
	quiet, tensorboard bool
	evalEvery, ckEvery int

	// Set by the family's setup.
	synopsis string
	outName  string   // the default output directory under runs/, as --help shows it
	unit     string   // "iteration" or "round"
	budget   string   // the flag that extends a resumed run
	also     []string // further flags a resumed run takes
	// check validates a new run's settings and returns its default output
	// directory under runs/.
	check func() (name string, err error)
	// header describes a new run once its reward program (if any) runs.
	header func() string
	// start trains a new run; resumed continues the run in from (whose
	// checkpoint the setup has read) to the --budget flag's value if
	// given (0: its own). Both return the run's summary.
	start   func(ctx context.Context, opt gfnrun.Options) (any, error)
	resumed func(ctx context.Context, from string, opt gfnrun.Options) (any, error)
	// stored describes a resumed run: "25gmm, method teacher, seed 0";
	// budgetNow is its budget, in the budget flag's terms.
	stored    string
	budgetNow int
	// prec is the run's --precision (nil: the family has none).
	prec *nn.Precision
	// summary prints the family's lines of a finished run's summary.
	summary func(w io.Writer, s any)
	// explain adds a family's advice to the error that stopped a run
	// writing into dir (nil: none).
	explain func(err error, dir string) error
}

// runTrain runs gfn train: it finds the family (from a reward program,
// --resume's checkpoint or --task), lets it define its flags, and starts
// or resumes the run.
func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := &trainCmd{args: args, task: flagValue(args, "task"), resume: flagValue(args, "resume"), stdout: stdout, stderr: stderr}
	var f *family
	resumed := func() (err error) {
		f, c.ck, err = familyOfRun(c.resume)
		return err
	}
	switch {
	case wantsRewardCmd(args):
		u, err := newUserReward(args, stdout, stderr)
		if err != nil {
			return err
		}
		c.u, c.stderr, f = u, u.stderr, familyOfProgram(u.rec.Kind)
		if c.resume != "" {
			if err := resumed(); err != nil {
				return err
			}
		}
		if c.task == "" && f == gridFamily {
			c.task = "hypergrid"
		}
	case c.resume != "":
		if err := resumed(); err != nil {
			return err
		}
	case c.task == "":
		c.task, f = "hypergrid", gridFamily
	default:
		if f = familyOfTask(c.task); f == nil {
			return usagef("task %q is unknown (allowed: %s)", c.task, allTasks())
		}
	}
	if f == diffusionFamily && c.u == nil {
		switch flagValue(args, "method") {
		case "smc":
			return runTrainSMC(ctx, args, stdout, stderr)
		case "ggns":
			return runTrainGGNS(ctx, args, stdout, stderr)
		}
	}
	c.fs, c.fam = flag.NewFlagSet("train", flag.ContinueOnError), f
	c.u.addFlags(c.fs)
	c.evalEvery, c.ckEvery = -1, -1
	if err := f.setup(c); err != nil {
		return err
	}
	c.fs.Usage = func() {
		fmt.Fprintf(c.fs.Output(), "Usage: gfn train [flags]\n\n%s\n\nFlags:\n", c.synopsis)
		c.fs.PrintDefaults()
	}
	c.fs.StringVar(&c.out, "out", "", "output directory (default runs/"+c.outName+")")
	c.fs.String("resume", "", "continue the run checkpointed in this directory (its settings come from the checkpoint); with --"+c.budget+", a larger budget extends it, a finished run included")
	c.fs.BoolVar(&c.quiet, "quiet", false, "no progress bar")
	c.fs.BoolVar(&c.tensorboard, "tensorboard", false, "also write the curve as a TensorBoard event file (events.out.tfevents.*) into the output directory, a point at a time (tensorboard --logdir); a resumed run keeps it")
	c.fs.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of the run to this file (for go tool pprof)")
	c.fs.IntVar(&c.ckEvery, "checkpoint-every", c.ckEvery, c.unit+"s between the checkpoints that --resume continues (0 = at the end, on Ctrl-C and on failures only); with --resume, the run's own unless given")
	if err := parse(c.fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if c.ckEvery < 0 || c.evalEvery < 0 {
		return usagef("checkpoint-every %d and eval-every %d must be >= 0", c.ckEvery, c.evalEvery)
	}
	if c.resume != "" {
		return c.resumeRun(ctx)
	}
	return c.freshRun(ctx)
}

// options are the driver's options from the shared flags.
func (c *trainCmd) options(dir string) gfnrun.Options {
	opt := gfnrun.Options{OutDir: dir, EvalEvery: c.evalEvery, CheckpointEvery: c.ckEvery, TensorBoard: c.tensorboard}
	if !c.quiet {
		opt.Progress, opt.ProgressTTY = c.stderr, progress.IsTerminal(c.stderr)
	}
	return opt
}

// freshRun starts a new run.
func (c *trainCmd) freshRun(ctx context.Context) error {
	name, err := c.check()
	if err != nil {
		return err
	}
	if err := c.checkPrecision(); err != nil {
		return err
	}
	if err := c.u.checkFlags(c.fs); err != nil {
		return err
	}
	dir := c.out
	if dir == "" {
		dir = filepath.Join("runs", name)
	}
	if err := safefile.CheckDir(dir); err != nil {
		return usageError{err}
	}
	if err := checkFreshOut(dir); err != nil {
		return err
	}
	if err := c.u.start(ctx, dir); err != nil {
		return err
	}
	defer c.u.close()
	fmt.Fprintln(c.stdout, "gfn train: "+c.header()+c.precisionHeader())
	return c.finish(dir, func() (any, error) { return c.start(ctx, c.options(dir)) })
}

// resumeRun continues the run in c.resume.
func (c *trainCmd) resumeRun(ctx context.Context) error {
	if err := checkResumeFlags(c.fs, c.resume, c.task, append([]string{c.budget, "checkpoint-every"}, c.also...)...); err != nil {
		return err
	}
	if err := c.u.checkFlags(c.fs); err != nil {
		return err
	}
	dir, err := resumeOut(c.resume, c.out)
	if err != nil {
		return err
	}
	ck := c.ck
	if ck == nil { // the family's reader accepted a checkpoint Open did not
		return usagef("%s: the checkpoint has no header to resume from", c.resume)
	}
	if err := c.u.start(ctx, dir); err != nil {
		return err
	}
	defer c.u.close()
	at := fmt.Sprintf("%s %d of %d", c.unit, ck.Done, ck.Total)
	if flagGiven(c.fs, c.budget) {
		at += fmt.Sprintf("; extending to --%s %s", c.budget, c.fs.Lookup(c.budget).Value)
	}
	fmt.Fprintf(c.stdout, "gfn train: resuming %s (%s) at %s\n", c.resume, c.stored, at)
	opt := c.options(dir)
	opt.EvalEvery = 0 // a resumed run keeps its own cadence
	if !flagGiven(c.fs, "checkpoint-every") {
		opt.CheckpointEvery = 0 // and its own checkpoint interval
	}
	return c.finish(dir, func() (any, error) {
		s, err := c.resumed(ctx, c.resume, opt)
		if errors.Is(err, gfnrun.ErrFinished) {
			err = fmt.Errorf("%w\n  gfn train --resume %s --%s N (N > %d) extends it", err, c.resume, c.budget, c.budgetNow)
		}
		return s, err
	})
}

// finish runs train (under --cpuprofile), explains its failure or prints
// the summary.
func (c *trainCmd) finish(dir string, train func() (any, error)) error {
	stop, err := startCPUProfile(c.cpuprofile)
	if err != nil {
		return err
	}
	defer stop()
	s, err := train()
	if err != nil {
		err = c.u.failed(err, dir)
		if c.explain != nil {
			err = c.explain(err, dir)
		}
		return err
	}
	c.summary(c.stdout, s)
	printRunSummary(c.stdout, s, dir)
	return nil
}

// printRunSummary prints the summary lines every family shares: times,
// memory and the files written.
func printRunSummary(w io.Writer, s any, dir string) {
	b := s.(gfnrun.Baser).Base()
	d := func(sec float64) string { return progress.Duration(time.Duration(sec * float64(time.Second))) }
	kernels := b.Kernel + " kernels"
	if b.Precision != "" {
		kernels += fmt.Sprintf(", %s hidden-layer products on %s", b.Precision, b.BF16Kernel)
	}
	fmt.Fprintf(w, "  wall %s (training %s, %.3g ms/%s, %.3g early, %.3g late; evaluation %s; %s)\n",
		d(b.WallSeconds), d(b.TrainSeconds), b.MsPerStepMean, b.Unit, b.MsPerStepEarly, b.MsPerStepLate, d(b.EvalSeconds), kernels)
	files := []string{gfnrun.MetricsFile, gfnrun.SummaryFile, gfnrun.CheckpointFile, gfnrun.ConfigFile}
	if _, err := os.Stat(filepath.Join(dir, rewardFile)); err == nil {
		files = append(files, rewardFile)
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	for _, p := range pngs {
		files = append(files, filepath.Base(p))
	}
	fmt.Fprintf(w, "  wrote %s: %s\n", dir, strings.Join(files, ", "))
}

// addTaskFlag defines --task with the family's tasks in its help.
func (c *trainCmd) addTaskFlag(help string) {
	if c.u != nil {
		c.fs.String("task", c.task, help)
		return
	}
	var others []string
	for _, g := range families {
		if g != c.fam {
			others = append(others, strings.Join(g.tasks, "|"))
		}
	}
	c.fs.String("task", c.task, help+" (other families: gfn train --task "+strings.Join(others, " or ")+" --help; a reward program's: seq, points, hypergrid, gfn train --reward-cmd CMD --task seq --help)")
}

// resumeFlags are the flags that still apply to a resumed run of any
// family: where it goes, how it reports, and a reward program's command.
var resumeFlags = []string{"resume", "out", "quiet", "cpuprofile", "tensorboard", "reward-cmd", "reward-timeout"}

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
	const give = "give the output directory of a gfn train run"
	if _, err := os.Stat(dir); err != nil {
		return usagef("%s: no such directory; %s", dir, give)
	}
	_, err := os.Stat(filepath.Join(dir, gfnrun.CheckpointFile))
	if !errors.Is(err, os.ErrNotExist) {
		return nil // present, or unreadable: the reader reports it
	}
	if _, err := os.Stat(filepath.Join(dir, gfnrun.SummaryFile)); err == nil {
		return usagef("%s: the run there is finished (%s) and has no %s to continue from", dir, gfnrun.SummaryFile, gfnrun.CheckpointFile)
	}
	return usagef("%s: no %s there; %s", dir, gfnrun.CheckpointFile, give)
}

// resumeOut is the directory a run resumed from dir writes to: out if set,
// after checkFreshOut when it is another directory, else dir.
func resumeOut(dir, out string) (string, error) {
	if out == "" || filepath.Clean(out) == filepath.Clean(dir) {
		return dir, nil
	}
	return out, checkFreshOut(out)
}
