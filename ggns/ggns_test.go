package ggns

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
)

// gaussT is the test likelihood L(x) = C·exp(−‖x − μ‖²/(2s²)), whose
// integral over the box [lo, hi]^d is known in closed form,
//
//	log C + Σ_j log(√(2π)·s·(Φ((hi − μ_j)/s) − Φ((lo − μ_j)/s))),
//
// independently of the sampler. It implements energy.Gradient; if nan is
// set, log R is NaN where it returns true.
type gaussT struct {
	mu   []float64
	s    float64
	logC float64
	nan  func(x []float32) bool
}

func newGaussT(d int) *gaussT {
	mu := make([]float64, d)
	for j := range mu {
		mu[j] = 1.5 - 0.7*float64(j)
	}
	return &gaussT{mu: mu, s: 0.5, logC: 1.7}
}

func (g *gaussT) Dim() int { return len(g.mu) }

func (g *gaussT) logZBox(lo, hi float64) float64 {
	phi := func(z float64) float64 { return 0.5 * (1 + math.Erf(z/math.Sqrt2)) }
	z := g.logC
	for _, m := range g.mu {
		z += math.Log(math.Sqrt(2*math.Pi) * g.s * (phi((hi-m)/g.s) - phi((lo-m)/g.s)))
	}
	return z
}

func (g *gaussT) LogReward(x []float32, out []float64) error {
	return g.GradLogReward(x, out, make([]float64, len(x)))
}

func (g *gaussT) GradLogReward(x []float32, logR, grad []float64) error {
	d := len(g.mu)
	n, err := energy.Rows(d, x, logR)
	if err != nil {
		return err
	}
	for b := range n {
		row := x[b*d : (b+1)*d]
		var q float64
		for j, c := range row {
			r := float64(c) - g.mu[j]
			q += r * r
			grad[b*d+j] = -r / (g.s * g.s)
		}
		logR[b] = g.logC - q/(2*g.s*g.s)
		if g.nan != nil && g.nan(row) {
			logR[b] = math.NaN()
		}
	}
	return nil
}

// noGrad hides the gradient of an energy.
type noGrad struct{ energy.Energy }

func testOptions() Options {
	return Options{Lower: -5, Upper: 5, Live: 100, Tol: 0.01, StepSize: 1, Samples: 500}
}

// TestLogZGaussian checks log Ẑ against the closed form over repeated runs:
// every run within 4 of its own error estimates, the mean within 3
// standard errors, and the error estimate within a factor 2.5 of the
// spread of the runs.
func TestLogZGaussian(t *testing.T) {
	for _, tc := range []struct {
		d         int
		rejection float64
	}{{2, 0}, {4, 0}, {3, 2}} { // RejectionFraction 2: no rejection phase
		g := newGaussT(tc.d)
		opt := testOptions()
		opt.RejectionFraction = tc.rejection
		want := g.logZBox(opt.Lower, opt.Upper)
		const runs = 12
		var sum, sum2, errSum float64
		for seed := range runs {
			r, err := Run(g, opt, rand.New(rand.NewPCG(uint64(seed), 1)))
			if err != nil {
				t.Fatal(err)
			}
			if dz := r.LogZ - want; math.Abs(dz) > 4*r.LogZErr {
				t.Errorf("d=%d seed %d: log Ẑ = %.4f ± %.4f, want %.4f (off by %.1f σ)", tc.d, seed, r.LogZ, r.LogZErr, want, dz/r.LogZErr)
			}
			if math.Abs(r.LogEZ-r.LogZ) > r.LogZErr {
				t.Errorf("d=%d seed %d: log E[Z] = %.4f far from E[log Z] = %.4f", tc.d, seed, r.LogEZ, r.LogZ)
			}
			sum += r.LogZ
			sum2 += r.LogZ * r.LogZ
			errSum += r.LogZErr
		}
		mean := sum / runs
		sd := math.Sqrt((sum2 - runs*mean*mean) / (runs - 1))
		errMean := errSum / runs
		if math.Abs(mean-want) > 3*errMean/math.Sqrt(runs) {
			t.Errorf("d=%d: mean log Ẑ = %.4f over %d runs, want %.4f ± %.4f", tc.d, mean, runs, want, errMean/math.Sqrt(runs))
		}
		if sd > 2.5*errMean || sd < errMean/2.5 {
			t.Errorf("d=%d: spread of log Ẑ %.4f, error estimate %.4f", tc.d, sd, errMean)
		}
		t.Logf("d=%d rejection=%v: mean log Ẑ − log Z = %+.4f, spread %.4f, estimated error %.4f", tc.d, tc.rejection, mean-want, sd, errMean)
	}
}

// TestPosteriorMoments checks the weighted dead points and the equally
// weighted samples against the posterior N(μ, s²I) (the box truncation is
// negligible at 5 standard deviations).
func TestPosteriorMoments(t *testing.T) {
	g := newGaussT(3)
	opt := testOptions()
	opt.Samples = 4000
	r, err := Run(g, opt, rand.New(rand.NewPCG(7, 1)))
	if err != nil {
		t.Fatal(err)
	}
	d := g.Dim()
	// Kish effective sample size of the dead points.
	var w2 float64
	for _, lw := range r.DeadLogW {
		w2 += math.Exp(2 * lw)
	}
	ess := 1 / w2
	for j := range d {
		var m, v float64
		for i, lw := range r.DeadLogW {
			m += math.Exp(lw) * float64(r.Dead[i*d+j])
		}
		for i, lw := range r.DeadLogW {
			c := float64(r.Dead[i*d+j]) - m
			v += math.Exp(lw) * c * c
		}
		if se := g.s / math.Sqrt(ess); math.Abs(m-g.mu[j]) > 5*se {
			t.Errorf("coordinate %d: weighted mean %.4f, want %.4f ± %.4f", j, m, g.mu[j], se)
		}
		if math.Abs(v/(g.s*g.s)-1) > 5*math.Sqrt(2/ess) {
			t.Errorf("coordinate %d: weighted variance %.4f, want %.4f", j, v, g.s*g.s)
		}
		var sm float64
		n := len(r.Samples) / d
		for i := range n {
			sm += float64(r.Samples[i*d+j])
		}
		sm /= float64(n)
		if math.Abs(sm-g.mu[j]) > 6*g.s/math.Sqrt(ess) {
			t.Errorf("coordinate %d: sample mean %.4f, want %.4f", j, sm, g.mu[j])
		}
	}
	if len(r.Samples) != opt.Samples*d {
		t.Errorf("len(Samples) = %d, want %d", len(r.Samples), opt.Samples*d)
	}
	t.Logf("dead points %d, ESS %.0f", len(r.DeadLogR), ess)
}

// TestDeadMonotone: every new live point lies above the threshold it was
// sampled under, so the log R of the dead points never decreases, and
// every dead point lies in the box and has the log R recorded for it.
func TestDeadMonotone(t *testing.T) {
	for _, rej := range []float64{0, 2} {
		g := newGaussT(3)
		opt := testOptions()
		opt.RejectionFraction = rej
		r, err := Run(g, opt, rand.New(rand.NewPCG(3, 1)))
		if err != nil {
			t.Fatal(err)
		}
		d := g.Dim()
		for i := 1; i < len(r.DeadLogR); i++ {
			if r.DeadLogR[i] < r.DeadLogR[i-1] {
				t.Fatalf("rejection %v: dead point %d has log R %v below its predecessor's %v", rej, i, r.DeadLogR[i], r.DeadLogR[i-1])
			}
		}
		l := make([]float64, len(r.DeadLogR))
		if err := g.LogReward(r.Dead, l); err != nil {
			t.Fatal(err)
		}
		for i := range l {
			if l[i] != r.DeadLogR[i] {
				t.Fatalf("dead point %d: recorded log R %v, recomputed %v", i, r.DeadLogR[i], l[i])
			}
			for _, c := range r.Dead[i*d : (i+1)*d] {
				if float64(c) < opt.Lower || float64(c) > opt.Upper {
					t.Fatalf("dead point %d outside the box: %v", i, r.Dead[i*d:(i+1)*d])
				}
			}
		}
		if r.Steps == 0 || r.GradEvals == 0 {
			t.Errorf("no dynamic steps: %+v", r)
		}
	}
}

// TestSliceConstraint runs Hamiltonian slice sampling directly from points
// above a threshold and checks that every position it returns satisfies
// the constraint (recomputed) and lies in the box, with and without
// velocity noise and for thresholds tight and loose.
func TestSliceConstraint(t *testing.T) {
	g := newGaussT(4)
	d := g.Dim()
	for _, noise := range []bool{false, true} {
		for _, lstar := range []float64{g.logC - 0.5, g.logC - 4, g.logC - 40} {
			o, err := Options{Lower: -5, Upper: 5, NoVelocityNoise: noise, StepSize: 0.3}.resolve(g)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(11, 2))
			s := newSampler(g, o, rng)
			const m = 200
			x0 := make([]float32, 0, m*d)
			row := make([]float32, d)
			var l [1]float64
			for len(x0) < m*d {
				s.drawPrior(row)
				_ = g.LogReward(row, l[:])
				if l[0] > lstar {
					x0 = append(x0, row...)
				}
			}
			v := make([]float64, m*d)
			for i := range m {
				var q float64
				for j := range d {
					v[i*d+j] = rng.NormFloat64()
					q += v[i*d+j] * v[i*d+j]
				}
				for j := range d {
					v[i*d+j] /= math.Sqrt(q)
				}
			}
			out := make([]float32, m*d)
			outL := make([]float64, m)
			ok := make([]bool, m)
			frac, err := s.h.run(s, x0, v, lstar, out, outL, ok)
			if err != nil {
				t.Fatal(err)
			}
			lr := make([]float64, m)
			_ = g.LogReward(out, lr)
			nok := 0
			for i := range m {
				if !ok[i] {
					continue
				}
				nok++
				if !(lr[i] > lstar) || lr[i] != outL[i] {
					t.Fatalf("L*=%v: point %d returned with log R %v (recorded %v)", lstar, i, lr[i], outL[i])
				}
				for _, c := range out[i*d : (i+1)*d] {
					if float64(c) < o.Lower || float64(c) > o.Upper {
						t.Fatalf("L*=%v: point %d outside the box", lstar, i)
					}
				}
			}
			if nok == 0 {
				t.Errorf("L*=%v noise off=%v: no point returned (outside fraction %.2f)", lstar, noise, frac)
			}
		}
	}
}

func TestDeterminism(t *testing.T) {
	g := newGaussT(2)
	a, err := Run(g, testOptions(), rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(g, testOptions(), rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	a.Wall, b.Wall = 0, 0
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs with the same seed differ")
	}
	c, err := Run(g, testOptions(), rand.New(rand.NewPCG(6, 5)))
	if err != nil {
		t.Fatal(err)
	}
	if c.LogZ == a.LogZ {
		t.Error("two seeds give the same log Ẑ")
	}
}

func TestOptionErrors(t *testing.T) {
	g := newGaussT(2)
	ok := testOptions()
	for _, tc := range []struct {
		mod  func(*Options)
		want string
	}{
		{func(o *Options) { o.Lower, o.Upper = 0, 0 }, "[Lower, Upper] = [0, 0]"},
		{func(o *Options) { o.Lower, o.Upper = 1, -1 }, "[Lower, Upper] = [1, -1]"},
		{func(o *Options) { o.Upper = math.Inf(1) }, "+Inf"},
		{func(o *Options) { o.Live = 1 }, "Live = 1"},
		{func(o *Options) { o.Live = -3 }, "Live = -3"},
		{func(o *Options) { o.Tol = 1 }, "Tol = 1"},
		{func(o *Options) { o.Tol = -0.1 }, "Tol = -0.1"},
		{func(o *Options) { o.StepSize = math.NaN() }, "StepSize = NaN"},
		{func(o *Options) { o.MinReflections = -1 }, "MinReflections = -1"},
		{func(o *Options) { o.MaxReflections = -2 }, "MaxReflections = -2"},
		{func(o *Options) { o.MinReflections, o.MaxReflections = 3, 3 }, "MaxReflections = 3, must exceed MinReflections = 3"},
		{func(o *Options) { o.VelocityNoise = -1 }, "VelocityNoise = -1"},
		{func(o *Options) { o.RejectionFraction = -0.5 }, "RejectionFraction = -0.5"},
		{func(o *Options) { o.MaxRejectionDraws = -1 }, "MaxRejectionDraws = -1"},
		{func(o *Options) { o.MaxRounds = -1 }, "MaxRounds = -1"},
		{func(o *Options) { o.Samples = -1 }, "Samples = -1"},
	} {
		o := ok
		tc.mod(&o)
		_, err := Run(g, o, rand.New(rand.NewPCG(1, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "ggns: ") {
			t.Errorf("options %+v: error %v, want one naming %q", o, err, tc.want)
		}
	}
	if _, err := Run(noGrad{g}, ok, rand.New(rand.NewPCG(1, 1))); err == nil || !strings.Contains(err.Error(), "energy.Gradient") {
		t.Errorf("energy without gradient: error %v", err)
	}
	if _, err := Preset("funnel"); err == nil || !strings.Contains(err.Error(), `"funnel"`) {
		t.Errorf("Preset(funnel): error %v", err)
	}
}

// TestNaN: a NaN log R ends the run with an error naming where it
// happened: an initial draw, a rejection-phase draw, or a trajectory.
func TestNaN(t *testing.T) {
	for _, tc := range []struct {
		name      string
		nan       func(x []float32) bool
		rejection float64
		want      []string
	}{
		{"everywhere", func([]float32) bool { return true }, 0, []string{"initial prior draw 0", "log R = NaN"}},
		// Near the mode: reached late, by the rejection phase or by
		// trajectories.
		{"mode/rejection", nearMode(0.3), 0, []string{"log R = NaN", "x = ["}},
		{"mode/trajectory", nearMode(0.3), 2, []string{"dynamic step", "trajectory", "log R = NaN", "x = ["}},
	} {
		g := newGaussT(2)
		g.nan = tc.nan
		opt := testOptions()
		opt.RejectionFraction = tc.rejection
		_, err := Run(g, opt, rand.New(rand.NewPCG(1, 1)))
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not name %q", tc.name, err, w)
			}
		}
	}
}

func nearMode(r float64) func(x []float32) bool {
	mu := newGaussT(2).mu
	return func(x []float32) bool {
		var q float64
		for j, c := range x {
			q += (float64(c) - mu[j]) * (float64(c) - mu[j])
		}
		return q < r*r
	}
}

// TestEvidenceMoments checks the moment recursion against a Monte Carlo
// simulation of the volume shrinkage t ~ Beta(n, 1) for a fixed sequence
// of likelihoods and live-point counts (n falling as a dynamic step kills,
// then back up).
func TestEvidenceMoments(t *testing.T) {
	ls := []float64{-3, -2, -1.5, -1, -0.7, -0.5, -0.2, 0, 0.1, 0.2}
	ns := []int{6, 5, 4, 6, 5, 4, 6, 3, 2, 1}
	e := newEvidence()
	for k, l := range ls {
		e.kill(l, 0, ns[k])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const reps = 400000
	var sz, sz2 float64
	for range reps {
		x, z := 1.0, 0.0
		for k, l := range ls {
			tk := math.Pow(rng.Float64(), 1/float64(ns[k])) // Beta(n, 1)
			z += math.Exp(l) * x * (1 - tk)
			x *= tk
		}
		sz += z
		sz2 += z * z
	}
	ez, ez2 := sz/reps, sz2/reps
	if math.Abs(math.Exp(e.logZ)/ez-1) > 0.005 || math.Abs(math.Exp(e.logZ2)/ez2-1) > 0.01 {
		t.Errorf("E[Z] = %v, E[Z²] = %v; simulation %v, %v", math.Exp(e.logZ), math.Exp(e.logZ2), ez, ez2)
	}
}
