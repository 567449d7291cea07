package energy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// Student-t mixture constants (Blessing et al., variational_sampling_methods,
// targets/student_t_mixture.py and configs/target/student_t_mixture.yaml).
const (
	// MoSComponents is K, the number of equal-weight components.
	MoSComponents = 10
	// MoSDoF is ν, the degrees of freedom of every coordinate.
	MoSDoF = 2
	// MoSLocRange is the half-width of the locations' box [−10, 10]^d.
	MoSLocRange = 10
)

// StudentTMixture is the mixture of Student-t distributions ("MoS") of
// Blessing et al. 2024 ("Beyond ELBOs"), over ℝ^d with d = 50 (the zero
// value, the dimension of their benchmark) or any d ≥ 1; a Gradient,
// Sampler, Mixture and LogZer:
//
//	log R(x) = log Σ_k (1/10) Π_j t₂(x_j − μ_kj),   log Z = 0,
//	t_ν(z) = Γ((ν+1)/2) / (Γ(ν/2)·√(νπ)) · (1 + z²/ν)^{−(ν+1)/2},
//
// K = 10 components, each a product of independent unit-scale Student-t
// coordinates with ν = 2 degrees of freedom (numpyro's
// Independent(StudentT(df = 2, loc, scale = 1), 1), not a multivariate t),
// equal weights, and locations μ = jax.random.uniform(PRNGKey(0), (10, d),
// float32, −10, 10), as their code draws them (reproduced bit for bit:
// see jaxrand.go). The locations depend on d. With ν = 2 each coordinate
// has a finite mean and an infinite variance.
type StudentTMixture struct {
	m *productMixture // nil: d = 50
}

var mosCache sync.Map // d → *productMixture

// NewStudentTMixture returns the Student-t mixture over ℝ^d; d must be
// between 1 and 10,000.
func NewStudentTMixture(d int) (StudentTMixture, error) {
	if d < 1 || d > 10000 {
		return StudentTMixture{}, fmt.Errorf("energy: StudentTMixture dimension %d is not allowed: it must be between 1 and 10000", d)
	}
	return StudentTMixture{m: mosFor(d)}, nil
}

// studentT2Const is log Γ(3/2) − log Γ(1) − ½ log(2π) = −(3/2)·log 2, the
// normaliser of t₂.
var studentT2Const = func() float64 {
	a, _ := math.Lgamma((MoSDoF + 1) / 2.0)
	b, _ := math.Lgamma(MoSDoF / 2.0)
	return a - b - 0.5*math.Log(MoSDoF*math.Pi)
}()

// studentT2Logf is log t₂(z) and its derivative −(ν+1)z/(ν + z²).
func studentT2Logf(z float64) (float64, float64) {
	const nu = MoSDoF
	return studentT2Const - (nu+1)/2.0*math.Log1p(z*z/nu), -(nu + 1) * z / (nu + z*z)
}

func mosFor(d int) *productMixture {
	if m, ok := mosCache.Load(d); ok {
		return m.(*productMixture)
	}
	u := jaxUniformKey0(MoSComponents*d, -MoSLocRange, MoSLocRange)
	locs := make([]float64, len(u))
	for i, v := range u {
		locs[i] = float64(v)
	}
	m := &productMixture{k: MoSComponents, d: d, locs: locs, logf: studentT2Logf}
	got, _ := mosCache.LoadOrStore(d, m)
	return got.(*productMixture)
}

func (s StudentTMixture) mix() *productMixture {
	if s.m == nil {
		return mosFor(50)
	}
	return s.m
}

// Dim returns d.
func (s StudentTMixture) Dim() int { return s.mix().d }

// String returns "mos" for d = 50 and "mos-<d>d" otherwise.
func (s StudentTMixture) String() string {
	if s.Dim() == 50 {
		return "mos"
	}
	return fmt.Sprintf("mos-%dd", s.Dim())
}

// LogZ returns 0: the mixture is normalised.
func (StudentTMixture) LogZ() float64 { return 0 }

// Components returns 10.
func (StudentTMixture) Components() int { return MoSComponents }

// Locations returns the component locations, 10×d row-major (a copy).
func (s StudentTMixture) Locations() []float64 { return s.mix().locations() }

// LogReward implements Energy.
func (s StudentTMixture) LogReward(x []float32, out []float64) error {
	return s.mix().logReward(x, out)
}

// GradLogReward implements Gradient.
func (s StudentTMixture) GradLogReward(x []float32, logR, grad []float64) error {
	return s.mix().gradLogReward(x, logR, grad)
}

// Assign implements Mixture: the component of largest log-density.
func (s StudentTMixture) Assign(x []float32, k []int) error { return s.mix().assign(x, k) }

// Sample implements Sampler: a uniform component k, then x_j = μ_kj +
// z_j/√(V_j/ν) with z_j standard normal and V_j ~ χ²_ν; for ν = 2,
// V_j = 2E_j with E_j standard exponential, so x_j = μ_kj + z_j/√E_j.
func (s StudentTMixture) Sample(dst []float32, rng *rand.Rand) {
	m := s.mix()
	n := sampleRows(m.d, dst)
	for b := range n {
		mu := m.locs[rng.IntN(m.k)*m.d:]
		for j := range m.d {
			dst[b*m.d+j] = float32(mu[j] + rng.NormFloat64()/math.Sqrt(rng.ExpFloat64()))
		}
	}
}
