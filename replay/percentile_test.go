package replay_test

import (
	"math"
	"slices"
	"testing"

	"github.com/gfngo/gfn/replay"
)

func TestPercentile(t *testing.T) {
	xs := []float64{3, 1, 4, 1, 5, 9, 2, 6}
	orig := slices.Clone(xs)
	// numpy.percentile(xs, q) for q = 0, 50, 90, 100.
	for q, want := range map[float64]float64{0: 1, 50: 3.5, 90: 6.9, 100: 9, 25: 1.75} {
		got, err := replay.Percentile(xs, q)
		if err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("Percentile(%v) = %v, %v; want %v", q, got, err, want)
		}
	}
	if !slices.Equal(xs, orig) {
		t.Error("Percentile modified its input")
	}
	if _, err := replay.Percentile(nil, 50); err == nil {
		t.Error("no values accepted")
	}
	if _, err := replay.Percentile(xs, 101); err == nil {
		t.Error("q = 101 accepted")
	}
	if _, err := replay.Percentile([]float64{1, math.NaN()}, 50); err == nil {
		t.Error("NaN accepted")
	}
}
