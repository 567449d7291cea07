package train

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/plot"
	"github.com/gfngo/gfn/run"
)

// Figures draws a hypergrid run's figures into dir (run.Figurer): the
// modes found (modes.png) and the L1 to the target (l1.png, exact or,
// on large grids, empirical) over reward calls, and for d = 2 the target,
// Student and Teacher distributions as heatmaps (distributions.png).
// Other environments get none.
func (f *family) Figures(dir string, curve *run.Curve) error {
	g, ok := f.t.Env.(*hypergrid.Grid)
	if !ok {
		return nil
	}
	res := f.res
	var x, modes, sl1, tl1 []float64
	for i := range curve.Len() {
		x = append(x, curve.Value(i, "reward_calls"))
		modes = append(modes, curve.Value(i, "modes"))
		if v := curve.Value(i, "student_l1"); !math.IsNaN(v) {
			sl1 = append(sl1, v)
		} else if v := curve.Value(i, "student_empirical_l1"); !math.IsNaN(v) {
			sl1 = append(sl1, v)
		}
		if v := curve.Value(i, "teacher_l1"); !math.IsNaN(v) {
			tl1 = append(tl1, v)
		}
	}
	// The x axes cover the whole run: its budget of reward calls.
	calls := float64(res.Summary.RewardCalls)
	modesChart := plot.Chart{Title: fmt.Sprintf("modes found, %v", g), XLabel: "reward calls", YLabel: "modes", YZero: true,
		Series: []plot.Series{{Name: string(res.Summary.Method), X: x, Y: modes}}, XMax: calls}
	if n := g.NumModes(); n > 0 {
		modesChart.Refs = []plot.Ref{{Name: fmt.Sprintf("all %d modes", n), Y: float64(n)}}
	}
	if err := plot.Curves(filepath.Join(dir, "modes.png"), modesChart, ""); err != nil {
		return err
	}
	res.Figures = append(res.Figures[:0], "modes.png")
	if len(sl1) == len(x) {
		series := []plot.Series{{Name: "Student", X: x, Y: sl1}}
		if len(tl1) == len(x) {
			series = append(series, plot.Series{Name: "Teacher", X: x, Y: tl1})
		}
		c := plot.Chart{Title: "L1 to the target (exact, or empirical on large grids)", XLabel: "reward calls", YLabel: "L1",
			Series: series, LogY: true, XMax: calls}
		if err := plot.Curves(filepath.Join(dir, "l1.png"), c, "L1: the sum over terminal states x of |P(x) − R(x)/Z|."); err != nil {
			return err
		}
		res.Figures = append(res.Figures, "l1.png")
	}
	if g.D != 2 || res.Target == nil {
		return nil
	}
	cells := g.Cells
	panels := []plot.Panel{{Title: "target R/Z", Side: g.H, Values: cells(res.Target)}}
	if res.StudentEmpirical != nil {
		panels = append(panels, plot.Panel{Title: fmt.Sprintf("Student, %d samples", res.Summary.EvalSamples), Side: g.H, Values: cells(res.StudentEmpirical)})
	} else {
		panels = append(panels, plot.Panel{Title: "Student P_F^T (exact)", Side: g.H, Values: cells(res.StudentExact)})
	}
	if res.TeacherExact != nil {
		panels = append(panels, plot.Panel{Title: "Teacher P_F^T (exact)", Side: g.H, Values: cells(res.TeacherExact)})
	}
	caption := "P_F^T: the probability that the sampler's forward policy terminates in the cell."
	if res.StudentEmpirical != nil {
		caption = "Student: the fraction of its samples in the cell. " + caption
	}
	if err := plot.Heatmaps(filepath.Join(dir, "distributions.png"), panels, "probability", caption); err != nil {
		return err
	}
	res.Figures = append(res.Figures, "distributions.png")
	return nil
}
