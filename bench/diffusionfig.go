package bench

import (
	"errors"
	"fmt"
	"github.com/gfngo/gfn/target"
	"math"
	"os"
	"path/filepath"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/plot"
	"github.com/gfngo/gfn/safefile"
)

// diffusionCurve is a run's metrics.csv columns we plot.
type diffusionCurve struct{ step, elbo, eubo []float64 }

func readDiffusionCurve(dir string) (diffusionCurve, error) {
	c, err := readColumns(dir, []string{"step", "elbo", "eubo"}, nil)
	if err != nil {
		return diffusionCurve{}, err
	}
	return diffusionCurve{c["step"], c["elbo"], c["eubo"]}, nil
}

// spansDecades reports whether the series' positive values span more than
// a factor of 10: a log scale then shows them better, and otherwise has
// too few ticks to read.
func spansDecades(ss []plot.Series) bool {
	lo, hi := math.Inf(1), 0.0
	for _, s := range ss {
		for _, y := range s.Y {
			if y > 0 && !math.IsInf(y, 1) {
				lo, hi = min(lo, y), max(hi, y)
			}
		}
	}
	return hi > 10*lo
}

// meanCurve is the mean curve of one method on one task over the runs
// that did not diverge.
type meanCurve struct {
	task, method   string
	diffusionCurve              // sums over the runs kept until divided, then means
	runs, diverged int          // runs averaged, runs left out
	first          DiffusionJob // the lowest seed kept (Dir "" when none)
}

// meanDiffusionCurves averages, per task and method in the order of the
// jobs, the ELBO and EUBO curves of the finished jobs' runs over the steps
// they all reached, leaving out the runs that diverged (the rule of
// DiffusionResult.Diverged). A method whose runs all diverged has a curve
// of no steps.
func meanDiffusionCurves(jobs []DiffusionJob) ([]*meanCurve, error) {
	type key struct{ task, method string }
	byKey := map[key]*meanCurve{}
	var curves []*meanCurve
	for _, j := range jobs {
		if !exists(filepath.Join(j.Dir, "summary.json")) {
			continue // not finished: its metrics.csv may be stale
		}
		if !exists(filepath.Join(j.Dir, "metrics.csv")) {
			continue // a sampler without training (smc, ggns) has no curve
		}
		s, err := readDiffusionSummary(j.Dir)
		if err != nil {
			return nil, err
		}
		c, err := readDiffusionCurve(j.Dir)
		if err != nil {
			return nil, err
		}
		k := key{j.Task, j.Method}
		m, ok := byKey[k]
		if !ok {
			m = &meanCurve{task: j.Task, method: j.Method}
			byKey[k] = m
			curves = append(curves, m)
		}
		if _, at := divergedAt(c.step, c.elbo, s.ELBO, s.Steps); at > 0 {
			m.diverged++
			continue
		}
		if m.runs == 0 {
			m.diffusionCurve, m.first = c, j
		} else {
			n := min(len(m.step), len(c.step))
			for i := range n {
				m.elbo[i] += c.elbo[i]
				m.eubo[i] += c.eubo[i]
			}
			m.step, m.elbo, m.eubo = m.step[:n], m.elbo[:n], m.eubo[:n]
			if j.Seed < m.first.Seed {
				m.first = j
			}
		}
		m.runs++
	}
	for _, m := range curves {
		for i := range m.step {
			m.elbo[i] /= float64(m.runs)
			m.eubo[i] /= float64(m.runs)
		}
	}
	return curves, nil
}

// DiffusionFigures draws, for every task of the finished jobs, the
// Student's log Z − ELBO and EUBO − log Z against iterations per method
// (mean over seeds; log scale when the values span orders of magnitude, as
// the methods' do in the paper), leaving out diverged runs (the legend
// counts them), and copies the samples.png of each method's first finished
// seed that did not diverge, so that the figures directory stands without
// the runs. It returns the files written.
func DiffusionFigures(dir string, jobs []DiffusionJob) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	curves, err := meanDiffusionCurves(jobs)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, task := range DiffusionTasks {
		logZ := math.NaN()
		if e, err := energy.Named(task); err == nil {
			if lz, ok := e.(target.LogZer); ok {
				logZ = lz.LogZ()
			}
		}
		var lower, upper []plot.Series
		for _, c := range curves {
			if c.task != task || len(c.step) == 0 {
				continue
			}
			lo, up := make([]float64, len(c.step)), make([]float64, len(c.step))
			for i := range c.step {
				lo[i], up[i] = logZ-c.elbo[i], c.eubo[i]-logZ
			}
			name := c.method
			if c.diverged > 0 {
				name += fmt.Sprintf(" (%d diverged, left out)", c.diverged)
			}
			lower = append(lower, plot.Series{Name: name, X: c.step, Y: lo})
			upper = append(upper, plot.Series{Name: name, X: c.step, Y: up})
		}
		if len(lower) == 0 {
			continue
		}
		for _, f := range []struct {
			name, title, ylabel string
			s                   []plot.Series
		}{
			{task + "-elbo.png", task + ": log Z − ELBO of the Student (mean over seeds)", "log Z − ELBO (nats)", lower},
			{task + "-eubo.png", task + ": EUBO − log Z of the Student (mean over seeds)", "EUBO − log Z (nats)", upper},
		} {
			c := plot.Chart{Title: f.title, XLabel: "iteration", YLabel: f.ylabel, Series: f.s, LogY: spansDecades(f.s)}
			if !c.LogY {
				c.Refs = []plot.Ref{{Name: "0: the bound equals log Z", Y: 0}}
			}
			caption := "Mean over the seeds that did not diverge, up to the iterations they all reached; “n diverged, left out”: " +
				"n seeds whose ELBO diverged are not in the mean."
			switch err := plot.Curves(filepath.Join(dir, f.name), c, caption); {
			case errors.Is(err, plot.ErrNoData): // no positive finite point (an energy without exact samples)
			case err != nil:
				return nil, err
			default:
				files = append(files, f.name)
			}
		}
	}
	for _, c := range curves {
		if c.runs == 0 {
			continue // every run diverged
		}
		j := c.first
		b, err := os.ReadFile(filepath.Join(j.Dir, "samples.png"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("%s-%s-seed%d-samples.png", c.task, c.method, j.Seed)
		if err := safefile.WriteBytes(filepath.Join(dir, name), b); err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	return files, nil
}
