package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gfngo/gfn/plot"
)

// objectiveAxes are the metrics.csv columns a task's figure draws: its
// training curve (x) against what its family measures (y).
type objectiveAxes struct {
	x, y           string
	xLabel, yLabel string
	zero           bool // counts: the y axis reaches 0
}

// axesOf returns the figure's axes for a task of the table: the grids'
// modes found against reward calls, the diffusion samplers' ELBO against
// iterations, the sequences' modes found against rounds.
func axesOf(task string) objectiveAxes {
	switch strings.TrimSuffix(task, "-sendera") {
	case "25gmm", "manywell":
		return objectiveAxes{x: "step", y: "elbo", xLabel: "iterations", yLabel: "ELBO"}
	case "tfbind8", "qm9str":
		return objectiveAxes{x: "round", y: "modes_seen", xLabel: "rounds", yLabel: "modes found", zero: true}
	}
	return objectiveAxes{x: "reward_calls", y: "modes", xLabel: "reward calls (terminal)", yLabel: "modes found", zero: true}
}

// meanSeries is the mean ± std over the runs of column y against x
// (seedBand), named with the count of runs; runs whose metrics.csv cannot
// be read are left out (a figure is no reason to fail a table).
func meanSeries(obj string, dirs []string, ax objectiveAxes) plot.Series {
	var xs, ys [][]float64
	for _, d := range dirs {
		c, err := readColumns(d, []string{ax.x, ax.y}, nil)
		if err != nil {
			continue
		}
		xs, ys = append(xs, c[ax.x]), append(ys, c[ax.y])
	}
	s := plot.Series{Name: fmt.Sprintf("%s (%d)", obj, len(ys))}
	if len(xs) > 0 {
		s.X, s.Y, s.Std = seedBand(xs, ys)
	}
	return s
}

// objectiveFigures draws, for every task with finished runs, its curves
// of each objective without and with the Teacher, side by side (one
// colour per objective in both panels), mean ± std over the finished
// seeds, into dir/<task>.png; it returns the files written.
func objectiveFigures(dir string, jobs []Job) ([]string, error) {
	finished := map[string][]string{} // "task objective method" → run dirs
	for _, j := range jobs {
		if _, err := os.Stat(filepath.Join(j.Dir, "summary.json")); err == nil {
			finished[j.Label] = append(finished[j.Label], j.Dir)
		}
	}
	var files []string
	for _, t := range ObjectiveTasks {
		ax := axesOf(t.Name)
		var charts []plot.Chart
		any := false
		for _, m := range []string{t.Without, t.With} {
			c := plot.Chart{Title: fmt.Sprintf("%s, %s", t.Name, m), XLabel: ax.xLabel, YLabel: ax.yLabel, YZero: ax.zero}
			for _, obj := range t.Objectives {
				dirs := finished[fmt.Sprintf("%s %s %s", t.Name, obj, m)]
				s := plot.Series{Name: obj} // no runs: no line, the colour kept
				if len(dirs) > 0 {
					s = meanSeries(obj, dirs, ax)
					any = any || len(s.X) > 0
				}
				c.Series = append(c.Series, s)
			}
			charts = append(charts, c)
		}
		if !any {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return files, err
		}
		name := t.Name + ".png"
		caption := fmt.Sprintf("%s: %s against %s of every objective without (left) and with (right) the Teacher; mean ± std (band) over the finished seeds, their count in brackets. Objectives: %s.",
			t.Name, ax.yLabel, ax.xLabel, strings.Join(t.Objectives, ", "))
		err := plot.Charts(filepath.Join(dir, name), 1, 2, charts, caption)
		if errors.Is(err, plot.ErrNoData) {
			continue
		}
		if err != nil {
			return files, err
		}
		files = append(files, name)
	}
	return files, nil
}
