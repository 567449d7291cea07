package samplemetric

import (
	"fmt"
	"math"
)

// LogZIS returns the importance-weighted estimate of log Z from the log
// weights log w_b = log R(x_b) − log q(x_b) of n samples from q (for a
// diffusion sampler, log w = log R + Σ log P_B − Σ log P_F of its
// trajectories):
//
//	log Ẑ = log (1/n) Σ_b exp(log w_b),
//
// computed stably (max-shifted, float64). Its expectation lies below
// log Z (Jensen), approaching it as n grows when q covers the target. NaN
// weights give NaN; −Inf weights count as zero weight.
func LogZIS(logW []float64) (float64, error) {
	if len(logW) == 0 {
		return math.NaN(), fmt.Errorf("samplemetric: LogZIS needs at least one log weight, got none")
	}
	top := math.Inf(-1)
	for _, v := range logW {
		if math.IsNaN(v) {
			return math.NaN(), nil
		}
		top = max(top, v)
	}
	if math.IsInf(top, 0) {
		return top, nil
	}
	var s float64
	for _, v := range logW {
		s += math.Exp(v - top)
	}
	return top + math.Log(s/float64(len(logW))), nil
}

// LogZError returns |Δ log Z| = |log Ẑ − log Z|, the absolute error of the
// importance-weighted estimate (LogZIS) against the known log Z, the
// metric Blessing et al. 2024 report where log Z is known. It fails for no
// weights or a non-finite logZ (an unknown log Z is NaN: there is nothing
// to compare with).
func LogZError(logW []float64, logZ float64) (float64, error) {
	if math.IsNaN(logZ) || math.IsInf(logZ, 0) {
		return math.NaN(), fmt.Errorf("samplemetric: log Z = %v is not known (finite)", logZ)
	}
	est, err := LogZIS(logW)
	if err != nil {
		return math.NaN(), err
	}
	return math.Abs(est - logZ), nil
}
