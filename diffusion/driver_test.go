package diffusion

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/run/runtest"
)

// conformanceConfig is a tiny Teacher run with every kind of state: both
// agents, the buffer drawn in passes (a pass spans two batches), local
// search, exploration.
func conformanceConfig(iters int) Config {
	c := smallConfig(MethodTeacher, iters)
	c.Steps, c.Batch = 4, 16
	c.BufferCap, c.BufferPasses = 40, true
	c.LocalSearch, c.LSEvery = true, 5
	c.LS.Steps, c.LS.BurnIn = 4, 2
	c.ExploreAll, c.ExploreDecay = true, 8
	return c
}

// tiny are small evaluations with a curve point every 4 iterations.
func tiny(opt run.Options) RunOptions {
	if opt.EvalEvery == 0 {
		opt.EvalEvery = 4
	}
	opt.NoFigures = true
	return RunOptions{Options: opt, Task: "25gmm", EvalSamples: 32, FinalSamples: 64}
}

// TestDriverConformance runs the driver's conformance suite on a short
// diffusion run: stop and resume, kill -9 and resume, cancel, extension
// and corrupt checkpoints.
func TestDriverConformance(t *testing.T) { conformance(t, "") }

// TestDriverConformanceFlows is the suite with a flow objective, whose
// checkpoints hold the flow network and its Adam state too (a test of its
// own: the suite's kill case reruns its top-level test in a child).
func TestDriverConformanceFlows(t *testing.T) { conformance(t, "fl-subtb") }

// conformance runs the suite with the Student's objective obj (a flow
// objective checkpoints its flow network too).
func conformance(t *testing.T, obj string) {
	const units = 12
	cfg := conformanceConfig(units)
	cfg.Objective = obj
	runtest.Check(t, runtest.Subject{
		Run: func(ctx context.Context, opt run.Options) error {
			_, err := Run(ctx, energy.GMM25{}, cfg, tiny(opt))
			return err
		},
		Resume: func(ctx context.Context, dir string, extra int, opt run.Options) error {
			o := RunOptions{Options: opt}
			if extra > 0 {
				st, err := ReadCheckpoint(dir)
				if err != nil {
					return err
				}
				o.Budget = st.Config.Iterations + extra
			}
			_, err := Resume(ctx, dir, energy.GMM25{}, o)
			return err
		},
		Units: units,
		Seed:  7,
	})
}

// cancelAt is a context cancelled from its n-th Err call on.
type cancelAt struct {
	context.Context
	n int
}

func (c *cancelAt) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestCancelCheckpoints: a cancelled run without periodic checkpoints
// writes one, says so with a *run.Interrupted naming the iteration and the
// directory, and resumes from it to the uninterrupted run's results.
func TestCancelCheckpoints(t *testing.T) {
	cfg := conformanceConfig(12)
	want, err := Run(context.Background(), energy.GMM25{}, cfg, tiny(run.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err = Run(&cancelAt{Context: context.Background(), n: 7}, energy.GMM25{}, cfg, tiny(run.Options{OutDir: dir}))
	e, ok := run.IsInterrupted(err)
	if !ok || !errors.Is(err, context.Canceled) || e.Done != 7 || e.Total != 12 || e.Dir != dir {
		t.Fatalf("cancelled run: %v, want *run.Interrupted at iteration 7 of 12 in %s", err, dir)
	}
	if !strings.Contains(err.Error(), "iteration 7 of 12") {
		t.Errorf("error %q does not say where the run stopped", err)
	}
	if st, err := ReadCheckpoint(dir); err != nil || st.Done != 7 {
		t.Fatalf("checkpoint at %d (%v), want 7", st.Done, err)
	}
	got, err := Resume(context.Background(), dir, energy.GMM25{}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hashTrainer(got.Trainer) != hashTrainer(want.Trainer) || got.Summary.ELBO != want.Summary.ELBO || got.Summary.Resumed != 1 {
		t.Errorf("resumed after the cancel: ELBO %v (resumed %d), want %v", got.Summary.ELBO, got.Summary.Resumed, want.Summary.ELBO)
	}
}

// TestExtendFinishedRun: Resume with a larger Budget continues a finished
// run: its curve keeps its points and continues, and the parameters are
// those of a run of the larger budget from the start (the final
// evaluation in between draws only from the evaluation streams).
func TestExtendFinishedRun(t *testing.T) {
	cfg := smallConfig(MethodPER, 60)
	cfg.BufferPasses = true
	long := cfg
	long.Iterations = 120
	want, err := Run(context.Background(), energy.GMM25{}, long, quick)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := quick
	o.OutDir = dir
	first, err := Run(context.Background(), energy.GMM25{}, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(context.Background(), dir, energy.GMM25{}, RunOptions{Budget: 30}); err == nil || !strings.Contains(err.Error(), "below") {
		t.Errorf("a smaller budget: error %v, want a refusal", err)
	}
	if _, err := Resume(context.Background(), dir, energy.GMM25{}, RunOptions{}); !errors.Is(err, run.ErrFinished) {
		t.Errorf("resuming the finished run as it is: error %v, want run.ErrFinished", err)
	}
	got, err := Resume(context.Background(), dir, energy.GMM25{}, RunOptions{Budget: 120})
	if err != nil {
		t.Fatal(err)
	}
	if hashTrainer(got.Trainer) != hashTrainer(want.Trainer) || got.Summary.Steps != 120 || got.Summary.RewardCalls != want.Summary.RewardCalls {
		t.Errorf("extended run: %d steps, %d reward calls; want the parameters and counters of a run of 120 (%d)", got.Summary.Steps, got.Summary.RewardCalls, want.Summary.RewardCalls)
	}
	steps := got.Curve.Column("step")
	if len(steps) != 3 || steps[2] != 100 || got.Curve.Value(1, "elbo") != first.Curve.Value(1, "elbo") {
		t.Errorf("extended curve at %v, want the finished run's points 0, 50 and then 100", steps)
	}
	if st, err := ReadCheckpoint(dir); err != nil || st.Config.Iterations != 120 || st.Done != 120 {
		t.Errorf("checkpoint after the extension: %d of %d (%v), want 120 of 120", st.Done, st.Config.Iterations, err)
	}
}

// TestExtendKeepsMilestones: an extension resolves the milestones counted
// from the end against the run's old length: the learning rate stays as
// it was, and milestones a run never reached are dropped.
func TestExtendKeepsMilestones(t *testing.T) {
	cfg := smallConfig(MethodTB, 20)
	cfg.Milestones = []int{-5000, -10}
	dir := t.TempDir()
	o := quick
	o.OutDir = dir
	if _, err := Run(context.Background(), energy.GMM25{}, cfg, o); err != nil {
		t.Fatal(err)
	}
	got, err := Resume(context.Background(), dir, energy.GMM25{}, RunOptions{Budget: 30})
	if err != nil {
		t.Fatal(err)
	}
	if ms := got.Trainer.cfg.Milestones; len(ms) != 1 || ms[0] != 9 || got.Trainer.cfg.lrScale(29) != cfg.Gamma {
		t.Errorf("milestones after extension %v, want [9]", ms)
	}
}

// TestRunFigures: a run with figures draws samples.png and curves.png
// after its outputs.
func TestRunFigures(t *testing.T) {
	dir := t.TempDir()
	o := quick
	o.OutDir, o.NoFigures = dir, false
	if _, err := Run(context.Background(), energy.GMM25{}, smallConfig(MethodTeacher, 60), o); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"samples.png", "curves.png", run.SummaryFile, run.MetricsFile, run.CheckpointFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
