package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gfngo/gfn/diffusion"
)

// DivergenceMargin is how far, in nats, a run's final ELBO must fall below
// its first evaluation's (after one iteration) to count as diverged: the evaluations estimate
// the ELBO from 2,000 and 10,000 samples, so a run that barely trains can
// end a little below its start (a --quick 25GMM smoke run of 40 iterations
// went from −6.061 to −6.075), while a run that diverged falls by
// thousands (Manywell PIS seed 1: from 85 to −71,207).
const DivergenceMargin = 1.0

// divergedAt judges a run from its curve (the step and ELBO columns of its
// metrics.csv, in order) and the ELBO of its final evaluation, taken after
// steps iterations. start is the curve's first ELBO, after one
// iteration (NaN without a curve). A run diverged when final < start −
// DivergenceMargin; at is then the step of the first row after which the
// ELBO stays below start − DivergenceMargin to the end (the row after the
// last one at or above it; a NaN ELBO counts as below), or steps when the
// last row is still at or above it (the run fell after its last periodic
// evaluation). at is 0 when the run did not diverge, and positive when it
// did, as the rows' steps increase from the first.
func divergedAt(step, elbo []float64, final float64, steps int) (start float64, at int) {
	if len(elbo) == 0 {
		return math.NaN(), 0
	}
	start = elbo[0]
	floor := start - DivergenceMargin
	if !(final < floor) { // a NaN start or final ELBO is no evidence
		return start, 0
	}
	at = steps
	for i := len(elbo) - 1; i >= 0; i-- {
		if elbo[i] >= floor { // true at i = 0
			if i+1 < len(elbo) {
				at = int(step[i+1])
			}
			break
		}
	}
	return start, max(at, 1)
}

// runDivergence judges the finished run in dir, whose final evaluation gave
// finalELBO after steps iterations, from its metrics.csv (divergedAt). A
// run without a metrics.csv (SMC, GGNS: no training) has a NaN start ELBO
// and did not diverge.
func runDivergence(dir string, finalELBO float64, steps int) (start float64, at int, err error) {
	if !exists(filepath.Join(dir, "metrics.csv")) {
		return math.NaN(), 0, nil
	}
	c, err := readColumns(dir, []string{"step", "elbo"}, nil)
	if err != nil {
		return math.NaN(), 0, err
	}
	start, at = divergedAt(c["step"], c["elbo"], finalELBO, steps)
	return start, at, nil
}

// readDiffusionSummary reads the summary.json of the run in dir; the error
// of a missing file wraps os.ErrNotExist. A summary of a gfn before the
// run driver has its timings per iteration under ms_per_iter_*.
func readDiffusionSummary(dir string) (diffusion.Summary, error) {
	var s diffusion.Summary
	path := filepath.Join(dir, "summary.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	var old struct {
		Mean  *float64 `json:"ms_per_iter_mean"`
		Early *float64 `json:"ms_per_iter_early"`
		Late  *float64 `json:"ms_per_iter_late"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("bench: %s: %w", path, err)
	}
	if json.Unmarshal(b, &old) == nil && old.Mean != nil {
		s.MsPerStepMean = *old.Mean
		if old.Early != nil && old.Late != nil {
			s.MsPerStepEarly, s.MsPerStepLate = *old.Early, *old.Late
		}
	}
	return s, nil
}

// divergenceNote says which run of the task diverged, when, and how far
// its final ELBO fell, for the note below results.md's table.
func divergenceNote(r DiffusionResult) string {
	return fmt.Sprintf("%s %s seed %d diverged at iteration %s: final ELBO %.3f below its first evaluation's %.3f; left out of the row.",
		r.Task, r.Method, r.Seed, groupDigits(r.DivergedAt), r.ELBO, r.StartELBO)
}

// groupDigits formats n with commas between groups of three digits.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}
