package teacher

import (
	"fmt"
	"math"
	"slices"
)

// Budget counts reward calls against a limit. Replays cost none; the
// family charges each fresh batch (and each local-search round) it scores.
// The zero value has no limit.
type Budget struct {
	Limit int // 0: unlimited
	Used  int
}

// Allows reports whether n more calls fit in the budget.
func (b Budget) Allows(n int) bool { return b.Limit == 0 || b.Used+n <= b.Limit }

// Spend records n calls.
func (b *Budget) Spend(n int) { b.Used += n }

// Percentile returns the q-th percentile (0 ≤ q ≤ 100) of xs by linear
// interpolation between closest ranks, as numpy.percentile's default: the
// value at fractional rank q/100·(n−1) of the sorted xs. The diffusion
// reference fixes its log-reward threshold to the 90th percentile of the
// untrained Student's samples. xs is not modified.
func Percentile(xs []float64, q float64) (float64, error) {
	if len(xs) == 0 {
		return 0, fmt.Errorf("teacher: percentile of no values")
	}
	if !(q >= 0 && q <= 100) {
		return 0, fmt.Errorf("teacher: percentile %v must be in [0, 100]", q)
	}
	s := slices.Clone(xs)
	for _, v := range s {
		if math.IsNaN(v) {
			return 0, fmt.Errorf("teacher: percentile of a set with NaN")
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
