package smc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
)

// gaussT is the test target R(x) = C·exp(−½(x − μ)ᵀP(x − μ)) with
// precision P = LLᵀ, L lower triangular with a positive diagonal, so that
// Z = C·(2π)^{d/2}·det(P)^{−1/2} and det P = Π L_ii² are known in closed
// form, independently of the sampler. It implements energy.Gradient; its
// nan function, if set, makes log R NaN where it returns true.
type gaussT struct {
	mu   []float64
	l    [][]float64 // lower-triangular factor of P, row-major
	logC float64
	nan  func(x []float32) bool
}

func newGaussT() *gaussT {
	return &gaussT{
		mu:   []float64{1, -0.5, 0.7},
		l:    [][]float64{{1.2, 0, 0}, {0.3, 0.8, 0}, {-0.2, 0.4, 1.5}},
		logC: 2.3,
	}
}

func (g *gaussT) Dim() int { return len(g.mu) }

// LogZ is log C + (d/2)·log 2π − Σ log L_ii.
func (g *gaussT) LogZ() float64 {
	z := g.logC + 0.5*float64(len(g.mu))*math.Log(2*math.Pi)
	for i := range g.l {
		z -= math.Log(g.l[i][i])
	}
	return z
}

func (g *gaussT) LogReward(x []float32, out []float64) error {
	return g.GradLogReward(x, out, make([]float64, len(x)))
}

// GradLogReward computes r = x − μ, v = Lᵀr, log R = log C − ½‖v‖² and
// ∇log R = −Lv = −Pr.
func (g *gaussT) GradLogReward(x []float32, logR, grad []float64) error {
	d := len(g.mu)
	n, err := energy.Rows(d, x, logR)
	if err != nil {
		return err
	}
	r, v := make([]float64, d), make([]float64, d)
	for b := range n {
		row := x[b*d : (b+1)*d]
		for i := range d {
			r[i] = float64(row[i]) - g.mu[i]
		}
		var q float64
		for j := range d { // v_j = Σ_i L_ij r_i
			v[j] = 0
			for i := j; i < d; i++ {
				v[j] += g.l[i][j] * r[i]
			}
			q += v[j] * v[j]
		}
		logR[b] = g.logC - 0.5*q
		for i := range d { // (Lv)_i = Σ_{j≤i} L_ij v_j
			var s float64
			for j := 0; j <= i; j++ {
				s += g.l[i][j] * v[j]
			}
			grad[b*d+i] = -s
		}
		if g.nan != nil && g.nan(row) {
			logR[b] = math.NaN()
		}
	}
	return nil
}

// noGrad hides the gradient of an energy.
type noGrad struct{ e energy.Energy }

func (n noGrad) Dim() int                                   { return n.e.Dim() }
func (n noGrad) LogReward(x []float32, out []float64) error { return n.e.LogReward(x, out) }

func meanStd(v []float64) (m, s float64) {
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)-1))
}

// TestUnbiasedZ checks over M independent runs that Ẑ/Z has mean 1 within
// three standard errors, and that log Ẑ is biased low, with the schedule
// fixed in advance (no adaptation; resampling whenever the weights
// differ) and with the adaptive defaults.
func TestUnbiasedZ(t *testing.T) {
	g := newGaussT()
	logZ := g.LogZ()
	const M = 1000
	for ci, tc := range []struct {
		name string
		opt  Options
	}{
		{"fixed", Options{PriorVar: 4, Particles: 16, Temperatures: 3, Steps: 1, StepSize: 0.2, NoAdapt: true, ESSThreshold: 1}},
		{"adaptive", Options{PriorVar: 4, Particles: 16, Temperatures: 3, Steps: 1}},
		{"ais-hmc", Options{PriorVar: 4, Particles: 16, Temperatures: 2, Kernel: HMC, Leapfrog: 2, ESSThreshold: -1}},
		{"rwm", Options{PriorVar: 4, Particles: 16, Temperatures: 3, Kernel: RWM, Steps: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ratio, dlog := make([]float64, M), make([]float64, M)
			for m := range M {
				r, err := Run(g, tc.opt, rand.New(rand.NewPCG(uint64(m), uint64(11+ci))))
				if err != nil {
					t.Fatal(err)
				}
				dlog[m] = r.LogZ - logZ
				ratio[m] = math.Exp(dlog[m])
			}
			mr, sr := meanStd(ratio)
			se := sr / math.Sqrt(M)
			ml, sl := meanStd(dlog)
			sel := sl / math.Sqrt(M)
			t.Logf("mean Ẑ/Z = %.4f ± %.4f (SE); mean log Ẑ − log Z = %.4f ± %.4f (SE), sd %.3f", mr, se, ml, sel, sl)
			if math.Abs(mr-1) > 3*se {
				t.Errorf("mean Ẑ/Z = %.4f, more than 3 SE (%.4f) from 1", mr, se)
			}
			if ml > -3*sel {
				t.Errorf("mean log Ẑ − log Z = %.4f is not significantly negative (SE %.4f)", ml, sel)
			}
			// Jensen's gap is about Var(log Ẑ)/2.
			if want := -sl * sl / 2; math.Abs(ml-want) > 0.5*math.Abs(want)+3*sel {
				t.Errorf("mean log Ẑ − log Z = %.4f, far from −Var/2 = %.4f", ml, want)
			}
		})
	}
}

// TestImportanceSampling: with K = 1 and no moves the sampler is plain
// importance sampling from the prior; the test redraws the prior samples
// from the same seed and computes the weights, log Ẑ and ESS directly.
func TestImportanceSampling(t *testing.T) {
	g := newGaussT()
	const n, seed, sigma2 = 500, 5, 1.7
	d := g.Dim()
	r, err := Run(g, Options{Particles: n, Temperatures: 1, Kernel: None, PriorVar: sigma2, ESSThreshold: -1}, rand.New(rand.NewPCG(seed, 3)))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(math.Sqrt(sigma2) * rng.NormFloat64())
	}
	logR := make([]float64, n)
	if err := g.LogReward(x, logR); err != nil {
		t.Fatal(err)
	}
	logw := make([]float64, n)
	var maxW float64 = math.Inf(-1)
	for i := range n {
		var q float64
		for _, v := range x[i*d : (i+1)*d] {
			q += float64(v) * float64(v)
		}
		logP0 := -q/(2*sigma2) - float64(d)/2*math.Log(2*math.Pi*sigma2)
		logw[i] = logR[i] - logP0
		maxW = max(maxW, logw[i])
	}
	var sw, sw2 float64
	for _, lw := range logw {
		w := math.Exp(lw - maxW)
		sw += w
		sw2 += w * w
	}
	wantLogZ := maxW + math.Log(sw/n)
	if !reflect.DeepEqual(r.X, x) {
		t.Fatal("particles differ from the prior draws")
	}
	if math.Abs(r.LogZ-wantLogZ) > 1e-12*math.Abs(wantLogZ) {
		t.Errorf("log Ẑ = %.15g, want %.15g", r.LogZ, wantLogZ)
	}
	if math.Abs(r.LogZ-g.LogZ()) > 0.2 {
		t.Errorf("log Ẑ = %v, true log Z %v", r.LogZ, g.LogZ())
	}
	for i, lw := range logw {
		want := lw - maxW - math.Log(sw)
		if math.Abs(r.LogW[i]-want) > 1e-10 {
			t.Fatalf("log W[%d] = %v, want %v", i, r.LogW[i], want)
		}
	}
	if want := sw * sw / sw2; len(r.ESS) != 1 || math.Abs(r.ESS[0]-want) > 1e-9*want {
		t.Errorf("ESS = %v, want [%v]", r.ESS, want)
	}
	if r.EnergyEvals != n || r.GradEvals != 0 {
		t.Errorf("evaluations %d + %d gradient, want %d + 0", r.EnergyEvals, r.GradEvals, n)
	}
	// Samples: a systematic resampling of X by W.
	counts := make(map[string]int)
	for i := range n {
		counts[fmt.Sprint(r.Samples[i*d:(i+1)*d])]++
	}
	for i := range n {
		c := counts[fmt.Sprint(x[i*d:(i+1)*d])]
		if w := n * math.Exp(r.LogW[i]); math.Abs(float64(c)-w) >= 1+1e-9 {
			t.Fatalf("particle %d: %d copies in Samples, N·W = %.3f", i, c, w)
		}
	}
}

// TestSystematic: every index is drawn ⌊M·W⌋ or ⌈M·W⌉ times, zero weights
// never, indices in order, and over u the mean count is M·W.
func TestSystematic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct{ n, m int }{{1, 1}, {1, 7}, {5, 5}, {10, 3}, {10, 1000}, {257, 100}, {1000, 1000}} {
		logW := make([]float64, tc.n)
		for i := range logW {
			logW[i] = 3 * rng.NormFloat64()
			if tc.n > 1 && rng.IntN(5) == 0 {
				logW[i] = math.Inf(-1)
			}
		}
		if tc.n > 1 {
			logW[0] = 0 // at least one positive weight
		}
		var tot float64
		for _, lw := range logW {
			tot += math.Exp(lw)
		}
		dst := make([]int, tc.m)
		mean := make([]float64, tc.n)
		const U = 2000
		for k := range U {
			u := (float64(k) + 0.5) / U
			Systematic(dst, logW, u)
			counts := make([]int, tc.n)
			for j, idx := range dst {
				if j > 0 && idx < dst[j-1] {
					t.Fatalf("n=%d m=%d: indices not sorted: %v", tc.n, tc.m, dst)
				}
				counts[idx]++
			}
			for i, c := range counts {
				mw := float64(tc.m) * math.Exp(logW[i]) / tot
				if math.Abs(float64(c)-mw) >= 1+1e-9 || (mw == 0 && c != 0) {
					t.Fatalf("n=%d m=%d u=%v: index %d drawn %d times, M·W = %v", tc.n, tc.m, u, i, c, mw)
				}
				mean[i] += float64(c) / U
			}
		}
		for i := range mean {
			if mw := float64(tc.m) * math.Exp(logW[i]) / tot; math.Abs(mean[i]-mw) > 1e-3*max(1, mw) {
				t.Errorf("n=%d m=%d: index %d mean count %v over u, want %v", tc.n, tc.m, i, mean[i], mw)
			}
		}
	}
	for _, f := range []func(){
		func() { Systematic(make([]int, 2), []float64{0, 0}, 1) },
		func() { Systematic(make([]int, 2), []float64{math.Inf(-1)}, 0.5) },
		func() { Systematic(make([]int, 2), []float64{0, math.NaN()}, 0.5) },
		func() { Systematic(make([]int, 2), nil, 0.5) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}

// TestAdaptation: from a step size far too small (acceptance ≈ 1) or far
// too large (≈ 0), adaptation brings the acceptance rate to the target
// within a few temperatures; without adaptation it stays where it began.
func TestAdaptation(t *testing.T) {
	g := newGaussT()
	for _, tc := range []struct {
		kernel      string
		target      float64
		small, huge float64
	}{
		{MALA, 0.574, 1e-5, 1e4},
		{HMC, 0.65, 1e-2, 10},
		{RWM, 0.234, 1e-4, 300},
	} {
		for _, start := range []float64{tc.small, tc.huge} {
			name := fmt.Sprintf("%s/%g", tc.kernel, start)
			opt := Options{Particles: 1000, Temperatures: 40, Kernel: tc.kernel, StepSize: start}
			r, err := Run(g, opt, rand.New(rand.NewPCG(2, 2)))
			if err != nil {
				t.Fatal(name, err)
			}
			first := r.Accept[0]
			if (start == tc.small && first < 0.9) || (start == tc.huge && first > 0.1) {
				t.Errorf("%s: first acceptance %.3f", name, first)
			}
			var last float64 // mean over the last 10 temperatures
			for _, a := range r.Accept[len(r.Accept)-10:] {
				last += a / 10
			}
			if math.Abs(last-tc.target) > 0.05 {
				t.Errorf("%s: late acceptance %.3f, want %.3f ± 0.05 (trace %.2f)", name, last, tc.target, r.Accept)
			}
			if r.Options.TargetAccept != tc.target {
				t.Errorf("%s: TargetAccept default %v, want %v", name, r.Options.TargetAccept, tc.target)
			}
			opt.NoAdapt = true
			r, err = Run(g, opt, rand.New(rand.NewPCG(2, 2)))
			if err != nil {
				t.Fatal(name, err)
			}
			for k, a := range r.Accept {
				if (start == tc.small && a < 0.9) || (start == tc.huge && a > 0.1) || r.StepSize[k] != start {
					t.Errorf("%s, no adaptation: temperature %d acceptance %.3f step %v", name, k+1, a, r.StepSize[k])
					break
				}
			}
		}
	}
}

// TestTarget: the weighted particles reproduce the target's mean and
// covariance, and log Ẑ its log Z, for every kernel.
func TestTarget(t *testing.T) {
	g := newGaussT()
	d := g.Dim()
	// Σ = P⁻¹ from P = LLᵀ by Gauss–Jordan on the 3×3 matrix.
	p := make([][]float64, d)
	for i := range d {
		p[i] = make([]float64, 2*d)
		for j := range d {
			for k := range d {
				p[i][j] += g.l[i][k] * g.l[j][k]
			}
		}
		p[i][d+i] = 1
	}
	for c := range d {
		piv := p[c][c]
		for j := range p[c] {
			p[c][j] /= piv
		}
		for r := range d {
			if r != c {
				f := p[r][c]
				for j := range p[r] {
					p[r][j] -= f * p[c][j]
				}
			}
		}
	}
	for _, k := range []string{MALA, HMC, RWM} {
		r, err := Run(g, Options{Kernel: k, Particles: 4000, Temperatures: 32}, rand.New(rand.NewPCG(4, 4)))
		if err != nil {
			t.Fatal(k, err)
		}
		if math.Abs(r.LogZ-g.LogZ()) > 0.05 {
			t.Errorf("%s: log Ẑ = %.4f, log Z = %.4f", k, r.LogZ, g.LogZ())
		}
		mean := make([]float64, d)
		for i, lw := range r.LogW {
			for j := range d {
				mean[j] += math.Exp(lw) * float64(r.X[i*d+j])
			}
		}
		for j := range d {
			if math.Abs(mean[j]-g.mu[j]) > 0.1 {
				t.Errorf("%s: mean[%d] = %.3f, want %.3f", k, j, mean[j], g.mu[j])
			}
		}
		for a := range d {
			for b := range d {
				var c float64
				for i := range r.LogW {
					c += (float64(r.Samples[i*d+a]) - g.mu[a]) * (float64(r.Samples[i*d+b]) - g.mu[b])
				}
				c /= float64(len(r.LogW))
				if want := p[a][d+b]; math.Abs(c-want) > 0.15 {
					t.Errorf("%s: cov[%d][%d] = %.3f, want %.3f", k, a, b, c, want)
				}
			}
		}
	}
}

// TestCost counts the target evaluations and checks the traces' lengths.
func TestCost(t *testing.T) {
	g := newGaussT()
	const n, K = 50, 7
	for _, tc := range []struct {
		opt         Options
		energy, grd int
	}{
		{Options{Kernel: MALA, Steps: 3}, 0, n * (1 + K*3)},
		{Options{Kernel: HMC, Steps: 2, Leapfrog: 4}, 0, n * (1 + K*2*4)},
		{Options{Kernel: RWM, Steps: 5}, n * (1 + K*5), 0},
		{Options{Kernel: None}, n, 0},
	} {
		tc.opt.Particles, tc.opt.Temperatures = n, K
		r, err := Run(g, tc.opt, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if r.EnergyEvals != tc.energy || r.GradEvals != tc.grd {
			t.Errorf("%s: %d LogReward + %d GradLogReward rows, want %d + %d", tc.opt.Kernel, r.EnergyEvals, r.GradEvals, tc.energy, tc.grd)
		}
		for _, l := range []int{len(r.ESS), len(r.Resampled), len(r.Accept), len(r.StepSize), len(r.Options.Betas)} {
			if l != K {
				t.Errorf("%s: a trace has %d entries, want %d", tc.opt.Kernel, l, K)
			}
		}
		if len(r.X) != n*3 || len(r.Samples) != n*3 || len(r.LogW) != n || len(r.LogR) != n || r.Wall <= 0 {
			t.Errorf("%s: result sizes %d %d %d %d, wall %v", tc.opt.Kernel, len(r.X), len(r.Samples), len(r.LogW), len(r.LogR), r.Wall)
		}
		if lse := logSumExp(r.LogW); math.Abs(lse) > 1e-12 {
			t.Errorf("%s: log Σ W = %v, want 0", tc.opt.Kernel, lse)
		}
	}
	// A resampling at the last temperature leaves equal weights, and
	// Samples is X.
	r, err := Run(g, Options{Particles: n, Temperatures: K, ESSThreshold: 1}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Resampled[K-1] || !reflect.DeepEqual(r.Samples, r.X) {
		t.Errorf("resampled at the last temperature: %v; Samples equal X: %v", r.Resampled[K-1], reflect.DeepEqual(r.Samples, r.X))
	}
	// Without a gradient the default kernel is random-walk Metropolis.
	r, err = Run(noGrad{g}, Options{Particles: n, Temperatures: K}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Options.Kernel != RWM || r.GradEvals != 0 || r.EnergyEvals != n*(1+K*10) {
		t.Errorf("no gradient: kernel %q, %d + %d rows", r.Options.Kernel, r.EnergyEvals, r.GradEvals)
	}
	// An explicit ladder.
	r, err = Run(g, Options{Particles: n, Betas: []float64{0.01, 0.1, 0.5, 1}}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ESS) != 4 || r.Options.Temperatures != 4 {
		t.Errorf("Betas: %d temperatures", len(r.ESS))
	}
}

// TestDeterministic: the same seed gives the same run, another seed
// another.
func TestDeterministic(t *testing.T) {
	g := newGaussT()
	for _, k := range []string{MALA, HMC, RWM, None} {
		opt := Options{Particles: 200, Temperatures: 10, Kernel: k}
		a, err := Run(g, opt, rand.New(rand.NewPCG(9, 9)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(g, opt, rand.New(rand.NewPCG(9, 9)))
		if err != nil {
			t.Fatal(err)
		}
		a.Wall, b.Wall = 0, 0
		if fmt.Sprint(*a) != fmt.Sprint(*b) { // Sprint: NaN traces compare equal
			t.Errorf("%s: two runs with the same seed differ", k)
		}
		c, err := Run(g, opt, rand.New(rand.NewPCG(10, 9)))
		if err != nil {
			t.Fatal(err)
		}
		if c.LogZ == a.LogZ || reflect.DeepEqual(c.X, a.X) {
			t.Errorf("%s: another seed gives the same run", k)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	g := newGaussT()
	for _, tc := range []struct {
		opt  Options
		want string
	}{
		{Options{Particles: -1}, "Particles = -1"},
		{Options{Temperatures: -2}, "Temperatures = -2"},
		{Options{PriorVar: -1}, "PriorVar = -1"},
		{Options{PriorVar: math.NaN()}, "PriorVar = NaN"},
		{Options{PriorVar: math.Inf(1)}, "PriorVar = +Inf"},
		{Options{Kernel: "nuts"}, `Kernel "nuts" is unknown`},
		{Options{Steps: -3}, "Steps = -3"},
		{Options{Leapfrog: -1}, "Leapfrog = -1"},
		{Options{StepSize: math.NaN()}, "StepSize = NaN"},
		{Options{StepSize: -0.1}, "StepSize = -0.1"},
		{Options{TargetAccept: 1.5}, "TargetAccept = 1.5"},
		{Options{TargetAccept: -0.5}, "TargetAccept = -0.5"},
		{Options{AdaptGain: -1}, "AdaptGain = -1"},
		{Options{ESSThreshold: 1.5}, "ESSThreshold = 1.5"},
		{Options{ESSThreshold: math.NaN()}, "ESSThreshold = NaN"},
		{Options{Betas: []float64{}}, "Betas is empty"},
		{Options{Betas: []float64{0.5, 0.4, 1}}, "Betas[1] = 0.4"},
		{Options{Betas: []float64{0, 1}}, "Betas[0] = 0"},
		{Options{Betas: []float64{0.5, 1.2}}, "Betas[1] = 1.2"},
		{Options{Betas: []float64{0.5, 0.9}}, "Betas ends at 0.9"},
	} {
		_, err := Run(g, tc.opt, rand.New(rand.NewPCG(1, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "smc: ") {
			t.Errorf("%+v: error %v, want one containing %q", tc.opt, err, tc.want)
		}
	}
	for _, k := range []string{MALA, HMC} {
		_, err := Run(noGrad{g}, Options{Kernel: k}, rand.New(rand.NewPCG(1, 1)))
		if err == nil || !strings.Contains(err.Error(), "energy.Gradient") || !strings.Contains(err.Error(), k) {
			t.Errorf("%s without a gradient: error %v", k, err)
		}
	}
}

// TestNaN: a NaN log R stops the run with an error naming the temperature
// and the particle: at the initial draw (temperature 0, the first particle
// in the NaN region, found by redrawing the prior) and during the moves.
func TestNaN(t *testing.T) {
	g := newGaussT()
	g.nan = func(x []float32) bool { return x[0] > 0.8 }
	rng := rand.New(rand.NewPCG(3, 3))
	first := -1
	for i := 0; first < 0; i++ {
		x0 := float32(rng.NormFloat64())
		rng.NormFloat64()
		rng.NormFloat64()
		if x0 > 0.8 {
			first = i
		}
	}
	_, err := Run(g, Options{Particles: 100}, rand.New(rand.NewPCG(3, 3)))
	if want := fmt.Sprintf("temperature 0, particle %d: log R = NaN", first); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("NaN at the prior draws: error %v, want one containing %q", err, want)
	}

	// The target sits at x₀ = 5, beyond the NaN region x₀ > 3.5 that the
	// prior N(0, 0.25·I) never reaches: the moves do.
	g = newGaussT()
	g.mu[0] = 5
	g.nan = func(x []float32) bool { return x[0] > 3.5 }
	re := regexp.MustCompile(`^smc: temperature (\d+) \(β = [^)]*\), MCMC step \d+, (leapfrog step \d+, )?particle (\d+): `)
	for _, k := range []string{MALA, HMC, RWM} {
		_, err := Run(g, Options{Particles: 100, Kernel: k, PriorVar: 0.25, Temperatures: 20}, rand.New(rand.NewPCG(3, 3)))
		if err == nil {
			t.Errorf("%s: no error", k)
			continue
		}
		m := re.FindStringSubmatch(err.Error())
		if m == nil || !strings.Contains(err.Error(), "NaN") {
			t.Errorf("%s: error %q does not name the temperature and particle of the NaN", k, err)
			continue
		}
		if temp, _ := strconv.Atoi(m[1]); temp < 1 || temp > 20 {
			t.Errorf("%s: temperature %d in %q", k, temp, err)
		}
		if p, _ := strconv.Atoi(m[3]); p >= 100 {
			t.Errorf("%s: particle %d in %q", k, p, err)
		}
	}
}

// TestNonFiniteProposal: proposals that overflow float32 or have
// log R = −Inf are rejected, not errors.
func TestNonFiniteProposal(t *testing.T) {
	g := &wall{newGaussT()}
	r, err := Run(g, Options{Particles: 200, Temperatures: 5, Kernel: RWM, StepSize: 1e39, NoAdapt: true, PriorVar: 0.2}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for k, a := range r.Accept {
		if a != 0 {
			t.Errorf("temperature %d: acceptance %v of overflowing proposals", k+1, a)
		}
	}
	r, err = Run(g, Options{Particles: 200, Temperatures: 5, Kernel: MALA, StepSize: 3, NoAdapt: true, PriorVar: 0.2}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.LogW {
		if r.X[i*3] < -2 {
			t.Fatalf("particle %d at x₀ = %v, outside the support", i, r.X[i*3])
		}
	}
}

// wall is a Gaussian truncated to x₀ ≥ −2: log R = −Inf below, with a
// NaN gradient there.
type wall struct{ g *gaussT }

func (w *wall) Dim() int { return 3 }
func (w *wall) LogReward(x []float32, out []float64) error {
	return w.GradLogReward(x, out, make([]float64, len(x)))
}
func (w *wall) GradLogReward(x []float32, logR, grad []float64) error {
	if err := w.g.GradLogReward(x, logR, grad); err != nil {
		return err
	}
	for b := range logR {
		if x[3*b] < -2 {
			logR[b] = math.Inf(-1)
			grad[3*b] = math.NaN()
		}
	}
	return nil
}
