package diffusion

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/timenet"
)

// TestRowsSplitBitIdentical: sampling, scoring and differentiating a
// batch large enough to be split across cores (Forward's steps,
// scoreBackward, scoreRows, gradRows) gives the same bits on one core as on
// four, for a fixed and a learned variance.
func TestRowsSplitBitIdentical(t *testing.T) {
	for _, learned := range []bool{false, true} {
		proc := Process{Dim: 96, Steps: 4, Sigma2: 2, LearnedVariance: learned, VarianceRange: 4, Clip: 1e4}
		if n := 400; n*proc.Steps*proc.Dim < parallelMinWork {
			t.Fatalf("batch of %d rows too small to be split", n)
		}
		type result struct {
			logPB, logPF, delta []float64
			grads               [][]float32
		}
		once := func(procs int) result {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			rng := rand.New(rand.NewPCG(1, 2))
			net, err := timenet.New(timenet.Config{Arch: timenet.PIS, Hidden: 16}, proc.Dim, rng)
			if err != nil {
				t.Fatal(err)
			}
			// A non-zero last layer, so that drift and variance vary.
			for _, p := range net.Params() {
				for i := range p.Value {
					if p.Value[i] == 0 {
						p.Value[i] = float32(0.01 * rng.NormFloat64())
					}
				}
			}
			var s sampler
			var b batch
			s.Forward(proc, net, 400, sampleOptions{}, rng, &b)
			var tb balance
			logR := make([]float64, b.N)
			for i := range logR {
				logR[i] = rng.NormFloat64()
			}
			delta := make([]float64, b.N)
			tb.Eval(proc, net, 0.3, &b, logR, delta)
			logZ := nn.NewParam("logZ", 1, 1)
			nn.ZeroGrad(net.Params())
			tb.Grad(proc, net, logZ, &b, delta)
			r := result{logPB: append([]float64(nil), b.LogPB...), logPF: append([]float64(nil), b.LogPF...), delta: delta}
			for _, p := range net.Params() {
				r.grads = append(r.grads, append([]float32(nil), p.Grad...))
			}
			return r
		}
		a, c := once(1), once(4)
		same := func(what string, x, y []float64) {
			for i := range x {
				if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
					t.Fatalf("learned %v: %s[%d] = %v on one core, %v on four", learned, what, i, x[i], y[i])
				}
			}
		}
		same("log P_B", a.logPB, c.logPB)
		same("log P_F", a.logPF, c.logPF)
		same("delta", a.delta, c.delta)
		for j := range a.grads {
			for i := range a.grads[j] {
				if math.Float32bits(a.grads[j][i]) != math.Float32bits(c.grads[j][i]) {
					t.Fatalf("learned %v: gradient %d[%d] differs: %v, %v", learned, j, i, a.grads[j][i], c.grads[j][i])
				}
			}
		}
	}
}
