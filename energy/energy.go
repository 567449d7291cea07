package energy

import (
	"fmt"
	"github.com/gfngo/gfn/target"
	"math/rand/v2"
)

// Energy is an unnormalised target density R(x) over ℝ^d.
type Energy interface {
	// Dim is d, the length of one state.
	Dim() int

	// LogReward writes log R(x_b) for the rows of x (len(x) = len(out)·Dim(),
	// row-major) into out. It returns an error only for mis-sized slices;
	// a non-finite row yields a non-finite value (NaN for a NaN row).
	LogReward(x []float32, out []float64) error
}

// Gradient is an Energy that also knows ∇ log R. Langevin local search
// needs it.
//
// The gradient is float64 for two reasons: the targets compute it in
// float64 anyway (a softmax-weighted sum for a mixture), and its consumer,
// the Metropolis–Hastings correction of MALA, takes the difference of two
// squared proposal residuals ‖x' − x − η∇log R(x)‖² that nearly cancel, so
// rounding the gradient to float32 would only add noise to the acceptance
// ratio. log R comes with it because every caller needs both at the same
// points and they share most of the work.
type Gradient interface {
	Energy

	// GradLogReward writes log R(x_b) into logR (len(logR) = rows) and
	// ∇ log R(x_b) into the matching row of grad (len(grad) = len(x)).
	GradLogReward(x []float32, logR, grad []float64) error
}

// Sampler is an Energy that draws exact samples from p = R/Z. The EUBO and
// W2 metrics need it.
type Sampler interface {
	Energy

	// Sample fills the len(dst)/Dim() rows of dst with samples from p, using
	// only rng for randomness. It panics if len(dst) is not a multiple of
	// Dim(), a programmer error.
	Sample(dst []float32, rng *rand.Rand)
}

// Rows checks that x holds whole rows of dim values and that out has one
// entry per row, and returns the number of rows. Its errors name the bad
// length and what is allowed; implementations of Energy can use it to
// validate LogReward's arguments.
func Rows(dim int, x []float32, out []float64) (int, error) {
	if dim <= 0 {
		return 0, fmt.Errorf("energy: Dim() = %d, must be positive", dim)
	}
	if len(x)%dim != 0 {
		return 0, fmt.Errorf("energy: len(x) = %d is not a multiple of Dim() = %d", len(x), dim)
	}
	n := len(x) / dim
	if len(out) != n {
		return 0, fmt.Errorf("energy: len(out) = %d, want len(x)/Dim() = %d/%d = %d rows", len(out), len(x), dim, n)
	}
	return n, nil
}

// gradRows is Rows for GradLogReward: grad must have len(x) entries.
func gradRows(dim int, x []float32, logR, grad []float64) (int, error) {
	n, err := Rows(dim, x, logR)
	if err != nil {
		return 0, err
	}
	if len(grad) != len(x) {
		return 0, fmt.Errorf("energy: len(grad) = %d, want len(x) = %d", len(grad), len(x))
	}
	return n, nil
}

// sampleRows returns the number of rows of dst, panicking if dst does not
// hold whole rows.
func sampleRows(dim int, dst []float32) int {
	if len(dst)%dim != 0 {
		panic(fmt.Sprintf("energy: Sample: len(dst) = %d is not a multiple of Dim() = %d", len(dst), dim))
	}
	return len(dst) / dim
}

// The provided targets offer every optional interface they can (LGCP has
// no exact sampler).
var (
	_ Gradient      = GMM25{}
	_ Sampler       = GMM25{}
	_ target.LogZer = GMM25{}
	_ Gradient      = Manywell{}
	_ Sampler       = Manywell{}
	_ target.LogZer = Manywell{}
	_ Gradient      = Funnel{}
	_ Sampler       = Funnel{}
	_ target.LogZer = Funnel{}
	_ Gradient      = GMM40{}
	_ Sampler       = GMM40{}
	_ target.LogZer = GMM40{}
	_ Gradient      = StudentTMixture{}
	_ Sampler       = StudentTMixture{}
	_ target.LogZer = StudentTMixture{}
	_ Gradient      = LGCP{}
	_ target.LogZer = LGCP{}
)
