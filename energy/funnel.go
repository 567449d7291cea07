package energy

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// FunnelScale is σ, the standard deviation of the funnel's first
// coordinate in Sendera et al.'s "funnel" (gfn-diffusion,
// energy_sampling/energies/hard_funnel.py: x₀ ~ N(0, 3²)), which Blessing
// et al. use too (variational_sampling_methods, targets/funnel.py).
const FunnelScale = 3

// Funnel is Neal's funnel over ℝ^d (Neal 2003, "Slice sampling"), a
// Gradient, Sampler and LogZer:
//
//	x₀ ~ N(0, σ²),   x_i | x₀ ~ N(0, exp(x₀)),  i = 1..d−1,
//	log R(x) = −x₀²/(2σ²) − ½ log(2πσ²)
//	           + Σ_{i≥1} [−½ log(2π) − x₀/2 − x_i²·exp(−x₀)/2],
//
// the normalised density, so log Z = 0. The zero value is the benchmark of
// Sendera et al. 2024 ("Improved off-policy training of diffusion
// samplers", their "funnel", the reference's hard_funnel) and of Blessing
// et al. 2024 ("Beyond ELBOs"): d = 10, σ = 3. (The reference's
// easy_funnel, σ = 1, is NewFunnel(10, 1).) The sources' samplers are exact;
// Blessing et al. clip their evaluation samples to [−30, 30], which this
// Sample does not.
type Funnel struct {
	dim   int     // 0 means 10
	sigma float64 // 0 means FunnelScale
}

// NewFunnel returns the funnel over ℝ^d with first-coordinate scale σ. d
// must be at least 2 and σ positive and finite.
func NewFunnel(d int, sigma float64) (Funnel, error) {
	if d < 2 {
		return Funnel{}, fmt.Errorf("energy: Funnel dimension %d is not allowed: it must be at least 2", d)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return Funnel{}, fmt.Errorf("energy: Funnel scale σ = %v is not allowed: it must be positive and finite", sigma)
	}
	return Funnel{dim: d, sigma: sigma}, nil
}

// Dim returns d (10 for the zero value).
func (f Funnel) Dim() int {
	if f.dim == 0 {
		return 10
	}
	return f.dim
}

// Scale returns σ (3 for the zero value).
func (f Funnel) Scale() float64 {
	if f.sigma == 0 {
		return FunnelScale
	}
	return f.sigma
}

// String returns "funnel" for the benchmark (d = 10, σ = 3) and
// "funnel-d<d>-s<σ>" otherwise.
func (f Funnel) String() string {
	if f.Dim() == 10 && f.Scale() == FunnelScale {
		return "funnel"
	}
	return fmt.Sprintf("funnel-d%d-s%g", f.Dim(), f.Scale())
}

// LogZ returns 0: the density is normalised.
func (Funnel) LogZ() float64 { return 0 }

// LogReward implements Energy.
func (f Funnel) LogReward(x []float32, out []float64) error {
	d := f.Dim()
	n, err := Rows(d, x, out)
	if err != nil {
		return err
	}
	for b := range n {
		out[b] = f.row(x[b*d:(b+1)*d], nil)
	}
	return nil
}

// GradLogReward implements Gradient:
//
//	∂/∂x₀ = −x₀/σ² − (d−1)/2 + ½ Σ_{i≥1} x_i² exp(−x₀),   ∂/∂x_i = −x_i exp(−x₀).
func (f Funnel) GradLogReward(x []float32, logR, grad []float64) error {
	d := f.Dim()
	n, err := gradRows(d, x, logR, grad)
	if err != nil {
		return err
	}
	for b := range n {
		logR[b] = f.row(x[b*d:(b+1)*d], grad[b*d:(b+1)*d])
	}
	return nil
}

// row returns log R of one state and, if g is not nil, writes its gradient.
func (f Funnel) row(x []float32, g []float64) float64 {
	s := f.Scale()
	x0 := float64(x[0])
	m := float64(len(x) - 1)
	var ss float64 // Σ x_i² for i ≥ 1
	for _, v := range x[1:] {
		ss += float64(v) * float64(v)
	}
	e := math.Exp(-x0)
	l := -x0*x0/(2*s*s) - 0.5*math.Log(2*math.Pi*s*s) -
		m*(0.5*math.Log(2*math.Pi)+x0/2) - 0.5*ss*e
	if g != nil {
		g[0] = -x0/(s*s) - m/2 + 0.5*ss*e
		for i, v := range x[1:] {
			g[i+1] = -float64(v) * e
		}
	}
	return l
}

// Sample implements Sampler: x₀ = σ·z₀, x_i = exp(x₀/2)·z_i with z
// standard normal.
func (f Funnel) Sample(dst []float32, rng *rand.Rand) {
	d := f.Dim()
	n := sampleRows(d, dst)
	s := f.Scale()
	for b := range n {
		x0 := s * rng.NormFloat64()
		sd := math.Exp(x0 / 2)
		dst[b*d] = float32(x0)
		for i := 1; i < d; i++ {
			dst[b*d+i] = float32(sd * rng.NormFloat64())
		}
	}
}
