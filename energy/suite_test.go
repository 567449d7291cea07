package energy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Tests of the suite energies: Funnel, GMM40, StudentTMixture, LGCP.

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestThreefryKnownAnswers(t *testing.T) {
	// Random123's known-answer vectors for Threefry-2x32 with 20 rounds
	// (key, counter → output).
	for _, c := range []struct{ k0, k1, x0, x1, y0, y1 uint32 }{
		{0, 0, 0, 0, 0x6b200159, 0x99ba4efe},
		{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
		{0x13198a2e, 0x03707344, 0x243f6a88, 0x85a308d3, 0xc4923a9c, 0x483df7a0},
	} {
		if y0, y1 := threefry2x32(c.k0, c.k1, c.x0, c.x1); y0 != c.y0 || y1 != c.y1 {
			t.Errorf("threefry2x32(%#x, %#x; %#x, %#x) = %#x, %#x, want %#x, %#x", c.k0, c.k1, c.x0, c.x1, y0, y1, c.y0, c.y1)
		}
	}
	// JAX's documented jax.random.uniform(PRNGKey(0)) = 0.41845703: the
	// first word 0x6b200159 shifted into the mantissa.
	if got := jaxUniformKey0(1, 0, 1)[0]; got != float32(0x6b200159>>9)/(1<<23) || math.Abs(float64(got)-0.41845703) > 5e-9 {
		t.Errorf("uniform(PRNGKey(0)) = %.9g, want 0.41845703", got)
	}
	// An even count pairs counter i with counter h+i: the first value of a
	// 2-vector is the first word of threefry(0, 0; 0, 1).
	y0, y1 := threefry2x32(0, 0, 0, 1)
	u := jaxUniformKey0(2, 0, 1)
	if u[0] != math.Float32frombits(y0>>9|0x3F800000)-1 || u[1] != math.Float32frombits(y1>>9|0x3F800000)-1 {
		t.Errorf("uniform(PRNGKey(0), (2,)) = %v, words %#x %#x", u, y0, y1)
	}
}

// locHash returns the SHA-256 of the locations as float32 bits, pinning the
// reproduced JAX draws.
func locHash(locs []float64) string {
	h := sha256.New()
	for _, v := range locs {
		binary.Write(h, binary.LittleEndian, math.Float32bits(float32(v)))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func TestSuiteLocations(t *testing.T) {
	g2, g50, mos := GMM40{}.Locations(), must(NewGMM40(50)).Locations(), StudentTMixture{}.Locations()
	if len(g2) != 80 || len(g50) != 2000 || len(mos) != 500 {
		t.Fatalf("location counts %d, %d, %d", len(g2), len(g50), len(mos))
	}
	for _, c := range []struct {
		name string
		locs []float64
		lim  float64
	}{{"gmm40", g2, 40}, {"gmm40-50d", g50, 40}, {"mos", mos, 10}} {
		var mean float64
		for _, v := range c.locs {
			if v < -c.lim || v >= c.lim || float64(float32(v)) != v {
				t.Fatalf("%s: location %v outside [−%g, %g) or not a float32", c.name, v, c.lim, c.lim)
			}
			mean += v
		}
		// Uniform: mean 0 ± lim/√(3n).
		if mean /= float64(len(c.locs)); math.Abs(mean) > 5*c.lim/math.Sqrt(3*float64(len(c.locs))) {
			t.Errorf("%s: mean location %g", c.name, mean)
		}
	}
	// The first 2-D location: 40·(2f − 1) with f from the first word of
	// threefry(0, 0; 0, 40) (counters i and 40+i pair up for 80 values).
	y0, _ := threefry2x32(0, 0, 0, 40)
	f := math.Float32frombits(y0>>9|0x3F800000) - 1
	if want := float64((float32(f*2) - 1) * 40); g2[0] != want {
		t.Errorf("gmm40 μ₀₀ = %v, want %v", g2[0], want)
	}
	// Regression pins of the whole draws.
	for _, c := range []struct{ name, got, want string }{
		{"gmm40", locHash(g2), "c56b004d7d25bdb0"},
		{"gmm40-50d", locHash(g50), "f179f9a7332e2bba"},
		{"mos", locHash(mos), "1fcc55bdb513a5ef"},
	} {
		if c.got != c.want {
			t.Errorf("%s: locations hash %s, want %s", c.name, c.got, c.want)
		}
	}
	t.Logf("gmm40 μ₀ = (%v, %v), μ₁ = (%v, %v); mos μ₀ starts %v, %v", g2[0], g2[1], g2[2], g2[3], mos[0], mos[1])
}

// suite lists the new targets for table-driven tests, with a span for
// random states and the rows to check (LGCP's rows are expensive).
func suite() []struct {
	name string
	e    Gradient
	span float64
} {
	return []struct {
		name string
		e    Gradient
		span float64
	}{
		{"funnel", Funnel{}, 4},
		{"funnel-d3-s1", must(NewFunnel(3, 1)), 2},
		{"gmm40", GMM40{}, 45},
		{"gmm40-50d", must(NewGMM40(50)), 45},
		{"mos", StudentTMixture{}, 14},
		{"mos-2d", must(NewStudentTMixture(2)), 14},
		{"lgcp-grid6", must(NewLGCP(6)), 2},
	}
}

func TestSuiteValidation(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(NewFunnel(1, 3)), "dimension 1"},
		{second(NewFunnel(10, 0)), "σ = 0"},
		{second(NewFunnel(10, math.Inf(1))), "σ = +Inf"},
		{second(NewFunnel(10, math.NaN())), "σ = NaN"},
		{second(NewGMM40(0)), "dimension 0"},
		{second(NewStudentTMixture(-3)), "dimension -3"},
		{second(NewLGCP(1)), "grid 1"},
		{second(NewLGCP(65)), "grid 65"},
		{second(Named("lgcp2")), `"lgcp2" is unknown`},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), "energy: ") || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one starting %q naming %q", c.err, "energy: ", c.want)
		}
	}
	for _, tg := range suite() {
		d := tg.e.Dim()
		if err := tg.e.LogReward(make([]float32, 2*d+1), make([]float64, 2)); err == nil || !strings.Contains(err.Error(), "not a multiple of Dim()") {
			t.Errorf("%s: partial row: %v", tg.name, err)
		}
		if err := tg.e.GradLogReward(make([]float32, 2*d), make([]float64, 2), make([]float64, 2*d-1)); err == nil || !strings.Contains(err.Error(), "len(grad)") {
			t.Errorf("%s: short grad: %v", tg.name, err)
		}
		if m, ok := tg.e.(Mixture); ok {
			if err := m.Assign(make([]float32, 2*d), make([]int, 3)); err == nil || !strings.Contains(err.Error(), "len(k) = 3") {
				t.Errorf("%s: Assign with 3 labels for 2 rows: %v", tg.name, err)
			}
		}
		if err := tg.e.LogReward(nil, nil); err != nil {
			t.Errorf("%s: empty batch: %v", tg.name, err)
		}
		if s, ok := tg.e.(Sampler); ok {
			func() {
				defer func() {
					if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "energy: ") {
						t.Errorf("%s: Sample of a partial row: recovered %v", tg.name, r)
					}
				}()
				s.Sample(make([]float32, d+1), rand.New(rand.NewPCG(1, 1)))
			}()
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestSuiteNonFinite(t *testing.T) {
	for _, tg := range suite() {
		d := tg.e.Dim()
		x := make([]float32, 3*d)
		for i := range x {
			x[i] = 0.5
		}
		x[d+d/2] = float32(math.NaN())
		out, grad := make([]float64, 3), make([]float64, 3*d)
		if err := tg.e.LogReward(x, out); err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(out[1]) || math.IsNaN(out[0]) || math.IsNaN(out[2]) {
			t.Errorf("%s: LogReward with a NaN in row 1 = %v", tg.name, out)
		}
		tg.e.GradLogReward(x, out, grad)
		if !math.IsNaN(out[1]) || math.IsNaN(out[0]) || math.IsNaN(out[2]) {
			t.Errorf("%s: GradLogReward with a NaN in row 1: log R = %v", tg.name, out)
		}
		if m, ok := tg.e.(Mixture); ok {
			k := make([]int, 3)
			m.Assign(x, k)
			if k[1] != -1 || k[0] < 0 {
				t.Errorf("%s: Assign with a NaN in row 1 = %v", tg.name, k)
			}
		}
	}
}

// naiveLogN is log N(v; 0, s²) from the linear-space density.
func naiveLogN(v, s float64) float64 {
	return math.Log(math.Exp(-v*v/(2*s*s)) / (s * math.Sqrt(2*math.Pi)))
}

// naiveT2 is the Student-t density with ν = 2 from the Gamma function.
func naiveT2(z float64) float64 {
	return math.Gamma(1.5) / (math.Gamma(1) * math.Sqrt(2*math.Pi)) * math.Pow(1+z*z/2, -1.5)
}

func TestSuiteLogRewardIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 1))
	check := func(name string, b int, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol*max(1, math.Abs(want)) {
			t.Errorf("%s row %d: log R = %.15g, independent %.15g", name, b, got, want)
		}
	}
	// Funnel: the product of the conditional normal densities.
	for _, f := range []Funnel{{}, must(NewFunnel(3, 1))} {
		const n = 200
		d := f.Dim()
		x := randomStates(rng, n, d, 3)
		out := make([]float64, n)
		f.LogReward(x, out)
		for b := range n {
			row := x[b*d : (b+1)*d]
			want := naiveLogN(float64(row[0]), f.Scale())
			for _, v := range row[1:] {
				want += naiveLogN(float64(v), math.Exp(float64(row[0])/2))
			}
			check(f.String(), b, out[b], want, 1e-12)
		}
	}
	// Mixtures: log of the linear-space sum of component densities, at
	// points near the locations (far ones would underflow the naive sum).
	mix := []struct {
		name string
		e    Energy
		locs []float64
		comp func(z float64) float64
		k    int
	}{
		{"gmm40", GMM40{}, GMM40{}.Locations(), func(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }, 40},
		{"mos-2d", must(NewStudentTMixture(2)), must(NewStudentTMixture(2)).Locations(), naiveT2, 10},
		{"gmm40-3d", must(NewGMM40(3)), must(NewGMM40(3)).Locations(), func(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }, 40},
	}
	for _, m := range mix {
		const n = 300
		d := m.e.Dim()
		x := make([]float32, n*d)
		for b := range n {
			k := rng.IntN(m.k)
			for j := range d {
				x[b*d+j] = float32(m.locs[k*d+j] + 3*(2*rng.Float64()-1))
			}
		}
		out := make([]float64, n)
		m.e.LogReward(x, out)
		for b := range n {
			var p float64
			for k := range m.k {
				c := 1.0 / float64(m.k)
				for j := range d {
					c *= m.comp(float64(x[b*d+j]) - m.locs[k*d+j])
				}
				p += c
			}
			check(m.name, b, out[b], math.Log(p), 1e-12)
		}
	}
	// MoS in 50-D: per-component sums of log t₂ via the Gamma form, then a
	// plain (unshifted where safe) log-sum-exp in the other order.
	s := StudentTMixture{}
	locs := s.Locations()
	const n = 100
	x := randomStates(rng, n, 50, 12)
	out := make([]float64, n)
	s.LogReward(x, out)
	for b := range n {
		comps := make([]float64, 10)
		for k := range 10 {
			for j := 49; j >= 0; j-- {
				comps[k] += math.Log(naiveT2(float64(x[b*50+j]) - locs[k*50+j]))
			}
		}
		m := comps[9]
		for _, c := range comps {
			m = max(m, c)
		}
		var sum float64
		for k := 9; k >= 0; k-- {
			sum += math.Exp(comps[k]-m) / 10
		}
		check("mos", b, out[b], m+math.Log(sum), 1e-11)
	}
}

func TestSuiteGradientFiniteDifferences(t *testing.T) {
	const h = 1.0 / 1024
	rng := rand.New(rand.NewPCG(12, 1))
	for _, tg := range suite() {
		d := tg.e.Dim()
		const n = 20
		var x []float32
		if s, ok := tg.e.(Sampler); ok && tg.name != "mos" {
			x = make([]float32, n*d)
			s.Sample(x, rng) // where the mass is: mixtures far from every mode are flat
		} else {
			x = randomStates(rng, n, d, tg.span)
		}
		if l, ok := tg.e.(LGCP); ok {
			for i := range x {
				x[i] += float32(l.Mean())
			}
		}
		for i, v := range x {
			v = max(-40, min(40, v)) // keep float32 steps of h exact
			x[i] = float32(math.Round(float64(v)*4096) / 4096)
		}
		fdCheck(t, tg.name, tg.e, x, n, d, h, nil)
	}
}

// fdCheck compares GradLogReward with central differences on the listed
// coordinates (all if coords is nil).
func fdCheck(t *testing.T, name string, e Gradient, x []float32, n, d int, h float64, coords []int) {
	t.Helper()
	logR, grad := make([]float64, n), make([]float64, n*d)
	if err := e.GradLogReward(x, logR, grad); err != nil {
		t.Fatal(err)
	}
	plain := make([]float64, n)
	e.LogReward(x, plain)
	for b := range n {
		if logR[b] != plain[b] {
			t.Errorf("%s row %d: GradLogReward's log R %v != LogReward's %v", name, b, logR[b], plain[b])
		}
	}
	if coords == nil {
		for j := range d {
			coords = append(coords, j)
		}
	}
	xp, xm := make([]float32, n*d), make([]float32, n*d)
	lp, lm := make([]float64, n), make([]float64, n)
	bad := 0
	for _, j := range coords {
		copy(xp, x)
		copy(xm, x)
		for b := range n {
			xp[b*d+j] += float32(h)
			xm[b*d+j] -= float32(h)
		}
		e.LogReward(xp, lp)
		e.LogReward(xm, lm)
		for b := range n {
			fd := (lp[b] - lm[b]) / (float64(xp[b*d+j]) - float64(xm[b*d+j]))
			g := grad[b*d+j]
			// Truncation h²/6·|f'''| and rounding of log R (~1e-13·|log R|/h).
			tol := 1e-4*max(1, math.Abs(g)) + 1e-12*math.Abs(plain[b])/h
			if math.Abs(fd-g) > tol && bad < 5 {
				bad++
				t.Errorf("%s row %d coordinate %d: gradient %.10g, central difference %.10g", name, b, j, g, fd)
			}
		}
	}
}

func TestFunnelSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	const n = 40000
	f := Funnel{}
	x := make([]float32, n*10)
	f.Sample(x, rng)
	var m0, v0, mz, vz float64
	for b := range n {
		x0 := float64(x[b*10])
		m0 += x0
		v0 += x0 * x0
		// x_i·exp(−x₀/2) is standard normal given x₀.
		for _, v := range x[b*10+1 : b*10+10] {
			z := float64(v) * math.Exp(-x0/2)
			mz += z
			vz += z * z
		}
	}
	m0, v0 = m0/n, v0/n
	mz, vz = mz/(9*n), vz/(9*n)
	// Standard errors: σ/√n for the mean, σ²·√(2/n) for the variance.
	if math.Abs(m0) > 5*3/math.Sqrt(n) || math.Abs(v0-9) > 5*9*math.Sqrt(2.0/n) {
		t.Errorf("x₀: mean %.4f, variance %.4f; want 0 and 9", m0, v0)
	}
	if math.Abs(mz) > 5/math.Sqrt(9*n) || math.Abs(vz-1) > 5*math.Sqrt(2.0/(9*n)) {
		t.Errorf("x_i·exp(−x₀/2): mean %.4f, variance %.4f; want 0 and 1", mz, vz)
	}
}

func TestGMM40Sample(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	for _, g := range []GMM40{{}, must(NewGMM40(50))} {
		d := g.Dim()
		n := 40000
		if d > 2 {
			n = 8000
		}
		x := make([]float32, n*d)
		g.Sample(x, rng)
		locs := g.Locations()
		// Per coordinate: mean = mean of the locations, variance = 1 + their
		// variance (law of total variance).
		for j := range min(d, 5) {
			var lm, lv float64
			for k := range 40 {
				lm += locs[k*d+j] / 40
			}
			for k := range 40 {
				lv += (locs[k*d+j] - lm) * (locs[k*d+j] - lm) / 40
			}
			want := 1 + lv
			var m, v float64
			for b := range n {
				m += float64(x[b*d+j])
			}
			m /= float64(n)
			for b := range n {
				v += (float64(x[b*d+j]) - m) * (float64(x[b*d+j]) - m)
			}
			v /= float64(n - 1)
			// The variance's standard error: the mixture's kurtosis is below
			// that of a two-point law at ±(range), bounded by ~2·want²/√n·√2.
			if math.Abs(m-lm) > 5*math.Sqrt(want/float64(n)) || math.Abs(v-want) > 5*want*math.Sqrt(2/float64(n)) {
				t.Errorf("%v coordinate %d: mean %.3f (want %.3f), variance %.2f (want %.2f)", g, j, m, lm, v, want)
			}
		}
		// Component frequencies by Assign: in 50-D the modes are far apart,
		// so the assignment is the drawn component; chi-square with 39 df.
		if d == 50 {
			k := make([]int, n)
			g.Assign(x, k)
			count := make([]float64, 40)
			for _, c := range k {
				count[c]++
			}
			var chi2 float64
			for _, c := range count {
				chi2 += (c - float64(n)/40) * (c - float64(n)/40) / (float64(n) / 40)
			}
			if chi2 > 80 {
				t.Errorf("%v: component counts chi-square %.1f (39 df)", g, chi2)
			}
		}
	}
}

// t2CDF is the Student-t CDF with ν = 2: ½ + t/(2√(2 + t²)).
func t2CDF(z float64) float64 { return 0.5 + z/(2*math.Sqrt(2+z*z)) }

func TestStudentTMixtureSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 1))
	s := StudentTMixture{}
	const n = 20000
	x := make([]float32, n*50)
	s.Sample(x, rng)
	locs := s.Locations()
	// The marginal CDF of a coordinate is the mean of the components'
	// shifted t₂ CDFs; compare at several points (binomial errors). Also
	// the median of x_j − μ within the assigned component is 0, and the
	// component counts are uniform.
	for _, j := range []int{0, 17, 49} {
		for _, q := range []float64{-12, -6, -2, 0, 2, 6, 12} {
			var p float64
			for k := range 10 {
				p += t2CDF(q-locs[k*50+j]) / 10
			}
			var below int
			for b := range n {
				if float64(x[b*50+j]) <= q {
					below++
				}
			}
			got := float64(below) / n
			if math.Abs(got-p) > 5*math.Sqrt(p*(1-p)/n)+1e-9 {
				t.Errorf("coordinate %d: P(x ≤ %g) = %.4f, want %.4f", j, q, got, p)
			}
		}
	}
	k := make([]int, n)
	s.Assign(x, k)
	count := make([]float64, 10)
	for _, c := range k {
		count[c]++
	}
	var chi2 float64
	for _, c := range count {
		chi2 += (c - n/10) * (c - n/10) / (n / 10)
	}
	if chi2 > 35 { // 9 df
		t.Errorf("component counts %v: chi-square %.1f", count, chi2)
	}
}

func TestMixtureAssign(t *testing.T) {
	// Each location is assigned to its own component.
	for _, m := range []interface {
		Mixture
		Locations() []float64
	}{GMM40{}, must(NewGMM40(50)), StudentTMixture{}, must(NewStudentTMixture(2))} {
		locs := m.Locations()
		x := make([]float32, len(locs))
		for i, v := range locs {
			x[i] = float32(v)
		}
		k := make([]int, m.Components())
		if err := m.Assign(x, k); err != nil {
			t.Fatal(err)
		}
		for c, got := range k {
			if got != c {
				t.Errorf("%v: location %d assigned to %d", m, c, got)
			}
		}
	}
	// GMM25: the nearest mode.
	rng := rand.New(rand.NewPCG(16, 1))
	x := randomStates(rng, 1000, 2, 14)
	k := make([]int, 1000)
	GMM25{}.Assign(x, k)
	for b := range 1000 {
		if want := nearestMode(x[2*b], x[2*b+1]); k[b] != want {
			t.Fatalf("GMM25 row %d: Assign %d, nearest %d", b, k[b], want)
		}
	}
}

func TestSuiteLogZ(t *testing.T) {
	// Funnel (d = 2) and GMM40 (d = 2) integrate to exp(LogZ()) = 1:
	// trapezoid rule on float32-exact nodes.
	integrate := func(e Energy, lo0, hi0, lo1, hi1, h float64) float64 {
		m0, m1 := int((hi0-lo0)/h), int((hi1-lo1)/h)
		row := make([]float32, 2*(m1+1))
		out := make([]float64, m1+1)
		var total float64
		for i := 0; i <= m0; i++ {
			for j := 0; j <= m1; j++ {
				row[2*j], row[2*j+1] = float32(lo0+float64(i)*h), float32(lo1+float64(j)*h)
			}
			e.LogReward(row, out)
			for _, l := range out {
				total += math.Exp(l)
			}
		}
		return math.Log(total * h * h)
	}
	// σ = 1: x₀ ∈ [−9, 7] misses 10⁻¹² of the mass; x₁ | x₀ has sd
	// exp(x₀/2), at most 33 where p(x₀) is 10⁻¹¹, so ±40 misses little.
	f := must(NewFunnel(2, 1))
	if got := integrate(f, -9, 7, -40, 40, 1.0/64); math.Abs(got) > 1e-6 {
		t.Errorf("funnel (d = 2, σ = 1): numerical log Z = %.3g, want 0", got)
	}
	if got := integrate(GMM40{}, -48, 48, -48, 48, 1.0/8); math.Abs(got) > 1e-9 {
		t.Errorf("gmm40: numerical log Z = %.3g, want 0", got)
	}
}

func TestNamedSuite(t *testing.T) {
	for name, dim := range map[string]int{"funnel": 10, "gmm40": 2, "gmm40-50d": 50, "mos": 50, "lgcp": 1600} {
		e, err := Named(name)
		if err != nil || e.Dim() != dim {
			t.Errorf("Named(%q): %v, %v; want dimension %d", name, e, err, dim)
			continue
		}
		if s := fmt.Sprint(e); s != name {
			t.Errorf("Named(%q) prints as %q", name, s)
		}
	}
}
