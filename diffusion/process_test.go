package diffusion

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/nn"
)

// linearPolicy is out = x·W + t·a + c, a tiny policy for tests, in float32
// parameters like a real network.
type linearPolicy struct {
	d       int
	w, a, c *nn.Param
	x       *nn.Matrix
	t       []float32
	y       nn.Matrix
}

func newLinearPolicy(d int, rng *rand.Rand, scale float64) *linearPolicy {
	p := &linearPolicy{d: d, w: nn.NewParam("w", d, 2*d), a: nn.NewParam("a", 2*d), c: nn.NewParam("c", 2*d)}
	for _, q := range []*nn.Param{p.w, p.a, p.c} {
		for i := range q.Value {
			q.Value[i] = float32(scale * rng.NormFloat64())
		}
	}
	return p
}

func (p *linearPolicy) Dim() int { return p.d }

func (p *linearPolicy) Forward(x *nn.Matrix, t []float32) *nn.Matrix {
	p.x, p.t = x, append(p.t[:0], t...)
	p.y.Resize(x.Rows, 2*p.d)
	blk := x.Rows / len(t)
	for r := range x.Rows {
		tt := float64(t[r/blk])
		for o := range 2 * p.d {
			v := float64(p.c.Value[o]) + tt*float64(p.a.Value[o])
			for i := range p.d {
				v += float64(x.At(r, i)) * float64(p.w.Value[i*2*p.d+o])
			}
			p.y.Data[r*2*p.d+o] = float32(v)
		}
	}
	return &p.y
}

func (p *linearPolicy) Backward(dy *nn.Matrix) {
	blk := p.x.Rows / len(p.t)
	for r := range p.x.Rows {
		tt := p.t[r/blk]
		for o := range 2 * p.d {
			g := dy.At(r, o)
			p.c.Grad[o] += g
			p.a.Grad[o] += tt * g
			for i := range p.d {
				p.w.Grad[i*2*p.d+o] += p.x.At(r, i) * g
			}
		}
	}
}

func (p *linearPolicy) Params() []*nn.Param { return []*nn.Param{p.w, p.a, p.c} }

// TestBrownianMotionRatio: with zero drift and the fixed variance σ², the
// forward policy is Brownian motion and P_B is its bridge, so for every
// trajectory Σlog P_F − Σlog P_B = log N(x_T; 0, σ²·I) exactly. This ties
// the two densities together independently of either formula.
func TestBrownianMotionRatio(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Dimensions of 4 and more also take the vector path of kernel.Gauss
	// (9: two blocks of 4 and a tail).
	for _, proc := range []Process{{Dim: 2, Steps: 100, Sigma2: 5}, {Dim: 3, Steps: 7, Sigma2: 1}, {Dim: 1, Steps: 1, Sigma2: 2}, {Dim: 9, Steps: 12, Sigma2: 3}} {
		zero := newLinearPolicy(proc.Dim, rng, 0)
		var s sampler
		var b batch
		s.Forward(proc, zero, 50, sampleOptions{}, rng, &b)
		check := func(what string) {
			for r := range b.N {
				x := b.Final()[r*proc.Dim : (r+1)*proc.Dim]
				var q float64
				for _, v := range x {
					q += float64(v) * float64(v)
				}
				want := -0.5 * (q/proc.Sigma2 + float64(proc.Dim)*math.Log(2*math.Pi*proc.Sigma2))
				if got := b.LogPF[r] - b.LogPB[r]; math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Fatalf("%+v %s row %d: log P_F − log P_B = %.12g, want log N(x_T) = %.12g", proc, what, r, got, want)
				}
			}
		}
		check("forward")
		// The same through balance.Eval's scoring of backward trajectories.
		s.Backward(proc, append([]float32(nil), b.Final()...), b.N, rng, &b)
		var tb balance
		delta := make([]float64, b.N)
		tb.Eval(proc, zero, 0, &b, make([]float64, b.N), delta)
		check("backward")
	}
}

// TestBridgeMarginals: backward samples from x_T pass through step i with
// mean x_T·i/T and variance σ²·(i/T)(1 − i/T), the Brownian bridge's.
func TestBridgeMarginals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	proc := Process{Dim: 1, Steps: 10, Sigma2: 5}
	const n = 40000
	x := make([]float32, n)
	for i := range x {
		x[i] = 3
	}
	var s sampler
	var b batch
	s.Backward(proc, x, n, rng, &b)
	for _, i := range []int{1, 5, 9} {
		var m, v float64
		for _, xi := range b.Step(i) {
			m += float64(xi)
		}
		m /= n
		for _, xi := range b.Step(i) {
			v += (float64(xi) - m) * (float64(xi) - m)
		}
		v /= n
		f := float64(i) / 10
		wm, wv := 3*f, 5*f*(1-f)
		if math.Abs(m-wm) > 4*math.Sqrt(wv/n) || math.Abs(v-wv) > 0.03*wv {
			t.Errorf("step %d: mean %.4f var %.4f, want %.4f, %.4f", i, m, v, wm, wv)
		}
	}
	for _, v := range b.Step(0) {
		if v != 0 {
			t.Fatal("x_0 must be 0")
		}
	}
}

// TestSampledLogPFMatchesEval: the log P_F recorded while sampling (with
// and without exploration) is the one balance.Eval computes from the states.
func TestSampledLogPFMatchesEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		learned bool
		clip    float64
		dim     int
	}{{false, 0, 2}, {true, 0, 2}, {false, 0.2, 2}, {true, 0.2, 2}, {false, 0, 6}, {false, 0.2, 6}} {
		learned := tc.learned
		proc := Process{Dim: tc.dim, Steps: 20, Sigma2: 5, LearnedVariance: learned, VarianceRange: 4, Clip: tc.clip}
		pol := newLinearPolicy(tc.dim, rng, 0.3)
		for _, f := range []float64{0, 0.5} {
			var s sampler
			var b batch
			s.Forward(proc, pol, 30, sampleOptions{Explore: f}, rng, &b)
			sampled := append([]float64(nil), b.LogPF...)
			var tb balance
			tb.Eval(proc, pol, 0, &b, make([]float64, b.N), make([]float64, b.N))
			for r := range b.N {
				if math.Abs(sampled[r]-b.LogPF[r]) > 1e-6*math.Max(1, math.Abs(sampled[r])) {
					t.Fatalf("learned %v clip %v dim %d f %v row %d: sampled log P_F %v, Eval %v", learned, tc.clip, tc.dim, f, r, sampled[r], b.LogPF[r])
				}
			}
		}
	}
}

// tbLoss is the TB loss of the policy on the batch in float64.
func tbLoss(proc Process, pol Policy, logZ float64, b *batch, logR []float64) float64 {
	var tb balance
	return tb.Eval(proc, pol, logZ, b, logR, make([]float64, b.N))
}

// TestTBGradient checks Grad against central finite differences of the
// loss, for fixed and learned variances, with and without a drift clip
// that bounds part of the outputs, and both the single-pass and the
// chunked paths (which must also agree with each other).
func TestTBGradient(t *testing.T) {
	for _, tc := range []struct {
		learned bool
		clip    float64
		dim     int // 5 takes kernel.Gauss's vector path for a fixed variance
	}{{false, 0, 2}, {true, 0, 2}, {false, 0.25, 2}, {true, 0.25, 2}, {false, 0, 5}, {false, 0.25, 5}} {
		learned, d := tc.learned, tc.dim
		rng := rand.New(rand.NewPCG(7, 8))
		proc := Process{Dim: d, Steps: 6, Sigma2: 2, LearnedVariance: learned, VarianceRange: 4, Clip: tc.clip}
		pol := newLinearPolicy(d, rng, 0.4)
		var s sampler
		var b batch
		s.Forward(proc, pol, 8, sampleOptions{Explore: 0.3}, rng, &b)
		if tc.clip > 0 {
			// Part of the drifts must be clipped, part not.
			var in, out int
			for i := range proc.Steps {
				x := nn.Matrix{Rows: b.N, Cols: d, Data: b.Step(i)}
				o := pol.Forward(&x, []float32{float32(i) / float32(proc.Steps)})
				for r := range b.N {
					for k := range d {
						if proc.clipped(o.Row(r)[k]) {
							out++
						} else {
							in++
						}
					}
				}
			}
			if in < 10 || out < 10 {
				t.Fatalf("clip %v: %d drifts inside, %d clipped; the test needs both", tc.clip, in, out)
			}
		}
		logR := make([]float64, b.N)
		for r := range logR {
			logR[r] = rng.NormFloat64() * 3
		}
		logZ := nn.NewParam("logZ")
		logZ.Value[0] = 0.7
		var grads [2][]float32
		for pass, maxRows := range []int{0, 2 * b.N} {
			tb := balance{MaxRows: maxRows}
			nn.ZeroGrad(append(pol.Params(), logZ))
			delta := make([]float64, b.N)
			tb.Eval(proc, pol, float64(logZ.Value[0]), &b, logR, delta)
			tb.Grad(proc, pol, logZ, &b, delta)
			for _, q := range append(pol.Params(), logZ) {
				grads[pass] = append(grads[pass], q.Grad...)
			}
		}
		for i := range grads[0] {
			if d := math.Abs(float64(grads[0][i] - grads[1][i])); d > 1e-5*math.Max(1, math.Abs(float64(grads[0][i]))) {
				t.Fatalf("learned %v: single-pass and chunked gradients differ at %d: %v vs %v", learned, i, grads[0][i], grads[1][i])
			}
		}
		k := 0
		for _, q := range append(pol.Params(), logZ) {
			for i := range q.Value {
				old := q.Value[i]
				h := float32(1e-2)
				if tc.clip > 0 {
					h = 1e-3 // fewer drifts cross the clip's kink
				}
				q.Value[i] = old + h
				up := tbLoss(proc, pol, float64(logZ.Value[0]), &b, logR)
				q.Value[i] = old - h
				down := tbLoss(proc, pol, float64(logZ.Value[0]), &b, logR)
				q.Value[i] = old
				fd := (up - down) / float64(2*h)
				g := float64(grads[0][k])
				if math.Abs(fd-g) > 2e-3*math.Max(1, math.Abs(fd)) {
					t.Errorf("learned %v clip %v dim %d %s[%d]: gradient %.6g, finite difference %.6g", learned, tc.clip, d, q.Name, i, g, fd)
				}
				k++
			}
		}
	}
}
