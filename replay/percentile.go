package replay

import (
	"fmt"
	"math"
	"slices"
)

// Percentile returns the q-th percentile (0 ≤ q ≤ 100) of xs by linear
// interpolation between closest ranks, as numpy.percentile's default: the
// value at fractional rank q/100·(n−1) of the sorted xs. The diffusion
// reference fixes its log-reward threshold to the 90th percentile of the
// untrained Student's samples. xs is not modified.
func Percentile(xs []float64, q float64) (float64, error) {
	if len(xs) == 0 {
		return 0, fmt.Errorf("replay: percentile of no values")
	}
	if !(q >= 0 && q <= 100) {
		return 0, fmt.Errorf("replay: percentile %v must be in [0, 100]", q)
	}
	s := slices.Clone(xs)
	for _, v := range s {
		if math.IsNaN(v) {
			return 0, fmt.Errorf("replay: percentile of a set with NaN")
		}
	}
	slices.Sort(s)
	pos := q / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo >= len(s)-1 {
		return s[len(s)-1], nil
	}
	f := pos - float64(lo)
	return s[lo] + f*(s[lo+1]-s[lo]), nil
}
