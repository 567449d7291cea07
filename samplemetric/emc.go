package samplemetric

import (
	"fmt"
	"math"

	"github.com/gfngo/gfn/energy"
)

// EMC returns the entropic mode coverage of the rows of x (n×Dim()) over
// the K components of m (Blessing et al. 2024, their targets' entropy
// evaluation):
//
//	EMC = −Σ_k p_k log p_k / log K,   p_k = #{b : Assign(x_b) = k} / n,
//
// each sample assigned to its component of largest responsibility
// (energy.Mixture.Assign). EMC is 1 when the samples spread evenly over
// every component (an exact sampler's samples give nearly 1: the
// multinomial counts' entropy falls short by about (K−1)/(2n·log K)) and 0
// when they all fall in one. Rows with a NaN (assigned −1) are left out
// of the counts; EMC fails if no row is left, if n = 0, or if K < 2 (log K
// would be 0).
func EMC(m energy.Mixture, x []float32) (float64, error) {
	d, k := m.Dim(), m.Components()
	if k < 2 {
		return math.NaN(), fmt.Errorf("samplemetric: EMC needs at least 2 components, the mixture has %d", k)
	}
	if len(x) == 0 || len(x)%d != 0 {
		return math.NaN(), fmt.Errorf("samplemetric: len(x) = %d is not a positive multiple of Dim() = %d", len(x), d)
	}
	labels := make([]int, len(x)/d)
	if err := m.Assign(x, labels); err != nil {
		return math.NaN(), err
	}
	return EMCFromLabels(labels, k)
}

// EMCFromLabels returns the entropic mode coverage of component labels in
// [0, k) (see EMC); labels −1 (unassigned) are left out. It fails for
// k < 2, a label outside [−1, k), or no assigned label.
func EMCFromLabels(labels []int, k int) (float64, error) {
	if k < 2 {
		return math.NaN(), fmt.Errorf("samplemetric: EMC needs at least 2 components, got %d", k)
	}
	count := make([]float64, k)
	var n float64
	for i, l := range labels {
		if l == -1 {
			continue
		}
		if l < 0 || l >= k {
			return math.NaN(), fmt.Errorf("samplemetric: label %d of sample %d is outside [0, %d)", l, i, k)
		}
		count[l]++
		n++
	}
	if n == 0 {
		return math.NaN(), fmt.Errorf("samplemetric: none of the %d samples is assigned to a component", len(labels))
	}
	var h float64
	for _, c := range count {
		if c > 0 {
			p := c / n
			h -= p * math.Log(p)
		}
	}
	return h / math.Log(float64(k)), nil
}
