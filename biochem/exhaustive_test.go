package biochem

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

const histBins = 110000

// histBin is the bin of p in [-4, 7) by steps of 1e-4.
func histBin(p float64) int { return min(max(int((p+4)*1e4), 0), histBins-1) }

// readSharedRows reads a list of strings from shared/data.
func readSharedRows(task *Task, name string) ([]int32, error) {
	b, err := os.ReadFile(filepath.Join(sharedData, name))
	if err != nil {
		return nil, err
	}
	var rows []int32
	for l := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		x, err := task.Encode(strings.TrimSpace(l))
		if err != nil {
			return nil, err
		}
		rows = append(rows, x...)
	}
	return rows, nil
}

// TestSEHExhaustive enumerates all 18^6 sEH strings (about a minute on one
// core) to check the facts the package relies on: the maximum sehMax at
// "ag550c", the rank of the weakest mode, and the constant sehLogZ. It also
// compares the stored target samples with the exact target. Opt-in:
// BIOCHEM_EXHAUSTIVE=1.
func TestSEHExhaustive(t *testing.T) {
	if os.Getenv("BIOCHEM_EXHAUSTIVE") == "" {
		t.Skip("set BIOCHEM_EXHAUSTIVE=1 to enumerate all 18^6 sEH strings")
	}
	task := sehstrTask()
	d := task.data()

	// The weakest mode's prediction; the ranks are counted against it.
	modes := task.Modes()
	weakest := math.Inf(1)
	for r := 0; r < len(modes); r += 6 {
		weakest = min(weakest, d.score(modes[r:r+6]))
	}

	start := time.Now()
	const size = 34012224
	x := make([]int32, 6)
	var (
		top, bottom     = math.Inf(-1), math.Inf(1)
		topIdx          uint64
		above, equal    int
		near            []float64 // predictions within 0.01 below the weakest mode and up
		sum, comp       float64   // Neumaier sum of R/10
		sumLogP, sumSq2 float64   // Σ (R/10)·log p, Σ (R/10)·(log p)²
		hist            = make([]float64, histBins)
	)
	for i := range uint64(size) {
		unindex(i, 18, x)
		p := d.score(x)
		if p > top {
			top, topIdx = p, i
		}
		bottom = min(bottom, p)
		switch {
		case p > weakest:
			above++
		case p == weakest:
			equal++
		}
		if p >= weakest-0.01 {
			near = append(near, p)
		}
		w := math.Exp(task.logReward(d, p) - math.Log(10))
		s := sum + w
		if math.Abs(sum) >= w {
			comp += (sum - s) + w
		} else {
			comp += (w - s) + sum
		}
		sum = s
		lp := math.Log(max(p, ScoreMin))
		sumLogP += w * lp
		sumSq2 += w * lp * lp
		hist[histBin(p)] += w
	}
	elapsed := time.Since(start)
	z := sum + comp
	logZ := math.Log(10) + math.Log(z)
	sort.Sort(sort.Reverse(sort.Float64Slice(near)))

	unindex(topIdx, 18, x)
	t.Logf("enumerated %d strings in %v", size, elapsed)
	t.Logf("max %.17g at %q (sehMax %.17g); min %.9g", top, task.Decode(x), float64(sehMax), bottom)
	t.Logf("weakest of the %d modes %.9g: %d strings above it, %d equal", len(modes)/6, weakest, above, equal)
	for _, r := range []int{3399, 3400, 3401, 3402, 3403, 3404} {
		if r <= len(near) {
			t.Logf("rank %d: %.9g", r, near[r-1])
		}
	}
	t.Logf("log Z %.17g (sehLogZ %.17g); log Z of max(p,1e-3)^6 alone %.17g", logZ, float64(sehLogZ), logZ-d.logScale)
	mean := sumLogP / z
	sd := math.Sqrt(sumSq2/z - mean*mean)
	var got float64
	for r := 0; r < len(d.stored); r += 6 {
		got += math.Log(max(d.score(d.stored[r:r+6]), ScoreMin))
	}
	m := len(d.stored) / 6
	got /= float64(m)
	t.Logf("E_target[log p] = %.6f (sd %.6f); mean over the %d stored samples %.6f, z = %.2f", mean, sd, m, got, (got-mean)/(sd/math.Sqrt(float64(m))))

	// Kolmogorov–Smirnov distance between the target law of p (from the
	// histogram, bins of 1e-4) and the stored samples', for both stored
	// sets of the reference (the "scaled" one only in shared/data).
	sets := map[string][]int32{"true_samples": d.stored}
	if rows, err := readSharedRows(task, "sehstr/true_samples_beta6_true_samples_scaled.txt"); err == nil {
		sets["true_samples_scaled"] = rows
	}
	for name, rows := range sets {
		ps := make([]float64, len(rows)/6)
		for r := range ps {
			ps[r] = d.score(rows[6*r : 6*r+6])
		}
		sort.Float64s(ps)
		var cdf, ks float64
		k := 0
		for b := range hist {
			for k < len(ps) && histBin(ps[k]) == b {
				k++
			}
			cdf += hist[b] / z
			ks = max(ks, math.Abs(cdf-float64(k)/float64(len(ps))))
		}
		t.Logf("%s: KS distance to the target law of p %.4f over %d samples (1%% critical value %.4f)", name, ks, len(ps), 1.63/math.Sqrt(float64(len(ps))))
	}

	if task.Decode(x) != "ag550c" || top != sehMax {
		t.Errorf("max %.17g at %q, want sehMax %.17g at ag550c", top, task.Decode(x), float64(sehMax))
	}
	if math.Abs(logZ-sehLogZ) > 1e-12 {
		t.Errorf("log Z %.17g, sehLogZ %.17g", logZ, float64(sehLogZ))
	}
	if above >= 3401 || above+equal < 3401 {
		t.Errorf("the weakest mode %v is not the 3401st best: %d above, %d equal", weakest, above, equal)
	}
}
