package bench

import (
	"errors"
	"fmt"
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

// DiffusionFigures draws, for every task of the finished jobs, the
// Student's log Z − ELBO and EUBO − log Z against iterations per method
// (mean over seeds; log scale when the values span orders of magnitude, as
// the methods' do in the paper),
// and copies the samples.png of each method's first finished seed, so that
// the figures directory stands without the runs. It returns the files
// written.
func DiffusionFigures(dir string, jobs []DiffusionJob) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	type key struct{ task, method string }
	sum := map[key]*diffusionCurve{}
	count := map[key]int{}
	first := map[key]DiffusionJob{}
	var order []key
	for _, j := range jobs {
		if !exists(filepath.Join(j.Dir, "summary.json")) {
			continue // not finished: its metrics.csv may be stale
		}
		if !exists(filepath.Join(j.Dir, "metrics.csv")) {
			continue // a sampler without training (smc, ggns) has no curve
		}
		c, err := readDiffusionCurve(j.Dir)
		if err != nil {
			return nil, err
		}
		k := key{j.Task, j.Method}
		if s, ok := sum[k]; ok {
			n := min(len(s.step), len(c.step))
			for i := range n {
				s.elbo[i] += c.elbo[i]
				s.eubo[i] += c.eubo[i]
			}
			s.step, s.elbo, s.eubo = s.step[:n], s.elbo[:n], s.eubo[:n]
			if j.Seed < first[k].Seed {
				first[k] = j
			}
		} else {
			sum[k], first[k] = &c, j
			order = append(order, k)
		}
		count[k]++
	}
	var files []string
	for _, task := range DiffusionTasks {
		logZ := math.NaN()
		if e, err := energy.Named(task); err == nil {
			if lz, ok := e.(energy.LogZer); ok {
				logZ = lz.LogZ()
			}
		}
		var lower, upper []plot.Series
		for _, k := range order {
			if k.task != task {
				continue
			}
			c, n := sum[k], float64(count[k])
			lo, up := make([]float64, len(c.step)), make([]float64, len(c.step))
			for i := range c.step {
				lo[i], up[i] = logZ-c.elbo[i]/n, c.eubo[i]/n-logZ
			}
			lower = append(lower, plot.Series{Name: k.method, X: c.step, Y: lo})
			upper = append(upper, plot.Series{Name: k.method, X: c.step, Y: up})
		}
		if len(lower) == 0 {
			continue
		}
		for _, f := range []struct {
			name, title, ylabel string
			s                   []plot.Series
		}{
			{task + "-elbo.png", task + ": log Z − ELBO of the Student (mean over seeds)", "log Z − ELBO", lower},
			{task + "-eubo.png", task + ": EUBO − log Z of the Student (mean over seeds)", "EUBO − log Z", upper},
		} {
			switch err := plot.Curves(filepath.Join(dir, f.name), f.title, "iteration", f.ylabel, f.s, spansDecades(f.s)); {
			case errors.Is(err, plot.ErrNoData): // no positive finite point (an energy without exact samples)
			case err != nil:
				return nil, err
			default:
				files = append(files, f.name)
			}
		}
	}
	for _, k := range order {
		j := first[k]
		b, err := os.ReadFile(filepath.Join(j.Dir, "samples.png"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("%s-%s-seed%d-samples.png", k.task, k.method, j.Seed)
		if err := safefile.WriteBytes(filepath.Join(dir, name), b); err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	return files, nil
}
