package train_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/internal/cpusim"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/metrics"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/train"
)

func skipWithoutBF16(t *testing.T) {
	t.Helper()
	if !kernel.HasBF16Path() {
		t.Skip("this CPU runs no fast bfloat16 path: BF16 is refused (TestPrecisionRefused)")
	}
}

// TestBF16LearnsSmallGrid: with the hidden 64×64 layer in bfloat16 the
// Student and Teacher train (finite losses) and the Student reaches the
// float32 test's bound on the exact distance.
func TestBF16LearnsSmallGrid(t *testing.T) {
	skipWithoutBF16(t)
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	cfg := train.DefaultConfig()
	cfg.Hidden, cfg.RewardCalls, cfg.Seed, cfg.Precision = []int{64, 64}, 1500*16, 1, nn.BF16
	tr, err := train.New(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for !tr.Done() {
		it, err := tr.Iterate()
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(it.StudentLoss) || math.IsInf(it.StudentLoss, 0) || math.IsInf(it.TeacherLoss, 0) {
			t.Fatalf("step %d: non-finite loss %+v", tr.Step, it)
		}
	}
	target, _, _ := metrics.Target(g)
	p, err := metrics.Terminating(g, tr.Student.Model)
	if err != nil {
		t.Fatal(err)
	}
	d := metrics.Compare(p, target)
	t.Logf("bf16 teacher: TV %.4f L1 %.2e logZ %.3f modes %d", d.TV, d.L1, tr.Student.LogZ.Value[0], len(tr.ModesFound))
	if d.TV > 0.05 {
		t.Errorf("bf16: exact TV %.4f after %d steps, want < 0.05", d.TV, tr.Step)
	}
}

// TestPrecisionConfigJSON: fp32 leaves config.json as it was, bf16 is
// named and read back, an unknown precision is invalid.
func TestPrecisionConfigJSON(t *testing.T) {
	cfg := train.DefaultConfig()
	b, err := json.Marshal(cfg)
	if err != nil || strings.Contains(string(b), "precision") {
		t.Fatalf("fp32 config: %s, %v", b, err)
	}
	cfg.Precision = nn.BF16
	if b, err = json.Marshal(cfg); err != nil || !strings.Contains(string(b), `"precision":"bf16"`) {
		t.Fatalf("bf16 config: %s, %v", b, err)
	}
	var back train.Config
	if err := json.Unmarshal(b, &back); err != nil || back.Precision != nn.BF16 {
		t.Fatalf("read back: %v, %v", back.Precision, err)
	}
	cfg.Precision = 7
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "precision") {
		t.Errorf("precision 7: %v", err)
	}
}

// TestPrecisionRefused: on a CPU without the instructions New refuses
// bf16 with nn's error naming them.
func TestPrecisionRefused(t *testing.T) {
	cpusim.NoBF16.Store(true)
	defer cpusim.NoBF16.Store(false)
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	cfg := train.DefaultConfig()
	cfg.Precision = nn.BF16
	if _, err := train.New(g, cfg); err == nil || !strings.Contains(err.Error(), "AVX512_BF16") {
		t.Fatalf("New with bf16 on a CPU without it: %v", err)
	}
}

// TestBF16ResumeKeepsPrecision: a bf16 run records its precision and
// kernel in summary.json and its checkpoint, and a run stopped after a
// checkpoint continues in bf16, ending exactly as the uninterrupted run.
func TestBF16ResumeKeepsPrecision(t *testing.T) {
	skipWithoutBF16(t)
	g, spec := resumeGrid(t, 8)
	cfg := resumeConfig(60, func(c *train.Config) { c.Precision = nn.BF16 })
	ctx := context.Background()
	opt := train.RunOptions{EnvSpec: spec, EvalSamples: 500}
	opt.EvalEvery = 10
	oa, ob := opt, opt
	oa.OutDir, ob.OutDir = t.TempDir(), t.TempDir()
	a, err := train.Run(ctx, g, cfg, oa)
	if err != nil {
		t.Fatal(err)
	}
	if a.Summary.Precision != "bf16" || a.Summary.BF16Kernel != kernel.BF16Kernel() {
		t.Errorf("summary precision %q, kernel %q", a.Summary.Precision, a.Summary.BF16Kernel)
	}
	stop := errors.New("stopped")
	ob.CheckpointEvery = 7
	ob.AfterCheckpoint = func(step int) error {
		if step >= 30 {
			return stop
		}
		return nil
	}
	if _, err := train.Run(ctx, g, cfg, ob); !errors.Is(err, stop) {
		t.Fatalf("the stopped run: %v", err)
	}
	st, err := train.ReadCheckpoint(ob.OutDir)
	if err != nil || st.Train.Precision != nn.BF16 {
		t.Fatalf("checkpoint precision %v (%v)", st.Train.Precision, err)
	}
	b, err := train.Resume(ctx, ob.OutDir, g, train.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Summary.Precision != "bf16" {
		t.Errorf("resumed summary precision %q", b.Summary.Precision)
	}
	sameRun(t, "bf16 resumed", a, b, oa.OutDir, ob.OutDir)
}
