package ssr

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/internal/cpusim"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
)

func skipWithoutBF16(t *testing.T) {
	t.Helper()
	if !kernel.HasBF16Path() {
		t.Skip("this CPU runs no fast bfloat16 path: BF16 is refused (TestPrecisionRefused)")
	}
}

// In BF16 too a state's logits have the same bits alone or in any batch
// (GemmBF16 computes a row whatever the other rows), folded or not.
func TestBF16LogitsDoNotDependOnTheBatch(t *testing.T) {
	skipWithoutBF16(t)
	for _, wd := range [][2]int{{72, 40}, {100, 36}} { // folded, not
		logitsDoNotDependOnTheBatch(t, wd[0], wd[1], nn.BF16)
	}
}

// TestBF16CloseToFP32: the same weights in BF16 give the float32 model's
// logits and gradients within bfloat16's rounding, folded or not; a clone
// keeps the precision, and setting it again recomputes the fold.
func TestBF16CloseToFP32(t *testing.T) {
	skipWithoutBF16(t)
	for _, wd := range [][2]int{{64, 64}, {64, 24}} { // folded, not
		env := seqEnv(t, 4, 6, false, nil)
		w, na := env.StateLen(), env.NumActions()
		m := New(env, env, "", wd[0], wd[1], rand.New(rand.NewPCG(3, 3)))
		states := nonTerminal(env, 200)
		rows := len(states) / w
		rng := rand.New(rand.NewPCG(4, 4))
		dl := nn.NewMatrix(rows, na)
		for i := range dl.Data {
			dl.Data[i] = float32(rng.NormFloat64())
		}
		run := func(m *Model) (logits, grads []float32) {
			nn.ZeroGrad(m.Params())
			out := m.Forward(states, rows)
			for _, v := range out.Data {
				if !math.IsInf(float64(v), -1) {
					logits = append(logits, v)
				}
			}
			m.Backward(dl)
			for _, p := range m.Params() {
				grads = append(grads, p.Grad...)
			}
			return logits, grads
		}
		l32, g32 := run(m)
		if err := m.SetPrecision(nn.BF16); err != nil {
			t.Fatal(err)
		}
		if m.Precision() != nn.BF16 || m.Clone().Precision() != nn.BF16 {
			t.Fatal("the precision was not kept (model or clone)")
		}
		l16, g16 := run(m)
		lc, _ := run(m.Clone())
		if !slices.Equal(lc, l16) {
			t.Error("a clone's BF16 logits differ from the model's")
		}
		rel := func(a, b []float32) float64 {
			var d, s float64
			for i := range a {
				d += (float64(a[i]) - float64(b[i])) * (float64(a[i]) - float64(b[i]))
				s += float64(a[i]) * float64(a[i])
			}
			return math.Sqrt(d / s)
		}
		rl, rg := rel(l32, l16), rel(g32, g16)
		t.Logf("H %d E %d (fold %v): relative RMS difference bf16 vs fp32: logits %.3g, gradients %.3g", wd[0], wd[1], m.fold, rl, rg)
		// The logits are within a few 2^-9 (measured 2.6e-3, 3.3e-3). The
		// gradients are sums over a few hundred edges of terms of random
		// sign (dl is random), which cancel: their error relative to the
		// sum is about 2^-9·√(edges) larger (measured 4e-2 and 2e-2, the
		// biases', summed in float32 from bf16-derived rows, alike).
		if !(rl > 0 && rl < 1e-2 && rg > 0 && rg < 0.1) {
			t.Errorf("H %d E %d: bf16 differs from fp32 by %.3g (logits), %.3g (gradients): want within (0, 1e-2) and (0, 0.1)", wd[0], wd[1], rl, rg)
		}
		// Back to FP32: the fold is recomputed, the float32 bits return.
		if err := m.SetPrecision(nn.FP32); err != nil {
			t.Fatal(err)
		}
		if l, g := run(m); !slices.Equal(l, l32) || !slices.Equal(g, g32) {
			t.Errorf("H %d E %d: FP32 again does not give the float32 bits", wd[0], wd[1])
		}
	}
}

// TestPrecisionRefused: without the instructions SetPrecision refuses
// BF16 with nn's error and keeps float32.
func TestPrecisionRefused(t *testing.T) {
	cpusim.NoBF16.Store(true)
	defer cpusim.NoBF16.Store(false)
	env := seqEnv(t, 3, 4, false, nil)
	m := New(env, env, "", 8, 8, rand.New(rand.NewPCG(1, 1)))
	if err := m.SetPrecision(nn.BF16); err == nil || !strings.Contains(err.Error(), "AVX512_BF16") || m.Precision() != nn.FP32 {
		t.Fatalf("SetPrecision(BF16) on a CPU without it: %v, precision %v", err, m.Precision())
	}
}
