package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gaussRef computes Step, Score and Grad one coordinate at a time, as the
// diffusion samplers' loops did before Gauss.
type gaussRef struct {
	dt, clip, sd, v float64
	add             [3]float64
}

func (g gaussRef) drift(o float32) float64 {
	u := float64(o)
	if g.clip > 0 {
		u = max(-g.clip, min(g.clip, u))
	}
	return u
}

func (g gaussRef) step(xn, x, o []float32, z []float64, lp float64) float64 {
	for k := range x {
		mean := float64(x[k]) + g.dt*g.drift(o[k])
		y := float32(mean + g.sd*z[k])
		xn[k] = y
		r := float64(y) - mean
		lp += r*r/g.v + g.add[0] + g.add[1] + g.add[2]
	}
	return lp
}

func (g gaussRef) score(xn, x, o []float32, lp float64) float64 {
	for k := range x {
		r := float64(xn[k]) - float64(x[k]) - g.dt*g.drift(o[k])
		lp += r*r/g.v + g.add[0] + g.add[1] + g.add[2]
	}
	return lp
}

func (g gaussRef) grad(dst, xn, x, o []float32, w, ev float64) {
	for k := range x {
		r := float64(xn[k]) - float64(x[k]) - g.dt*g.drift(o[k])
		dst[k] = float32(w * r / ev)
		if g.clip > 0 && math.Abs(float64(o[k])) > g.clip {
			dst[k] = 0
		}
	}
}

// same32 returns the first index where a and b differ in their bits, or
// -1; NaNs count as equal (their payloads are not part of the contract).
func same32(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
			return i
		}
	}
	return -1
}

func same64(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b
}

// TestGaussMatchesScalar: on every backend, Step, Score and Grad give the
// bits of the per-coordinate loops, tails and special values (NaN, ±Inf,
// outputs beyond the clamp, ±0) included, with and without a clamp.
func TestGaussMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	const size = 1603
	x, o, xn := make([]float32, size), make([]float32, size), make([]float32, size)
	z := make([]float64, size)
	for i := range size {
		x[i] = float32(r.NormFloat64() * 3)
		o[i] = float32(r.NormFloat64() * 40) // beyond a clamp of 20 at times
		xn[i] = float32(r.NormFloat64() * 3)
		z[i] = r.NormFloat64()
		if i%7 == 3 {
			x[i], o[i] = float32(math.Copysign(0, -1)), 0
		}
	}
	// The special values in a copy of the outputs: their sums are NaN or
	// infinite, so the finite sums are checked on the plain ones.
	special := append([]float32(nil), o...)
	for i := range special {
		if i%11 == 5 {
			special[i] = math.Float32frombits(r.Uint32()) // any bits: NaN, Inf, subnormals
		}
	}
	special[9], special[10] = float32(math.NaN()), float32(math.Inf(-1))
	prev := Name()
	defer Use(prev)
	for _, be := range Available() {
		Use(be)
		for _, ref := range []gaussRef{
			{dt: 0.01, clip: 1e4, sd: 0.1, v: 0.01 * 5, add: [3]float64{1.8378770664093453, math.Log(0.01), math.Log(5)}},
			{dt: 0.01, clip: 0, sd: 0.3, v: 0.02, add: [3]float64{1.8, -4.6, 0.2}},
			{dt: 1.0 / 3, clip: 20, sd: 1.5, v: 0.7, add: [3]float64{0, 0.5, -1e-3}},
		} {
			g := Gauss{Dt: ref.dt, Clip: ref.clip, Sd: ref.sd, Var: ref.v, Add: ref.add}
			for _, c := range []struct {
				n int
				o []float32
			}{{0, o}, {1, o}, {3, o}, {4, o}, {5, o}, {8, o}, {10, o}, {1600, o}, {size, o}, {8, special}, {12, special}, {size, special}} {
				n, o := c.n, c.o
				plain := &o[0] != &special[0] // finite sums expected
				want, got := make([]float32, n), make([]float32, n)
				wl := ref.step(want, x[:n], o[:n], z[:n], 0.25)
				gl := g.Step(got, x[:n], o[:n], z[:n], 0.25)
				if i := same32(got, want); i >= 0 {
					t.Fatalf("%s %+v n=%d: Step: state %d is %v, the loop's %v", be, ref, n, i, got[i], want[i])
				}
				if !same64(gl, wl) || plain && (math.IsInf(gl, 0) || math.IsNaN(gl)) {
					t.Fatalf("%s %+v n=%d: Step's sum %v, the loop's %v", be, ref, n, gl, wl)
				}
				wl = ref.score(xn[:n], x[:n], o[:n], -3)
				gl = g.Score(xn[:n], x[:n], o[:n], -3)
				if !same64(gl, wl) || plain && (math.IsInf(gl, 0) || math.IsNaN(gl)) {
					t.Fatalf("%s %+v n=%d: Score %v, the loop %v", be, ref, n, gl, wl)
				}
				ref.grad(want, xn[:n], x[:n], o[:n], -0.7, 3.5)
				g.Grad(got, xn[:n], x[:n], o[:n], -0.7, 3.5)
				if i := same32(got, want); i >= 0 {
					t.Fatalf("%s %+v n=%d: Grad[%d] = %v, the loop %v (o = %v)", be, ref, n, i, got[i], want[i], o[i])
				}
			}
		}
	}
}

// TestGaussKnownValues: one coordinate by hand. x = 1, o = 3 clamped to
// 2, dt = 0.5: m = 2; z = 2, sd = 0.25: xn = 2.5, r = 0.5, r²/v = 0.5 for
// v = 0.5, plus 1, 2 and 3: the term is 6.5; the gradient of r = 0.5 with
// w = 4 and ev = 2 is 1, zeroed by the clamp (|3| > 2), and 1 without it
// (then u = 3, r = 2.5 − 1 − 1.5 = 0).
func TestGaussKnownValues(t *testing.T) {
	g := Gauss{Dt: 0.5, Clip: 2, Sd: 0.25, Var: 0.5, Add: [3]float64{1, 2, 3}}
	xn := make([]float32, 5)
	x := []float32{1, 1, 1, 1, 1}
	o := []float32{3, 3, 3, 3, 3}
	z := []float64{2, 2, 2, 2, 2}
	if lp := g.Step(xn, x, o, z, 0); lp != 5*6.5 || xn[0] != 2.5 || xn[4] != 2.5 {
		t.Fatalf("Step: sum %v (want 32.5), states %v (want 2.5)", lp, xn)
	}
	if lp := g.Score(xn, x, o, 1); lp != 1+5*6.5 {
		t.Fatalf("Score: %v, want 33.5", lp)
	}
	dst := make([]float32, 5)
	g.Grad(dst, xn, x, o, 4, 2)
	if dst[0] != 0 || dst[4] != 0 {
		t.Fatalf("Grad with the clamp: %v, want zeros", dst)
	}
	g.Clip = 0
	g.Grad(dst, xn, x, o, 4, 2)
	xn2 := []float32{3.5, 3.5, 3.5, 3.5, 3.5} // r = 3.5 − 1 − 1.5 = 1
	g.Grad(dst, xn2, x, o, 4, 2)
	if dst[0] != 2 || dst[4] != 2 {
		t.Fatalf("Grad without the clamp: %v, want 2s (w·r/ev = 4·1/2)", dst)
	}
}

func BenchmarkGauss(b *testing.B) {
	const d = 1600
	r := rand.New(rand.NewPCG(1, 2))
	x, o, xn := make([]float32, d), make([]float32, d), make([]float32, d)
	z := make([]float64, d)
	for i := range d {
		x[i], o[i], z[i] = float32(r.NormFloat64()), float32(r.NormFloat64()), r.NormFloat64()
	}
	g := Gauss{Dt: 0.01, Clip: 1e4, Sd: 0.1, Var: 0.01, Add: [3]float64{1, 2, 3}}
	ref := gaussRef{dt: 0.01, clip: 1e4, sd: 0.1, v: 0.01, add: [3]float64{1, 2, 3}}
	var sink float64
	b.Run("step", func(b *testing.B) {
		for b.Loop() {
			sink += g.Step(xn, x, o, z, 0)
		}
	})
	b.Run("step-loop", func(b *testing.B) {
		for b.Loop() {
			sink += ref.step(xn, x, o, z, 0)
		}
	})
	b.Run("score", func(b *testing.B) {
		for b.Loop() {
			sink += g.Score(xn, x, o, 0)
		}
	})
	b.Run("score-loop", func(b *testing.B) {
		for b.Loop() {
			sink += ref.score(xn, x, o, 0)
		}
	})
	dst := make([]float32, d)
	b.Run("grad", func(b *testing.B) {
		for b.Loop() {
			g.Grad(dst, xn, x, o, 0.5, 2)
		}
	})
	b.Run("grad-loop", func(b *testing.B) {
		for b.Loop() {
			ref.grad(dst, xn, x, o, 0.5, 2)
		}
	})
	_ = sink
}

// TestBridgeSqMatchesScalar: on every backend BridgeSq gives the bits of
// the loop it replaces, for lengths with and without a tail, and known
// values by hand.
func TestBridgeSqMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	const size = 1603
	x, y := make([]float32, size), make([]float32, size)
	for i := range size {
		x[i], y[i] = float32(r.NormFloat64()*4), float32(r.NormFloat64()*4)
	}
	prev := Name()
	defer Use(prev)
	for _, be := range Available() {
		Use(be)
		for _, a := range []float64{0.5, 0.99, 1.0 / 3} {
			for _, n := range []int{0, 1, 3, 4, 7, 8, 1600, size} {
				want := 1.25
				for k := range n {
					e := float64(x[k]) - float64(y[k])*a
					want += e * e
				}
				if got := BridgeSq(x[:n], y[:n], a, 1.25); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%s a=%v n=%d: BridgeSq = %v, the loop %v", be, a, n, got, want)
				}
			}
		}
		// (3 − 0.5·2)² + (−1 − 0.5·4)² + 0 + (1 − 0.5·0)² + (2 − 0.5·2)² = 4 + 9 + 0 + 1 + 1.
		if got := BridgeSq([]float32{3, -1, 0, 1, 2}, []float32{2, 4, 0, 0, 2}, 0.5, 0); got != 15 {
			t.Fatalf("%s: BridgeSq by hand = %v, want 15", be, got)
		}
	}
}

func BenchmarkBridgeSq(b *testing.B) {
	const d = 1600
	x, y := make([]float32, d), make([]float32, d)
	for i := range d {
		x[i], y[i] = float32(i%13)/7, float32(i%11)/5
	}
	var sink float64
	b.Run("vector", func(b *testing.B) {
		for b.Loop() {
			sink += BridgeSq(x, y, 0.99, 0)
		}
	})
	b.Run("loop", func(b *testing.B) {
		for b.Loop() {
			var q float64
			for k := range x {
				e := float64(x[k]) - float64(y[k])*0.99
				q += e * e
			}
			sink += q
		}
	})
	_ = sink
}
