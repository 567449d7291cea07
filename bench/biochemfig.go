package bench

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/gfngo/gfn/plot"
)

// seqCurve is the part of a sequence run's metrics.csv the figure plots.
type seqCurve struct{ round, modes, elbo, eubo []float64 }

// readSeqCurve reads the round, modes_seen, elbo and eubo columns of the
// metrics.csv in dir (empty cells are NaN).
func readSeqCurve(dir string) (seqCurve, error) {
	c, err := readColumns(dir, []string{"round", "modes_seen", "elbo", "eubo"}, nil)
	if err != nil {
		return seqCurve{}, err
	}
	return seqCurve{c["round"], c["modes_seen"], c["elbo"], c["eubo"]}, nil
}

// seedBands returns the mean ± std over curves of each metric at the
// rounds all curves share (seedBand).
func seedBands(curves []seqCurve) (rounds []float64, modes, elbo, eubo [2][]float64) {
	col := func(get func(seqCurve) []float64) [][]float64 {
		var v [][]float64
		for _, c := range curves {
			v = append(v, get(c))
		}
		return v
	}
	xs := col(func(c seqCurve) []float64 { return c.round })
	band := func(get func(seqCurve) []float64) [2][]float64 {
		x, mean, std := seedBand(xs, col(get))
		rounds = x
		return [2][]float64{mean, std}
	}
	return rounds, band(func(c seqCurve) []float64 { return c.modes }),
		band(func(c seqCurve) []float64 { return c.elbo }), band(func(c seqCurve) []float64 { return c.eubo })
}

// seedBand is the mean ± std (population) over runs of the column ys at
// the x values all runs share: the common prefix of their x columns xs
// (the seeds of one configuration evaluate at the same points). NaN
// cells are left out of a point's mean.
func seedBand(xs, ys [][]float64) (x, mean, std []float64) {
	n := len(xs[0])
	for _, c := range xs[1:] {
		k := 0
		for k < min(n, len(c)) && c[k] == xs[0][k] {
			k++
		}
		n = k
	}
	mean, std = make([]float64, n), make([]float64, n)
	v := make([]float64, 0, len(ys))
	for i := range n {
		v = v[:0]
		for _, y := range ys {
			if !math.IsNaN(y[i]) {
				v = append(v, y[i])
			}
		}
		mean[i], std[i] = meanStd(v)
	}
	return xs[0][:n], mean, std
}

// BiochemFigure draws the paper's sequence-design figure into path from
// the finished jobs (those with a summary.json): one row per task (QM9,
// sEH, TFbind8, L14-RNA1, as the paper), three panels — modes found in
// training, ELBO and EUBO of the Student against rounds — and one curve
// per method with its mean ± std band over seeds. Every panel lists the
// methods in BiochemMethods order, so that a method has one colour in
// every panel and every figure (a method without finished runs on a task
// leaves its place and colour unused). It reports whether it wrote a figure: not when no job has
// finished.
func BiochemFigure(path string, jobs []BiochemJob) (bool, error) {
	type key struct{ task, method string }
	curves := map[key][]seqCurve{}
	var methods []string
	tasks := map[string]bool{}
	for _, j := range jobs {
		if !slices.Contains(methods, j.Method) {
			methods = append(methods, j.Method)
		}
		if !exists(filepath.Join(j.Dir, "summary.json")) {
			continue // not finished: its metrics.csv stops at its last checkpoint
		}
		c, err := readSeqCurve(j.Dir)
		if err != nil {
			return false, err
		}
		k := key{j.Task, j.Method}
		curves[k] = append(curves[k], c)
		tasks[j.Task] = true
	}
	if len(tasks) == 0 {
		return false, nil
	}
	// Every method's place, selected or not: a method has the same colour
	// in every figure.
	rows := biochemTable(jobs[0].Table).Methods // jobs is not empty: tasks is not
	methods = orderedMethods(setOf(append(methods, rows...)), rows)
	var panels []plot.Chart
	for _, task := range orderedTasks(tasks) {
		var modes, elbo, eubo []plot.Series
		for _, m := range methods {
			cs := curves[key{task, m}]
			if len(cs) == 0 {
				// Keep the method's place, and so every later one's colour.
				modes, elbo, eubo = append(modes, plot.Series{Name: m}), append(elbo, plot.Series{Name: m}), append(eubo, plot.Series{Name: m})
				continue
			}
			x, mo, el, eu := seedBands(cs)
			name := m
			modes = append(modes, plot.Series{Name: name, X: x, Y: mo[0], Std: mo[1]})
			elbo = append(elbo, plot.Series{Name: name, X: x, Y: el[0], Std: el[1]})
			eubo = append(eubo, plot.Series{Name: name, X: x, Y: eu[0], Std: eu[1]})
		}
		panels = append(panels,
			plot.Chart{Title: task + ": modes found", XLabel: "round", YLabel: "modes", Series: modes, YZero: true},
			plot.Chart{Title: task + ": ELBO", XLabel: "round", YLabel: "ELBO (nats)", Series: elbo},
			plot.Chart{Title: task + ": EUBO", XLabel: "round", YLabel: "EUBO (nats)", Series: eubo})
	}
	caption := "Lines: the mean over the finished seeds of each method; shading: ± one standard deviation over them."
	if err := plot.Charts(path, len(panels)/3, 3, panels, caption); err != nil {
		return false, fmt.Errorf("bench: %w", err)
	}
	return true, nil
}

// setOf returns the set of s.
func setOf(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}
