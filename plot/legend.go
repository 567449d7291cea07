package plot

import (
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// corner is a legend position.
type corner struct{ top, left bool }

// corners in order of preference when several are equally free.
var corners = []corner{{true, false}, {true, true}, {false, false}, {false, true}}

// legendCorner returns the corner of the data area whose box — a fraction
// wide of the x range and high of the y range — the fewest points of
// pts fall in, so that the legend hides as little of the curves as it
// can. Fractions are of the axes' ranges, on a log scale for logY.
// Points are the curves' vertices and the midpoints of their segments.
func legendCorner(pts []plotter.XYs, xmin, xmax, ymin, ymax, wide, high float64, logY bool) corner {
	ty := func(y float64) float64 { return y }
	if logY {
		ty = func(y float64) float64 { return math.Log(y) }
	}
	y0, y1 := ty(ymin), ty(ymax)
	dx, dy := xmax-xmin, y1-y0
	if !(dx > 0) || !(dy > 0) {
		return corners[0]
	}
	var count [4]int
	add := func(x, y float64) {
		fx, fy := (x-xmin)/dx, (ty(y)-y0)/dy
		for i, c := range corners {
			inX := fx >= 1-wide
			if c.left {
				inX = fx <= wide
			}
			inY := fy >= 1-high
			if !c.top {
				inY = fy <= high
			}
			if inX && inY {
				count[i]++
			}
		}
	}
	for _, line := range pts {
		for k, p := range line {
			add(p.X, p.Y)
			if k > 0 {
				q := line[k-1]
				mid := (p.Y + q.Y) / 2
				if logY {
					mid = math.Sqrt(p.Y * q.Y)
				}
				add((p.X+q.X)/2, mid)
			}
		}
	}
	best := 0
	for i := range corners {
		if count[i] < count[best] {
			best = i
		}
	}
	return corners[best]
}

// placeLegend puts p's legend in the corner legendCorner picks for the
// drawn points, with a box 40% of the width wide and one line per entry
// (about 7% of the height each, plus a margin) high.
func placeLegend(p *gplot.Plot, pts []plotter.XYs, entries int, logY bool) {
	high := math.Min(0.9, 0.05+0.07*float64(entries))
	c := legendCorner(pts, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max, 0.4, high, logY)
	p.Legend.Top, p.Legend.Left = c.top, c.left
}
