package langevin

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
)

// gauss2 is the 2-D Gaussian N(mu, Σ) with precision P = Σ⁻¹, as an
// energy.Gradient: log R = −½(x − μ)ᵀP(x − μ).
type gauss2 struct {
	mu [2]float64
	p  [2][2]float64
}

func newGauss2(mu [2]float64, cov [2][2]float64) gauss2 {
	det := cov[0][0]*cov[1][1] - cov[0][1]*cov[1][0]
	return gauss2{mu: mu, p: [2][2]float64{{cov[1][1] / det, -cov[0][1] / det}, {-cov[1][0] / det, cov[0][0] / det}}}
}

func (g gauss2) Dim() int { return 2 }

func (g gauss2) LogReward(x []float32, out []float64) error {
	return g.GradLogReward(x, out, make([]float64, len(x)))
}

func (g gauss2) GradLogReward(x []float32, logR, grad []float64) error {
	n, err := energy.Rows(2, x, logR)
	if err != nil {
		return err
	}
	for b := range n {
		r0, r1 := float64(x[2*b])-g.mu[0], float64(x[2*b+1])-g.mu[1]
		g0, g1 := g.p[0][0]*r0+g.p[0][1]*r1, g.p[1][0]*r0+g.p[1][1]*r1
		logR[b] = -0.5 * (r0*g0 + r1*g1)
		grad[2*b], grad[2*b+1] = -g0, -g1
	}
	return nil
}

// scripted is a 1-D stub whose proposals are accepted or rejected as a
// script says: call 0 evaluates the initial states (log R = 0), call i+1
// the proposals of step i, which get log R = 1000·(i+1) (above every
// earlier value: accepted for sure) or −1e12 (rejected for sure). The
// gradient is zero, so the proposal is symmetric and log α = Δ log R.
type scripted struct {
	calls  int
	accept func(step, row int) bool
	bad    func(step, row int) float64 // if not nil and not 0, log R to return instead
}

func (s *scripted) Dim() int { return 1 }

func (s *scripted) LogReward(x []float32, out []float64) error {
	return s.GradLogReward(x, out, make([]float64, len(x)))
}

func (s *scripted) GradLogReward(x []float32, logR, grad []float64) error {
	step := s.calls - 1
	s.calls++
	for b := range x {
		grad[b] = 0
		switch {
		case step < 0:
			logR[b] = 0
		case s.accept(step, b):
			logR[b] = 1000 * float64(step+1)
		default:
			logR[b] = -1e12
		}
		if s.bad != nil {
			if v := s.bad(step, b); v != 0 {
				logR[b] = v
			}
		}
	}
	return nil
}

func TestOptions(t *testing.T) {
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Steps: 200, BurnIn: 100, StepSize: 0.001, TargetAccept: 0.574, Grow: 1.01, Shrink: 0.99, AdaptEvery: 5}
	if got := c.Options(); got != want {
		t.Errorf("defaults %+v, want the reference's %+v", got, want)
	}
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{Steps: -1}, "Steps = -1"},
		{Options{AdaptEvery: -2}, "AdaptEvery = -2"},
		{Options{StepSize: -0.1}, "StepSize = -0.1"},
		{Options{StepSize: math.NaN()}, "StepSize = NaN"},
		{Options{TargetAccept: 1}, "TargetAccept = 1"},
		{Options{Grow: math.Inf(1)}, "Grow = +Inf"},
		{Options{Shrink: -1}, "Shrink = -1"},
	} {
		_, err := New(c.opt)
		if err == nil || !strings.HasPrefix(err.Error(), "langevin: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v): error %v, want one naming %q", c.opt, err, c.want)
		}
	}
}

// TestOneStep replays one step with an independent computation: the same
// random stream, the proposal drawn by hand, and the acceptance
// probability from the full Gaussian densities of target and proposal
// (normalisers included) rather than the simplified ratio.
func TestOneStep(t *testing.T) {
	g := newGauss2([2]float64{1, -2}, [2][2]float64{{0.5, 0.3}, {0.3, 2}})
	const n, eta, seed = 400, 0.4, 11
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, 2*n)
	for i := range x {
		x[i] = float32(3 * rng.NormFloat64())
	}
	x0 := append([]float32(nil), x...)

	var got Step
	var gotX []float32
	var gotAcc []bool
	st, err := Run(g, x, Options{Steps: 1, BurnIn: -1, StepSize: eta}, rand.New(rand.NewPCG(seed, 8)), func(s Step) error {
		got = s
		gotX, gotAcc = append([]float32(nil), s.X...), append([]bool(nil), s.Accepted...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Index != 0 || got.StepSize != eta || st.Steps != 1 || st.Proposals != n {
		t.Fatalf("step %+v, stats %+v", got, st)
	}

	// The twin stream: 2 normals per row in row order, then a uniform per row.
	twin := rand.New(rand.NewPCG(seed, 8))
	logPi := func(v [2]float64) float64 {
		r := [2]float64{v[0] - g.mu[0], v[1] - g.mu[1]}
		var q float64
		for i := range 2 {
			for j := range 2 {
				q += r[i] * g.p[i][j] * r[j]
			}
		}
		return -0.5 * q
	}
	grad := func(v [2]float64) [2]float64 {
		const h = 1e-5 // central differences of logPi, exact for a quadratic up to rounding
		var out [2]float64
		for i := range 2 {
			p, m := v, v
			p[i] += h
			m[i] -= h
			out[i] = (logPi(p) - logPi(m)) / (2 * h)
		}
		return out
	}
	logQ := func(to, from [2]float64) float64 { // log N(to; from + η∇log π(from), 2η I)
		gr := grad(from)
		var ss float64
		for i := range 2 {
			r := to[i] - from[i] - eta*gr[i]
			ss += r * r
		}
		return -ss/(4*eta) - math.Log(4*math.Pi*eta)
	}
	// The proposal uses the energy's own gradient, so that it matches the
	// package's bit for bit; the acceptance test below does not.
	gx0, lx0 := make([]float64, 2*n), make([]float64, n)
	g.GradLogReward(x0, lx0, gx0)
	ys := make([][2]float64, n)
	for b := range n {
		xb := [2]float64{float64(x0[2*b]), float64(x0[2*b+1])}
		gr := gx0[2*b : 2*b+2]
		for i := range 2 {
			ys[b][i] = float64(float32(xb[i] + eta*gr[i] + math.Sqrt(2*eta)*twin.NormFloat64()))
		}
	}
	nAcc := 0
	for b := range n {
		xb := [2]float64{float64(x0[2*b]), float64(x0[2*b+1])}
		yb := ys[b]
		logAlpha := logPi(yb) - logPi(xb) + logQ(xb, yb) - logQ(yb, xb)
		u := twin.Float64()
		acc := u < math.Min(1, math.Exp(logAlpha))

		// The package's formula agrees with the full-density one.
		var gx, gy [2]float64
		var lr [1]float64
		g.GradLogReward([]float32{float32(xb[0]), float32(xb[1])}, lr[:], gx[:])
		lx := lr[0]
		g.GradLogReward([]float32{float32(yb[0]), float32(yb[1])}, lr[:], gy[:])
		la := logAccept(x0[2*b:2*b+2], []float32{float32(yb[0]), float32(yb[1])}, gx[:], gy[:], lx, lr[0], eta)
		if math.Abs(la-logAlpha) > 1e-6*max(1, math.Abs(logAlpha)) {
			t.Errorf("row %d: log α = %.12g, independent %.12g", b, la, logAlpha)
		}
		// Decisions agree, except where u sits within rounding of α.
		if acc != gotAcc[b] && math.Abs(u-math.Exp(min(logAlpha, 0))) > 1e-9 {
			t.Errorf("row %d: accepted %v, independent decision %v (u = %v, α = %v)", b, gotAcc[b], acc, u, math.Exp(logAlpha))
		}
		want := xb
		if gotAcc[b] {
			want = yb
			nAcc++
		}
		if float64(gotX[2*b]) != want[0] || float64(gotX[2*b+1]) != want[1] {
			t.Errorf("row %d: state (%v, %v), want (%v, %v)", b, gotX[2*b], gotX[2*b+1], want[0], want[1])
		}
	}
	if nAcc == 0 || nAcc == n || nAcc != st.Accepted {
		t.Errorf("%d of %d accepted (stats %d): want a mix", nAcc, n, st.Accepted)
	}
	for i := range x { // x is the chain's state, updated in place
		if x[i] != gotX[i] {
			t.Fatalf("x[%d] = %v after Run, want the final state %v", i, x[i], gotX[i])
		}
	}
}

// TestAdaptation drives the acceptance rate with a scripted energy and
// checks every step's η against the reference's rule, written out by hand:
// η changes before every step from step 1 on, ×Grow if the last computed
// rate is strictly above the target, ×Shrink otherwise, and the rate is
// recomputed after steps 0, 5, 10, … over the steps since the last one.
func TestAdaptation(t *testing.T) {
	const n = 1000
	const g, s = 1.01, 0.99
	for _, c := range []struct {
		name    string
		every   int
		accepts []int // rows accepted at each step
		factors []float64
	}{{
		name:  "reference windows",
		every: 5,
		// Windows: {0} rate 1; {1..5} 0; {6..10} 0.574 exactly (not above);
		// {11..15} 0.575; {16..20} 2871/5000 = 0.5742; {21..25} 0.5738.
		accepts: []int{
			1000,
			0, 0, 0, 0, 0,
			574, 574, 574, 574, 574,
			575, 575, 575, 575, 575,
			1000, 1000, 0, 0, 871,
			1000, 1000, 0, 0, 869,
			0},
		factors: []float64{
			1,
			g, g, g, g, g, // rate 1 of step 0
			s, s, s, s, s, // rate 0 of steps 1–5
			s, s, s, s, s, // 0.574 is not above the target
			g, g, g, g, g,
			g, g, g, g, g,
			s},
	}, {
		name:    "every step",
		every:   1,
		accepts: []int{1000, 0, 574, 575, 0, 1000},
		factors: []float64{1, g, s, s, g, s},
	}} {
		e := &scripted{accept: func(step, row int) bool { return row < c.accepts[step] }}
		x := make([]float32, n)
		eta := 0.001
		total := 0
		st, err := Run(e, x, Options{Steps: len(c.accepts), BurnIn: -1, AdaptEvery: c.every}, rand.New(rand.NewPCG(1, 2)), func(st Step) error {
			eta *= c.factors[st.Index]
			if st.StepSize != eta {
				t.Errorf("%s: step %d: η = %.17g, want %.17g", c.name, st.Index, st.StepSize, eta)
			}
			k := 0
			for _, a := range st.Accepted {
				if a {
					k++
				}
			}
			if k != c.accepts[st.Index] {
				t.Errorf("%s: step %d: %d accepted, script says %d", c.name, st.Index, k, c.accepts[st.Index])
			}
			total += k
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if st.Accepted != total || st.StepSize != eta || st.Steps != len(c.accepts) {
			t.Errorf("%s: stats %+v, want %d accepted, final η %v", c.name, st, total, eta)
		}
	}
}

// TestCollect checks what the reference's local search returns: every
// accepted proposal of the steps i > 100 (0-based), step-major, with its
// log R.
func TestCollect(t *testing.T) {
	const n = 7
	accept := func(step, row int) bool { return (step+row)%3 == 0 }
	e := &scripted{accept: accept}
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, n)
	xs, logR, st, err := c.Collect(e, x, rand.New(rand.NewPCG(3, 4)), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	for i := 101; i < 200; i++ {
		for b := range n {
			if accept(i, b) {
				want = append(want, 1000*float64(i+1))
			}
		}
	}
	if len(logR) != len(want) || len(xs) != len(want) || st.Reported != len(want) || st.Steps != 200 {
		t.Fatalf("collected %d states (%d log R, stats %+v), want %d", len(xs), len(logR), st, len(want))
	}
	for k := range want {
		if logR[k] != want[k] {
			t.Fatalf("entry %d: log R %v, want %v (step-major order)", k, logR[k], want[k])
		}
	}
	// Appending: a second search extends the slices it is given.
	xs2, _, _, err := c.Collect(&scripted{accept: accept}, make([]float32, n), rand.New(rand.NewPCG(3, 4)), xs, logR)
	if err != nil || len(xs2) != 2*len(want) {
		t.Errorf("second Collect: %d states, want %d (err %v)", len(xs2), 2*len(want), err)
	}
}

func TestErrors(t *testing.T) {
	nanAt := func(step, row int) func(int, int) float64 {
		return func(i, b int) float64 {
			if i == step && b == row {
				return math.NaN()
			}
			return 0
		}
	}
	infAt := func(i, b int) float64 {
		if i == 12 && b == 4 {
			return math.Inf(1)
		}
		return 0
	}
	visitErr := errors.New("buffer full")
	all := func(int, int) bool { return true }
	for _, c := range []struct {
		name  string
		e     energy.Gradient
		x     []float32
		visit func(Step) error
		want  string
	}{
		{"NaN proposal", &scripted{accept: all, bad: nanAt(7, 3)}, make([]float32, 5), nil, "step 7, row 3: log R of the proposal = NaN"},
		{"Inf proposal", &scripted{accept: all, bad: infAt}, make([]float32, 5), nil, "step 12, row 4: log R of the proposal = +Inf"},
		{"NaN initial", &scripted{accept: all, bad: nanAt(-1, 2)}, make([]float32, 5), nil, "initial state row 2: log R = NaN"},
		{"initial NaN state", newGauss2([2]float64{}, [2][2]float64{{1, 0}, {0, 1}}), []float32{0, 0, float32(math.NaN()), 0}, nil, "initial state row 1"},
		{"partial row", newGauss2([2]float64{}, [2][2]float64{{1, 0}, {0, 1}}), make([]float32, 3), nil, "len(x) = 3 is not a multiple of Dim() = 2"},
		{"visit", &scripted{accept: all}, make([]float32, 5), func(Step) error { return visitErr }, "step 101: visit: buffer full"},
	} {
		_, err := Run(c.e, c.x, Options{}, rand.New(rand.NewPCG(5, 6)), c.visit)
		if err == nil || !strings.HasPrefix(err.Error(), "langevin: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if c.visit != nil && !errors.Is(err, visitErr) {
			t.Errorf("%s: error %v does not wrap the visit error", c.name, err)
		}
	}
}

// TestGaussianMoments runs long chains on a correlated 2-D Gaussian and
// compares the time-and-chain averages with the exact moments, for the
// reference's adaptive step size and for a fixed one.
func TestGaussianMoments(t *testing.T) {
	mu := [2]float64{1, -2}
	cov := [2][2]float64{{0.5, 0.3}, {0.3, 2}}
	g := newGauss2(mu, cov)
	for _, c := range []struct {
		name string
		opt  Options
	}{
		{"adaptive", Options{Steps: 2500, BurnIn: 700}},
		{"fixed η", Options{Steps: 1800, BurnIn: 200, StepSize: 0.3, Grow: 1, Shrink: 1}},
	} {
		const n = 100
		x := make([]float32, 2*n) // every chain starts at the origin
		var s0, s1, s00, s11, s01, m float64
		acc := 0
		st, err := Run(g, x, c.opt, rand.New(rand.NewPCG(9, 10)), func(s Step) error {
			for b := range n {
				a, z := float64(s.X[2*b]), float64(s.X[2*b+1])
				s0 += a
				s1 += z
				s00 += a * a
				s11 += z * z
				s01 += a * z
				if s.Accepted[b] {
					acc++
				}
			}
			m += n
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		m0, m1 := s0/m, s1/m
		v00, v11, v01 := s00/m-m0*m0, s11/m-m1*m1, s01/m-m0*m1
		rate := float64(acc) / m // after burn-in
		t.Logf("%s: mean (%.3f, %.3f), cov [[%.3f %.3f] [%.3f %.3f]], acceptance %.3f after burn-in, %.3f overall, final η %.3f",
			c.name, m0, m1, v00, v01, v01, v11, rate, st.AcceptRate(), st.StepSize)
		for _, q := range []struct {
			name      string
			got, want float64
			tol       float64
		}{
			{"mean 0", m0, mu[0], 0.05}, {"mean 1", m1, mu[1], 0.1},
			{"var 0", v00, cov[0][0], 0.05}, {"var 1", v11, cov[1][1], 0.2}, {"cov", v01, cov[0][1], 0.07},
		} {
			if math.Abs(q.got-q.want) > q.tol {
				t.Errorf("%s: %s = %.4f, want %.4f ± %.2f", c.name, q.name, q.got, q.want, q.tol)
			}
		}
		if c.name == "adaptive" && math.Abs(rate-0.574) > 0.03 {
			t.Errorf("adaptive: acceptance rate %.3f after burn-in, want near 0.574", rate)
		}
	}
}

func TestNoAllocations(t *testing.T) {
	e := energy.GMM25{}
	const n = 500
	x0 := make([]float32, 2*n)
	e.Sample(x0, rand.New(rand.NewPCG(1, 1)))
	x := make([]float32, len(x0))
	c, err := New(Options{Steps: 30, BurnIn: 10})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	xs := make([]float32, 0, 2*n*20)
	logR := make([]float64, 0, n*20)
	run := func() {
		copy(x, x0)
		var err error
		if _, _, _, err = c.Collect(e, x, rng, xs[:0], logR[:0]); err != nil {
			t.Fatal(err)
		}
	}
	run() // sizes the scratch
	if a := testing.AllocsPerRun(5, run); a != 0 {
		t.Errorf("Collect allocates %v times per search in steady state", a)
	}
	if a := testing.AllocsPerRun(5, func() {
		copy(x, x0)
		c.Run(e, x, rng, nil)
	}); a != 0 {
		t.Errorf("Run allocates %v times per search in steady state", a)
	}
}
