package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulps is the distance between a and b in units in the last place of b.
func ulps(a, b float64) float64 {
	if a == b || math.IsNaN(a) && math.IsNaN(b) {
		return 0
	}
	if math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return math.Inf(1)
	}
	u := math.Nextafter(math.Abs(b), math.Inf(1)) - math.Abs(b)
	return math.Abs(a-b) / u
}

// TestExpTanhAccuracy: Exp within 2 ulps of math.Exp over its whole range
// (normal results), Tanh within 4 ulps of math.Tanh, and the special values.
func TestExpTanhAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	worstE, worstT := 0.0, 0.0
	for i := range 400000 {
		var x float64
		switch i % 4 {
		case 0:
			x = (r.Float64()*2 - 1) * 708 // normal results
		case 1:
			x = (r.Float64()*2 - 1) * 2
		case 2:
			x = (r.Float64()*2 - 1) * 0.4
		default:
			x = (r.Float64()*2 - 1) * 1e-3
		}
		if e := ulps(Exp(x), math.Exp(x)); e > worstE {
			worstE = e
		}
		if e := ulps(Tanh(x), math.Tanh(x)); e > worstT {
			worstT = e
		}
	}
	for _, x := range []float64{25, -25, 19.9, 0.1733, 0.1734, 0.35, 1e-300, 5e-324} {
		if e := ulps(Tanh(x), math.Tanh(x)); e > worstT {
			worstT = e
		}
	}
	if worstE > 2 || worstT > 4 {
		t.Fatalf("worst error: Exp %.2f ulps (want ≤ 2), Tanh %.2f ulps (want ≤ 4)", worstE, worstT)
	}
	t.Logf("worst error: Exp %.2f ulps, Tanh %.2f ulps", worstE, worstT)
	for _, c := range []struct{ x, exp, tanh float64 }{
		{0, 1, 0},
		{math.Inf(1), math.Inf(1), 1},
		{math.Inf(-1), 0, -1},
		{710, math.Inf(1), 1},
		{-746, 0, -1},
	} {
		if got := Exp(c.x); got != c.exp {
			t.Errorf("Exp(%v) = %v, want %v", c.x, got, c.exp)
		}
		if got := Tanh(c.x); got != c.tanh {
			t.Errorf("Tanh(%v) = %v, want %v", c.x, got, c.tanh)
		}
	}
	if !math.IsNaN(Exp(math.NaN())) || !math.IsNaN(Tanh(math.NaN())) {
		t.Error("NaN did not stay NaN")
	}
	if z := Tanh(math.Copysign(0, -1)); z != 0 || !math.Signbit(z) {
		t.Errorf("Tanh(-0) = %v, want -0", z)
	}
	// Near the overflow limit (math.Exp's amd64 assembly returns +Inf
	// from 709.7 on, below the true limit 709.78).
	if e, want := Exp(709.7), math.Exp(354.85)*math.Exp(354.85); ulps(e, want) > 4 {
		t.Errorf("Exp(709.7) = %v, want %v", e, want)
	}
}

// TestTanhExpMatchesScalar: the vector path gives the scalar functions'
// bits for every kind of input, every length around the 4-lane groups.
func TestTanhExpMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	x := make([]float32, 4099)
	for i := range x {
		switch i % 7 {
		case 0:
			x[i] = float32(r.NormFloat64() * 30)
		case 1:
			x[i] = float32(r.NormFloat64() * 0.1)
		case 2:
			x[i] = math.Float32frombits(r.Uint32()) // any bits: NaN, Inf, subnormals
		default:
			x[i] = float32(r.NormFloat64() * 2)
		}
	}
	x[5], x[6] = 0, float32(math.Copysign(0, -1))
	for _, ab := range [][2]float64{{math.Log(5), 1}, {0, 800}, {-1, 0.5}} {
		for _, n := range []int{0, 1, 3, 4, 5, 8, 4099} {
			th, ev := make([]float64, n), make([]float64, n)
			TanhExp(th, ev, x[:n], ab[0], ab[1])
			for i := range n {
				wt := Tanh(float64(x[i]))
				we := Exp(ab[0] + float64(ab[1]*wt))
				if math.Float64bits(th[i]) != math.Float64bits(wt) || math.Float64bits(ev[i]) != math.Float64bits(we) {
					t.Fatalf("a=%v b=%v n=%d: x[%d] = %v: TanhExp gives (%v, %v), the scalar functions (%v, %v)",
						ab[0], ab[1], n, i, x[i], th[i], ev[i], wt, we)
				}
			}
		}
	}
}

func BenchmarkTanhExp(b *testing.B) {
	x := make([]float32, 1600)
	for i := range x {
		x[i] = float32(i%97)/50 - 1
	}
	th, ev := make([]float64, len(x)), make([]float64, len(x))
	b.Run("vector", func(b *testing.B) {
		for b.Loop() {
			TanhExp(th, ev, x, 1.6, 0.5)
		}
	})
	b.Run("math", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x {
				th[i] = math.Tanh(float64(v))
				ev[i] = math.Exp(1.6 + 0.5*th[i])
			}
		}
	})
}
