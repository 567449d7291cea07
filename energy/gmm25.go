package energy

import (
	"math"
	"math/rand/v2"
)

// GMM25Variance is the variance of every component of GMM25 along each axis
// (covariance 0.3·I in diffusion/energies/twenty_five_gmm.py:23-24).
const GMM25Variance = 0.3

// gmm25Axis lists the component means along one axis.
var gmm25Axis = [5]float64{-10, -5, 0, 5, 10}

// gmm25Const is −log(2π·0.3) − log 25: the 2-D Gaussian normaliser and the
// equal mixture weights.
var gmm25Const = -math.Log(2*math.Pi*GMM25Variance) - math.Log(25)

// GMM25 is the 25-mode Gaussian mixture over ℝ², a Gradient, Sampler and
// LogZer:
//
//	log R(x) = log Σ_k N(x; μ_k, 0.3·I) − log 25,   μ_k ∈ {−10,−5,0,5,10}²,
//
// so log Z = 0. Mode k has mean (m_⌊k/5⌋, m_{k mod 5}) with
// m = (−10, −5, 0, 5, 10): the first coordinate varies slowest, the order
// of the reference's mode list.
//
// Because the means form a product grid and the covariance is isotropic,
// the mixture factorises, Σ_{i,j} N(x₁; m_i)·N(x₂; m_j) =
// (Σ_i N(x₁; m_i))·(Σ_j N(x₂; m_j)), so log R and its gradient are computed
// as two stable 1-D log-sum-exps of 5 terms instead of one of 25; the
// result is the same function (tested against the 25-term form).
//
// The zero value draws stratified samples, as the reference evaluation does.
type GMM25 struct {
	// IID selects how Sample picks modes. false (default): stratified, as
	// the reference (twenty_five_gmm.py:35-37) draws its exact sets: n/25
	// samples per mode, in mode order (rows 0..n/25−1 from mode 0, …); when
	// 25 does not divide n, which the reference does not handle (it returns
	// only 25·⌊n/25⌋ rows), the n mod 25 remaining rows come last, from
	// distinct modes chosen uniformly at random. true: every row's mode is
	// drawn uniformly and independently, so mode counts are multinomial —
	// the distribution of a perfect sampler's samples. The choice matters
	// for W2 (the project's measurement with exact optimal transport): two
	// stratified 2,000-point sets are ~0.29 apart, a stratified and an
	// i.i.d. set ~0.86, since mass must move between modes 5 apart.
	IID bool
}

// Dim returns 2.
func (GMM25) Dim() int { return 2 }

// String returns "25gmm", the reference's name for the task.
func (GMM25) String() string { return "25gmm" }

// LogZ returns 0: the mixture is normalised.
func (GMM25) LogZ() float64 { return 0 }

// Means returns the 25 component means in mode order.
func (GMM25) Means() [][2]float64 {
	mu := make([][2]float64, 0, 25)
	for _, a := range gmm25Axis {
		for _, b := range gmm25Axis {
			mu = append(mu, [2]float64{a, b})
		}
	}
	return mu
}

// LogReward implements Energy.
func (GMM25) LogReward(x []float32, out []float64) error {
	n, err := Rows(2, x, out)
	if err != nil {
		return err
	}
	for b := range n {
		l1, _ := gmm25LSE(float64(x[2*b]))
		l2, _ := gmm25LSE(float64(x[2*b+1]))
		out[b] = l1 + l2 + gmm25Const
	}
	return nil
}

// GradLogReward implements Gradient.
func (GMM25) GradLogReward(x []float32, logR, grad []float64) error {
	n, err := gradRows(2, x, logR, grad)
	if err != nil {
		return err
	}
	for b := range n {
		l1, g1 := gmm25LSE(float64(x[2*b]))
		l2, g2 := gmm25LSE(float64(x[2*b+1]))
		logR[b] = l1 + l2 + gmm25Const
		grad[2*b], grad[2*b+1] = g1, g2
	}
	return nil
}

// gmm25LSE returns L(v) = log Σ_i exp(−(v − m_i)²/(2·0.3)) and dL/dv =
// Σ_i w_i (m_i − v)/0.3 with w = softmax, for one coordinate.
func gmm25LSE(v float64) (lse, grad float64) {
	if math.IsNaN(v) {
		return v, v
	}
	if math.IsInf(v, 0) {
		return math.Inf(-1), -v
	}
	// The largest term is the nearest mean's; clamping before the integer
	// conversion keeps huge finite v in range.
	r := math.Round((v + 10) / 5)
	r = max(0, min(4, r))
	d := v - gmm25Axis[int(r)]
	top := -d * d / (2 * GMM25Variance)
	var sum, gsum float64
	for _, m := range gmm25Axis {
		d := v - m
		e := math.Exp(-d*d/(2*GMM25Variance) - top)
		sum += e
		gsum += e * (m - v)
	}
	return top + math.Log(sum), gsum / (sum * GMM25Variance)
}

// Sample implements Sampler: stratified by default, i.i.d. modes if IID is
// set (see GMM25).
func (g GMM25) Sample(dst []float32, rng *rand.Rand) {
	n := sampleRows(2, dst)
	draw := func(row, k int) {
		s := math.Sqrt(GMM25Variance)
		dst[2*row] = float32(gmm25Axis[k/5] + s*rng.NormFloat64())
		dst[2*row+1] = float32(gmm25Axis[k%5] + s*rng.NormFloat64())
	}
	if g.IID {
		for row := range n {
			draw(row, rng.IntN(25))
		}
		return
	}
	per, row := n/25, 0
	for k := range 25 {
		for range per {
			draw(row, k)
			row++
		}
	}
	// The remainder: distinct modes by a partial Fisher–Yates shuffle.
	var perm [25]int
	for k := range perm {
		perm[k] = k
	}
	for j := 0; row < n; j++ {
		i := j + rng.IntN(25-j)
		perm[i], perm[j] = perm[j], perm[i]
		draw(row, perm[j])
		row++
	}
}
