package diffusion

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/timenet"
)

// smallConfig is a quick 25GMM configuration: a narrow network, short
// trajectories, small batches.
func smallConfig(m Method, iters int) Config {
	c, _ := Preset("reference", "25gmm")
	c.Method = m
	c.Net = timenet.Config{Hidden: 32}
	c.Steps, c.Batch, c.Iterations = 10, 64, iters
	c.Sigma2 = 5
	c.BufferCap = 2000
	c.Milestones = nil
	c.Seed = 3
	c.Student.LR = 1e-2
	return c
}

var quick = RunOptions{Options: run.Options{EvalEvery: 50, NoFigures: true}, EvalSamples: 250, FinalSamples: 500}

// TestStudentImproves: every method raises the ELBO of 25GMM within a few
// hundred small iterations, and the outputs are consistent.
func TestStudentImproves(t *testing.T) {
	for _, m := range Methods {
		res, err := Run(context.Background(), energy.GMM25{}, smallConfig(m, 300), quick)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		c := res.Curve
		n := c.Len() - 1
		t.Logf("%s: ELBO %.3f -> %.3f, EUBO %.3f -> %.3f, W2 %.2f -> %.2f, final ELBO %.3f EUBO %.3f W2 %.2f logZ %.3f",
			m, c.Value(0, "elbo"), c.Value(n, "elbo"), c.Value(0, "eubo"), c.Value(n, "eubo"), c.Value(0, "w2"), c.Value(n, "w2"),
			res.Summary.ELBO, *res.Summary.EUBO, *res.Summary.W2, res.Summary.LogZ)
		if !(c.Value(n, "elbo") > c.Value(0, "elbo")+0.5) {
			t.Errorf("%s: ELBO %.3f -> %.3f, want an increase of at least 0.5 nat", m, c.Value(0, "elbo"), c.Value(n, "elbo"))
		}
		if !(res.Summary.ELBO <= res.Summary.ELBOIS+1e-9) || !(res.Summary.ELBOIS <= *res.Summary.EUBO+0.5) {
			t.Errorf("%s: ELBO %.3f, ELBO-IS %.3f, EUBO %.3f out of order", m, res.Summary.ELBO, res.Summary.ELBOIS, *res.Summary.EUBO)
		}
		if c.Len() != 6 || c.Value(1, "step") != 50 || res.Summary.Steps != 300 {
			t.Errorf("%s: %d curve points (step %v), %d steps", m, c.Len(), c.Value(1, "step"), res.Summary.Steps)
		}
		if tl := c.Value(n, "teacher_loss"); (m == MethodTeacher) != (res.Teacher != nil) || math.IsNaN(tl) != (m != MethodTeacher) {
			t.Errorf("%s: Teacher samples %v, Teacher loss %v", m, res.Teacher != nil, tl)
		}
	}
}

// TestResumeIsBitIdentical: a run stopped after a periodic checkpoint and
// resumed ends with the same parameters, metrics and samples as one never
// interrupted, for every method (Teacher and buffer included).
func TestResumeIsBitIdentical(t *testing.T) {
	// Small buffers with passes: evictions within a pass, and the
	// checkpoint at 80 falls mid-pass (⌊200/64⌋ = 3 batches a pass).
	passes := func(m Method) Config {
		c := smallConfig(m, 120)
		c.BufferCap, c.BufferPasses = 200, true
		return c
	}
	// Local search every 30 iterations: searches before and after the
	// checkpoint at 80, whose chains' step size adapts within a search.
	ls := func(m Method) Config {
		c := smallConfig(m, 120)
		c.LocalSearch, c.LSEvery = true, 30
		c.LS.Steps, c.LS.BurnIn = 20, 10
		return c
	}
	for _, cfg := range []Config{smallConfig(MethodTeacher, 120), smallConfig(MethodPER, 120), smallConfig(MethodEps, 120),
		smallConfig(MethodPIS, 120), passes(MethodTeacher), passes(MethodPER), ls(MethodPER), ls(MethodTeacher)} {
		m := cfg.Method
		if cfg.BufferPasses {
			m += "+passes"
		}
		if cfg.LocalSearch {
			m += "+ls"
		}
		o := quick
		want, full, part := interruptedRun(t, cfg, o, 40, 80)
		got, err := Resume(context.Background(), part, energy.GMM25{}, o)
		if err != nil {
			t.Fatal(err)
		}
		if hashTrainer(got.Trainer) != hashTrainer(want.Trainer) {
			t.Errorf("%s: parameters differ after resuming", m)
		}
		if got.Summary.ELBO != want.Summary.ELBO || *got.Summary.W2 != *want.Summary.W2 || got.Summary.RewardCalls != want.Summary.RewardCalls {
			t.Errorf("%s: summary %+v, want %+v", m, got.Summary, want.Summary)
		}
		if a, b := curveCSV(t, full), curveCSV(t, part); a != b {
			t.Errorf("%s: metrics.csv differs:\n%s\nvs\n%s", m, a, b)
		}
		if got.Summary.Resumed != 1 {
			t.Errorf("%s: resumed %d times, want 1", m, got.Summary.Resumed)
		}
		if _, err := Resume(context.Background(), full, energy.GMM25{}, o); err == nil || !strings.Contains(err.Error(), "finished") {
			t.Errorf("%s: resuming a finished run: %v", m, err)
		}
	}
}

// interruptedRun runs cfg to the end in full and again in part, stopped
// right after its checkpoint at iteration at (checkpoints every ck
// iterations), as a kill would; it returns the full run's result.
func interruptedRun(t *testing.T, cfg Config, o RunOptions, ck, at int) (want *Result, full, part string) {
	t.Helper()
	full, part = t.TempDir(), t.TempDir()
	o.OutDir, o.CheckpointEvery = full, ck
	want, err := Run(context.Background(), energy.GMM25{}, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	o.OutDir = part
	stop := errors.New("killed")
	o.AfterCheckpoint = func(step int) error {
		if step == at {
			return stop
		}
		return nil
	}
	if _, err := Run(context.Background(), energy.GMM25{}, cfg, o); !errors.Is(err, stop) {
		t.Fatalf("%s: interrupted run: %v", cfg.Method, err)
	}
	return want, full, part
}

// readStep is the iteration and configuration of the checkpoint in dir.
func readStep(dir string) (int, Config, error) {
	st, err := ReadCheckpoint(dir)
	return st.Done, st.Config, err
}

// curveCSV is metrics.csv without its wall-clock column.
func curveCSV(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.LastIndexByte(line, ','); i >= 0 {
			line = line[:i]
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// TestLocalSearchFillsBuffer: PER + LS adds the MALA chains' accepted
// states after burn-in to the buffer on local-search iterations, and skips
// the batch there (the reference's if/else).
func TestLocalSearchFillsBuffer(t *testing.T) {
	for _, m := range []Method{MethodPER, MethodTeacher} {
		t.Run(string(m), func(t *testing.T) { testLocalSearchFillsBuffer(t, m) })
	}
}

// testLocalSearchFillsBuffer: with local search (PER + LS, Teacher + LS
// of the appendix), every Student slot at a multiple of LSEvery adds the
// chains' accepted states to the buffer and pays their reward calls.
func testLocalSearchFillsBuffer(t *testing.T, m Method) {
	cfg := smallConfig(m, 30)
	cfg.LocalSearch, cfg.LSEvery = true, 10
	cfg.LS.Steps, cfg.LS.BurnIn = 20, 10
	cfg.BufferCap = 100000
	tr, err := New(energy.GMM25{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	searches := 0
	for !tr.Done() {
		before := tr.buffer.Len()
		calls := tr.RewardCalls
		it, err := tr.Iterate()
		if err != nil {
			t.Fatal(err)
		}
		if tr.buffer.Len()-before != it.Stored {
			t.Fatalf("iteration %d: buffer grew by %d, reported %d", tr.Step-1, tr.buffer.Len()-before, it.Stored)
		}
		step := tr.Step - 1
		if step%10 == 0 && it.Role == 'S' {
			// 64 chains × 10 reported steps at some acceptance: far more than a batch.
			if it.Stored <= cfg.Batch || tr.RewardCalls-calls < cfg.Batch*20 {
				t.Errorf("iteration %d: local search stored %d states with %d reward calls", step, it.Stored, tr.RewardCalls-calls)
			}
			searches++
		}
	}
	if searches != 3 {
		t.Errorf("%d local searches in 30 iterations, want 3 (at 0, 10, 20)", searches)
	}
	tr.buffer.Each(func(_ uint64, x []float32, logR, p float64) {
		if math.IsNaN(logR) || math.IsInf(logR, 0) {
			t.Fatalf("buffer entry %v with log R %v", x, logR)
		}
	})
}

// nanEnergy is 25GMM whose 20th call returns NaN for its row 5.
type nanEnergy struct {
	energy.GMM25
	calls *int
}

func (e nanEnergy) LogReward(x []float32, out []float64) error {
	if err := e.GMM25.LogReward(x, out); err != nil {
		return err
	}
	if *e.calls++; *e.calls == 20 {
		out[5] = math.NaN()
	}
	return nil
}

// TestNonFiniteEnergyStops: a NaN log-reward stops the run with an error
// naming the iteration and the sample, after writing a checkpoint.
func TestNonFiniteEnergyStops(t *testing.T) {
	cfg := smallConfig(MethodTB, 200)
	dir := t.TempDir()
	o := quick
	o.OutDir = dir
	_, err := Run(context.Background(), nanEnergy{calls: new(int)}, cfg, o)
	var nf *NonFiniteError
	if !errors.As(err, &nf) || !math.IsNaN(nf.LogR) || nf.Row != 5 || len(nf.X) != 2 {
		t.Fatalf("error %v, want a NonFiniteError for sample 5", err)
	}
	for _, want := range []string{"iteration", "sample", "NaN", "checkpoint"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if step, _, err := readStep(dir); err != nil || step != nf.Iteration {
		t.Errorf("checkpoint at step %d (%v), want %d", step, err, nf.Iteration)
	}
}

// TestRecordedPassIsExact: training on the recorded sampling pass ends
// with the same parameters, bit for bit, as recomputing the forward pass.
func TestRecordedPassIsExact(t *testing.T) {
	for _, m := range []Method{MethodTB, MethodTeacher} {
		var hashes [2]string
		for i, noRecord := range []bool{false, true} {
			tr, err := New(energy.GMM25{}, smallConfig(m, 12))
			if err != nil {
				t.Fatal(err)
			}
			tr.noRecord = noRecord
			if _, ok := tr.Student.Model.(Recorder); !ok {
				t.Fatal("the Student's network cannot record")
			}
			// Count the Student steps that find a recorded pass to reuse:
			// every Student slot's when recording, none otherwise.
			reused, slots := 0, 0
			delta := tr.update.Delta
			tr.update.Delta = func() float64 {
				if tr.Student.sampler.Recorded != nil {
					reused++
				}
				return delta()
			}
			for !tr.Done() {
				it, err := tr.Iterate()
				if err != nil {
					t.Fatal(err)
				}
				if it.Role == teacher.Student {
					slots++
				}
			}
			if want := map[bool]int{false: slots, true: 0}[noRecord]; reused != want || slots == 0 {
				t.Errorf("%s, recording %v: %d of %d Student steps reused the sampling pass, want %d", m, !noRecord, reused, slots, want)
			}
			hashes[i] = hashTrainer(tr)
		}
		if hashes[0] != hashes[1] {
			t.Errorf("%s: recorded %s, recomputed %s", m, hashes[0], hashes[1])
		}
	}
}

// TestPresetsValidForEveryMethod: both presets on both tasks give a valid
// configuration for every method (the paper's 3:1:2 cycle only for the
// Teacher).
func TestPresetsValidForEveryMethod(t *testing.T) {
	for _, p := range Presets {
		for _, task := range PresetTasks[p] {
			for _, m := range Methods {
				c, err := Preset(p, task)
				if err != nil {
					t.Fatal(err)
				}
				c.Method = m
				if err := c.Validate(); err != nil {
					t.Errorf("%s %s %s: %v", p, task, m, err)
				}
				if want := map[bool]int{true: 1, false: 0}[m == MethodTeacher]; c.schedule().Count('T') != want {
					t.Errorf("%s %s %s: schedule %q", p, task, m, c.schedule())
				}
			}
		}
	}
}

// TestRedraw: the figures can be drawn again from a finished run's
// checkpoint.
func TestRedraw(t *testing.T) {
	dir := t.TempDir()
	o := quick
	o.OutDir, o.NoFigures = dir, true
	if _, err := Run(context.Background(), energy.GMM25{}, smallConfig(MethodTeacher, 60), o); err != nil {
		t.Fatal(err)
	}
	if err := Redraw(dir, energy.GMM25{}, 500, 1); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"samples.png", "curves.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// failingEnergy is 25GMM whose 20th call fails (a reward program that
// died, say).
type failingEnergy struct {
	energy.GMM25
	calls *int
}

func (e failingEnergy) LogReward(x []float32, out []float64) error {
	if *e.calls++; *e.calls == 20 {
		return errors.New("reward server down")
	}
	return e.GMM25.LogReward(x, out)
}

// TestFailingEnergyStopsWithCheckpoint: an energy error stops the run
// naming the iteration, after a checkpoint that Resume continues.
func TestFailingEnergyStopsWithCheckpoint(t *testing.T) {
	cfg := smallConfig(MethodTB, 60)
	dir := t.TempDir()
	o := quick
	o.OutDir = dir
	calls := new(int)
	_, err := Run(context.Background(), failingEnergy{calls: calls}, cfg, o)
	var re *RewardError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "reward server down") || !strings.Contains(err.Error(), "checkpoint") {
		t.Fatalf("error %v, want a RewardError after a checkpoint", err)
	}
	if step, _, err := readStep(dir); err != nil || step != re.Iteration {
		t.Errorf("checkpoint at step %d (%v), want %d", step, err, re.Iteration)
	}
	if _, err := Resume(context.Background(), dir, failingEnergy{calls: calls}, RunOptions{}); err != nil {
		t.Fatalf("resume with the fixed energy: %v", err)
	}
}

// evalFailEnergy is 25GMM whose LogReward fails at its failAt-th call on
// size rows (the evaluation's size, not training's), counting those calls.
type evalFailEnergy struct {
	energy.GMM25
	size, failAt int
	calls        *int
}

func (e evalFailEnergy) LogReward(x []float32, out []float64) error {
	if len(out) == e.size {
		if *e.calls++; *e.calls == e.failAt {
			return errors.New("reward server down")
		}
	}
	return e.GMM25.LogReward(x, out)
}

// TestFailedEvaluationIsRedone: an energy failing in the periodic
// evaluation after iteration 50 stops the run after a checkpoint, and the
// resume does that evaluation first: the run ends with the same metrics
// rows and bits as one never interrupted.
func TestFailedEvaluationIsRedone(t *testing.T) {
	cfg := smallConfig(MethodTB, 120)
	o := quick
	count := new(int)
	full := t.TempDir()
	o.OutDir = full
	want, err := Run(context.Background(), evalFailEnergy{size: o.EvalSamples, calls: count}, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if want.Curve.Len() != 3 || *count%3 != 0 {
		t.Fatalf("%d curve points, %d evaluation calls: want 3 evaluations of as many calls each", want.Curve.Len(), *count)
	}
	perEval := *count / 3
	dir := t.TempDir()
	o.OutDir = dir
	*count = 0
	_, err = Run(context.Background(), evalFailEnergy{size: o.EvalSamples, failAt: perEval + 1, calls: count}, cfg, o)
	var re *RewardError
	if !errors.As(err, &re) || re.Iteration != -1 || !strings.Contains(err.Error(), "evaluation after iteration 50") || !strings.Contains(err.Error(), "checkpoint") {
		t.Fatalf("error %v, want an evaluation RewardError after iteration 50, checkpointed", err)
	}
	*count = 0
	got, err := Resume(context.Background(), dir, evalFailEnergy{size: o.EvalSamples, calls: count}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hashTrainer(got.Trainer) != hashTrainer(want.Trainer) || got.Summary.ELBO != want.Summary.ELBO {
		t.Errorf("resumed run ends with other parameters or ELBO (%v, want %v)", got.Summary.ELBO, want.Summary.ELBO)
	}
	if a, b := curveCSV(t, full), curveCSV(t, dir); a != b {
		t.Errorf("metrics.csv differs:\n%s\nvs\n%s", a, b)
	}
}

// TestUnusableOutDirBeforeTraining: an output directory that cannot be
// made is reported before the first iteration, not at the first
// checkpoint after work was done.
func TestUnusableOutDirBeforeTraining(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	o := quick
	o.OutDir, o.CheckpointEvery = filepath.Join(file, "run"), 1
	// New probes the energy (its dimension, before any work); training
	// would call it more.
	var probe, calls countingEnergy
	if _, err := New(&probe, smallConfig(MethodTB, 5)); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), &calls, smallConfig(MethodTB, 5), o)
	if err == nil || !strings.Contains(err.Error(), "not usable") || calls.n != probe.n {
		t.Errorf("err %v after %d energy calls, want 'not usable' after New's %d", err, calls.n, probe.n)
	}
}

// countingEnergy is 25GMM counting its log-density calls.
type countingEnergy struct {
	energy.GMM25
	n int
}

func (c *countingEnergy) LogReward(x []float32, out []float64) error {
	c.n++
	return c.GMM25.LogReward(x, out)
}

// poisonDrift sets the last layer's bias of net to +Inf: every drift
// output is +Inf, as a policy that has diverged far from the data.
func poisonDrift(t *testing.T, net timenet.Net) {
	t.Helper()
	ps := net.Params()
	b := ps[len(ps)-1]
	if len(b.Shape) != 1 {
		t.Fatalf("last parameter %s has shape %v, want a bias", b.Name, b.Shape)
	}
	for i := range b.Value {
		b.Value[i] = float32(math.Inf(1))
	}
}

// TestOverflowStopsWithCheckpoint: a Teacher whose drift overflows stops
// the run with an OverflowError naming the Teacher (not a NaN blamed on
// the energy), after a checkpoint; Resume with ResumeDriftClip continues
// it to the end with finite samples and records the bound.
func TestOverflowStopsWithCheckpoint(t *testing.T) {
	cfg := smallConfig(MethodTeacher, 12)
	// Iteration 0 (S) fills the buffer; the Teacher, poisoned after it,
	// samples at iteration 1 (T) before any update of its own could turn
	// the Inf into NaN parameters. Without weight decay, clipped outputs
	// (zero gradient) keep the bias at Inf after the resume.
	cfg.Schedule = "ST"
	cfg.Student.WeightDecay, cfg.Teacher.WeightDecay = 0, 0
	tr, err := New(energy.GMM25{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Iterate(); err != nil {
		t.Fatal(err)
	}
	poisonDrift(t, tr.Teacher.Model)
	dir := t.TempDir()
	o := quick
	o.OutDir = dir
	_, err = drive(context.Background(), tr, o)
	var oe *OverflowError
	if !errors.As(err, &oe) || oe.Sampler != "Teacher" || !strings.Contains(err.Error(), "drift clip") || !strings.Contains(err.Error(), "checkpoint") {
		t.Fatalf("error %v, want a Teacher OverflowError after a checkpoint", err)
	}
	if !math.IsInf(float64(oe.X[0]), 0) && !math.IsNaN(float64(oe.X[0])) {
		t.Errorf("reported sample %v is finite", oe.X)
	}
	step, c, err := readStep(dir)
	if err != nil || step != oe.Iteration || c.DriftClip != 0 {
		t.Fatalf("checkpoint at step %d with drift clip %v (%v), want step %d, no clip", step, c.DriftClip, err, oe.Iteration)
	}
	if _, err := Resume(context.Background(), dir, energy.GMM25{}, RunOptions{ResumeDriftClip: -1}); err == nil || !strings.Contains(err.Error(), "-1") {
		t.Errorf("resume drift clip -1: error %v, want one naming the value", err)
	}
	res, err := Resume(context.Background(), dir, energy.GMM25{}, RunOptions{ResumeDriftClip: 1e4})
	if err != nil {
		t.Fatalf("resume with a drift clip: %v", err)
	}
	if res.Trainer.Step != cfg.Iterations || res.Trainer.Proc.Clip != 1e4 {
		t.Errorf("resumed run ended at %d with clip %v, want %d, 1e4", res.Trainer.Step, res.Trainer.Proc.Clip, cfg.Iterations)
	}
	for _, v := range res.Teacher {
		// |x_T| ≤ Σ dt·|u| + noise = 10⁴ + a few σ.
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || math.Abs(float64(v)) > 1e4+100 {
			t.Fatalf("clipped Teacher sample %v outside ±(1e4+100)", v)
		}
	}
	if _, c, _ := readStep(dir); c.DriftClip != 1e4 {
		t.Errorf("final checkpoint drift clip %v, want 1e4", c.DriftClip)
	}
}

// TestOverflowInEvaluation: an evaluation of an overflowing Student names
// the evaluation and the Student.
func TestOverflowInEvaluation(t *testing.T) {
	tr, err := New(energy.GMM25{}, smallConfig(MethodTB, 5))
	if err != nil {
		t.Fatal(err)
	}
	poisonDrift(t, tr.Student.Model)
	var ev Evaluator
	_, _, err = ev.Evaluate(tr.Energy, tr.Proc, tr.Student, 50, nil, rand.New(rand.NewPCG(1, 2)))
	var oe *OverflowError
	if !errors.As(err, &oe) || oe.Iteration != -1 || !strings.HasPrefix(err.Error(), "diffusion: evaluation: the Student's sample 0") {
		t.Fatalf("error %v, want an evaluation OverflowError of the Student's sample 0", err)
	}
}

// TestNaNDriftUnderClip: with the drift bounded, a non-finite sample can
// only come from NaN outputs, and the error says that a clip does not
// help instead of advising one.
func TestNaNDriftUnderClip(t *testing.T) {
	cfg := smallConfig(MethodTB, 5)
	cfg.DriftClip = 1e4
	tr, err := New(energy.GMM25{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps := tr.Student.Model.Params()
	for i := range ps[len(ps)-1].Value {
		ps[len(ps)-1].Value[i] = float32(math.NaN())
	}
	var ev Evaluator
	_, _, err = ev.Evaluate(tr.Energy, tr.Proc, tr.Student, 50, nil, rand.New(rand.NewPCG(1, 2)))
	var oe *OverflowError
	if !errors.As(err, &oe) || oe.Clip != 1e4 || !strings.Contains(err.Error(), "does not stop") || strings.Contains(err.Error(), "--drift-clip") {
		t.Fatalf("error %v, want a NaN OverflowError under the clip 1e4 without the clip advice", err)
	}
}

// TestPaperPresetBoundsDrift: the paper preset bounds the drift of every
// method to gfn-diffusion's ±10⁴; the reference preset leaves it free.
func TestPaperPresetBoundsDrift(t *testing.T) {
	for _, task := range []string{"25gmm", "manywell"} {
		for _, m := range []Method{MethodTB, MethodTeacher, MethodPIS} {
			c, err := PresetFor("paper", task, m)
			if err != nil || c.DriftClip != 1e4 {
				t.Errorf("paper %s %s: drift clip %v (%v), want 1e4", task, m, c.DriftClip, err)
			}
		}
		if c, _ := PresetFor("reference", task, MethodTeacher); c.DriftClip != 0 {
			t.Errorf("reference %s teacher: drift clip %v, want 0", task, c.DriftClip)
		}
	}
}

// dimEnergy is 25GMM claiming another dimension and counting its calls.
type dimEnergy struct {
	dim   int
	calls *int
}

func (e dimEnergy) Dim() int { return e.dim }

func (e dimEnergy) LogReward(x []float32, out []float64) error {
	*e.calls++
	return energy.GMM25{}.LogReward(x, out)
}

// TestWrongDimension: an energy without a usable dimension, and a resume
// with an energy of another dimension than the checkpoint's, are errors
// naming the dimensions, raised before the energy is called.
func TestWrongDimension(t *testing.T) {
	calls := 0
	for _, d := range []int{0, -1} {
		_, err := New(dimEnergy{d, &calls}, smallConfig(MethodTB, 5))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("dimEnergy has dimension %d", d)) || calls != 0 {
			t.Errorf("dimension %d: error %v after %d energy calls, want one naming the dimension before any call", d, err, calls)
		}
	}
	if _, err := New(nil, smallConfig(MethodTB, 5)); err == nil {
		t.Error("nil energy: no error")
	}

	dir := t.TempDir()
	o := quick
	o.OutDir, o.CheckpointEvery = dir, 5
	cfg := smallConfig(MethodTeacher, 10)
	if _, err := Run(context.Background(), energy.GMM25{}, cfg, o); err != nil {
		t.Fatal(err)
	}
	for _, resume := range []func(e energy.Energy) error{
		func(e energy.Energy) error { _, err := Load(dir, e); return err },
		func(e energy.Energy) error { _, err := Resume(context.Background(), dir, e, quick); return err },
	} {
		err := resume(dimEnergy{3, &calls})
		if err == nil || !strings.Contains(err.Error(), "dimension 2") || !strings.Contains(err.Error(), " 3") || calls != 0 {
			t.Errorf("checkpoint of dimension 2, energy of 3: error %v after %d energy calls, want one naming both before any call", err, calls)
		}
	}
	if _, err := Load(dir, energy.GMM25{}); err != nil {
		t.Errorf("Load with the run's own energy: %v", err)
	}
}

// evalNaNEnergy is 25GMM whose failAt-th call on size rows (an
// evaluation's: first its fresh samples, then the exact ones) returns NaN
// for row 7.
type evalNaNEnergy struct {
	energy.GMM25
	size, failAt int
	calls        *int
}

func (e evalNaNEnergy) LogReward(x []float32, out []float64) error {
	if err := e.GMM25.LogReward(x, out); err != nil {
		return err
	}
	if len(out) == e.size {
		if *e.calls++; *e.calls == e.failAt {
			out[7] = math.NaN()
		}
	}
	return nil
}

// TestNonFiniteInEvaluation: a NaN log-reward in an evaluation, on the
// Student's samples or on the exact ones, stops the run with an error
// naming the evaluation and the sample, after a checkpoint from which a
// resume with a repaired energy ends as a run never interrupted.
func TestNonFiniteInEvaluation(t *testing.T) {
	cfg := smallConfig(MethodTB, 120)
	want, err := Run(context.Background(), energy.GMM25{}, cfg, quick)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		failAt int
		exact  bool
	}{{3, false}, {4, true}} { // the second evaluation (after iteration 50)
		dir := t.TempDir()
		o := quick
		o.OutDir = dir
		_, err := Run(context.Background(), evalNaNEnergy{size: o.EvalSamples, failAt: c.failAt, calls: new(int)}, cfg, o)
		var nf *NonFiniteError
		if !errors.As(err, &nf) || nf.Iteration != -1 || nf.Row != 7 || nf.Exact != c.exact || len(nf.X) != 2 {
			t.Fatalf("exact %v: error %v, want a NonFiniteError for row 7 in an evaluation", c.exact, err)
		}
		for _, s := range []string{"evaluation after iteration 50", "sample 7", "NaN", "checkpoint"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("exact %v: error %q does not mention %q", c.exact, err, s)
			}
		}
		got, err := Resume(context.Background(), dir, energy.GMM25{}, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if hashTrainer(got.Trainer) != hashTrainer(want.Trainer) || got.Summary.ELBO != want.Summary.ELBO {
			t.Errorf("exact %v: resumed run ends with other parameters or ELBO (%v, want %v)", c.exact, got.Summary.ELBO, want.Summary.ELBO)
		}
	}
}

// lsNaNEnergy is 25GMM whose failAt-th gradient call (local search's)
// returns NaN for row 2.
type lsNaNEnergy struct {
	energy.GMM25
	failAt int
	calls  *int
}

func (e lsNaNEnergy) GradLogReward(x []float32, logR []float64, grad []float64) error {
	if err := e.GMM25.GradLogReward(x, logR, grad); err != nil {
		return err
	}
	if *e.calls++; *e.calls == e.failAt {
		logR[2] = math.NaN()
	}
	return nil
}

// TestLocalSearchNaNStops: a NaN log-reward met by local search stops the
// run with an error naming the iteration and the proposal, after a
// checkpoint that holds the iteration's update; a resume continues after
// it and finishes.
func TestLocalSearchNaNStops(t *testing.T) {
	cfg := smallConfig(MethodPER, 30)
	cfg.LocalSearch, cfg.LSEvery = true, 10
	cfg.LS.Steps, cfg.LS.BurnIn = 20, 10
	dir := t.TempDir()
	o := quick
	o.OutDir = dir
	// Each search makes 1 + 20 gradient calls: the 30th is in the second
	// search (iteration 10).
	_, err := Run(context.Background(), lsNaNEnergy{failAt: 30, calls: new(int)}, cfg, o)
	var re *RewardError
	if !errors.As(err, &re) || re.Iteration != 10 {
		t.Fatalf("error %v, want a RewardError at iteration 10", err)
	}
	for _, s := range []string{"iteration 10", "local search", "row 2", "NaN", "x = [", "checkpoint"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
	if step, _, err := readStep(dir); err != nil || step != 11 {
		t.Errorf("checkpoint at step %d (%v), want 11 (after the failed iteration's update)", step, err)
	}
	res, err := Resume(context.Background(), dir, energy.GMM25{}, RunOptions{})
	if err != nil {
		t.Fatalf("resume with the repaired energy: %v", err)
	}
	if res.Summary.Steps != 30 {
		t.Errorf("resumed run took %d steps in all, want 30", res.Summary.Steps)
	}
}

// TestProgressShowsELBO: the progress bar reports the iterations and the
// latest periodic evaluation's ELBO, the value in metrics.csv.
func TestProgressShowsELBO(t *testing.T) {
	var buf strings.Builder
	o := quick
	o.Progress = &buf
	res, err := Run(context.Background(), energy.GMM25{}, smallConfig(MethodTB, 100), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"100/100", fmt.Sprintf("ELBO %.3f", res.Curve.Last("elbo")), "evaluating the final state"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("progress output lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestW2Every: with W2Every the curve has W2 only at the points whose
// iteration is a multiple of it (an empty metrics.csv cell elsewhere), the
// final evaluation always has it, the other metrics are those of a run
// with W2 everywhere (the evaluation draws the same samples), and a
// resumed run keeps the cadence and refuses another.
func TestW2Every(t *testing.T) {
	cfg := smallConfig(MethodTB, 60)
	o := RunOptions{Options: run.Options{EvalEvery: 10, NoFigures: true}, EvalSamples: 100, FinalSamples: 100}
	every, err := Run(context.Background(), energy.GMM25{}, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	o.W2Every = 20
	want, full, part := interruptedRun(t, cfg, o, 20, 40)
	for i, st := range want.Curve.Column("step") {
		step := int(st)
		w2 := want.Curve.Column("w2")[i]
		if has := !math.IsNaN(w2); has != (step%20 == 0) {
			t.Errorf("point at iteration %d: W2 %v, want it only at multiples of 20", step, w2)
		}
		for _, name := range []string{"elbo", "elbo_is", "eubo"} {
			if a, b := want.Curve.Column(name)[i], every.Curve.Column(name)[i]; a != b {
				t.Errorf("point at iteration %d: %s %v, %v with W2 at every point", step, name, a, b)
			}
		}
		if !math.IsNaN(w2) && w2 != every.Curve.Column("w2")[i] {
			t.Errorf("point at iteration %d: W2 %v, %v with W2 at every point", step, w2, every.Curve.Column("w2")[i])
		}
	}
	if want.Summary.W2 == nil || *want.Summary.W2 != *every.Summary.W2 {
		t.Errorf("final W2 %v, want %v", want.Summary.W2, *every.Summary.W2)
	}
	if !strings.Contains(curveCSV(t, full), ",,") {
		t.Errorf("metrics.csv has no empty W2 cell:\n%s", curveCSV(t, full))
	}
	if _, err := Resume(context.Background(), part, energy.GMM25{}, RunOptions{W2Every: 10}); err == nil || !strings.Contains(err.Error(), "W2 every 10") {
		t.Errorf("resume with another W2 cadence: %v", err)
	}
	if _, err := Resume(context.Background(), part, energy.GMM25{}, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if a, b := curveCSV(t, full), curveCSV(t, part); a != b {
		t.Errorf("resumed metrics.csv differs:\n%s\nvs\n%s", a, b)
	}
	if _, err := Run(context.Background(), energy.GMM25{}, cfg, RunOptions{W2Every: -1}); err == nil || !strings.Contains(err.Error(), "W2 every -1") {
		t.Errorf("W2Every -1: %v", err)
	}
}
