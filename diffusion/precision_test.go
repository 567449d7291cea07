package diffusion

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/internal/cpusim"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/timenet"
)

func skipWithoutBF16(t *testing.T) {
	t.Helper()
	if !kernel.HasBF16Path() {
		t.Skip("this CPU runs no fast bfloat16 path: BF16 is refused (TestPrecisionRefused)")
	}
}

// TestBF16StudentImproves: with the hidden products in bfloat16 the
// Teacher, TB and PIS (which differentiates through the network's input)
// raise the ELBO as TestStudentImproves asks of float32, with finite
// losses, and the summary names the precision and kernel. Both
// architectures.
func TestBF16StudentImproves(t *testing.T) {
	skipWithoutBF16(t)
	for _, m := range []Method{MethodTeacher, MethodTB, MethodPIS} {
		for _, arch := range []string{timenet.Reference, timenet.PIS} {
			cfg := smallConfig(m, 300)
			cfg.Net.Arch, cfg.Precision = arch, nn.BF16
			res, err := Run(context.Background(), energy.GMM25{}, cfg, quick)
			if err != nil {
				t.Fatalf("%s %s: %v", m, arch, err)
			}
			c := res.Curve
			n := c.Len() - 1
			t.Logf("%s %s bf16: ELBO %.3f -> %.3f, final ELBO %.3f EUBO %.3f logZ %.3f", m, arch, c.Value(0, "elbo"), c.Value(n, "elbo"), res.Summary.ELBO, *res.Summary.EUBO, res.Summary.LogZ)
			// The Teacher method's Student on the small PIS network
			// gains least (float32: 1.07 nat here, bf16 0.66).
			gain := 0.5
			if m == MethodTeacher && arch == timenet.PIS {
				gain = 0.25
			}
			if !(c.Value(n, "elbo") > c.Value(0, "elbo")+gain) {
				t.Errorf("%s %s: ELBO %.3f -> %.3f, want an increase of at least %v nat", m, arch, c.Value(0, "elbo"), c.Value(n, "elbo"), gain)
			}
			for _, col := range []string{"student_loss", "student_logz"} {
				for i := range c.Len() {
					if v := c.Value(i, col); math.IsInf(v, 0) || (i > 0 && math.IsNaN(v)) {
						t.Errorf("%s %s: %s = %v at point %d", m, arch, col, v, i)
					}
				}
			}
			if res.Summary.Precision != "bf16" || res.Summary.BF16Kernel != kernel.BF16Kernel() {
				t.Errorf("%s %s: summary precision %q, kernel %q", m, arch, res.Summary.Precision, res.Summary.BF16Kernel)
			}
		}
	}
}

// TestBF16ResumeIsBitIdentical: a bf16 run stopped after a checkpoint
// resumes in bf16 (the checkpoint's configuration) and ends as the
// uninterrupted run.
func TestBF16ResumeIsBitIdentical(t *testing.T) {
	skipWithoutBF16(t)
	cfg := smallConfig(MethodTeacher, 120)
	cfg.Precision = nn.BF16
	want, full, part := interruptedRun(t, cfg, quick, 40, 80)
	if _, c, err := readStep(part); err != nil || c.Precision != nn.BF16 {
		t.Fatalf("checkpoint precision %v, %v", c.Precision, err)
	}
	got, err := Resume(context.Background(), part, energy.GMM25{}, quick)
	if err != nil {
		t.Fatal(err)
	}
	if hashTrainer(got.Trainer) != hashTrainer(want.Trainer) || got.Summary.ELBO != want.Summary.ELBO || got.Summary.Precision != "bf16" {
		t.Errorf("resumed: ELBO %v (want %v), precision %q", got.Summary.ELBO, want.Summary.ELBO, got.Summary.Precision)
	}
	if a, b := curveCSV(t, full), curveCSV(t, part); a != b {
		t.Errorf("metrics.csv differs:\n%s\nvs\n%s", a, b)
	}
}

// TestPrecisionConfig: fp32 leaves config.json as it was, bf16 is named
// and read back, an unknown precision is invalid, and without the
// instructions New refuses bf16 with nn's error naming them.
func TestPrecisionConfig(t *testing.T) {
	cfg := smallConfig(MethodTeacher, 10)
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
	cpusim.NoBF16.Store(true)
	defer cpusim.NoBF16.Store(false)
	if _, err := New(energy.GMM25{}, cfg); err == nil || !strings.Contains(err.Error(), "AVX512_BF16") {
		t.Fatalf("New with bf16 on a CPU without it: %v", err)
	}
}
