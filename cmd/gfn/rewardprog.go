package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gfngo/gfn/rewardcmd"
	gfnrun "github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/task"
	"github.com/gfngo/gfn/train"
)

// A gfn train --reward-cmd run scores its objects with the user's program
// (package rewardcmd). The trainers are the usual ones (seq.go,
// diffusion.go, train.go), given a userReward: it adds the program's
// flags, starts the program once the flags are checked, supplies the task,
// energy or grid, and explains a failure.

// rewardFile records a run's program and task shape in its directory, so
// that gfn train --resume restarts the program.
const rewardFile = "reward.json"

// rewardRecord is rewardFile.
type rewardRecord struct {
	Protocol       string  `json:"protocol"`
	Version        int     `json:"version"`
	Command        string  `json:"command"`
	TimeoutSeconds float64 `json:"timeout_seconds"`
	rewardcmd.Shape
}

// The tasks of reward programs, by --task.
var rewardTasks = map[string]rewardcmd.Kind{"seq": rewardcmd.Sequence, "points": rewardcmd.Points, "hypergrid": rewardcmd.Grid}

// wantsRewardCmd reports whether a gfn train command line runs a reward
// program: --reward-cmd, --task seq|points, or --resume of such a run.
func wantsRewardCmd(args []string) bool {
	if flagValue(args, "reward-cmd") != "" {
		return true
	}
	if t := flagValue(args, "task"); t == "seq" || t == "points" {
		return true
	}
	if r := flagValue(args, "resume"); r != "" {
		_, err := readRewardRecord(r)
		return err == nil
	}
	return false
}

// readRewardRecord reads dir's rewardFile or, for a grid run without one,
// the program recorded in the checkpoint's environment spec.
func readRewardRecord(dir string) (rewardRecord, error) {
	var rec rewardRecord
	b, err := os.ReadFile(filepath.Join(dir, rewardFile))
	if err == nil {
		if err := json.Unmarshal(b, &rec); err != nil {
			return rec, fmt.Errorf("%s in %s: %w", rewardFile, dir, err)
		}
		return rec, nil
	}
	cc, cerr := train.ReadCheckpoint(dir)
	var spec task.Spec
	if cerr != nil || json.Unmarshal(cc.Env, &spec) != nil || spec.RewardCmd == "" {
		return rec, fmt.Errorf("%s has no reward program: %w", dir, err)
	}
	return rewardRecord{Protocol: rewardcmd.Protocol, Version: rewardcmd.Version, Command: spec.RewardCmd,
		Shape: rewardcmd.Shape{Kind: rewardcmd.Grid, Dim: spec.Dim, Side: spec.Side}}, nil
}

// newUserReward is the reward program of a gfn train command line: the
// one recorded in --resume's run, or a new one of --task's kind.
func newUserReward(args []string, stdout, stderr io.Writer) (*userReward, error) {
	stderr = syncWriter(stderr) // the program's standard error comes from another goroutine
	u := &userReward{stdout: stdout, stderr: stderr}
	if r := flagValue(args, "resume"); r != "" {
		rec, err := readRewardRecord(r)
		if err != nil {
			return nil, usageError{err}
		}
		u.rec, u.resume = rec, r
		return u, nil
	}
	t := flagValue(args, "task")
	if t == "" {
		t = "hypergrid"
	}
	k, ok := rewardTasks[t]
	if !ok {
		return nil, usagef("--reward-cmd: task %q cannot take a reward program (allowed: seq, points, hypergrid)", t)
	}
	u.rec.Kind = k
	return u, nil
}

// userReward is the reward program of a gfn train run; a nil *userReward
// is a built-in task's run.
type userReward struct {
	rec            rewardRecord
	resume         string // the run directory resumed, if any
	stdout, stderr io.Writer
	client         *rewardcmd.Client

	// Flags.
	command  string
	timeout  time.Duration
	alphabet string
	length   int
	dim      int
	figures  bool
}

// addFlags registers the program's flags (the grid has --dim and --side
// already).
func (u *userReward) addFlags(fs *flag.FlagSet) {
	if u == nil {
		return
	}
	fs.StringVar(&u.command, "reward-cmd", "", `the reward program: a command run with sh -c that speaks the gfn-reward protocol on its standard input and output (see README, "Rewards from any language"); with --resume, a new command replaces the recorded one`)
	fs.DurationVar(&u.timeout, "reward-timeout", rewardcmd.DefaultTimeout, "longest wait for the program's answer to a batch (and to the handshake); with --resume, the recorded one unless given")
	switch u.rec.Kind {
	case rewardcmd.Sequence:
		fs.StringVar(&u.alphabet, "alphabet", "ACGT", "the tokens, one character each (ACGT), or comma-separated (A,C,G,T)")
		fs.IntVar(&u.length, "length", 8, "tokens per sequence")
	case rewardcmd.Points:
		fs.IntVar(&u.dim, "dim", 2, "dimension d of the points")
		fs.BoolVar(&u.figures, "figures", false, "draw samples.png and curves.png at the end (for d = 2 the density behind the samples costs 40,000 batches of one point)")
	}
}

// synopsis is the --help text of the kind's trainer.
func (u *userReward) synopsis() string {
	switch u.rec.Kind {
	case rewardcmd.Sequence:
		return "Train a GFlowNet sampler of sequences of --length tokens over --alphabet, scored by the --reward-cmd\nprogram, with an adaptive Teacher and PER by default (the TFbind8 settings of the reference code).\nEvaluations score --eval-samples Student samples with the program every --eval-every rounds.\nWrites metrics.csv, summary.json, checkpoint.safetensors + config.json, reward.json and curves.png\nto --out."
	case rewardcmd.Points:
		return "Train a diffusion sampler (a GFlowNet over R^d) of the density exp(log R) that the --reward-cmd\nprogram computes, with an adaptive Teacher by default; defaults are the paper preset's on 25gmm.\nWithout the program's gradient, pis, smc, ggns and --ls are not available. Writes metrics.csv,\nsummary.json, checkpoint.safetensors + config.json and reward.json to --out (and with --figures,\nsamples.png and curves.png)."
	}
	return ""
}

// checkFlags resolves the command, timeout and shape from the flags and,
// on --resume, the record; errors are usage errors.
func (u *userReward) checkFlags(fs *flag.FlagSet) error {
	if u == nil {
		return nil
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if u.resume == "" || u.command != "" {
		u.rec.Command = u.command
	}
	if u.resume == "" || set["reward-timeout"] || u.rec.TimeoutSeconds == 0 {
		u.rec.TimeoutSeconds = u.timeout.Seconds()
	}
	if strings.TrimSpace(u.rec.Command) == "" {
		return usagef("--reward-cmd is required: the command of the program that computes the rewards")
	}
	if u.rec.TimeoutSeconds <= 0 {
		return usagef("--reward-timeout %v must be positive", u.timeout)
	}
	if u.resume == "" {
		switch u.rec.Kind {
		case rewardcmd.Sequence:
			u.rec.Alphabet, u.rec.Length = splitAlphabet(u.alphabet), u.length
		case rewardcmd.Points:
			u.rec.Dim = u.dim
		}
	}
	u.rec.Protocol, u.rec.Version = rewardcmd.Protocol, rewardcmd.Version
	if err := u.rec.Shape.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// splitAlphabet reads --alphabet: comma-separated tokens, or one token
// per character.
func splitAlphabet(s string) []string {
	if strings.Contains(s, ",") {
		return strings.Split(s, ",")
	}
	out := make([]string, 0, utf8.RuneCountInString(s))
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

// start starts the program (the handshake) and records it in dir. The
// caller defers close.
func (u *userReward) start(ctx context.Context, dir string) error {
	if u == nil {
		return nil
	}
	if err := safefile.CheckDir(dir); err != nil {
		return usageError{err}
	}
	opt := u.rec.options(u.stderr)
	c, err := rewardcmd.Start(ctx, u.rec.Command, u.rec.Shape, opt)
	if err != nil {
		return err
	}
	u.client = c
	b, _ := json.MarshalIndent(u.rec, "", "  ")
	if err := safefile.WriteBytes(filepath.Join(dir, rewardFile), append(b, '\n')); err != nil {
		c.Close()
		return err
	}
	fmt.Fprintf(u.stdout, "gfn train: reward program %q (%s, protocol %s %d, timeout %v per batch)\n",
		u.rec.Command, u.rec.Shape, rewardcmd.Protocol, rewardcmd.Version, opt.Timeout)
	return nil
}

// options are the client options of the record's program: its timeout
// (the default if the record has none, as a grid checkpoint's spec does
// not) and where the program's standard error goes.
func (r rewardRecord) options(stderr io.Writer) rewardcmd.Options {
	opt := rewardcmd.Options{Timeout: time.Duration(r.TimeoutSeconds * float64(time.Second)), Stderr: stderr}
	if opt.Timeout <= 0 {
		opt.Timeout = rewardcmd.DefaultTimeout
	}
	return opt
}

// close ends the program; a program that does not end cleanly gets a note.
func (u *userReward) close() {
	if u == nil || u.client == nil {
		return
	}
	if err := u.client.Close(); err != nil {
		fmt.Fprintf(u.stderr, "gfn: note: %v\n", err)
	}
}

// failed explains the error err that stopped a run writing into dir: what
// the program did, where the last checkpoint is and how to continue. A
// nil u returns err as it is.
func (u *userReward) failed(err error, dir string) error {
	if u == nil || err == nil || u.client == nil {
		return err
	}
	perr := u.client.Err()
	var re *rewardcmd.Error
	if !errors.As(perr, &re) {
		return err
	}
	if !errors.As(err, &re) {
		// The trainer saw NaN where the program failed (energy.Energy).
		err = fmt.Errorf("%v\n  (training stopped: %v)", perr, err)
	}
	at, unit := -1, "iteration"
	if ck, e := gfnrun.Open(dir); e == nil {
		at, unit = ck.Header.Done, ck.Header.Unit
	}
	if at < 0 {
		return fmt.Errorf("%w\n  there is no checkpoint in %s to resume from (--checkpoint-every sets how often one is written): start again once the program is fixed", err, dir)
	}
	return fmt.Errorf("%w\n  once the program is fixed, gfn train --resume %s continues from %s %d (--reward-cmd CMD gives a new command)", err, dir, unit, at)
}

// userSeqTask is the sequence task of a reward program: its shape comes
// from the flags, its rewards from the program once started.
type userSeqTask struct{ u *userReward }

func (t userSeqTask) Name() string       { return "seq" }
func (t userSeqTask) Length() int        { return t.u.rec.Length }
func (t userSeqTask) Alphabet() []string { return append([]string(nil), t.u.rec.Alphabet...) }
func (t userSeqTask) LogReward(xs []int32, n int, out []float64) error {
	return t.u.client.Sequences(xs, n, out)
}

// syncWriter makes w safe for the program's standard error and the
// progress bar to share (a file is already).
func syncWriter(w io.Writer) io.Writer {
	if _, ok := w.(*os.File); ok {
		return w
	}
	return &lockedWriter{w: w}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// flagGiven reports whether the command line set the flag.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
