package seqtrain

import (
	"github.com/gfngo/gfn/plot"
)

// WriteFigure draws a run's curve as three panels against rounds: the
// distinct modes found by the online samples, the ELBO and the EUBO (with
// the estimate log mean exp and the learned log Z), as the paper's figure.
func WriteFigure(path, title string, curve []Point) error {
	n := len(curve)
	x := make([]float64, n)
	modes, elbo, eubo, est, logZ := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, p := range curve {
		x[i] = float64(p.Round)
		modes[i], elbo[i], eubo[i], est[i], logZ[i] = float64(p.ModesSeen), p.ELBO, p.EUBO, p.LogZEst, p.LogZ
	}
	return plot.BandGrid(path, 1, 3, []plot.BandPanel{
		{Title: title + ": modes found", XLabel: "round", YLabel: "modes", Bands: []plot.Band{{Name: "online samples", X: x, Mean: modes}}},
		{Title: "ELBO", XLabel: "round", YLabel: "nats", Bands: []plot.Band{{Name: "ELBO", X: x, Mean: elbo},
			{Name: "log mean exp", X: x, Mean: est}, {Name: "learned log Z", X: x, Mean: logZ}}},
		{Title: "EUBO", XLabel: "round", YLabel: "nats", Bands: []plot.Band{{Name: "EUBO", X: x, Mean: eubo}}},
	})
}
