package seqtrain

import (
	"github.com/gfngo/gfn/plot"
	"github.com/gfngo/gfn/run"
)

// writeFigure draws a run's curve as three panels against rounds: the
// distinct modes found by the online samples, the ELBO and the EUBO (with
// the estimate log mean exp and the learned log Z), as the paper's figure.
func writeFigure(path, title string, c *run.Curve) error {
	x, modes := c.Column("round"), c.Column("modes_seen")
	elbo, eubo, est, logZ := c.Column("elbo"), c.Column("eubo"), c.Column("log_z_est"), c.Column("log_z")
	return plot.BandGrid(path, 1, 3, []plot.BandPanel{
		{Title: title + ": modes found", XLabel: "round", YLabel: "modes", Bands: []plot.Band{{Name: "online samples", X: x, Mean: modes}}},
		{Title: "ELBO", XLabel: "round", YLabel: "nats", Bands: []plot.Band{{Name: "ELBO", X: x, Mean: elbo},
			{Name: "log mean exp", X: x, Mean: est}, {Name: "learned log Z", X: x, Mean: logZ}}},
		{Title: "EUBO", XLabel: "round", YLabel: "nats", Bands: []plot.Band{{Name: "EUBO", X: x, Mean: eubo}}},
	})
}
