package energy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// targets lists the provided energies for table-driven tests.
var targets = []struct {
	name string
	e    Gradient
	span float64 // states are drawn uniformly in [−span, span]^d
}{
	{"25gmm", GMM25{}, 14},
	{"manywell-d32", Manywell{}, 2.5},
	{"manywell-d2", mustManywell(2), 2.5},
	{"manywell-d6", mustManywell(6), 2.5},
}

func mustManywell(d int) Manywell {
	m, err := NewManywell(d)
	if err != nil {
		panic(err)
	}
	return m
}

func randomStates(rng *rand.Rand, n, d int, span float64) []float32 {
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(span * (2*rng.Float64() - 1))
	}
	return x
}

func TestLengthErrors(t *testing.T) {
	for _, tg := range targets {
		d := tg.e.Dim()
		cases := []struct {
			name    string
			nx, nr  int
			ng      int // -1: LogReward, else GradLogReward with len(grad) = ng
			wantMsg string
		}{
			{"partial row", 2*d + 1, 2, -1, "is not a multiple of Dim()"},
			{"short out", 3 * d, 2, -1, "len(out) = 2"},
			{"long out", 3 * d, 4, -1, "len(out) = 4"},
			{"grad partial row", 2*d + 1, 2, 2*d + 1, "is not a multiple of Dim()"},
			{"short logR", 3 * d, 2, 3 * d, "len(out) = 2"},
			{"short grad", 3 * d, 3, 3*d - 1, "len(grad)"},
		}
		for _, c := range cases {
			x, out := make([]float32, c.nx), make([]float64, c.nr)
			var err error
			if c.ng < 0 {
				err = tg.e.LogReward(x, out)
			} else {
				err = tg.e.GradLogReward(x, out, make([]float64, c.ng))
			}
			if err == nil {
				t.Errorf("%s %s: no error", tg.name, c.name)
				continue
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "energy: ") || !strings.Contains(msg, c.wantMsg) {
				t.Errorf("%s %s: error %q, want prefix %q and %q", tg.name, c.name, msg, "energy: ", c.wantMsg)
			}
		}
		// Zero rows is valid.
		if err := tg.e.LogReward(nil, nil); err != nil {
			t.Errorf("%s: empty batch: %v", tg.name, err)
		}
	}
	if _, err := NewManywell(3); err == nil || !strings.Contains(err.Error(), "dimension 3") {
		t.Errorf("NewManywell(3): error %v, want one naming dimension 3", err)
	}
	if _, err := NewManywell(0); err == nil {
		t.Error("NewManywell(0): no error")
	}
	if _, err := Rows(0, nil, nil); err == nil {
		t.Error("Rows(0, …): no error")
	}
}

func TestNonFinite(t *testing.T) {
	nan := float32(math.NaN())
	for _, tg := range targets {
		d := tg.e.Dim()
		x := make([]float32, 3*d)
		x[d+d/2] = nan // row 1
		out := make([]float64, 3)
		if err := tg.e.LogReward(x, out); err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(out[1]) || math.IsNaN(out[0]) || math.IsNaN(out[2]) {
			t.Errorf("%s: LogReward with a NaN in row 1 = %v, want NaN only in row 1", tg.name, out)
		}
		grad := make([]float64, 3*d)
		if err := tg.e.GradLogReward(x, out, grad); err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(out[1]) || math.IsNaN(out[0]) {
			t.Errorf("%s: GradLogReward with a NaN in row 1: log R = %v", tg.name, out)
		}
		x[d+d/2] = float32(math.Inf(1))
		tg.e.LogReward(x, out)
		if !math.IsInf(out[1], -1) && !math.IsNaN(out[1]) {
			t.Errorf("%s: LogReward of +Inf = %v, want −Inf or NaN", tg.name, out[1])
		}
	}
}

// gmm25Naive is the 25-term definition in 2-D, with a max-shifted sum.
func gmm25Naive(x1, x2 float64) float64 {
	var terms []float64
	top := math.Inf(-1)
	for _, a := range []float64{-10, -5, 0, 5, 10} {
		for _, b := range []float64{-10, -5, 0, 5, 10} {
			l := -((x1-a)*(x1-a)+(x2-b)*(x2-b))/(2*0.3) - math.Log(2*math.Pi*0.3)
			terms = append(terms, l)
			top = max(top, l)
		}
	}
	var s float64
	for _, l := range terms {
		s += math.Exp(l - top)
	}
	return top + math.Log(s) - math.Log(25)
}

func TestGMM25AgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 2000
	// Points near the modes, between them and far outside (|x| up to 40,
	// where a naive sum of exponentials would underflow).
	x := randomStates(rng, n, 2, 40)
	copy(x, []float32{0, 0, 2.5, 2.5, -10, 10, 7.5, -2.5, 1e6, -1e6})
	out := make([]float64, n)
	if err := (GMM25{}).LogReward(x, out); err != nil {
		t.Fatal(err)
	}
	for b := range n {
		want := gmm25Naive(float64(x[2*b]), float64(x[2*b+1]))
		if math.Abs(out[b]-want) > 1e-12*max(1, math.Abs(want)) {
			t.Fatalf("row %d at (%g, %g): log R = %.17g, naive %.17g", b, x[2*b], x[2*b+1], out[b], want)
		}
	}
}

func TestGradientFiniteDifferences(t *testing.T) {
	// h is a power of two and the points are multiples of h/4 of moderate
	// size, so x ± h is exact in float32 and the differences below see
	// exactly the displacement they divide by.
	const h = 1.0 / 1024
	rng := rand.New(rand.NewPCG(2, 1))
	for _, tg := range targets {
		d := tg.e.Dim()
		const n = 50
		x := randomStates(rng, n, d, tg.span)
		for i, v := range x {
			x[i] = float32(math.Round(float64(v)*4096) / 4096) // multiples of h/4
		}
		logR, grad := make([]float64, n), make([]float64, n*d)
		if err := tg.e.GradLogReward(x, logR, grad); err != nil {
			t.Fatal(err)
		}
		plain := make([]float64, n)
		tg.e.LogReward(x, plain)
		xp, xm := make([]float32, n*d), make([]float32, n*d)
		lp, lm := make([]float64, n), make([]float64, n)
		for j := range d {
			copy(xp, x)
			copy(xm, x)
			for b := range n {
				xp[b*d+j] += h
				xm[b*d+j] -= h
				if float64(xp[b*d+j])-float64(x[b*d+j]) != h {
					t.Fatalf("x + h not exact in float32 at %g", x[b*d+j])
				}
			}
			tg.e.LogReward(xp, lp)
			tg.e.LogReward(xm, lm)
			for b := range n {
				fd := (lp[b] - lm[b]) / (2 * h)
				g := grad[b*d+j]
				// Truncation error is h²/6·|f'''|, up to ~1e-4 here.
				if math.Abs(fd-g) > 1e-4*max(1, math.Abs(g)) {
					t.Errorf("%s row %d coordinate %d: gradient %.10g, central difference %.10g", tg.name, b, j, g, fd)
				}
			}
		}
		for b := range n {
			if logR[b] != plain[b] {
				t.Errorf("%s row %d: GradLogReward's log R %v != LogReward's %v", tg.name, b, logR[b], plain[b])
			}
		}
	}
}

func TestGMM25LogZ(t *testing.T) {
	// Trapezoid rule over [−16, 16]² on a grid of float32-exact nodes; the
	// integrand is smooth and negligible at the edges, where the trapezoid
	// rule converges faster than any power of the step.
	const h, lim = 1.0 / 32, 16
	m := int(2 * lim / h)
	row := make([]float32, 2*(m+1))
	out := make([]float64, m+1)
	var total float64
	for i := 0; i <= m; i++ {
		for j := 0; j <= m; j++ {
			row[2*j], row[2*j+1] = float32(-lim+float64(i)*h), float32(-lim+float64(j)*h)
		}
		if err := (GMM25{}).LogReward(row, out); err != nil {
			t.Fatal(err)
		}
		var s float64
		for _, l := range out {
			s += math.Exp(l)
		}
		total += s
	}
	logZ := math.Log(total * h * h)
	t.Logf("25gmm: numerical log Z = %.3g", logZ)
	if math.Abs(logZ-(GMM25{}).LogZ()) > 1e-9 {
		t.Errorf("numerical log Z = %.3g, want 0", logZ)
	}
}

// simpson integrates f over [lo, hi] with n (even) panels.
func simpson(f func(float64) float64, lo, hi float64, n int) float64 {
	h := (hi - lo) / float64(n)
	s := f(lo) + f(hi)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * f(lo+float64(i)*h)
	}
	return s * h / 3
}

func wellDensity(a float64) float64 { return math.Exp(-a*a*a*a + 6*a*a + 0.5*a) }

func TestManywellLogZ(t *testing.T) {
	za := simpson(wellDensity, -10, 10, 20000)
	if math.Abs(za-ManywellZa) > 1e-12*za {
		t.Errorf("Z_a by Simpson = %.17g, ManywellZa = %.17g", za, ManywellZa)
	}
	// The reference's constants: Z_x1 = 11784.50927 (many_well.py:48) and
	// log Z = 164.69567532 for d = 32.
	if math.Abs(za-11784.50927) > 1e-5 {
		t.Errorf("Z_a = %.10g, reference 11784.50927", za)
	}
	if got := (Manywell{}).LogZ(); math.Abs(got-164.69567532) > 1e-8 {
		t.Errorf("log Z (d = 32) = %.10f, reference 164.69567532", got)
	}
	if got, want := mustManywell(8).LogZ(), (Manywell{}).LogZ()/4; math.Abs(got-want) > 1e-12 {
		t.Errorf("log Z (d = 8) = %v, want a quarter of d = 32's, %v", got, want)
	}
	// LogReward itself integrates to exp(LogZ()) for d = 2: trapezoid over
	// a ∈ [−4, 4], b ∈ [−12, 12] on float32-exact nodes.
	e := mustManywell(2)
	const h = 1.0 / 64
	na, nb := int(8/h), int(24/h)
	x := make([]float32, 2*(nb+1))
	out := make([]float64, nb+1)
	var total float64
	for i := 0; i <= na; i++ {
		for j := 0; j <= nb; j++ {
			x[2*j], x[2*j+1] = float32(-4+float64(i)*h), float32(-12+float64(j)*h)
		}
		e.LogReward(x, out)
		for _, l := range out {
			total += math.Exp(l)
		}
	}
	got := math.Log(total * h * h)
	t.Logf("manywell: Z_a by Simpson %.17g; d = 2: numerical log Z %.12f, LogZ() %.12f; d = 32: LogZ() %.10f", za, got, e.LogZ(), (Manywell{}).LogZ())
	if math.Abs(got-e.LogZ()) > 1e-9 {
		t.Errorf("d = 2: numerical log Z %.12f, LogZ() %.12f", got, e.LogZ())
	}
}

func TestManywellEnvelope(t *testing.T) {
	// The proposal density against an independent linear-space formula,
	// and the envelope 3·Z_a·q(a) ≥ exp(f(a)) everywhere (exact rejection
	// sampling); the reference's envelope peaks at 0.864 of the bound.
	gauss := func(z, mu float64) float64 {
		return math.Exp(-0.5*(z-mu)*(z-mu)/0.25) / (0.5 * math.Sqrt(2*math.Pi))
	}
	worst, at := 0.0, 0.0
	for i := -40000; i <= 40000; i++ {
		z := float64(i) * 1e-4
		q := 0.2*gauss(z, -1.7) + 0.8*gauss(z, 1.7)
		if lq := manywellLogQ(z); math.Abs(lq-math.Log(q)) > 1e-12*max(1, math.Abs(lq)) {
			t.Fatalf("log q(%g) = %v, want %v", z, lq, math.Log(q))
		}
		r := wellDensity(z) / (3 * ManywellZa * q)
		if r > worst {
			worst, at = r, z
		}
	}
	if worst > 1 || math.Abs(worst-0.864) > 0.001 {
		t.Errorf("max p/(3q) = %.4f at a = %.4f, want 0.864 (< 1)", worst, at)
	}
	t.Logf("envelope: max p(a)/(3q(a)) = %.5f at a = %.4f", worst, at)
}

func TestGMM25Stratified(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	g := GMM25{}
	mu := g.Means()
	for _, n := range []int{2500, 2510, 7} {
		x := make([]float32, 2*n)
		g.Sample(x, rng)
		count := make([]int, 25)
		var ss float64
		for b := range n {
			k := nearestMode(x[2*b], x[2*b+1])
			count[k]++
			if b < 25*(n/25) && k != b/(n/25) {
				t.Fatalf("n = %d: row %d is from mode %d, want mode %d (block order)", n, b, k, b/(n/25))
			}
			for j := range 2 {
				d := float64(x[2*b+j]) - mu[k][j]
				ss += d * d
			}
		}
		per, extra := n/25, 0
		for k, c := range count {
			switch c {
			case per:
			case per + 1:
				extra++
			default:
				t.Errorf("n = %d: mode %d has %d samples, want %d or %d", n, k, c, per, per+1)
			}
		}
		if extra != n%25 {
			t.Errorf("n = %d: %d modes have an extra sample, want %d", n, extra, n%25)
		}
		if n >= 2500 {
			// Pooled variance about the true means: 2n terms, standard
			// error 0.3·sqrt(2/(2n)) ≈ 0.006.
			if v := ss / float64(2*n); math.Abs(v-GMM25Variance) > 0.03 {
				t.Errorf("n = %d: variance about the means %.4f, want 0.3", n, v)
			}
		}
	}
}

func TestGMM25IID(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	const n = 25000
	x := make([]float32, 2*n)
	GMM25{IID: true}.Sample(x, rng)
	count := make([]int, 25)
	for b := range n {
		count[nearestMode(x[2*b], x[2*b+1])]++
	}
	// Multinomial counts: mean 1000, sd sqrt(25000·(1/25)(24/25)) ≈ 31;
	// chi-square with 24 degrees of freedom (mean 24, sd 6.9).
	var chi2 float64
	equal := true
	for _, c := range count {
		d := float64(c) - n/25
		chi2 += d * d / (n / 25)
		equal = equal && c == n/25
	}
	if chi2 > 60 || equal {
		t.Errorf("i.i.d. mode counts %v: chi-square %.1f (want ≈ 24, not all equal)", count, chi2)
	}
}

func nearestMode(x1, x2 float32) int {
	r := func(v float32) int { return max(0, min(4, int(math.Round((float64(v)+10)/5)))) }
	return 5*r(x1) + r(x2)
}

func TestSamplePanicsOnPartialRow(t *testing.T) {
	for _, s := range []Sampler{GMM25{}, Manywell{}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(r.(string), "energy: ") {
					t.Errorf("%v: Sample of a partial row: recovered %v", s, r)
				}
			}()
			s.Sample(make([]float32, 3), rand.New(rand.NewPCG(1, 1)))
		}()
	}
}

func TestManywellSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	e := Manywell{}
	const n = 5000
	d := e.Dim()
	x := make([]float32, n*d)
	e.Sample(x, rng)
	// Moments and CDF values of a from the 1-D density by Simpson's rule.
	za := simpson(wellDensity, -10, 10, 20000)
	integral := func(f func(float64) float64, hi float64) float64 {
		return simpson(func(a float64) float64 { return f(a) * wellDensity(a) }, -10, hi, 20000) / za
	}
	one := func(float64) float64 { return 1 }
	meanA := integral(func(a float64) float64 { return a }, 10)
	m2A := integral(func(a float64) float64 { return a * a }, 10)
	cuts := []float64{-1.7, 0, 1, 1.7, 2.2}
	var sumA, sumA2, sumB, sumB2 float64
	below := make([]int, len(cuts))
	for i := 0; i < len(x); i += 2 {
		a, b := float64(x[i]), float64(x[i+1])
		sumA += a
		sumA2 += a * a
		sumB += b
		sumB2 += b * b
		for c, cut := range cuts {
			if a <= cut {
				below[c]++
			}
		}
	}
	m := float64(n * d / 2) // 80,000 draws of each coordinate kind
	sdA := math.Sqrt(m2A - meanA*meanA)
	check := func(name string, got, want, se float64) {
		t.Helper()
		if math.Abs(got-want) > 5*se {
			t.Errorf("%s = %.5f, want %.5f ± %.5f (5 standard errors)", name, got, want, 5*se)
		}
	}
	// The pairs are interleaved: even coordinates are the double-well a,
	// odd ones the Gaussian b (their moments differ).
	check("mean of a", sumA/m, meanA, sdA/math.Sqrt(m))
	check("E[a²]", sumA2/m, m2A, 2*sdA*math.Sqrt(m2A)/math.Sqrt(m))
	check("mean of b", sumB/m, 0, 1/math.Sqrt(m))
	check("E[b²]", sumB2/m, 1, math.Sqrt(2/m))
	for c, cut := range cuts {
		p := integral(one, cut)
		check(fmt.Sprintf("P(a ≤ %g)", cut), float64(below[c])/m, p, math.Sqrt(p*(1-p)/m))
	}
}

func TestNamed(t *testing.T) {
	for name, dim := range map[string]int{"25gmm": 2, "manywell": 32} {
		e, err := Named(name)
		if err != nil || e.Dim() != dim {
			t.Errorf("Named(%q): %v, %v; want dimension %d", name, e, err, dim)
		}
	}
	if _, err := Named("gmm"); err == nil {
		t.Error(`Named("gmm") accepted`)
	}
}
