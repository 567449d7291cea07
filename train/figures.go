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
	if err := plot.Curves(filepath.Join(dir, "modes.png"), fmt.Sprintf("modes found, %v", g), "reward calls", "modes", []plot.Series{{Name: string(res.Summary.Method), X: x, Y: modes}}, false); err != nil {
		return err
	}
	res.Figures = append(res.Figures[:0], "modes.png")
	if len(sl1) == len(x) {
		series := []plot.Series{{Name: "Student", X: x, Y: sl1}}
		if len(tl1) == len(x) {
			series = append(series, plot.Series{Name: "Teacher", X: x, Y: tl1})
		}
		if err := plot.Curves(filepath.Join(dir, "l1.png"), "L1 to the target (exact, or empirical on large grids)", "reward calls", "L1", series, true); err != nil {
			return err
		}
		res.Figures = append(res.Figures, "l1.png")
	}
	if g.D != 2 || res.Target == nil {
		return nil
	}
	cells := g.Cells
	target := cells(res.Target)
	vmax := 0.0
	for _, v := range target {
		vmax = max(vmax, v)
	}
	panels := []plot.Panel{{Title: "target R/Z", Side: g.H, Values: target}}
	if res.StudentEmpirical != nil {
		panels = append(panels, plot.Panel{Title: fmt.Sprintf("Student, %d samples", res.Summary.EvalSamples), Side: g.H, Values: cells(res.StudentEmpirical)})
	} else {
		panels = append(panels, plot.Panel{Title: "Student P_F^T (exact)", Side: g.H, Values: cells(res.StudentExact)})
	}
	if res.TeacherExact != nil {
		panels = append(panels, plot.Panel{Title: "Teacher P_F^T (exact)", Side: g.H, Values: cells(res.TeacherExact)})
	}
	if err := plot.Heatmaps(filepath.Join(dir, "distributions.png"), panels, vmax); err != nil {
		return err
	}
	res.Figures = append(res.Figures, "distributions.png")
	return nil
}
