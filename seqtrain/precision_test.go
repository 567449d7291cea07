package seqtrain

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/agent"
	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/internal/cpusim"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/run"
)

func skipWithoutBF16(t *testing.T) {
	t.Helper()
	if !kernel.HasBF16Path() {
		t.Skip("this CPU runs no fast bfloat16 path: BF16 is refused (TestPrecisionRefused)")
	}
}

// TestBF16TrainsTowardsTarget: both policies train in bf16 on the toy
// task to TestTrainsTowardsTarget's float32 bounds: the mlp policy (its
// 16×16 hidden layer) and the ssr policy (encoder and scorer hidden
// products); losses stay finite and the summary names the precision.
func TestBF16TrainsTowardsTarget(t *testing.T) {
	skipWithoutBF16(t)
	task := toyTask{A: 3, L: 3}
	z := task.LogZ()
	for _, kind := range []string{"mlp", "ssr"} {
		cfg := toyConfig(TeacherPER)
		cfg.Rounds = 400
		cfg.OnlineBatch, cfg.OfflineBatch = 16, 16
		cfg.Student = agent.Optim{LR: 3e-3, LogZLR: 1e-1}
		cfg.Precision = nn.BF16
		if kind == "ssr" {
			cfg.Policy = Policy{Kind: "ssr", Hidden: 32, Embed: 32}
		}
		res, err := Run(context.Background(), task, cfg, RunOptions{Options: run.Options{EvalEvery: 100}, EvalSamples: 1024})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		m := res.Summary
		first := res.Curve.Value(0, "elbo")
		t.Logf("%s bf16: ELBO %.3f -> %.3f, EUBO %.3f, log Z %.3f, estimate error %.3f, modes %d", kind, first, m.ELBO, m.EUBO, z, m.LogZErr, m.ModesFound)
		if m.Precision != "bf16" || m.BF16Kernel != kernel.BF16Kernel() {
			t.Errorf("%s: summary precision %q, kernel %q", kind, m.Precision, m.BF16Kernel)
		}
		for _, col := range []string{"student_loss", "elbo", "eubo"} {
			for _, v := range res.Curve.Column(col) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("%s: %s = %v", kind, col, v)
				}
			}
		}
		if z-m.ELBO > 0.3 || m.EUBO-z > 0.3 || m.LogZErr > 0.1 || m.ModesFound != 2 {
			t.Errorf("%s: ELBO %v, EUBO %v, estimate error %v for log Z %v, modes %d", kind, m.ELBO, m.EUBO, m.LogZErr, z, m.ModesFound)
		}
	}
}

// TestBF16ResumeIsBitIdentical: a bf16 run stopped at a checkpoint resumes
// in bf16 and ends as the uninterrupted run.
func TestBF16ResumeIsBitIdentical(t *testing.T) {
	skipWithoutBF16(t)
	task := toyTask{A: 3, L: 3}
	cfg := toyConfig(TeacherPER)
	cfg.Precision = nn.BF16
	opt := RunOptions{Options: run.Options{EvalEvery: 10, NoFigures: true}, EvalSamples: 64}
	full, err := Run(context.Background(), task, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.CheckpointEvery = 25
	res, _ := stopAndResume(t, task, cfg, opt)
	if !slices.Equal(params(full.Trainer), params(res.Trainer)) || res.Summary.Precision != "bf16" {
		t.Errorf("resumed: parameters equal %v, precision %q", slices.Equal(params(full.Trainer), params(res.Trainer)), res.Summary.Precision)
	}
	sameCurve(t, full.Curve, res.Curve)
}

// plainModel is a Model without SetPrecision.
type plainModel struct{ discrete.Model }

// TestPrecisionConfig: fp32 leaves config.json as it was, bf16 is named
// and read back, an unknown precision is invalid, a Model without
// SetPrecision is refused bf16, and without the instructions New refuses
// bf16 with nn's error naming them.
func TestPrecisionConfig(t *testing.T) {
	cfg := toyConfig(TeacherPER)
	b, err := json.Marshal(cfg)
	if err != nil || strings.Contains(string(b), "precision") {
		t.Fatalf("fp32 config: %s, %v", b, err)
	}
	cfg.Precision = nn.BF16
	if b, err = json.Marshal(cfg); err != nil || !strings.Contains(string(b), `"precision":"bf16"`) {
		t.Fatalf("bf16 config: %s, %v", b, err)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil || back.Precision != nn.BF16 {
		t.Fatalf("read back: %v, %v", back.Precision, err)
	}
	bad := cfg
	bad.Precision = 7
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "precision") {
		t.Errorf("precision 7: %v", err)
	}
	task := toyTask{A: 3, L: 3}
	if kernel.HasBF16Path() {
		own := cfg
		own.Model = func(env discrete.Env, prefix string, rng *rand.Rand) (discrete.Model, error) {
			m, err := cfg.Policy.build(env, prefix, rng)
			return plainModel{m}, err
		}
		if _, err := New(task, own); err == nil || !strings.Contains(err.Error(), "SetPrecision") {
			t.Errorf("bf16 with a Model without SetPrecision: %v", err)
		}
	}
	cpusim.NoBF16.Store(true)
	defer cpusim.NoBF16.Store(false)
	for _, kind := range []string{"mlp", "ssr"} {
		c := cfg
		c.Policy.Kind, c.Policy.Embed = kind, 16
		if _, err := New(task, c); err == nil || !strings.Contains(err.Error(), "AVX512_BF16") {
			t.Errorf("%s: New with bf16 on a CPU without it: %v", kind, err)
		}
	}
}
