package seqtrain

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/gfngo/gfn/plot"
	"github.com/gfngo/gfn/run"
)

// figureRefs are what the figure draws besides the curve, from the run's
// summary.json (written before the figures): the rounds run, the task's
// number of modes and its log Z (0 and NaN when not known).
type figureRefs struct {
	Rounds     int
	ModesTotal int
	TrueLogZ   float64
}

// readRefs reads figureRefs from the summary.json in dir; a missing or
// unreadable summary gives none.
func readRefs(dir string) figureRefs {
	r := figureRefs{TrueLogZ: math.NaN()}
	b, err := os.ReadFile(filepath.Join(dir, run.SummaryFile))
	if err != nil {
		return r
	}
	var s struct {
		Steps      int      `json:"steps"`
		ModesTotal int      `json:"modes_total"`
		TrueLogZ   *float64 `json:"true_log_z"`
	}
	if json.Unmarshal(b, &s) != nil {
		return r
	}
	r.Rounds, r.ModesTotal = s.Steps, s.ModesTotal
	if s.TrueLogZ != nil {
		r.TrueLogZ = *s.TrueLogZ
	}
	return r
}

// writeFigure draws a run's curve as three panels against rounds: the
// distinct modes found by the online samples, the ELBO and the EUBO (with
// the estimate log mean exp and the learned log Z), as the paper's figure.
func writeFigure(path, title string, c *run.Curve) error {
	return plot.Charts(path, 1, 3, seqCharts(title, c, readRefs(filepath.Dir(path))), seqCaption)
}

const seqCaption = "ELBO: the mean of log R(x) + log P_B − log P_F over fresh samples of the Student; log mean exp: " +
	"the log of the mean of their exponentials (an estimate of log Z); EUBO: the same mean over backward trajectories " +
	"of the task's target samples. Modes found: distinct modes among all online samples so far (Student's and Teacher's)."

// seqCharts are the figure's panels. The x axes cover the rounds run
// (numbered from 0); the modes panel says the task's number of modes in
// its title and draws it as a line when the curve reaches a quarter of it
// (below, the line would flatten the curve); the log Z panels draw the
// true log Z.
func seqCharts(title string, c *run.Curve, r figureRefs) []plot.Chart {
	x, modes := c.Column("round"), c.Column("modes_seen")
	elbo, eubo, est, logZ := c.Column("elbo"), c.Column("eubo"), c.Column("log_z_est"), c.Column("log_z")
	xmax := float64(r.Rounds - 1)
	modesChart := plot.Chart{Title: title + ": modes found", XLabel: "round", YLabel: "modes", XMax: xmax, YZero: true,
		Series: []plot.Series{{Name: "online samples", X: x, Y: modes}}}
	if n := r.ModesTotal; n > 0 {
		modesChart.Title = fmt.Sprintf("%s: modes found (of %d)", title, n)
		top := 0.0
		for _, m := range modes {
			if !math.IsNaN(m) {
				top = max(top, m)
			}
		}
		if top >= float64(n)/4 {
			modesChart.Refs = []plot.Ref{{Name: fmt.Sprintf("all %d modes", n), Y: float64(n)}}
		}
	}
	var refs []plot.Ref
	if !math.IsNaN(r.TrueLogZ) {
		refs = []plot.Ref{{Name: "true log Z", Y: r.TrueLogZ}}
	}
	return []plot.Chart{
		modesChart,
		{Title: "ELBO", XLabel: "round", YLabel: "nats", XMax: xmax, Refs: refs, Series: []plot.Series{{Name: "ELBO", X: x, Y: elbo},
			{Name: "log mean exp", X: x, Y: est}, {Name: "learned log Z", X: x, Y: logZ}}},
		{Title: "EUBO", XLabel: "round", YLabel: "nats", XMax: xmax, Refs: refs, Series: []plot.Series{{Name: "EUBO", X: x, Y: eubo}}},
	}
}
