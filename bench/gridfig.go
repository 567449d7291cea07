package bench

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/metrics"
	"github.com/gfngo/gfn/plot"
	"github.com/gfngo/gfn/task"
	"github.com/gfngo/gfn/train"
)

// curve is a run's metrics.csv columns we plot.
type curve struct{ calls, modes, l1 []float64 }

func readCurve(dir string) (curve, error) {
	c, err := readColumns(dir, []string{"reward_calls", "modes", "student_l1"}, []string{"student_empirical_l1"})
	if err != nil {
		return curve{}, err
	}
	l1 := c["student_l1"]
	if emp, ok := c["student_empirical_l1"]; ok {
		for i, v := range l1 {
			if math.IsNaN(v) {
				l1[i] = emp[i] // large grids: the empirical L1 of a few samples
			}
		}
	}
	return curve{c["reward_calls"], c["modes"], l1}, nil
}

// GridFigures draws, for every grid of the jobs, modes and exact L1 against
// reward calls per method (mean over seeds; the paper's Fig. 7), and for
// d=2, H=256 the exact Student distribution of every method's first seed
// (the paper's Fig. 2). It returns the files written.
func GridFigures(dir string, jobs []GridJob) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	type key struct {
		g Grid
		m string
	}
	sum := map[key]*curve{}
	count := map[key]int{}
	var order []key
	for _, j := range jobs {
		if !exists(filepath.Join(j.Dir, "summary.json")) {
			continue // not finished: a running run's curve is partial
		}
		c, err := readCurve(j.Dir)
		if err != nil {
			continue
		}
		k := key{j.Grid, j.Method}
		if s, ok := sum[k]; ok {
			n := min(len(s.calls), len(c.calls))
			for i := range n {
				s.modes[i] += c.modes[i]
				s.l1[i] += c.l1[i]
			}
			s.calls, s.modes, s.l1 = s.calls[:n], s.modes[:n], s.l1[:n]
		} else {
			sum[k] = &c
			order = append(order, k)
		}
		count[k]++
	}
	var files []string
	grids := map[Grid][]key{}
	var gorder []Grid
	for _, k := range order {
		if _, ok := grids[k.g]; !ok {
			gorder = append(gorder, k.g)
		}
		grids[k.g] = append(grids[k.g], k)
	}
	for _, g := range gorder {
		var modes, l1 []plot.Series
		for _, k := range grids[g] {
			c, n := sum[k], float64(count[k])
			ms, ls := make([]float64, len(c.calls)), make([]float64, len(c.calls))
			for i := range c.calls {
				ms[i], ls[i] = c.modes[i]/n, c.l1[i]/n
			}
			modes = append(modes, plot.Series{Name: k.m, X: c.calls, Y: ms})
			l1 = append(l1, plot.Series{Name: k.m, X: c.calls, Y: ls})
		}
		name := fmt.Sprintf("d%d-H%d", g.Dim, g.Side)
		mc := plot.Chart{Title: "modes found, " + g.String(), XLabel: "reward calls", YLabel: "modes", Series: modes, YZero: true}
		if hg, err := hypergrid.New(g.Dim, g.Side, hypergrid.Deceptive); err == nil && hg.NumModes() > 0 {
			mc.Refs = []plot.Ref{{Name: fmt.Sprintf("all %d modes", hg.NumModes()), Y: float64(hg.NumModes())}}
		}
		caption := "Mean over the finished seeds of each method, up to the reward calls they all reached."
		if err := plot.Curves(filepath.Join(dir, name+"-modes.png"), mc, caption); err != nil {
			return nil, err
		}
		files = append(files, name+"-modes.png")
		// Large grids log no L1 during training (exact is too costly), so
		// their L1 figure has nothing to draw and is skipped.
		lc := plot.Chart{Title: "L1 of the Student (exact, or empirical where exact is too costly), " + g.String(),
			XLabel: "reward calls", YLabel: "L1", Series: l1, LogY: true}
		switch err := plot.Curves(filepath.Join(dir, name+"-l1.png"), lc, caption+" L1: the sum over terminal states x of |P(x) − R(x)/Z|."); {
		case errors.Is(err, plot.ErrNoData):
		case err != nil:
			return nil, err
		default:
			files = append(files, name+"-l1.png")
		}
	}
	// Distribution panels on d2 H256.
	g, _ := hypergrid.New(2, 256, hypergrid.Deceptive)
	target, _, err := metrics.Target(g)
	if err != nil {
		return nil, err
	}
	tv := g.Cells(target)
	panels := []plot.Panel{{Title: "target", Side: 256, Values: tv}}
	for _, j := range jobs {
		if j.Grid != (Grid{2, 256}) || j.Seed != 0 {
			continue
		}
		st, err := train.ReadCheckpoint(j.Dir)
		if err != nil {
			continue // not finished
		}
		env, err := task.BuildJSON(st.Env)
		if err != nil {
			continue
		}
		t, err := train.Load(j.Dir, env)
		if err != nil {
			continue
		}
		p, err := metrics.Terminating(g, t.Student.Model)
		if err != nil {
			return nil, err
		}
		panels = append(panels, plot.Panel{Title: j.Method, Side: 256, Values: g.Cells(p)})
	}
	if len(panels) > 1 {
		caption := "Each method's panel: the exact terminating distribution P_F^T of its first seed's Student."
		if err := plot.Heatmaps(filepath.Join(dir, "d2-H256-distributions.png"), panels, "probability", caption); err != nil {
			return nil, err
		}
		files = append(files, "d2-H256-distributions.png")
	}
	return files, nil
}
