package samplemetric

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// MedianPoints caps the points of each set that enter the median
// heuristic: the first MedianPoints rows of x and of y (the pooled median
// over n points takes n(n−1)/2 distances; 2,000 points make 2·10⁶).
const MedianPoints = 1000

// MMDResult is an MMD estimate.
type MMDResult struct {
	// MMD2 is the unbiased estimate of MMD² (it can be slightly negative
	// when the two distributions are equal).
	MMD2 float64 `json:"mmd2"`
	// Bandwidth is the kernel's h, given or from the median heuristic.
	Bandwidth float64 `json:"bandwidth"`
}

// MMD returns √max(0, MMD2), the distance on the scale Blessing et al.
// report.
func (r MMDResult) MMD() float64 { return math.Sqrt(max(0, r.MMD2)) }

// MMD estimates the maximum mean discrepancy between the distributions of
// the rows of x (m×d, a sampler's samples) and y (n×d, exact samples) with
// the Gaussian kernel
//
//	k(u, v) = exp(−‖u − v‖² / (2h²)),
//
// by the unbiased U-statistic (Gretton et al. 2012, "A kernel two-sample
// test", eq. 3):
//
//	MMD²_u = Σ_{i≠j} k(x_i, x_j)/(m(m−1)) + Σ_{i≠j} k(y_i, y_j)/(n(n−1))
//	         − 2 Σ_{i,j} k(x_i, y_j)/(mn).
//
// Bandwidth h: bandwidth > 0 fixes it (comparable across runs and
// samplers); bandwidth = 0 selects the median heuristic, h = the median of
// ‖z_i − z_j‖ over the distinct pairs i < j of the pooled points z (the
// first MedianPoints rows of x, then of y), the choice of Blessing et al.
// 2024 (their ipm_eval/mmd_median.py), which adapts h to the target's
// scale so that one rule serves 2-D and 50-D targets. Their estimator
// differs in two details: it keeps the diagonal k(x_i, x_i) = 1 in the
// within-set sums (a bias of 1/(m−1) + 1/(n−1) in MMD²), and its median
// includes the zero self-distances; this one is unbiased and excludes them.
//
// m and n must be at least 2, d positive, and the rows finite. The sums
// are float64, split across cores in fixed chunks and added in a fixed
// order, so the result does not depend on GOMAXPROCS.
func MMD(x, y []float32, d int, bandwidth float64) (MMDResult, error) {
	if d <= 0 {
		return MMDResult{}, fmt.Errorf("samplemetric: dimension d = %d must be positive", d)
	}
	for _, s := range []struct {
		name string
		v    []float32
	}{{"x", x}, {"y", y}} {
		if len(s.v)%d != 0 || len(s.v)/d < 2 {
			return MMDResult{}, fmt.Errorf("samplemetric: len(%s) = %d is not a multiple of d = %d with at least 2 rows", s.name, len(s.v), d)
		}
		for i, v := range s.v {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return MMDResult{}, fmt.Errorf("samplemetric: %s[%d] = %v (row %d) is not finite", s.name, i, v, i/d)
			}
		}
	}
	if math.IsNaN(bandwidth) || bandwidth < 0 || math.IsInf(bandwidth, 0) {
		return MMDResult{}, fmt.Errorf("samplemetric: bandwidth %v is not allowed: it must be positive and finite, or 0 for the median heuristic", bandwidth)
	}
	xf, yf := widen(x), widen(y)
	m, n := len(x)/d, len(y)/d
	h := bandwidth
	if h == 0 {
		h = medianDistance(xf[:min(m, MedianPoints)*d], yf[:min(n, MedianPoints)*d], d)
		if !(h > 0) {
			return MMDResult{}, fmt.Errorf("samplemetric: the median pairwise distance is %v: the samples are mostly identical, give a bandwidth", h)
		}
	}
	c := -1 / (2 * h * h)
	kxx := kernelSum(xf, xf, d, c, true)
	kyy := kernelSum(yf, yf, d, c, true)
	kxy := kernelSum(xf, yf, d, c, false)
	fm, fn := float64(m), float64(n)
	mmd2 := kxx/(fm*(fm-1)) + kyy/(fn*(fn-1)) - 2*kxy/(fm*fn)
	return MMDResult{MMD2: mmd2, Bandwidth: h}, nil
}

func widen(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func sqDist(u, v []float64) float64 {
	v = v[:len(u)]
	var s float64
	for j, a := range u {
		t := a - v[j]
		s += t * t
	}
	return s
}

// kernelSum returns Σ_{i,j} exp(c·‖a_i − b_j‖²), over i ≠ j if same (a
// and b are then the same set). Rows of a are cut into chunks of 32 whose
// partial sums are added in chunk order.
func kernelSum(a, b []float64, d int, c float64, same bool) float64 {
	na, nb := len(a)/d, len(b)/d
	const chunk = 32
	chunks := (na + chunk - 1) / chunk
	part := make([]float64, chunks)
	var next atomic.Int64
	work := func() {
		for {
			q := int(next.Add(1)) - 1
			if q >= chunks {
				return
			}
			var s float64
			for i := q * chunk; i < min(na, (q+1)*chunk); i++ {
				ai := a[i*d : (i+1)*d]
				for j := range nb {
					if same && i == j {
						continue
					}
					s += math.Exp(c * sqDist(ai, b[j*d:(j+1)*d]))
				}
			}
			part[q] = s
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), chunks) {
		wg.Go(work)
	}
	wg.Wait()
	var s float64
	for _, p := range part {
		s += p
	}
	return s
}

// medianDistance returns the median of ‖z_i − z_j‖ over i < j of the pooled
// rows of x and y (the mean of the two middle values for an even count).
func medianDistance(x, y []float64, d int) float64 {
	z := append(append([]float64(nil), x...), y...)
	n := len(z) / d
	dist := make([]float64, 0, n*(n-1)/2)
	for i := range n {
		for j := i + 1; j < n; j++ {
			dist = append(dist, sqDist(z[i*d:(i+1)*d], z[j*d:(j+1)*d]))
		}
	}
	slices.Sort(dist)
	k := len(dist)
	if k%2 == 1 {
		return math.Sqrt(dist[k/2])
	}
	return (math.Sqrt(dist[k/2-1]) + math.Sqrt(dist[k/2])) / 2
}
