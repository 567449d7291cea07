package energy

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// ManywellZa is Z_a = ∫ exp(−a⁴ + 6a² + a/2) da, the normaliser of one well's
// first coordinate, by composite Simpson's rule on [−10, 10] (the test
// recomputes it). The reference rounds it to 11784.50927
// (diffusion/energies/many_well.py:48), 4·10⁻¹⁰ relative; for d = 32 its
// log Z, 164.69567532, is 7·10⁻⁹ above this package's.
const ManywellZa = 11784.509265127826

// Rejection-sampling proposal for a (many_well.py:44-46, 88): the mixture
// 0.2·N(−1.7, 0.5²) + 0.8·N(1.7, 0.5²) under the envelope 3·Z_a·q(a). The
// ratio p(a)/(3q(a)) peaks at 0.864 (tested), so the envelope dominates
// and the samples are exact; 1 proposal in 3 is accepted on average.
const (
	manywellMixLeft  = 0.2
	manywellMean     = 1.7
	manywellStd      = 0.5
	manywellEnvelope = 3
)

// Manywell is the many-well target over ℝ^d (d even, 32 by default), a
// Gradient, Sampler and LogZer: d/2 independent double wells on the pairs
// (a_k, b_k) = (x_{2k}, x_{2k+1}), k = 0..d/2−1,
//
//	log R(x) = Σ_k [−a_k⁴ + 6a_k² + a_k/2 − b_k²/2].
//
// The pairs are interleaved, as in the reference, which reshapes each row
// into consecutive pairs (many_well.py:73-74) and concatenates sampled
// pairs the same way (many_well.py:97-100): a plot of "the first pair"
// shows x₀ against x₁. Each a_k has two wells, near −1.7 (mass 0.156) and
// +1.7 (the a/2 tilt favours it); each b_k is N(0, 1). The target has
// 2^{d/2} modes.
//
// The zero value is the reference's d = 32; NewManywell builds other sizes.
type Manywell struct {
	pairs int // 0 means 16
}

// NewManywell returns the many-well target over ℝ^d. d must be even and at
// least 2.
func NewManywell(d int) (Manywell, error) {
	if d < 2 || d%2 != 0 {
		return Manywell{}, fmt.Errorf("energy: Manywell dimension %d is not allowed: it must be even and at least 2", d)
	}
	return Manywell{pairs: d / 2}, nil
}

func (m Manywell) numPairs() int {
	if m.pairs == 0 {
		return 16
	}
	return m.pairs
}

// Dim returns d.
func (m Manywell) Dim() int { return 2 * m.numPairs() }

// String returns "manywell-d32" (with the actual d).
func (m Manywell) String() string { return fmt.Sprintf("manywell-d%d", m.Dim()) }

// LogZ returns (d/2)·(log Z_a + ½ log 2π), with Z_a = ManywellZa: each pair
// contributes its first coordinate's integral and a unit Gaussian's.
func (m Manywell) LogZ() float64 {
	return float64(m.numPairs()) * (math.Log(ManywellZa) + 0.5*math.Log(2*math.Pi))
}

// manywellA is the log-density of one well's first coordinate, up to Z_a.
func manywellA(a float64) float64 {
	a2 := a * a
	return -a2*a2 + 6*a2 + 0.5*a
}

// LogReward implements Energy.
func (m Manywell) LogReward(x []float32, out []float64) error {
	d := m.Dim()
	n, err := Rows(d, x, out)
	if err != nil {
		return err
	}
	for r := range n {
		row := x[r*d : (r+1)*d]
		var s float64
		for k := 0; k < d; k += 2 {
			a, b := float64(row[k]), float64(row[k+1])
			s += manywellA(a) - 0.5*b*b
		}
		out[r] = s
	}
	return nil
}

// GradLogReward implements Gradient: ∂/∂a = −4a³ + 12a + ½, ∂/∂b = −b.
func (m Manywell) GradLogReward(x []float32, logR, grad []float64) error {
	d := m.Dim()
	n, err := gradRows(d, x, logR, grad)
	if err != nil {
		return err
	}
	for r := range n {
		row, g := x[r*d:(r+1)*d], grad[r*d:(r+1)*d]
		var s float64
		for k := 0; k < d; k += 2 {
			a, b := float64(row[k]), float64(row[k+1])
			s += manywellA(a) - 0.5*b*b
			g[k] = -4*a*a*a + 12*a + 0.5
			g[k+1] = -b
		}
		logR[r] = s
	}
	return nil
}

// Sample implements Sampler: every b_k ~ N(0, 1) and every a_k by
// rejection, as the reference does (many_well.py:12-26, 78-95), from the
// proposal q = 0.2·N(−1.7, 0.5²) + 0.8·N(1.7, 0.5²) under the envelope
// 3·Z_a·q. The target-to-envelope ratio p(a)/(3q(a)) peaks at 0.864 < 1,
// so the samples are exact; a costs 3 proposals on average. All values are
// independent; rows are i.i.d.
func (m Manywell) Sample(dst []float32, rng *rand.Rand) {
	sampleRows(m.Dim(), dst)
	for k := 0; k < len(dst); k += 2 {
		dst[k] = float32(manywellSampleA(rng))
		dst[k+1] = float32(rng.NormFloat64())
	}
}

// logEnvelope is log(3·Z_a).
var logEnvelope = math.Log(manywellEnvelope * ManywellZa)

// manywellSampleA draws one exact sample of a well's first coordinate,
// density exp(−a⁴ + 6a² + a/2)/Z_a, by rejection: propose z from
// 0.2·N(−1.7, 0.5²) + 0.8·N(1.7, 0.5²) and accept with probability
// exp(−z⁴ + 6z² + z/2)/(3·Z_a·q(z)).
func manywellSampleA(rng *rand.Rand) float64 {
	for {
		z := manywellMean
		if rng.Float64() < manywellMixLeft {
			z = -manywellMean
		}
		z += manywellStd * rng.NormFloat64()
		if math.Log(rng.Float64()) < manywellA(z)-logEnvelope-manywellLogQ(z) {
			return z
		}
	}
}

// Constants of the proposal's log-density: the mixture weights' logs and
// the Gaussians' shared normaliser.
var (
	logMixLeft   = math.Log(manywellMixLeft)
	logMixRight  = math.Log(1 - manywellMixLeft)
	logNormConst = -math.Log(manywellStd) - 0.5*math.Log(2*math.Pi)
)

// manywellLogQ is the log-density of the rejection proposal, a stable
// log-sum-exp of its two components.
func manywellLogQ(z float64) float64 {
	ul, ur := (z+manywellMean)/manywellStd, (z-manywellMean)/manywellStd
	l, r := logMixLeft-0.5*ul*ul, logMixRight-0.5*ur*ur
	hi, lo := max(l, r), min(l, r)
	return logNormConst + hi + math.Log1p(math.Exp(lo-hi))
}
