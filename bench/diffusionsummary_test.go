package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadDiffusionSummaryKeys: summaries of the run driver (ms_per_step_*)
// and of the gfn before it (ms_per_iter_*) give the same timings.
func TestReadDiffusionSummaryKeys(t *testing.T) {
	for _, js := range []string{
		`{"task": "25gmm", "steps": 40, "elbo": -1, "ms_per_iter_mean": 10, "ms_per_iter_early": 12, "ms_per_iter_late": 9}`,
		`{"family": "diffusion", "unit": "iteration", "task": "25gmm", "steps": 40, "elbo": -1, "ms_per_step_mean": 10, "ms_per_step_early": 12, "ms_per_step_late": 9}`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := readDiffusionSummary(dir)
		if err != nil || s.Steps != 40 || s.ELBO != -1 || s.MsPerStepMean != 10 || s.MsPerStepEarly != 12 || s.MsPerStepLate != 9 {
			t.Errorf("%s: read %+v, %v", js, s, err)
		}
	}
}
