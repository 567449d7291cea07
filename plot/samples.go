package plot

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Density2D is a log density on the plane, x and y being the two plotted
// coordinates. It need not be normalised: only differences from the
// maximum over the box matter. -Inf (zero density) is allowed; NaN and
// +Inf are not.
type Density2D func(x, y float64) float64

// SamplePanel is one panel of SamplesOnDensity: a title and the sampled
// points (x, y). Points are float32 because the samplers' networks
// compute in float32; points outside the box, or with a NaN coordinate,
// are not drawn.
type SamplePanel struct {
	Title  string
	Points [][2]float32
}

// DensityOptions says which box SamplesOnDensity shows and how it draws
// the density. Only the box has no default.
type DensityOptions struct {
	// XMin, XMax, YMin and YMax bound the box every panel shows. They
	// must be finite, with XMin < XMax and YMin < YMax.
	XMin, XMax, YMin, YMax float64

	// XLabel and YLabel name the axes; empty means "x1" and "x2".
	XLabel, YLabel string

	// Grid is the number of density evaluations along each axis; 0
	// means 200, which gives smooth contours in a 4-inch panel.
	Grid int

	// Depth is how far below the maximum log density over the box the
	// shading and the contour lines reach, in nats; 0 means 12. Lower
	// regions are left white.
	Depth float64

	// Levels is the number of contour lines; 0 means 5.
	Levels int

	// Caption is the caller's part of the caption under the panels (what
	// the points are: how many, of which sampler); SamplesOnDensity adds
	// how to read the shading, the contours and the "(n outside)" marks.
	Caption string
}

const (
	defaultGrid   = 200
	defaultDepth  = 12
	defaultLevels = 5
)

// SamplesOnDensity draws the panels side by side, each a square showing
// the same box: the log density shaded light blue with contour lines,
// and the panel's points as small semi-transparent dots on top. The
// contour levels are evenly spaced in log density over the Depth nats
// below the maximum (see contourLevels): each ring is a fixed density
// ratio, so a light mode of a mixture gets the same rings as a heavy one
// as long as its peak is within Depth of the highest. A panel with points not drawn (outside the box or NaN)
// says how many in its title, as "Student (12 outside)": mass the figure
// does not show should not pass unnoticed. The caption under the panels
// explains the shading, the contours and that mark.
//
// For a sampler over R^d with d > 2, plot the 2-D marginal of a
// coordinate pair (a, b): density is that pair's marginal log density,
// and each point is (x[a], x[b]) of one sample. For example, with n
// samples in a row-major n×d slice s:
//
//	pts := make([][2]float32, n)
//	for i := range pts {
//		pts[i] = [2]float32{s[i*d+a], s[i*d+b]}
//	}
//
// The box may be rectangular, as [-3, 3] × [-4, 4] for a Manywell pair;
// the panels stay square.
func SamplesOnDensity(path string, panels []SamplePanel, density Density2D, opt DensityOptions) error {
	if len(panels) == 0 {
		return fmt.Errorf("plot: no panels")
	}
	if density == nil {
		return fmt.Errorf("plot: nil density")
	}
	if err := opt.fill(); err != nil {
		return err
	}
	g, err := newDensityGrid(density, opt)
	if err != nil {
		return err
	}
	levels := contourLevels(g.zmin, g.zmax, opt.Depth, opt.Levels)

	plots := make([][]*gplot.Plot, 1)
	outside := false
	for _, p := range panels {
		pl := newPlot()
		pl.X.Label.Text = opt.XLabel
		pl.Y.Label.Text = opt.YLabel
		// The shading fills the box: no gap between axes and data.
		pl.X.Padding, pl.Y.Padding = 0, 0

		h := plotter.NewHeatMap(g, shades(64))
		h.Min, h.Max = g.zmax-opt.Depth, g.zmax
		h.Underflow = color.White
		h.Rasterized = true // one image, not Grid² rectangles
		pl.Add(plotOnly{h})

		if len(levels) > 0 {
			c := plotter.NewContour(g, levels, nil)
			c.LineStyles = []draw.LineStyle{{Color: contourColor, Width: vg.Points(0.5)}}
			pl.Add(plotOnly{c})
		}

		pts, out := inBox(p.Points, opt)
		outside = outside || out > 0
		pl.Title.Text = p.Title
		if out > 0 {
			pl.Title.Text = fmt.Sprintf("%s (%d outside)", p.Title, out)
		}
		if len(pts) > 0 {
			s, err := plotter.NewScatter(pts)
			if err != nil {
				return err
			}
			s.GlyphStyle = draw.GlyphStyle{Color: dotColor(len(pts)), Radius: vg.Points(1.1), Shape: draw.CircleGlyph{}}
			pl.Add(plotOnly{s})
		}

		pl.X.Min, pl.X.Max = opt.XMin, opt.XMax
		pl.Y.Min, pl.Y.Max = opt.YMin, opt.YMax
		plots[0] = append(plots[0], pl)
	}

	const side = 4 * vg.Inch
	width := vg.Length(len(panels)) * side
	capLines, capH := wrapCaption(densityCaption(opt, g, levels, outside), width-8*vg.Millimeter)
	img := vgimg.New(width, side+capH)
	dc := draw.New(img)
	t := draw.Tiles{Rows: 1, Cols: len(panels), PadX: 4 * vg.Millimeter, PadY: vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: 3 * vg.Millimeter}
	canvases := gplot.Align(plots, t, draw.Crop(dc, 0, 0, capH, 0))
	for i, pl := range plots[0] {
		pl.Draw(canvases[0][i])
	}
	drawCaption(dc, capLines, capH)
	return writePNG(path, img)
}

// densityCaption explains the shading, the contour lines and, when a
// panel has any, the "(n outside)" marks, around the caller's caption.
func densityCaption(opt DensityOptions, g *densityGrid, levels []float64, outside bool) string {
	c := fmt.Sprintf("Shading: the target's log density, from its maximum over the box down to %s nats below (white: lower).", trim(opt.Depth))
	if n := len(levels); n > 0 {
		step := math.Min(opt.Depth, g.zmax-g.zmin) / float64(n)
		c += fmt.Sprintf(" Lines: %d contours of the log density, %s nats apart.", n, trim(step))
	}
	c += " Dots: samples."
	if opt.Caption != "" {
		c += " " + opt.Caption
	}
	if outside {
		c += " “(n outside)”: n of the panel's samples fall outside the box shown, or are not finite, and are not drawn."
	}
	return c
}

// trim formats v with at most two decimals and no trailing zeros.
func trim(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// fill checks the options and sets the defaults.
func (o *DensityOptions) fill() error {
	if !finite(o.XMin) || !finite(o.XMax) || !(o.XMin < o.XMax) {
		return fmt.Errorf("plot: box x range [%v, %v] is not a finite non-empty interval", o.XMin, o.XMax)
	}
	if !finite(o.YMin) || !finite(o.YMax) || !(o.YMin < o.YMax) {
		return fmt.Errorf("plot: box y range [%v, %v] is not a finite non-empty interval", o.YMin, o.YMax)
	}
	switch {
	case o.Grid == 0:
		o.Grid = defaultGrid
	case o.Grid < 2:
		return fmt.Errorf("plot: grid of %d points per axis, want at least 2", o.Grid)
	}
	switch {
	case o.Depth == 0:
		o.Depth = defaultDepth
	case !(o.Depth > 0) || math.IsInf(o.Depth, 1):
		return fmt.Errorf("plot: density depth %v nats, want finite and > 0", o.Depth)
	}
	switch {
	case o.Levels == 0:
		o.Levels = defaultLevels
	case o.Levels < 0:
		return fmt.Errorf("plot: %d contour levels, want > 0", o.Levels)
	}
	if o.XLabel == "" {
		o.XLabel = "x1"
	}
	if o.YLabel == "" {
		o.YLabel = "x2"
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// densityGrid is a log density evaluated at the centres of an nx×ny grid
// of cells tiling a box, so a heat map of it covers exactly the box. It
// implements plotter.GridXYZ, with Min and Max for the colour range.
type densityGrid struct {
	nx, ny     int
	x0, dx     float64 // centre of column 0 and cell width
	y0, dy     float64
	z          []float64 // z[c + r·nx], clamped to zmin
	zmin, zmax float64
}

// newDensityGrid evaluates f on an opt.Grid² grid over the box. Values
// more than 2·opt.Depth below the maximum, -Inf included, are raised to
// that floor: the contours need finite values, and nothing that low is
// drawn.
func newDensityGrid(f Density2D, opt DensityOptions) (*densityGrid, error) {
	n := opt.Grid
	g := &densityGrid{nx: n, ny: n, z: make([]float64, n*n)}
	g.dx = (opt.XMax - opt.XMin) / float64(n)
	g.dy = (opt.YMax - opt.YMin) / float64(n)
	g.x0, g.y0 = opt.XMin+g.dx/2, opt.YMin+g.dy/2
	g.zmax = math.Inf(-1)
	for r := range n {
		for c := range n {
			x, y := g.X(c), g.Y(r)
			v := f(x, y)
			if math.IsNaN(v) || math.IsInf(v, 1) {
				return nil, fmt.Errorf("plot: density is %v at (%v, %v)", v, x, y)
			}
			g.z[c+r*n] = v
			g.zmax = math.Max(g.zmax, v)
		}
	}
	if math.IsInf(g.zmax, -1) {
		return nil, fmt.Errorf("plot: density is -Inf everywhere in the box [%v, %v] × [%v, %v]",
			opt.XMin, opt.XMax, opt.YMin, opt.YMax)
	}
	g.zmin = g.zmax
	floor := g.zmax - 2*opt.Depth
	for i, v := range g.z {
		v = math.Max(v, floor)
		g.z[i] = v
		g.zmin = math.Min(g.zmin, v)
	}
	return g, nil
}

func (g *densityGrid) Dims() (c, r int)   { return g.nx, g.ny }
func (g *densityGrid) Z(c, r int) float64 { return g.z[c+r*g.nx] }
func (g *densityGrid) X(c int) float64    { return g.x0 + float64(c)*g.dx }
func (g *densityGrid) Y(r int) float64    { return g.y0 + float64(r)*g.dy }
func (g *densityGrid) Min() float64       { return g.zmin }
func (g *densityGrid) Max() float64       { return g.zmax }

// contourLevels returns n log-density levels evenly spaced over the
// span = min(depth, zmax-zmin) below zmax, each in the middle of its
// slice of the span: zmax - span + span·(i+½)/n. They are increasing and
// strictly between zmin and zmax, so every level crosses the data; the
// top level is not zmax itself, whose contour is a point. A flat density
// (zmin == zmax) has no levels.
func contourLevels(zmin, zmax, depth float64, n int) []float64 {
	span := math.Min(depth, zmax-zmin)
	if !(span > 0) || n <= 0 {
		return nil
	}
	ls := make([]float64, n)
	for i := range ls {
		ls[i] = zmax - span + span*(float64(i)+0.5)/float64(n)
	}
	return ls
}

// inBox returns the points inside the box as plotter points, and how many
// were left out (outside or NaN).
func inBox(pts [][2]float32, opt DensityOptions) (plotter.XYs, int) {
	xys := make(plotter.XYs, 0, len(pts))
	for _, p := range pts {
		x, y := float64(p[0]), float64(p[1])
		// Written so that NaN fails the test.
		if x >= opt.XMin && x <= opt.XMax && y >= opt.YMin && y <= opt.YMax {
			xys = append(xys, plotter.XY{X: x, Y: y})
		}
	}
	return xys, len(pts) - len(xys)
}

// plotOnly hides all but the Plot method of a plotter. The axes are set
// to the box, so the data ranges are not needed, and the glyph boxes,
// one per grid cell or point, only shrink the panel by half a dot at a
// cost of most of the drawing time (gonum/plot collects them several
// times per panel).
type plotOnly struct{ gplot.Plotter }

// dotColor is tab10 red, transparent so dense clusters read darker than
// sparse ones. The opacity falls as 1/√n from 0.45 at 2,000 points, within
// [0.15, 0.6], so 10,000 points do not merge into solid blots.
func dotColor(n int) color.NRGBA {
	a := math.Min(0.6, math.Max(0.15, 0.45*math.Sqrt(2000/float64(n))))
	return color.NRGBA{214, 39, 40, uint8(math.Round(255 * a))}
}

// contourColor is a mid blue, lighter than the dots.
var contourColor = color.NRGBA{31, 119, 180, 120}

// shades is a palette of n colours from white to a pale blue: light
// enough that the dots on top stay the strongest mark.
type shades int

func (n shades) Colors() []color.Color {
	lo := color.RGBA{255, 255, 255, 255}
	hi := color.RGBA{158, 202, 225, 255}
	cs := make([]color.Color, n)
	for i := range cs {
		t := float64(i) / float64(n-1)
		mix := func(a, b uint8) uint8 { return uint8(math.Round(float64(a) + t*(float64(b)-float64(a)))) }
		cs[i] = color.RGBA{mix(lo.R, hi.R), mix(lo.G, hi.G), mix(lo.B, hi.B), 255}
	}
	return cs
}
