package diffusion

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/timenet"
)

// pisNet returns a small network whose zero-initialised output layer is
// given U(±scale/√in) values, so that the drift depends on the state and
// gradients reach every parameter.
func pisNet(t *testing.T, cfg timenet.Config, dim int, scale float64, seed uint64) timenet.Net {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 5))
	net, err := timenet.New(cfg, dim, rng)
	if err != nil {
		t.Fatal(err)
	}
	ps := net.Params()
	for _, p := range ps[len(ps)-2:] {
		bound := scale / math.Sqrt(float64(ps[len(ps)-2].Shape[0]))
		for i := range p.Value {
			p.Value[i] = float32((2*rng.Float64() - 1) * bound)
		}
	}
	return net
}

// pisLoss is the PIS loss with the noises of the stream seed.
func pisLoss(t *testing.T, proc Process, net timenet.Net, e energy.Gradient, n int, seed uint64) float64 {
	var p pathIntegral
	var b batch
	loss, err := p.Eval(proc, net, e, n, rand.New(rand.NewPCG(seed, 1)), &b, make([]float64, n))
	if err != nil {
		t.Fatal(err)
	}
	return loss
}

// TestPISGradient checks the gradient of the PIS loss, backpropagated
// through the simulated trajectories, against central finite differences
// of the same loss with the same noises, on 25GMM with T = 5, for both
// architectures and a fixed or learned variance. The loss is float32
// arithmetic (states and network), whose rounding (about 1e-7 of the
// loss) the difference quotient amplifies by 1/(2h): with h = 4e-3 and 64
// trajectories the quotient carries about 2e-5 of noise and 1e-3 of
// truncation error, hence a tolerance of 4e-3·(scale + |fd|) + 4e-5,
// scale the RMS of the tensor's gradient (measured: at most half of it
// over five seeds; an error in the adjoint shows as 100 times it).
func TestPISGradient(t *testing.T) {
	e := energy.GMM25{}
	for _, tc := range []struct {
		name    string
		cfg     timenet.Config
		learned bool
		clip    float64
	}{
		{"pis", timenet.Config{Arch: timenet.PIS, Hidden: 8, Harmonics: 4}, false, 0},
		{"pis-learned-variance", timenet.Config{Arch: timenet.PIS, Hidden: 8, Harmonics: 4}, true, 0},
		{"reference", timenet.Config{Hidden: 8, Harmonics: 3}, false, 0},
		{"pis-clip", timenet.Config{Arch: timenet.PIS, Hidden: 8, Harmonics: 4}, false, 0.5},
	} {
		proc := Process{Dim: 2, Steps: 5, Sigma2: 5, LearnedVariance: tc.learned, VarianceRange: 4, Clip: tc.clip}
		net := pisNet(t, tc.cfg, 2, 2, 11)
		const n, seed = 64, 21
		var p pathIntegral
		var b batch
		ps := net.Params()
		nn.ZeroGrad(ps)
		logR := make([]float64, n)
		loss, err := p.Eval(proc, net, e, n, rand.New(rand.NewPCG(seed, 1)), &b, logR)
		if err != nil {
			t.Fatal(err)
		}
		if tc.clip > 0 {
			// Part of the drifts must be clipped, part not.
			var in, out int
			for _, o := range p.outs {
				for r := range n {
					for k := range 2 {
						if proc.clipped(o.Row(r)[k]) {
							out++
						} else {
							in++
						}
					}
				}
			}
			if in < 50 || out < 50 {
				t.Fatalf("%s: %d drifts inside, %d clipped; the test needs both", tc.name, in, out)
			}
		}
		p.Grad(proc, &b)
		if l2 := pisLoss(t, proc, net, e, n, seed); l2 != loss {
			t.Fatalf("%s: the loss is not a function of the seed: %v, %v", tc.name, loss, l2)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		var worst float64
		for _, q := range ps {
			var scale float64
			for _, g := range q.Grad {
				scale += float64(g) * float64(g)
			}
			scale = math.Sqrt(scale / float64(q.Len()))
			if scale == 0 {
				t.Errorf("%s: %s has a zero gradient", tc.name, q.Name)
				continue
			}
			for _, i := range rng.Perm(q.Len())[:min(q.Len(), 3)] {
				old := q.Value[i]
				up, down := old+4e-3, old-4e-3
				q.Value[i] = up
				lp := pisLoss(t, proc, net, e, n, seed)
				q.Value[i] = down
				lm := pisLoss(t, proc, net, e, n, seed)
				q.Value[i] = old
				fd := (lp - lm) / float64(up-down)
				g := float64(q.Grad[i])
				tol := 4e-3*(scale+math.Abs(fd)) + 4e-5
				worst = max(worst, math.Abs(fd-g)/tol)
				if math.Abs(fd-g) > tol {
					t.Errorf("%s: %s[%d]: gradient %.6g, finite difference %.6g (scale %.3g)", tc.name, q.Name, i, g, fd, scale)
				}
			}
		}
		t.Logf("%s: loss %.4f, largest error / tolerance %.3g", tc.name, loss, worst)
	}
}

// TestPISZeroNetwork: with the untrained network (u = 0) the forward
// policy is Brownian motion and P_B its bridge, so the loss is, sample by
// sample, log N(x_T; 0, σ²·I) − log R(x_T) over n·d; and a constant drift
// c shifts x_T by c, its control cost and the Gaussian term cancelling at
// c = 0, so the gradient of the output bias's drift half is −mean ∇log R
// over d, that of its variance half 0, and of every other parameter 0
// (the zero output layer blocks them).
func TestPISZeroNetwork(t *testing.T) {
	e := energy.Manywell{}
	d := e.Dim()
	proc := Process{Dim: d, Steps: 20, Sigma2: 1}
	net, err := timenet.New(timenet.Config{Arch: timenet.PIS, Hidden: 16}, d, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	var p pathIntegral
	var b batch
	logR := make([]float64, n)
	nn.ZeroGrad(net.Params())
	loss, err := p.Eval(proc, net, e, n, rand.New(rand.NewPCG(5, 6)), &b, logR)
	if err != nil {
		t.Fatal(err)
	}
	p.Grad(proc, &b)
	x := b.Final()
	grad := make([]float64, n*d)
	if err := e.GradLogReward(x, make([]float64, n), grad); err != nil {
		t.Fatal(err)
	}
	var want float64
	wantBias := make([]float64, d)
	for r := range n {
		var q float64
		for k := range d {
			v := float64(x[r*d+k])
			q += v*v/proc.Sigma2 + log2Pi + math.Log(proc.Sigma2)
			wantBias[k] -= grad[r*d+k] / float64(n*d)
		}
		want += -q/2 - logR[r]
	}
	want /= float64(n * d)
	if math.Abs(loss-want) > 1e-6*(1+math.Abs(want)) {
		t.Errorf("loss %.10g, closed form %.10g", loss, want)
	}
	ps := net.Params()
	bias := ps[len(ps)-1]
	for k := range 2 * d {
		w := 0.0
		if k < d {
			w = wantBias[k]
		}
		if g := float64(bias.Grad[k]); math.Abs(g-w) > 1e-5*(1+math.Abs(w)) {
			t.Errorf("output bias %d: gradient %.8g, closed form %.8g", k, g, w)
		}
	}
	for _, q := range ps[:len(ps)-2] {
		for i, g := range q.Grad {
			if g != 0 {
				t.Fatalf("%s[%d]: gradient %v behind a zero output layer", q.Name, i, g)
			}
		}
	}
	t.Logf("loss %.6f (closed form %.6f)", loss, want)
}

// TestPISAllocations: a PIS step allocates nothing once its buffers have
// grown.
func TestPISAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count")
	}
	e := energy.GMM25{}
	proc := Process{Dim: 2, Steps: 10, Sigma2: 5}
	net := pisNet(t, timenet.Config{Arch: timenet.PIS, Hidden: 16}, 2, 1, 3)
	var p pathIntegral
	var b batch
	logR := make([]float64, 32)
	rng := rand.New(rand.NewPCG(1, 1))
	step := func() {
		if _, err := p.Eval(proc, net, e, 32, rng, &b, logR); err != nil {
			t.Fatal(err)
		}
		p.Grad(proc, &b)
	}
	step()
	if a := testing.AllocsPerRun(5, step); a != 0 {
		t.Errorf("%v allocations per PIS step", a)
	}
}

// noGradient is 25GMM without its gradient.
type noGradient struct{ energy.Energy }

// TestPISConfig: pis needs the energy's gradient and takes no exploration.
func TestPISConfig(t *testing.T) {
	cfg := smallConfig(MethodPIS, 10)
	if _, err := New(noGradient{energy.GMM25{}}, cfg); err == nil || !strings.Contains(err.Error(), "gradient") {
		t.Errorf("pis on an energy without a gradient: %v", err)
	}
	cfg.ExploreAll = true
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "pis") {
		t.Errorf("pis with explore-all: %v", err)
	}
}

// BenchmarkPIS times training iterations of the paper preset with the
// pis method next to on-policy TB (batch 300, T = 100; the PIS network of
// width 64 on 25GMM, 256 on Manywell): ns/op is one iteration.
// LGCP (d = 1,600) runs at its sendera preset (width 64).
func BenchmarkPIS(b *testing.B) {
	for _, task := range []string{"25gmm", "manywell", "lgcp"} {
		for _, m := range []Method{MethodPIS, MethodTB} {
			b.Run(task+"/"+string(m), func(b *testing.B) {
				preset := "paper"
				if task == "lgcp" {
					preset = "sendera"
				}
				cfg, _ := Preset(preset, task)
				cfg.Method, cfg.Iterations = m, 1<<30
				e, err := energy.Named(task)
				if err != nil {
					b.Fatal(err)
				}
				tr, err := New(e, cfg)
				if err != nil {
					b.Fatal(err)
				}
				for range 2 {
					if _, err := tr.Iterate(); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for range b.N {
					if _, err := tr.Iterate(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// overflowEnergy is 25GMM whose gradient call number at returns 10³⁰⁰ for
// row 0, which overflows the float32 backward pass of PIS.
type overflowEnergy struct {
	energy.GMM25
	calls *int
	at    int
}

func (e overflowEnergy) GradLogReward(x []float32, logR, grad []float64) error {
	if err := e.GMM25.GradLogReward(x, logR, grad); err != nil {
		return err
	}
	if *e.calls++; *e.calls == e.at {
		grad[0] = 1e300
	}
	return nil
}

// TestPISGradientOverflowStops: a non-finite PIS gradient stops the run
// with a GradientError before the step, so the checkpoint holds the same
// parameters, bit for bit, as a run of exactly the iterations before it,
// and Resume continues from there.
func TestPISGradientOverflowStops(t *testing.T) {
	cfg := smallConfig(MethodPIS, 40)
	dir := t.TempDir()
	o := quick
	o.OutDir = dir
	_, err := Run(context.Background(), overflowEnergy{calls: new(int), at: 15}, cfg, o)
	var ge *GradientError
	if !errors.As(err, &ge) || ge.Iteration != 14 || !(math.IsNaN(ge.Norm) || math.IsInf(ge.Norm, 1)) {
		t.Fatalf("error %v, want a GradientError at iteration 14", err)
	}
	for _, want := range []string{"iteration 14", "gradient", "checkpoint"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	got, err := Load(dir, energy.GMM25{})
	if err != nil {
		t.Fatal(err)
	}
	short := cfg
	short.Iterations = ge.Iteration
	want, err := New(energy.GMM25{}, short)
	if err != nil {
		t.Fatal(err)
	}
	for !want.Done() {
		if _, err := want.Iterate(); err != nil {
			t.Fatal(err)
		}
	}
	if got.Step != want.Step {
		t.Fatalf("checkpoint at step %d, want %d", got.Step, want.Step)
	}
	gp, wp := got.Student.Params(), want.Student.Params()
	for i := range wp {
		for j, v := range wp[i].Value {
			if math.Float32bits(gp[i].Value[j]) != math.Float32bits(v) {
				t.Fatalf("%s[%d] = %v in the checkpoint, %v without the failing step", wp[i].Name, j, gp[i].Value[j], v)
			}
		}
	}
	if _, err := Resume(context.Background(), dir, energy.GMM25{}, quick); err != nil {
		t.Fatalf("resume: %v", err)
	}
}
