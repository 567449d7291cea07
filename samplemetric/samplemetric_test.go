package samplemetric

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
)

func gmm40(t *testing.T, d int) energy.GMM40 {
	g, err := energy.NewGMM40(d)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// fromComponents draws n rows from the listed components of a GMM40
// (unit-variance Gaussians at its locations), cycling through them.
func fromComponents(g energy.GMM40, comps []int, n int, rng *rand.Rand) []float32 {
	d, locs := g.Dim(), g.Locations()
	x := make([]float32, n*d)
	for b := range n {
		k := comps[b%len(comps)]
		for j := range d {
			x[b*d+j] = float32(locs[k*d+j] + rng.NormFloat64())
		}
	}
	return x
}

func TestEMC(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 20000
	for _, e := range []interface {
		energy.Mixture
		energy.Sampler
	}{energy.GMM40{}, gmm40(t, 50), energy.StudentTMixture{}} {
		x := make([]float32, n*e.Dim())
		e.Sample(x, rng)
		got, err := EMC(e, x)
		if err != nil {
			t.Fatal(err)
		}
		// Exact samples: the multinomial counts' entropy is short of log K
		// by about (K−1)/(2n).
		k := float64(e.Components())
		want := 1 - (k-1)/(2*n*math.Log(k))
		if math.Abs(got-want) > 0.003 {
			t.Errorf("%v: EMC of exact samples = %.5f, want ≈ %.5f", e, got, want)
		}
		t.Logf("%v: EMC of %d exact samples = %.5f", e, n, got)
	}
	g := gmm40(t, 50)
	// Stuck in one mode: 0. Half the modes, evenly: log 20 / log 40.
	if got, _ := EMC(g, fromComponents(g, []int{7}, 2000, rng)); got != 0 {
		t.Errorf("one mode: EMC = %v, want 0", got)
	}
	half := make([]int, 20)
	for i := range half {
		half[i] = 2 * i
	}
	if got, _ := EMC(g, fromComponents(g, half, 2000, rng)); math.Abs(got-math.Log(20)/math.Log(40)) > 1e-12 {
		t.Errorf("20 of 40 modes evenly: EMC = %v, want %v", got, math.Log(20)/math.Log(40))
	}
	// Labels directly, with the NaN label −1 left out.
	if got, _ := EMCFromLabels([]int{0, 1, -1, 2, 3}, 4); math.Abs(got-1) > 1e-15 {
		t.Errorf("EMCFromLabels(one each of 4) = %v, want 1", got)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(EMCFromLabels([]int{0, 5}, 4)), "label 5 of sample 1"},
		{second(EMCFromLabels([]int{-1}, 4)), "none of the 1 samples"},
		{second(EMCFromLabels([]int{0}, 1)), "got 1"},
		{second(EMC(g, make([]float32, 49))), "len(x) = 49"},
		{second(EMC(g, nil)), "len(x) = 0"},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), "samplemetric: ") || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one naming %q", c.err, c.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestLogZ(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 1))
	// log mean exp by hand.
	if got, _ := LogZIS([]float64{0, math.Log(3)}); math.Abs(got-math.Log(2)) > 1e-15 {
		t.Errorf("LogZIS(0, log 3) = %v, want log 2", got)
	}
	if got, _ := LogZIS([]float64{1000, 1000 + math.Log(3)}); math.Abs(got-1000-math.Log(2)) > 1e-12 {
		t.Errorf("LogZIS shifted by 1000 = %v (overflow?)", got)
	}
	if got, _ := LogZIS([]float64{0, math.NaN()}); !math.IsNaN(got) {
		t.Errorf("LogZIS with a NaN = %v", got)
	}
	if got, _ := LogZIS([]float64{0, math.Inf(-1)}); math.Abs(got-math.Log(0.5)) > 1e-15 {
		t.Errorf("LogZIS(0, −Inf) = %v, want log ½", got)
	}
	// A sampler equal to the target: every weight is Z, the error is 0.
	g := gmm40(t, 50)
	const n = 4000
	x := make([]float32, n*50)
	g.Sample(x, rng)
	logW := make([]float64, n)
	g.LogReward(x, logW) // log R − log p with p = R (log Z = 0)
	for b := range logW {
		logW[b] -= logW[b]
	}
	if got, _ := LogZError(logW, g.LogZ()); got != 0 {
		t.Errorf("exact weights: |Δ log Z| = %v, want 0", got)
	}
	// Importance sampling N(0, I)·e^c with q = N(0, s²I), d = 2, s = 1.3:
	// the estimate is within a few standard errors of c.
	const c, s, m = 2.5, 1.3, 200000
	logW = make([]float64, m)
	var w1, w2 float64
	for b := range logW {
		z1, z2 := s*rng.NormFloat64(), s*rng.NormFloat64()
		logR := c - (z1*z1+z2*z2)/2 - math.Log(2*math.Pi)
		logQ := -(z1*z1+z2*z2)/(2*s*s) - math.Log(2*math.Pi*s*s)
		logW[b] = logR - logQ
		w := math.Exp(logW[b] - c)
		w1 += w
		w2 += w * w
	}
	se := math.Sqrt((w2/m - (w1/m)*(w1/m)) / m) // relative, as E w = 1
	if got, _ := LogZError(logW, c); got > 5*se {
		t.Errorf("IS with a wider Gaussian: |Δ log Z| = %.5f, want < %.5f (5 standard errors)", got, 5*se)
	}
	// Stuck in one of 40 equal, far-apart modes: the estimate is
	// log Z − log 40.
	x = fromComponents(g, []int{3}, n, rng)
	g.LogReward(x, logW[:n])
	locs := g.Locations()
	for b := range n {
		var q float64 // log N(x; μ_3, I)
		for j := range 50 {
			z := float64(x[b*50+j]) - locs[3*50+j]
			q += -z*z/2 - 0.5*math.Log(2*math.Pi)
		}
		logW[b] -= q
	}
	if got, _ := LogZError(logW[:n], 0); math.Abs(got-math.Log(40)) > 1e-6 {
		t.Errorf("one mode of 40: |Δ log Z| = %v, want log 40 = %v", got, math.Log(40))
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(LogZError([]float64{0}, math.NaN())), "log Z = NaN"},
		{second(LogZError(nil, 0)), "got none"},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), "samplemetric: ") || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one naming %q", c.err, c.want)
		}
	}
}

// gaussMMD2 is the population MMD² between N(0, I_d) and N(δ, I_d) with
// the Gaussian kernel of bandwidth h.
func gaussMMD2(d int, delta2, h float64) float64 {
	a := math.Pow(h*h/(h*h+2), float64(d)/2)
	return 2 * a * (1 - math.Exp(-delta2/(2*(h*h+2))))
}

func TestMMDKnownValue(t *testing.T) {
	// The unbiased estimator's mean over independent repetitions equals the
	// population value, for equal (0) and shifted Gaussians.
	rng := rand.New(rand.NewPCG(3, 1))
	const d, n, reps, h = 2, 300, 30, 1.0
	for _, shift := range []float64{0, 1} {
		want := gaussMMD2(d, shift*shift, h)
		var sum, sum2 float64
		for range reps {
			x, y := make([]float32, n*d), make([]float32, n*d)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
				y[i] = float32(rng.NormFloat64())
			}
			for b := range n {
				y[b*d] += float32(shift)
			}
			r, err := MMD(x, y, d, h)
			if err != nil {
				t.Fatal(err)
			}
			sum += r.MMD2
			sum2 += r.MMD2 * r.MMD2
		}
		mean := sum / reps
		sd := math.Sqrt((sum2/reps - mean*mean) * reps / (reps - 1))
		if math.Abs(mean-want) > 5*sd/math.Sqrt(reps) {
			t.Errorf("shift %g: mean MMD² %.5f over %d repetitions, population %.5f (sd %.5f)", shift, mean, reps, want, sd)
		}
		t.Logf("shift %g: mean MMD² %.5f ± %.5f, population %.5f", shift, mean, sd/math.Sqrt(reps), want)
	}
}

func TestMMDExactAndStuck(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	g := gmm40(t, 50)
	const n = 800
	x, y := make([]float32, n*50), make([]float32, n*50)
	g.Sample(x, rng)
	g.Sample(y, rng)
	exact, err := MMD(x, y, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	stuck, _ := MMD(fromComponents(g, []int{0}, n, rng), y, 50, 0)
	// Stuck in one mode, with the median bandwidth h (≈ 230, the typical
	// distance between modes): within-mode pairs have k ≈ 1, pairs across
	// modes E k ≈ e^{−1/2} ≈ 0.6, so MMD² ≈ 1 + 0.6 − 2·0.6 ≈ 0.4; exact
	// samples give 0 within O(1/n).
	if math.Abs(exact.MMD2) > 0.01 || stuck.MMD2 < 0.2 || stuck.MMD2 < 100*math.Abs(exact.MMD2) {
		t.Errorf("exact samples MMD² = %.5f (want ≈ 0), one mode %.5f (want ≈ 0.4)", exact.MMD2, stuck.MMD2)
	}
	t.Logf("gmm40-50d: MMD² exact %.2e (MMD %.4f), one mode %.4f (MMD %.4f), bandwidth %.2f", exact.MMD2, exact.MMD(), stuck.MMD2, stuck.MMD(), exact.Bandwidth)
	// The median heuristic against a direct computation on a tiny set.
	a := []float32{0, 0, 3, 4}
	b := []float32{0, 1, 6, 8, 0, 3}
	r, _ := MMD(a, b, 2, 0)
	pts := [][2]float64{{0, 0}, {3, 4}, {0, 1}, {6, 8}, {0, 3}}
	var ds []float64
	for i := range pts {
		for j := i + 1; j < len(pts); j++ {
			ds = append(ds, math.Hypot(pts[i][0]-pts[j][0], pts[i][1]-pts[j][1]))
		}
	}
	sortFloats(ds)
	if want := (ds[4] + ds[5]) / 2; math.Abs(r.Bandwidth-want) > 1e-12 {
		t.Errorf("median bandwidth %v, want %v (distances %v)", r.Bandwidth, want, ds)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(MMD(a, b, 0, 1)), "d = 0"},
		{second(MMD(a[:2], b, 2, 1)), "len(x) = 2"},
		{second(MMD(a, b[:5], 2, 1)), "len(y) = 5"},
		{second(MMD(a, b, 2, -1)), "bandwidth -1"},
		{second(MMD([]float32{0, float32(math.NaN()), 1, 1}, b, 2, 1)), "x[1] = NaN"},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), "samplemetric: ") || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one naming %q", c.err, c.want)
		}
	}
}

func sortFloats(v []float64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}
