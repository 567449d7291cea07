package plot

import (
	"math"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// curve samples f at n points of [0, 1].
func curve(n int, f func(x float64) float64) plotter.XYs {
	xy := make(plotter.XYs, n)
	for i := range xy {
		x := float64(i) / float64(n-1)
		xy[i] = plotter.XY{X: x, Y: f(x)}
	}
	return xy
}

// logCase spans 1e-3 to 1 by three lone points (no segments) and has a
// flat curve at 0.5: near the middle of a linear axis, in the top decade
// of a log one.
var logCase = []plotter.XYs{{{X: 0, Y: 1e-3}}, {{X: 1, Y: 1e-3}}, {{X: 0.5, Y: 1}}, curve(50, func(float64) float64 { return 0.5 })}

// TestLegendCorner: the legend goes to the free corner of the curves'
// bounding box, preferring top right, then top left, bottom right and
// bottom left when several are free.
func TestLegendCorner(t *testing.T) {
	for _, tc := range []struct {
		name string
		pts  []plotter.XYs
		logY bool
		want corner
	}{
		{"falling loss", []plotter.XYs{curve(50, func(x float64) float64 { return 1 - x })}, false, corner{top: true}},
		{"modes found: a jump then a plateau", []plotter.XYs{curve(50, func(x float64) float64 { return math.Min(1, 20*x) })}, false, corner{top: false}},
		{"rising line", []plotter.XYs{curve(50, func(x float64) float64 { return x })}, false, corner{top: true, left: true}},
		{"flat in the middle", []plotter.XYs{curve(50, func(float64) float64 { return 0.5 }), {{X: 0, Y: 0}, {X: 1, Y: 1}}}, false, corner{top: true, left: true}},
		{"high everywhere, low at the left", []plotter.XYs{curve(50, func(float64) float64 { return 1 }), {{X: 0, Y: 0}, {X: 0.1, Y: 0}}}, false, corner{top: false}},
		{"linear axis: a curve at half height", logCase, false, corner{top: true}},
		{"log axis: the same curve near the top decade", logCase, true, corner{top: false}},
	} {
		xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		for _, l := range tc.pts {
			for _, p := range l {
				xmin, xmax = math.Min(xmin, p.X), math.Max(xmax, p.X)
				ymin, ymax = math.Min(ymin, p.Y), math.Max(ymax, p.Y)
			}
		}
		if got := legendCorner(tc.pts, xmin, xmax, ymin, ymax, 0.4, 0.25, tc.logY); got != tc.want {
			t.Errorf("%s: corner %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
