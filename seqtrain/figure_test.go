package seqtrain

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gfngo/gfn/run"
)

func seqCurve(rounds []float64, modes float64) *run.Curve {
	c := &run.Curve{}
	for _, n := range []string{"round", "modes_seen", "elbo", "eubo", "log_z_est", "log_z"} {
		c.Columns = append(c.Columns, run.Column{Name: n})
	}
	for _, r := range rounds {
		c.Rows = append(c.Rows, []float64{r, modes, -3, 11.7, 8.25, 4.3})
	}
	return c
}

// TestSeqChartsCoverRunWithRefs: the figure's x axis stopped at the one
// evaluated round (38…40 of 40); the task's modes and log Z are known.
func TestSeqChartsCoverRunWithRefs(t *testing.T) {
	refs := figureRefs{Rounds: 40, ModesTotal: 328, TrueLogZ: 8.34}
	cs := seqCharts("tfbind8 tb", seqCurve([]float64{39}, 11), refs)
	if len(cs) != 3 {
		t.Fatalf("%d charts", len(cs))
	}
	for _, c := range cs {
		if c.XMin != 0 || c.XMax != 39 {
			t.Errorf("%s: x axis covers [%v, %v], want the rounds 0…39", c.Title, c.XMin, c.XMax)
		}
	}
	if !strings.Contains(cs[0].Title, "of 328") || len(cs[0].Refs) != 0 || !cs[0].YZero {
		t.Errorf("modes chart %q refs %v zero %v: want the total in the title, no line far above 11 modes, from 0", cs[0].Title, cs[0].Refs, cs[0].YZero)
	}
	for _, c := range cs[1:] {
		if len(c.Refs) != 1 || c.Refs[0].Y != 8.34 {
			t.Errorf("%s: refs %v, want the true log Z", c.Title, c.Refs)
		}
	}
	// Near the total, the line is drawn.
	if cs := seqCharts("t", seqCurve([]float64{0, 39}, 200), refs); len(cs[0].Refs) != 1 || cs[0].Refs[0].Y != 328 {
		t.Errorf("modes refs %v, want all 328 modes", cs[0].Refs)
	}
	// Unknown log Z and modes: no lines.
	if cs := seqCharts("t", seqCurve([]float64{39}, 1), figureRefs{Rounds: 40, TrueLogZ: math.NaN()}); len(cs[0].Refs)+len(cs[1].Refs)+len(cs[2].Refs) != 0 {
		t.Error("reference lines without known values")
	}
}

func TestReadRefs(t *testing.T) {
	dir := t.TempDir()
	if r := readRefs(dir); r.Rounds != 0 || !math.IsNaN(r.TrueLogZ) {
		t.Errorf("no summary: %+v", r)
	}
	if err := os.WriteFile(filepath.Join(dir, run.SummaryFile), []byte(`{"steps": 40, "modes_total": 328, "true_log_z": 8.5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := readRefs(dir); r != (figureRefs{40, 328, 8.5}) {
		t.Errorf("refs %+v", r)
	}
	if err := writeFigure(filepath.Join(dir, "curves.png"), "t", seqCurve([]float64{0, 19, 39}, 5)); err != nil {
		t.Fatal(err)
	}
}
