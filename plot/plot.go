package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"github.com/gfngo/gfn/safefile"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
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

type grid struct {
	side int
	v    []float64
	vmax float64
}

func (g grid) Dims() (c, r int)   { return g.side, g.side }
func (g grid) Z(c, r int) float64 { return math.Min(g.v[c+r*g.side], g.vmax) }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }

// Heatmaps draws the panels side by side on one colour scale from 0 to vmax
// (values above are clipped), as the reference code scales every panel by
// the target's maximum.
func Heatmaps(path string, panels []Panel, vmax float64) error {
	if len(panels) == 0 {
		return fmt.Errorf("plot: no panels")
	}
	if !(vmax > 0) {
		return fmt.Errorf("plot: colour scale maximum %v must be > 0", vmax)
	}
	pal := moreland.SmoothBlueRed()
	pal.SetMin(0)
	pal.SetMax(vmax)
	plots := make([][]*gplot.Plot, 1)
	for _, p := range panels {
		if len(p.Values) != p.Side*p.Side {
			panic(fmt.Sprintf("plot: panel %q has %d values for side %d", p.Title, len(p.Values), p.Side))
		}
		pl := gplot.New()
		pl.Title.Text = p.Title
		pl.X.Label.Text = "x1"
		pl.Y.Label.Text = "x2"
		h := plotter.NewHeatMap(grid{p.Side, p.Values, vmax}, pal.Palette(255))
		h.Min, h.Max = 0, vmax
		pl.Add(h)
		plots[0] = append(plots[0], pl)
	}
	const side = 4 * vg.Inch
	img := vgimg.New(vg.Length(len(panels))*side, side+0.3*vg.Inch)
	dc := draw.New(img)
	t := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter, PadY: vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	canvases := gplot.Align(plots, t, dc)
	for i, pl := range plots[0] {
		pl.Draw(canvases[0][i])
	}
	return safefile.Write(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	})
}

// Series is one named curve.
type Series struct {
	Name string
	X, Y []float64
}

// ErrNoData is returned by Curves when no series has a point it can draw.
var ErrNoData = errors.New("plot: no finite points to draw")

// Curves draws line plots of the series. With logY the y axis is
// logarithmic and non-positive points are dropped. If no point remains it
// returns ErrNoData and writes nothing: an empty log axis has no range.
func Curves(path, title, xlabel, ylabel string, series []Series, logY bool) error {
	p := gplot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	if logY {
		p.Y.Scale = gplot.LogScale{}
		p.Y.Tick.Marker = spreadTicks{}
	}
	var drawn []plotter.XYs
	for i, s := range series {
		pts := make(plotter.XYs, 0, len(s.X))
		for k := range s.X {
			y := s.Y[k]
			if math.IsNaN(y) || math.IsInf(y, 0) || (logY && y <= 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: s.X[k], Y: y})
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = palette10[i%len(palette10)]
		l.Dashes = plotutil.Dashes(i / len(palette10))
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.Name, l)
		drawn = append(drawn, pts)
	}
	if len(drawn) == 0 {
		return ErrNoData
	}
	placeLegend(p, drawn, len(drawn), logY)
	return safefile.Write(path, func(w io.Writer) error {
		wt, err := p.WriterTo(6*vg.Inch, 4*vg.Inch, "png")
		if err != nil {
			return err
		}
		_, err = wt.WriteTo(w)
		return err
	})
}

// palette10 is the "tab10" palette: ten easily told apart colours.
var palette10 = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255},
	color.RGBA{23, 190, 207, 255},
}

// spreadTicks labels five values evenly spaced in log space, so a log axis
// spanning less than a decade still has labels.
type spreadTicks struct{}

func (spreadTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	var ts []gplot.Tick
	const n = 5
	for i := range n {
		v := math.Exp(math.Log(lo) + float64(i)*(math.Log(hi)-math.Log(lo))/(n-1))
		ts = append(ts, gplot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 2, 64)})
	}
	return ts
}
