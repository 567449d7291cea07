package energy

import (
	"fmt"
	"math"
)

// Mixture is an Energy that is a finite mixture with known components,
// p(x) = Σ_k w_k p_k(x). Mode-coverage metrics (package samplemetric's
// entropic mode coverage) need it.
type Mixture interface {
	Energy

	// Components returns K, the number of components.
	Components() int

	// Assign writes into k, for each row of x, the component of largest
	// weighted log-density log w_k + log p_k(x_b) (the largest
	// responsibility; for equal weights, the argmax of the component
	// log-densities, as Blessing et al.'s entropy evaluation assigns), or
	// −1 for a row with a NaN. It returns an error only for mis-sized
	// slices (len(k) must be the number of rows).
	Assign(x []float32, k []int) error
}

// The mixtures offer Assign.
var (
	_ Mixture = GMM25{}
	_ Mixture = GMM40{}
	_ Mixture = StudentTMixture{}
)

// assignRows checks Assign's arguments and returns the number of rows.
func assignRows(dim int, x []float32, k []int) (int, error) {
	if len(x)%dim != 0 {
		return 0, fmt.Errorf("energy: len(x) = %d is not a multiple of Dim() = %d", len(x), dim)
	}
	if n := len(x) / dim; len(k) != n {
		return 0, fmt.Errorf("energy: len(k) = %d, want len(x)/Dim() = %d/%d = %d rows", len(k), len(x), dim, n)
	}
	return len(x) / dim, nil
}

// Components returns 25.
func (GMM25) Components() int { return 25 }

// Assign implements Mixture: the nearest mean (the components share one
// isotropic covariance and equal weights), in the order of Means.
func (GMM25) Assign(x []float32, k []int) error {
	n, err := assignRows(2, x, k)
	if err != nil {
		return err
	}
	for b := range n {
		x1, x2 := float64(x[2*b]), float64(x[2*b+1])
		if math.IsNaN(x1) || math.IsNaN(x2) {
			k[b] = -1
			continue
		}
		r := func(v float64) int { return int(max(0, min(4, math.Round((v+10)/5)))) }
		k[b] = 5*r(x1) + r(x2)
	}
	return nil
}

// productMixture is an equal-weight mixture of K product densities over
// ℝ^d, component k having the coordinates x_j ~ f(x_j − μ_kj) for one
// standard 1-D log-density f (unit scale).
type productMixture struct {
	k, d int
	locs []float64 // K×d, row-major
	// logf returns log f(z) and, if grad, d log f/dz.
	logf func(z float64) (float64, float64)
}

// logR returns log R(x) = log Σ_k (1/K) Π_j f(x_j − μ_kj) for one row and
// writes ∇ log R into g if g is not nil; comp (length K) is scratch that
// ends holding the component log-densities log p_k(x).
func (m *productMixture) logR(x []float32, g []float64, comp []float64) float64 {
	top := math.Inf(-1)
	for k := range m.k {
		mu := m.locs[k*m.d : (k+1)*m.d]
		var s float64
		for j, v := range x {
			l, _ := m.logf(float64(v) - mu[j])
			s += l
		}
		comp[k] = s
		if s > top || math.IsNaN(s) {
			top = s
		}
	}
	if math.IsNaN(top) || math.IsInf(top, 0) {
		if g != nil {
			for j := range g {
				g[j] = top
			}
		}
		return top
	}
	var sum float64
	for _, s := range comp {
		sum += math.Exp(s - top)
	}
	if g != nil {
		clear(g)
		for k := range m.k {
			w := math.Exp(comp[k]-top) / sum
			if w == 0 {
				continue
			}
			mu := m.locs[k*m.d : (k+1)*m.d]
			for j, v := range x {
				_, dl := m.logf(float64(v) - mu[j])
				g[j] += w * dl
			}
		}
	}
	return top + math.Log(sum) - math.Log(float64(m.k))
}

func (m *productMixture) logReward(x []float32, out []float64) error {
	n, err := Rows(m.d, x, out)
	if err != nil {
		return err
	}
	comp := make([]float64, m.k)
	for b := range n {
		out[b] = m.logR(x[b*m.d:(b+1)*m.d], nil, comp)
	}
	return nil
}

func (m *productMixture) gradLogReward(x []float32, logR, grad []float64) error {
	n, err := gradRows(m.d, x, logR, grad)
	if err != nil {
		return err
	}
	comp := make([]float64, m.k)
	for b := range n {
		logR[b] = m.logR(x[b*m.d:(b+1)*m.d], grad[b*m.d:(b+1)*m.d], comp)
	}
	return nil
}

func (m *productMixture) assign(x []float32, k []int) error {
	n, err := assignRows(m.d, x, k)
	if err != nil {
		return err
	}
	comp := make([]float64, m.k)
	for b := range n {
		row := x[b*m.d : (b+1)*m.d]
		m.logR(row, nil, comp)
		best, arg := math.Inf(-1), -1
		for c, s := range comp {
			if math.IsNaN(s) {
				arg = -1
				break
			}
			if s > best || arg < 0 {
				best, arg = s, c
			}
		}
		k[b] = arg
	}
	return nil
}

// Locations returns a copy of the K component locations, K×d row-major.
func (m *productMixture) locations() []float64 { return append([]float64(nil), m.locs...) }
