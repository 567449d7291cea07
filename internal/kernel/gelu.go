package kernel

import (
	"fmt"
	"math"
)

// GELU in the erf form (torch.nn.GELU's default), GELU(z) = z·Φ(z) with Φ
// the standard normal CDF, and its derivative GELU'(z) = Φ(z) + z·φ(z).
//
// Both are written through a = |z| and the tail Φ(-a), so that the
// negative side, where GELU(z) and GELU'(z) are tiny, keeps its relative
// accuracy (1 - Φ(a) would lose it to cancellation):
//
//	GELU(z)  = max(z, 0) - a·Φ(-a)
//	GELU'(z) = D(a) for z < 0, 1 - D(a) for z ≥ 0, D(a) = Φ(-a) - a·φ(a).
//
// With e = exp(-a²/2):
//
//	a·Φ(-a) = e·x/(√(2π)·x + P(a)),  x = a·Q(a),
//
// a rational form of Laplace's continued fraction for Mills' ratio
// Φ(-a)/φ(a) = 1/(a + F(a)), P/Q ≈ √(2π)·F. Written so, the rounding
// errors of Q (in x twice) cancel to first order and those of P are
// damped by P/(√(2π)·x + P), which falls like 1/a²: float32 evaluation
// loses about an ulp where a plain P/Q lost four. Near 0 the product of
// e and the fraction still costs some 4 ulps, so below a = 1/2 the vector
// kernels take the series GELU(z) = z/2 + z²·R(z²) instead (R of degree
// 3), within an ulp. D(a) has a root at a0 = 0.7518 (GELU' changes sign
// at z = -a0); it is
//
//	D(a) = e·(a - a0)·(H(a) - 1/√(2π)),
//
// H = P/Q of degree 4/4, and a - a0 is exact near the root (a0 is split
// in two parts), so D keeps its relative accuracy there too.
//
// e is computed with a² = s + sl split exactly by an FMA (an error of
// a² would cost a²/2 relative ulps of e), n = round(-a²/(2 ln 2)), the
// Cody–Waite reduction u = a² + 2n·ln2 (so exp(-a²/2) = 2ⁿ·exp(-u/2),
// |u| ≤ ln 2), a degree-6 polynomial for exp(-u/2) and 2ⁿ added to the
// exponent bits. The vector kernels use 2^(n+64) so that e stays normal
// down to a = 16 (the gradient's rational carries the 2⁻⁶⁴; the forward
// form multiplies e by it, rounding once into subnormals if need be); a
// is clamped at 16, where both tails are below float32's smallest value.
//
// The coefficients (gelu_const.go, generated with the assembly by
// gen_gelu.go from testdata/gelu_fit.py's fits) are relative minimax fits
// on [0, 16]: 1.7e-9 for the forward form, 1.8e-8 for H, 3e-9 for the
// exponential's polynomial and 2e-9 (weighted) for R. The vector kernels
// are within 3.1 ulps of GELU and 3.8 ulps of GELU' computed in float64
// with math.Erfc, measured on every 13th float32 of both signs up to 20
// (TestGELUAccuracy, which checks 4 ulps on every backend); subnormal
// results are within their absolute spacing. The AVX-512 and AVX2 kernels
// run the same operations and give the same bits. The portable code
// evaluates the same forms in float64 (with its own exp), within 0.6 and
// 0.8 ulps, though not bit-equal to the vector kernels.
//
// The work is element-wise, so large inputs are split across cores by
// rows (BiasGELU) or ranges (GELUGrad) without changing any value.

// geluParallel is the number of values from which the SIMD kernels split
// across cores: 100–200 µs of one core's work (AVX-512, AVX2), where
// handing a share to another core costs 20–35 µs on the 2-vCPU machines
// measured. The portable code, 20–40 times slower, splits from
// geluParallelGo values (about 100 µs).
const (
	geluParallel   = 1 << 18
	geluParallelGo = 1 << 13
)

// BiasGELU sets, for every row r of y (rows of len(b)), z_r = y_r + b and
// y_r = GELU(z_r) = z_r·Φ(z_r), the erf form of torch.nn.GELU. z (the
// pre-activation, which the gradient needs) must be as long as y.
func BiasGELU(y, z, b []float32) {
	cols := len(b)
	if cols == 0 || len(y)%cols != 0 || len(z) != len(y) {
		panic(fmt.Sprintf("kernel: BiasGELU of %d values into %d with a bias of %d", len(y), len(z), cols))
	}
	rows := len(y) / cols
	if rows == 0 {
		return
	}
	be := backend
	if parts := geluParts(be, len(y)); parts > 1 && rows > 1 {
		j := newJob()
		chunk := (rows + parts - 1) / parts
		for lo := 0; lo < rows; lo += chunk {
			hi := min(lo+chunk, rows)
			j.add(share{run: runBiasGELU, be: be, a: y[lo*cols : hi*cols], b: b, c: z[lo*cols : hi*cols]})
		}
		j.run()
		return
	}
	biasGELU(be, y, z, b)
}

func runBiasGELU(s share, _ *scratch) { biasGELU(s.be, s.a, s.c, s.b) }

// biasGELU is BiasGELU on one core (len(y) a positive multiple of len(b)).
func biasGELU(be Backend, y, z, b []float32) {
	cols := len(b)
	switch be {
	case backendAVX512:
		biasGELU16(&y[0], &z[0], &b[0], len(y)/cols, cols)
	case backendAVX2:
		biasGELU8(&y[0], &z[0], &b[0], len(y)/cols, cols)
	default:
		for r := 0; r < len(y); r += cols {
			row, zr := y[r:r+cols], z[r:r+cols]
			for i, bi := range b {
				v := row[i] + bi
				zr[i] = v
				row[i] = geluGo(v)
			}
		}
	}
}

// GELUGrad sets d[i] *= GELU'(z[i]) = Φ(z) + z·φ(z), z the pre-activation.
func GELUGrad(d, z []float32) {
	if len(d) != len(z) {
		panic(fmt.Sprintf("kernel: GELUGrad of %d gradients for %d inputs", len(d), len(z)))
	}
	be := backend
	if parts := geluParts(be, len(d)); parts > 1 {
		j := newJob()
		chunk := (len(d)/parts + 63) &^ 63 // whole cache lines
		for lo := 0; lo < len(d); lo += chunk {
			hi := min(lo+chunk, len(d))
			j.add(share{run: runGELUGrad, be: be, a: d[lo:hi], c: z[lo:hi]})
		}
		j.run()
		return
	}
	geluGrad(be, d, z)
}

func runGELUGrad(s share, _ *scratch) { geluGrad(s.be, s.a, s.c) }

// geluGrad is GELUGrad on one core.
func geluGrad(be Backend, d, z []float32) {
	if len(d) == 0 {
		return
	}
	switch be {
	case backendAVX512:
		geluGrad16(&d[0], &z[0], len(d))
	case backendAVX2:
		geluGrad8(&d[0], &z[0], len(d))
	default:
		z = z[:len(d)]
		for i, v := range z {
			d[i] *= geluGradGo(v)
		}
	}
}

// geluParts is how many shares n values are split into.
func geluParts(be Backend, n int) int {
	limit := geluParallel
	if be == BackendGo {
		limit = geluParallelGo
	}
	if n < limit {
		return 1
	}
	return shareCount()
}

// geluGo returns GELU(v) in float64 with the forms of the vector
// kernels, rounded once to float32: the series below |v| = 1/2,
// max(v, 0) - a·Φ(-a) up to a = 16, max(v, 0) beyond.
func geluGo(v float32) float32 {
	z := float64(v)
	a := math.Abs(z)
	switch {
	case a < geluHalf:
		s := z * z
		return float32(z*0.5 + s*(((geluSR3*s+geluSR2)*s+geluSR1)*s+geluSR0))
	case a < geluAMax:
		q := ((((geluFQ5*a+geluFQ4)*a+geluFQ3)*a+geluFQ2)*a+geluFQ1)*a + geluFQ0
		p := (((geluFP4*a+geluFP3)*a+geluFP2)*a+geluFP1)*a + geluFP0
		x := a * q
		return float32(max(z, 0) - x/(x*geluSqrt2Pi+p)*expNeg(a*a/2))
	}
	return max(v, 0) // the tail is below float32's range; NaN stays NaN
}

// geluGradGo returns GELU'(v) in float64, rounded once to float32: D(a)
// for v < 0 and 1 - D(a) otherwise, D(a) = e·(a - a0)·(H(a) - 1/√(2π)).
func geluGradGo(v float32) float32 {
	z := float64(v)
	a := math.Abs(z)
	if !(a < geluAMax) {
		switch {
		case z > 0:
			return 1
		case z < 0:
			return 0
		}
		return v // NaN
	}
	const (
		a0 = geluA0Hi - geluNegA0Lo
		c  = geluInvSqrt2PiM64 * 0x1p64
	)
	q := (((geluHQ4*a+geluHQ3)*a+geluHQ2)*a+geluHQ1)*a + geluHQ0
	p := ((((geluHP4*a+geluHP3)*a+geluHP2)*a+geluHP1)*a + geluHP0) * 0x1p64
	d := expNeg(a*a/2) * (a - a0) * (p/q - c)
	if math.Signbit(z) {
		return float32(d)
	}
	return float32(1 - d)
}

// expNeg returns exp(-y) for y in [0, 128] to about 1e-10 (relative): y =
// n·ln2 - t with n = round(y/ln2), exp(t) by a degree-7 polynomial on
// |t| ≤ ln2/2, and 2⁻ⁿ subtracted in the exponent bits. math.Exp, a call
// with the checks of the whole range, took half the time of geluGo.
func expNeg(y float64) float64 {
	const magic = 0x1.8p52 // adding it rounds to an integer
	k := y*math.Log2E + magic
	n := k - magic
	t := n*math.Ln2 - y
	p := ((((((0.00019767661647821454*t+0.0013945907185386314)*t+0.008333568972922705)*t+
		0.0416662724216829)*t+0.16666665163068353)*t+0.5000000077184198)*t+1.0000000002087315)*t + 1
	return math.Float64frombits(math.Float64bits(p) - (math.Float64bits(k)-math.Float64bits(magic))<<52)
}
