package kernel

import (
	"fmt"
	"math"
)

// Gauss holds the constants of a diffusion sampler's Gaussian transitions
// with a fixed variance, x' = x + dt·u + sd·z with the drift u = clamp(o,
// ±Clip) of a network output o, for the per-coordinate loops that sample,
// score and differentiate them (at d = 1,600 they are 48 M coordinates per
// pass and cost as much as the network's products one value at a time).
//
// Step, Score and Grad take one row's coordinates in order. On amd64 they
// run 4 lanes of float64 AVX at a time and add each coordinate's term to
// the running sum one after the other, in the scalar order, so every path
// gives the same bits (TestGaussMatchesScalar); the arithmetic is float64
// adds, multiplies and divides in the order the doc comments give, with no
// fused multiply-add.
type Gauss struct {
	Dt   float64 // the time step that multiplies the drift
	Clip float64 // drift clamp: u = min(max(o, −Clip), Clip) when > 0; none when 0
	Sd   float64 // Step: the noise's standard deviation
	// Var is the variance v of the scored Gaussian, and each coordinate's
	// term is ((r²/v + Add[0]) + Add[1]) + Add[2] for the residual r (the
	// constants of −2·log N(r; 0, v): log 2π, log dt, log σ²).
	Var float64
	Add [3]float64
}

// consts lays g out for the vector code: dt, clip, −clip (±Inf when there
// is no clamp, which is the identity, NaN included), sd, v, Add.
func (g *Gauss) consts() [8]float64 {
	c := math.Inf(1)
	if g.Clip > 0 {
		c = g.Clip
	}
	return [8]float64{g.Dt, c, -c, g.Sd, g.Var, g.Add[0], g.Add[1], g.Add[2]}
}

// drift is u for an output o, with Go's min and max (NaN stays NaN).
func (g *Gauss) drift(o float32) float64 {
	u := float64(o)
	if g.Clip > 0 {
		u = max(-g.Clip, min(g.Clip, u))
	}
	return u
}

func (g *Gauss) term(r float64) float64 {
	return float64(float64(float64(r*r)/g.Var+g.Add[0])+g.Add[1]) + g.Add[2]
}

func gaussCheck(op string, n int, lens ...int) {
	for _, l := range lens {
		if l < n {
			panic(fmt.Sprintf("kernel: %s of %d coordinates with a slice of %d", op, n, l))
		}
	}
}

// Step samples one row: for each coordinate k in order, with m = x_k +
// dt·u_k, it sets xn_k = float32(m + sd·z_k), r = xn_k − m (of the rounded
// state), and adds the term of r to lp, which it returns: lp plus the
// row's −2·log P_F when the constants are those of the sampling policy.
// xn, o and z hold at least len(x) values.
func (g *Gauss) Step(xn, x, o []float32, z []float64, lp float64) float64 {
	d := len(x)
	gaussCheck("Gauss.Step", d, len(xn), len(o), len(z))
	n := 0
	if useSIMD() && d >= 4 {
		n = d &^ 3
		c := g.consts()
		lp = gaussStep4(&xn[0], &x[0], &o[0], &z[0], n, &c, lp)
	}
	for k := n; k < d; k++ {
		m := float64(x[k]) + float64(g.Dt*g.drift(o[k]))
		y := float32(m + float64(g.Sd*z[k]))
		xn[k] = y
		lp += g.term(float64(y) - m)
	}
	return lp
}

// Score scores one row's transition x → xn: it adds the term of r = (xn_k
// − x_k) − dt·u_k for each coordinate k in order to lp and returns it.
// xn and o hold at least len(x) values.
func (g *Gauss) Score(xn, x, o []float32, lp float64) float64 {
	d := len(x)
	gaussCheck("Gauss.Score", d, len(xn), len(o))
	n := 0
	if useSIMD() && d >= 4 {
		n = d &^ 3
		c := g.consts()
		lp = gaussScore4(&xn[0], &x[0], &o[0], n, &c, lp)
	}
	for k := n; k < d; k++ {
		lp += g.term(float64(float64(xn[k])-float64(x[k])) - float64(g.Dt*g.drift(o[k])))
	}
	return lp
}

// Grad sets dst_k = float32((w·r_k)/ev) for the residuals r_k of Score,
// the gradient of w·log P_F with respect to the drift output o_k when ev
// is σ², and 0 where |o_k| > Clip (the clamp's gradient is zero there).
// xn, o and dst hold at least len(x) values.
func (g *Gauss) Grad(dst, xn, x, o []float32, w, ev float64) {
	d := len(x)
	gaussCheck("Gauss.Grad", d, len(xn), len(o), len(dst))
	n := 0
	if useSIMD() && d >= 4 {
		n = d &^ 3
		c := g.consts()
		gaussGrad4(&dst[0], &xn[0], &x[0], &o[0], n, &c, w, ev)
	}
	for k := n; k < d; k++ {
		r := float64(float64(xn[k])-float64(x[k])) - float64(g.Dt*g.drift(o[k]))
		dst[k] = float32(float64(w*r) / ev)
		if g.Clip > 0 && math.Abs(float64(o[k])) > g.Clip {
			dst[k] = 0
		}
	}
}

// BridgeSq returns q + Σ_k (x_k − a·y_k)², the terms added to q one after
// the other in k order (float64, the product a·y_k rounded first): the
// squared residual of a Brownian bridge's step from y back to x. It
// panics unless y holds len(x) values.
func BridgeSq(x, y []float32, a, q float64) float64 {
	d := len(x)
	gaussCheck("BridgeSq", d, len(y))
	n := 0
	if useSIMD() && d >= 4 {
		n = d &^ 3
		q = bridgeSq4(&x[0], &y[0], n, a, q)
	}
	for k := n; k < d; k++ {
		e := float64(x[k]) - float64(float64(y[k])*a)
		q += e * e
	}
	return q
}
