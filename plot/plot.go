package plot

import (
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Panel is one square heat map: Values[i + j·Side] is the mass of cell
// (x_1 = i, x_2 = j).
type Panel struct {
	Title  string
	Side   int
	Values []float64
}

// colourScale is the colour scale the heat maps share, and its bar: the
// model of the colour bar.
type colourScale struct {
	Log bool
	// Min and Max bound the bar in the heat maps' units: log10 of the
	// mass on a log scale, the mass on a linear one.
	Min, Max float64
	// Under counts the cells below Min (no mass, or less than the bar
	// shows), drawn in the bar's lowest colour.
	Under int
	Label string // the bar's axis label, with the factor its ticks leave out
	Ticks []gplot.Tick
}

// logDecades is how many decades below the largest mass's a log colour
// bar reaches at most.
const logDecades = 5

// heatScale is the colour scale of the panels: logarithmic when the
// positive masses span two decades or more (the deceptive grid's modes
// against its plateaus, a Teacher spreading mass everywhere), down to the
// smallest positive mass's decade but at most logDecades below the
// largest's; linear from 0 otherwise.
func heatScale(panels []Panel, label string) (colourScale, error) {
	hi, lo := 0.0, math.Inf(1)
	for _, p := range panels {
		for _, v := range p.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return colourScale{}, fmt.Errorf("plot: panel %q has a mass %v", p.Title, v)
			}
			if v > 0 {
				hi, lo = math.Max(hi, v), math.Min(lo, v)
			}
		}
	}
	if !(hi > 0) {
		return colourScale{}, fmt.Errorf("plot: no panel has mass to draw")
	}
	s := colourScale{}
	if hi/lo >= 100 {
		s.Log = true
		s.Max = math.Log10(hi)
		s.Min = math.Max(math.Floor(math.Log10(lo)), math.Floor(s.Max)-logDecades)
		every := 1
		if s.Max-s.Min > 7 {
			every = 2
		}
		for j := int(s.Min); j <= int(math.Floor(s.Max)); j += every {
			s.Ticks = append(s.Ticks, gplot.Tick{Value: float64(j), Label: pow10(j)})
		}
		s.Label = label + " (log scale)"
	} else {
		s.Max = hi
		var k int
		s.Ticks, k = linearTicks(0, hi)
		s.Label = label + factorSuffix(k)
	}
	for _, p := range panels {
		for _, v := range p.Values {
			if s.z(v) < s.Min {
				s.Under++
			}
		}
	}
	return s, nil
}

// z is a mass in the heat maps' units (−Inf for no mass on a log scale).
func (s colourScale) z(v float64) float64 {
	if s.Log {
		return math.Log10(v)
	}
	return v
}

// caption says how to read the colours.
func (s colourScale) caption() string {
	if !s.Log {
		return "Colour: the mass of each cell, on a linear scale from 0 that the panels share."
	}
	c := "Colour: the mass of each cell, on a log scale that the panels share."
	if s.Under > 0 {
		c += fmt.Sprintf(" Cells with less than %s (or none) take the bar's lowest colour.", pow10(int(s.Min)))
	}
	return c
}

type grid struct {
	side int
	v    []float64
	s    colourScale
}

func (g grid) Dims() (c, r int) { return g.side, g.side }
func (g grid) Z(c, r int) float64 {
	return math.Max(g.s.Min, math.Min(g.s.z(g.v[c+r*g.side]), g.s.Max))
}
func (g grid) X(c int) float64 { return float64(c) }
func (g grid) Y(r int) float64 { return float64(r) }

// viridis is matplotlib's default colour map (its colours at tenths):
// perceptually even, readable in grey, for colour-blind readers too.
func viridis() palette.ColorMap {
	hex := []uint32{0x440154, 0x482878, 0x3e4989, 0x31688e, 0x26828e, 0x1f9e89, 0x35b779, 0x6ece58, 0xb5de2b, 0xfde725}
	cs := make([]color.Color, len(hex))
	for i, h := range hex {
		cs[i] = color.NRGBA{uint8(h >> 16), uint8(h >> 8), uint8(h), 255}
	}
	m, err := moreland.NewLuminance(cs)
	if err != nil {
		panic(err) // the colours' luminance rises
	}
	return m
}

// Heatmaps draws the panels side by side on one colour scale with a
// colour bar labelled label below them (see heatScale) and the caption,
// after a sentence on reading the colours, under the bar.
func Heatmaps(path string, panels []Panel, label, caption string) error {
	if len(panels) == 0 {
		return fmt.Errorf("plot: no panels")
	}
	for _, p := range panels {
		if len(p.Values) != p.Side*p.Side {
			return fmt.Errorf("plot: panel %q has %d values for side %d", p.Title, len(p.Values), p.Side)
		}
	}
	s, err := heatScale(panels, label)
	if err != nil {
		return err
	}
	cmap := viridis()
	cmap.SetMin(s.Min)
	cmap.SetMax(s.Max)
	pal := cmap.Palette(256)
	plots := make([][]*gplot.Plot, 1)
	for _, p := range panels {
		pl := newPlot()
		pl.Title.Text = p.Title
		pl.X.Label.Text = "x1"
		pl.Y.Label.Text = "x2"
		h := plotter.NewHeatMap(grid{p.Side, p.Values, s}, pal)
		h.Min, h.Max = s.Min, s.Max
		pl.Add(h)
		plots[0] = append(plots[0], pl)
	}

	bar := newPlot()
	bar.HideY()
	bar.Add(&plotter.ColorBar{ColorMap: cmap, Colors: 256})
	bar.X.Min, bar.X.Max = s.Min, s.Max
	bar.X.Padding = 0
	bar.X.Label.Text = s.Label
	bar.X.Tick.Marker = gplot.ConstantTicks(s.Ticks)

	const side = 4 * vg.Inch
	const barH = 0.75 * vg.Inch
	width := vg.Length(len(panels)) * side
	capLines, capH := wrapCaption(s.caption()+" "+caption, width-8*vg.Millimeter)
	img := vgimg.New(width, side+barH+capH)
	dc := draw.New(img)
	t := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter, PadY: vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	canvases := gplot.Align(plots, t, draw.Crop(dc, 0, 0, barH+capH, 0))
	for i, pl := range plots[0] {
		pl.Draw(canvases[0][i])
	}
	// The bar under the panels' middle, as wide as one panel's data.
	da := plots[0][0].DataCanvas(canvases[0][0])
	bw := da.Max.X - da.Min.X
	x0 := (width - bw) / 2
	bc := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: x0, Y: capH}, Max: vg.Point{X: x0 + bw, Y: capH + barH - 2*vg.Millimeter}}}
	bar.Draw(bc)
	drawCaption(dc, capLines, capH)
	return writePNG(path, img)
}
