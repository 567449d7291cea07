package kernel

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// fma32 returns x·y + z rounded once to float32. The float64 sum is
// rounded to odd (its last bit set when inexact), which makes the final
// rounding to float32 correct: 53 bits are more than 24 + 1.
func fma32(x, y, z float32) float32 {
	p := float64(x) * float64(y) // exact
	zz := float64(z)
	s := p + zz
	bp := s - zz
	e := (p - bp) + (zz - (s - bp)) // s + e = p + zz exactly
	if e != 0 && !math.IsInf(s, 0) {
		b := math.Float64bits(s)
		if b&1 == 0 {
			if (e > 0) == (s > 0) {
				b++
			} else {
				b--
			}
			s = math.Float64frombits(b)
		}
	}
	return float32(s)
}

// geluModelExp is the vector kernels' a = min(|z|, aMax) and
// exp(-a²/2)·2⁶⁴, operation for operation (gen_gelu.go).
func geluModelExp(z float32) (a, e float32) {
	a = min(math.Float32frombits(math.Float32bits(z)&0x7fffffff), geluAMax)
	s := a * a
	sl := fma32(a, a, -s)
	kf := fma32(geluExpK, s, geluExpMagic)
	nf := kf - geluExpMagic
	sl = fma32(nf, geluExpLn2Lo2, sl)
	u := fma32(nf, geluExpLn2Hi2, s)
	u += sl
	p := horner32(u, geluExpC6, geluExpC5, geluExpC4, geluExpC3, geluExpC2, geluExpC1, geluExpC0)
	return a, math.Float32frombits(math.Float32bits(p) + math.Float32bits(kf)<<23)
}

// horner32 returns Σ c[i]·x^(n-i) by Horner's rule with FMAs.
func horner32(x float32, c ...float32) float32 {
	p := c[0]
	for _, ci := range c[1:] {
		p = fma32(p, x, ci)
	}
	return p
}

// geluModel is GELU(z) as the vector kernels compute it, bit for bit
// (NaN aside).
func geluModel(z float32) float32 {
	a, e := geluModelExp(z)
	if a < geluHalf {
		s := a * a
		return fma32(s, horner32(s, geluSR3, geluSR2, geluSR1, geluSR0), z*geluHalf)
	}
	h := max(z, 0)
	q := horner32(a, geluFQ5, geluFQ4, geluFQ3, geluFQ2, geluFQ1, geluFQ0)
	p := horner32(a, geluFP4, geluFP3, geluFP2, geluFP1, geluFP0)
	x := a * q
	r := x / fma32(x, geluSqrt2Pi, p)
	return fma32(-r, e*geluTwoM64, h)
}

// geluGradModel is GELU'(z) as the vector kernels compute it.
func geluGradModel(z float32) float32 {
	a, e := geluModelExp(z)
	q := horner32(a, geluHQ4, geluHQ3, geluHQ2, geluHQ1, geluHQ0)
	p := horner32(a, geluHP4, geluHP3, geluHP2, geluHP1, geluHP0)
	g := p/q - geluInvSqrt2PiM64
	d := e * fma32(a-geluA0Hi, g, g*geluNegA0Lo)
	if math.Signbit(float64(z)) {
		return d
	}
	return 1 - d
}

func refGELU(v float64) float64 { return v * 0.5 * math.Erfc(-v/math.Sqrt2) }

func refGELUGrad(v float64) float64 {
	return 0.5*math.Erfc(-v/math.Sqrt2) + v*math.Exp(-v*v/2)/math.Sqrt(2*math.Pi)
}

// ulpErr is |got - want| in float32 ulps at want (subnormal spacing below
// the normal range, which is the absolute floor near zero).
func ulpErr(got float32, want float64) float64 {
	if math.IsNaN(want) {
		if math.IsNaN(float64(got)) {
			return 0
		}
		return math.Inf(1)
	}
	if math.IsInf(want, 0) {
		if float64(got) == want {
			return 0
		}
		return math.Inf(1)
	}
	w := math.Abs(want)
	ulp := 0x1p-149
	if w >= 0x1p-126 {
		_, exp := math.Frexp(w) // w = f·2^exp, f in [0.5, 1)
		ulp = math.Ldexp(1, exp-24)
	}
	return math.Abs(float64(got)-want) / ulp
}

var geluStride = flag.Int("gelu.stride", 241, "TestGELUAccuracy takes every `n`th float32 (13: 58M values, some 20 s)")

// geluSweep returns the test inputs: every stride-th float32 from 2⁻⁴⁰ to
// 20 of both signs (dense near 0 and over [-10, 10], where networks
// live), a uniform sweep of [-10, 10] in steps of 2⁻¹⁴, normal and wide
// random values, and special ones.
func geluSweep(stride int) []float32 {
	var zs []float32
	for b := math.Float32bits(0x1p-40); b <= math.Float32bits(20); b += uint32(stride) {
		v := math.Float32frombits(b)
		zs = append(zs, v, -v)
	}
	for v := -10.0; v <= 10; v += 0x1p-14 {
		zs = append(zs, float32(v))
	}
	r := rand.New(rand.NewPCG(7, 7))
	for range 100000 {
		zs = append(zs, float32(r.NormFloat64()), float32(r.NormFloat64()*8))
	}
	zs = append(zs, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 0x1p-149, -0x1p-149,
		-0.7517915, -0.75179154, -0.7517916, -13, -13.5, -14, -14.5, -15.9, -16, -16.1, 16, 17,
		-87, 87, 1e10, -1e10, math.MaxFloat32, -math.MaxFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	return zs
}

// TestGELUAccuracy measures BiasGELU and GELUGrad on every backend against
// GELU and GELU' computed in float64 with math.Erfc, in float32 ulps of
// the exact value, over geluSweep (-gelu.stride=13 for a denser one). The
// bound, 4 ulps, is a quarter ulp over what the vector kernels reach.
func TestGELUAccuracy(t *testing.T) {
	stride := *geluStride
	if testing.Short() {
		stride = 4 * stride
	}
	zs := geluSweep(stride)
	want := make([]float64, len(zs))
	wantD := make([]float64, len(zs))
	for i, v := range zs {
		want[i], wantD[i] = refGELU(float64(v)), refGELUGrad(float64(v))
		switch {
		case math.IsInf(float64(v), 1):
			want[i], wantD[i] = float64(v), 1
		case math.IsInf(float64(v), -1):
			want[i], wantD[i] = 0, 0
		}
	}
	const maxULP = 4
	for _, be := range Available() {
		prev := Use(be)
		y := slices.Clone(zs)
		z := make([]float32, len(y))
		BiasGELU(y, z, make([]float32, 1)) // one column: the tails too
		d := make([]float32, len(zs))
		for i := range d {
			d[i] = 1
		}
		GELUGrad(d, zs)
		Use(prev)
		var worst, worstD float64
		var at, atD float32
		for i, v := range zs {
			if z[i] != v && !math.IsNaN(float64(v)) {
				t.Fatalf("%s: z[%d] = %v, want %v", be, i, z[i], v)
			}
			if e := ulpErr(y[i], want[i]); e > worst || math.IsNaN(e) {
				worst, at = e, v
			}
			if e := ulpErr(d[i], wantD[i]); e > worstD || math.IsNaN(e) {
				worstD, atD = e, v
			}
		}
		t.Logf("%s: %d values, GELU within %.2f ulp (worst at %v), GELU' within %.2f ulp (worst at %v)",
			be, len(zs), worst, at, worstD, atD)
		if !(worst <= maxULP) {
			t.Errorf("%s: GELU(%v) = %v is %.2f ulps from %v", be, at, geluAt(be, at), worst, refGELU(float64(at)))
		}
		if !(worstD <= maxULP) {
			t.Errorf("%s: GELU'(%v) is %.2f ulps from %v", be, atD, worstD, refGELUGrad(float64(atD)))
		}
	}
}

func geluAt(be Backend, v float32) float32 {
	prev := Use(be)
	defer Use(prev)
	y, z := []float32{v}, []float32{0}
	BiasGELU(y, z, []float32{0})
	return y[0]
}

// TestGELUModel checks the vector kernels bit for bit against
// geluModel and geluGradModel, which follow their operations in float32:
// an error in the assembly shows up even where it would stay within the
// accuracy bound. The sweep goes through in rows of 256; a smaller part
// in rows of odd widths, with a bias, exercises the masked tails.
func TestGELUModel(t *testing.T) {
	zs := geluSweep(4 * 997)
	want, wantD := make([]float32, len(zs)), make([]float32, len(zs))
	for i, v := range zs {
		want[i], wantD[i] = geluModel(v), geluGradModel(v)
	}
	same := func(a, b float32) bool {
		return math.Float32bits(a) == math.Float32bits(b) || math.IsNaN(float64(a)) && math.IsNaN(float64(b))
	}
	r := rand.New(rand.NewPCG(8, 8))
	for _, be := range Available() {
		if be == BackendGo {
			continue
		}
		prev := Use(be)
		n := len(zs) &^ 255
		y, z, d := slices.Clone(zs[:n]), make([]float32, n), make([]float32, n)
		for i := range d {
			d[i] = 1
		}
		BiasGELU(y, z, make([]float32, 256))
		GELUGrad(d, zs[:n])
		for i := range n {
			if !same(y[i], want[i]) || !same(d[i], wantD[i]) {
				t.Fatalf("%s: GELU(%v) = %v (%#x), GELU' %v; the model gives %v (%#x), %v",
					be, zs[i], y[i], math.Float32bits(y[i]), d[i], want[i], math.Float32bits(want[i]), wantD[i])
			}
		}
		for _, cols := range []int{1, 3, 8, 15, 16, 17, 31, 48, 72, 83, 257} {
			rows := 4000/cols + 1
			in := randSlice(r, rows*cols)
			for i := range in {
				in[i] *= 4
			}
			b := randSlice(r, cols)
			y, z := slices.Clone(in), make([]float32, len(in))
			BiasGELU(y, z, b)
			d := randSlice(r, len(in))
			d0 := slices.Clone(d)
			m := len(d) - cols%5 // another tail
			GELUGrad(d[:m], in[:m])
			for i, v := range in {
				zi := v + b[i%cols]
				if !same(z[i], zi) || !same(y[i], geluModel(zi)) {
					t.Fatalf("%s cols %d: z[%d] = %v, GELU %v; want %v, %v", be, cols, i, z[i], y[i], zi, geluModel(zi))
				}
				w := d0[i]
				if i < m {
					w *= geluGradModel(v)
				}
				if !same(d[i], w) {
					t.Fatalf("%s cols %d: d·GELU'(%v) = %v, model %v", be, cols, v, d[i], w)
				}
			}
		}
		Use(prev)
	}
}

// TestGELUSpecial: NaN gives NaN, the limits at ±∞ hold, and no value
// turns into NaN or leaves [min GELU, max(z, 0)].
func TestGELUSpecial(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, be := range Available() {
		prev := Use(be)
		in := []float32{nan, inf, -inf, 1e30, -1e30, 16, -16, 20, -20, 0, float32(math.Copysign(0, -1)), 1e-40, -1e-40, 5, -5}
		for len(in) < 37 {
			in = append(in, nan)
		}
		y, z := slices.Clone(in), make([]float32, len(in))
		BiasGELU(y, z, make([]float32, len(in)))
		d := make([]float32, len(in))
		for i := range d {
			d[i] = 2
		}
		GELUGrad(d, in)
		Use(prev)
		for i, v := range in {
			switch {
			case math.IsNaN(float64(v)):
				if !math.IsNaN(float64(y[i])) || !math.IsNaN(float64(d[i])) {
					t.Errorf("%s: GELU(NaN) = %v, 2·GELU'(NaN) = %v", be, y[i], d[i])
				}
				continue
			case v >= 16:
				if y[i] != v || d[i] != 2 {
					t.Errorf("%s: GELU(%v) = %v, 2·GELU'(%v) = %v", be, v, y[i], v, d[i])
				}
			case v <= -16:
				if y[i] != 0 || d[i] != 0 {
					t.Errorf("%s: GELU(%v) = %v, 2·GELU'(%v) = %v", be, v, y[i], v, d[i])
				}
			}
			if math.IsNaN(float64(y[i])) || math.IsNaN(float64(d[i])) || y[i] < -0.17 || y[i] > max(v, 0) {
				t.Errorf("%s: GELU(%v) = %v, 2·GELU'(%v) = %v", be, v, y[i], v, d[i])
			}
		}
	}
}

// TestGELUSplit: inputs large enough to be split across cores give the
// same bits as on one core, whatever the number of cores.
func TestGELUSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	const cols = 100
	n := (geluParallel/cols + 37) * cols
	in := randSlice(r, n)
	b := randSlice(r, cols)
	dIn := randSlice(r, n)
	for _, be := range Available() {
		prev := Use(be)
		var wantY, wantZ, wantD []float32
		for _, procs := range []int{1, 2, 3, 5} {
			old := runtime.GOMAXPROCS(procs)
			y, z := slices.Clone(in), make([]float32, n)
			BiasGELU(y, z, b)
			d := slices.Clone(dIn)
			GELUGrad(d[:n-7], in[:n-7])
			runtime.GOMAXPROCS(old)
			if wantY == nil {
				wantY, wantZ, wantD = y, z, d
				continue
			}
			if !slices.Equal(y, wantY) || !slices.Equal(z, wantZ) || !slices.Equal(d, wantD) {
				t.Errorf("%s: %d cores give other values than one", be, procs)
			}
		}
		Use(prev)
	}
}

// TestGELUDoesNotAllocate: neither kernel allocates, split or not.
func TestGELUDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(10, 10))
	runtime.GC()
	for _, be := range Available() {
		prev := Use(be)
		split := geluParallel
		if be == BackendGo {
			split = geluParallelGo
		}
		for _, n := range []int{256, split + 256} {
			y, z, b, d := randSlice(r, n), make([]float32, n), randSlice(r, 256), randSlice(r, n)
			f := func() {
				BiasGELU(y, z, b)
				GELUGrad(d, z)
			}
			for range 10 {
				f()
			}
			// As for split products (TestGemmSplitDoesNotAllocate), blocking
			// waits draw a few hundred runtime wait descriptors at first:
			// 0.25 per split call over 1000 pairs.
			if allocs := mallocsPerRun(1000, f) / 2; allocs > 0.25 {
				t.Errorf("%s n=%d: %.2f allocations per call", be, n, allocs)
			}
		}
		Use(prev)
	}
}

// BenchmarkBiasGELU reports values per nanosecond of BiasGELU on a layer's
// 256-wide activations: 500 rows (one step of a 500-trajectory batch, in
// cache, on one core) and 50,000 rows (a training pass over 100 steps,
// from memory, split across cores). The input is restored between calls
// with the timer stopped.
func BenchmarkBiasGELU(b *testing.B) {
	for _, be := range Available() {
		for _, rows := range []int{500, 50000} {
			b.Run(fmt.Sprintf("%s/%dx256", be, rows), func(b *testing.B) {
				prev := Use(be)
				defer Use(prev)
				r := rand.New(rand.NewPCG(1, 1))
				y0, bias := randSlice(r, rows*256), randSlice(r, 256)
				y, z := slices.Clone(y0), make([]float32, len(y0))
				for b.Loop() {
					b.StopTimer()
					copy(y, y0)
					b.StartTimer()
					BiasGELU(y, z, bias)
				}
				b.ReportMetric(float64(len(y))*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "values/ns")
			})
		}
	}
}

// BenchmarkGELUGrad is BenchmarkBiasGELU for GELUGrad.
func BenchmarkGELUGrad(b *testing.B) {
	for _, be := range Available() {
		for _, rows := range []int{500, 50000} {
			b.Run(fmt.Sprintf("%s/%dx256", be, rows), func(b *testing.B) {
				prev := Use(be)
				defer Use(prev)
				r := rand.New(rand.NewPCG(1, 1))
				d0, z := randSlice(r, rows*256), randSlice(r, rows*256)
				d := slices.Clone(d0)
				for b.Loop() {
					b.StopTimer()
					copy(d, d0)
					b.StartTimer()
					GELUGrad(d, z)
				}
				b.ReportMetric(float64(len(d))*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "values/ns")
			})
		}
	}
}
