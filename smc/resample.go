package smc

import (
	"fmt"
	"math"
)

// Systematic fills dst with len(dst) indices into logW drawn by systematic
// resampling from the weights W_i ∝ exp(logW_i), with u ∈ [0, 1) the one
// uniform the scheme needs: index i is drawn for every point
// (u + m)/len(dst), m = 0..len(dst)−1, that falls in
// [Σ_{j<i} W_j, Σ_{j≤i} W_j). So index i is drawn ⌊M·W_i⌋ or ⌈M·W_i⌉ times
// (M = len(dst)), indices come out in increasing order, and a zero weight
// is never drawn. With u ~ U[0, 1) the counts are unbiased: E = M·W_i.
//
// The weights need not be normalised. Systematic panics if u is outside
// [0, 1), if logW is empty while dst is not, or if a log-weight is NaN or
// +Inf or all are −Inf.
func Systematic(dst []int, logW []float64, u float64) {
	if len(dst) == 0 {
		return
	}
	if !(u >= 0 && u < 1) {
		panic(fmt.Sprintf("smc: Systematic: u = %v is outside [0, 1)", u))
	}
	if len(logW) == 0 {
		panic("smc: Systematic: no weights to draw from")
	}
	lse := logSumExp(logW)
	if math.IsNaN(lse) || math.IsInf(lse, 0) {
		panic(fmt.Sprintf("smc: Systematic: log-weights sum to %v: they must be finite or −Inf, not all −Inf", lse))
	}
	// last is the last index of positive normalised weight, the fallback
	// when rounding leaves the cumulative sum just short of a point.
	last := -1
	for j, lw := range logW {
		if math.IsNaN(lw) || math.IsInf(lw, 1) {
			panic(fmt.Sprintf("smc: Systematic: logW[%d] = %v", j, lw))
		}
		if math.Exp(lw-lse) > 0 {
			last = j
		}
	}
	m := float64(len(dst))
	j := 0
	c := math.Exp(logW[0] - lse)
	for k := range dst {
		pos := (u + float64(k)) / m
		for c <= pos && j < last {
			j++
			c += math.Exp(logW[j] - lse)
		}
		dst[k] = j
	}
}

// logSumExp returns log Σ exp(v_i), stably; −Inf for an empty v or when
// every v_i is −Inf.
func logSumExp(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		if x > m || math.IsNaN(x) {
			m = x
		}
	}
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return m
	}
	var s float64
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// essOf returns the effective sample size 1/Σ W_i² of normalised
// log-weights.
func essOf(logW []float64) float64 {
	var s float64
	for _, lw := range logW {
		s += math.Exp(2 * lw)
	}
	return 1 / s
}
