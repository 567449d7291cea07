package diffusion

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/plot"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/target"
)

// writeFigures draws samples.png (the final samples of the exact sampler,
// the Student and the Teacher over the target's contours: the whole plane
// for d = 2, the first coordinate pair's marginal for Manywell) and
// curves.png (ELBO, ELBO-IS and EUBO against iterations, with log Z).
func writeFigures(dir string, t *Trainer, res *Result, curve *run.Curve) error {
	d := t.Proc.Dim
	var dens plot.Density2D
	opt := plot.DensityOptions{}
	switch e := t.Energy.(type) {
	case energy.Manywell:
		// The pair (x_0, x_1) has log density −a⁴ + 6a² + 0.5a − 0.5b²
		// up to a constant: the pairs are independent.
		dens = func(a, b float64) float64 { return -a*a*a*a + 6*a*a + 0.5*a - 0.5*b*b }
		opt = plot.DensityOptions{XMin: -3, XMax: 3, YMin: -4, YMax: 4, XLabel: "x0 (a)", YLabel: "x1 (b)"}
	case energy.GMM25:
		dens = func(x, y float64) float64 { return gmmDensity(e, x, y) }
		opt = plot.DensityOptions{XMin: -13, XMax: 13, YMin: -13, YMax: 13}
	default:
		if d == 2 {
			buf := make([]float64, 1)
			dens = func(x, y float64) float64 {
				if err := e.LogReward([]float32{float32(x), float32(y)}, buf); err != nil {
					return math.NaN()
				}
				return buf[0]
			}
			opt = boxOf(res.Exact, res.Student)
		}
	}
	if dens != nil {
		var panels []plot.SamplePanel
		add := func(title string, x []float32) {
			if x == nil {
				return
			}
			// An evenly spaced subset: exact samples come grouped by mode.
			m := len(x) / d
			n := min(m, 2000)
			pts := make([][2]float32, n)
			for i := range n {
				j := i * m / n
				pts[i] = [2]float32{x[j*d], x[j*d+1]}
			}
			panels = append(panels, plot.SamplePanel{Title: title, Points: pts})
		}
		add("target (exact)", res.Exact)
		add("Student", res.Student)
		add("Teacher", res.Teacher)
		opt.Caption = "Each panel shows at most 2,000 of the sampler's final samples, evenly spaced in the order drawn."
		if _, ok := t.Energy.(energy.Manywell); ok {
			opt.Caption += " Manywell: the first coordinate pair (x0, x1) of each sample, on that pair's marginal density."
		}
		if err := plot.SamplesOnDensity(filepath.Join(dir, "samples.png"), panels, dens, opt); err != nil {
			return fmt.Errorf("diffusion: samples figure: %w", err)
		}
	}
	cs := charts(t, curve)
	err := plot.Charts(filepath.Join(dir, "curves.png"), 1, len(cs), cs, curvesCaption(t, curve))
	if err != nil && !errors.Is(err, plot.ErrNoData) {
		return fmt.Errorf("diffusion: curves figure: %w", err)
	}
	return nil
}

// charts are curves.png's panels against iterations, the x axis covering
// the iterations done: the Student's log Z bounds (ELBO, ELBO-IS, EUBO)
// and learned log Z, with the true log Z as a reference line where it is
// known, and then the gaps of the two bounds to it on a log axis (the
// EUBO's is orders of magnitude above the ELBO's early on).
func charts(t *Trainer, curve *run.Curve) []plot.Chart {
	steps, elbo, elboIS := curve.Column("step"), curve.Column("elbo"), curve.Column("elbo_is")
	eubo, logZ := curve.Column("eubo"), curve.Column("student_logz")
	bounds := plot.Chart{Title: "log Z estimates of the Student", XLabel: "iteration", YLabel: "nats",
		Series: []plot.Series{{Name: "ELBO", X: steps, Y: elbo}, {Name: "ELBO-IS", X: steps, Y: elboIS},
			{Name: "EUBO", X: steps, Y: eubo}, {Name: "learned log Z", X: steps, Y: logZ}},
		XMax: float64(t.Step)}
	lz, ok := t.Energy.(target.LogZer)
	if !ok {
		return []plot.Chart{bounds}
	}
	z := lz.LogZ()
	bounds.Refs = []plot.Ref{{Name: "true log Z", Y: z}}
	gap := func(v []float64, sign float64) []float64 {
		g := make([]float64, len(v))
		for i, x := range v {
			g[i] = sign * (x - z)
		}
		return g
	}
	gaps := plot.Chart{Title: "gaps of the Student's bounds to log Z", XLabel: "iteration", YLabel: "nats", LogY: true,
		// ELBO-IS, not a bound, has its place (and colour) but no line.
		Series: []plot.Series{{Name: "log Z − ELBO", X: steps, Y: gap(elbo, -1)}, {Name: "ELBO-IS"}, {Name: "EUBO − log Z", X: steps, Y: gap(eubo, 1)}},
		XMax:   float64(t.Step)}
	return []plot.Chart{bounds, gaps}
}

// curvesCaption says what the bounds are estimated from, and where the
// curve stops before the run's end.
func curvesCaption(t *Trainer, curve *run.Curve) string {
	c := "ELBO and EUBO: the mean of log R(x) + log P_B − log P_F over the Student's trajectories and over exact " +
		"samples' backward trajectories; ELBO-IS: the log of the mean of their exponentials (an estimate of log Z, " +
		"not a bound); learned log Z: the Student's trained parameter."
	if _, ok := t.Energy.(target.LogZer); !ok {
		c += " The target's log Z is not known: no reference line."
	}
	if steps := curve.Column("step"); len(steps) > 0 && steps[len(steps)-1] < float64(t.Step) {
		c += fmt.Sprintf(" Points: the periodic evaluations, the last at iteration %d of the run's %d; the final "+
			"evaluation, on more samples, is in summary.json.", int(steps[len(steps)-1]), t.Step)
	}
	return c
}

// boxOf is a square box around the points (with a margin).
func boxOf(sets ...[]float32) plot.DensityOptions {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range sets {
		for _, v := range s {
			if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
				lo, hi = min(lo, float64(v)), max(hi, float64(v))
			}
		}
	}
	if !(hi > lo) {
		lo, hi = -1, 1
	}
	m := 0.1 * (hi - lo)
	return plot.DensityOptions{XMin: lo - m, XMax: hi + m, YMin: lo - m, YMax: hi + m}
}

func gmmDensity(e energy.GMM25, x, y float64) float64 {
	var out [1]float64
	if err := e.LogReward([]float32{float32(x), float32(y)}, out[:]); err != nil {
		return math.NaN()
	}
	return out[0]
}

// Redraw draws a run's figures again from its checkpoint in dir: the curve
// it recorded, and n fresh samples of the Student, the Teacher (if any) and
// the exact sampler drawn from seed.
func Redraw(dir string, e energy.Energy, n int, seed uint64) error {
	f, ck, err := load(dir, e)
	if err != nil {
		return err
	}
	curve, err := storedCurve(ck)
	if err != nil {
		return err
	}
	t := f.t
	rng := rand.New(rand.NewPCG(seed, 0xf19))
	res := &Result{Exact: ExactSamples(e, n, rng), Student: t.Student.sample(t.Proc, n, rng)}
	if t.Teacher != nil {
		res.Teacher = t.Teacher.sample(t.Proc, n, rng)
	}
	return writeFigures(dir, t, res, curve)
}
