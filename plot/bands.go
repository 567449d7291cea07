package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"github.com/gfngo/gfn/safefile"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Band is one named curve with an optional spread: the line through
// (X[i], Mean[i]) and, where Std is given and positive, a shaded band
// Mean ± Std (the paper's figures: mean ± std over seeds).
type Band struct {
	Name    string
	X, Mean []float64
	Std     []float64 // nil: no band
}

// BandPanel is one plot of a BandGrid.
type BandPanel struct {
	Title, XLabel, YLabel string
	Bands                 []Band
}

// BandGrid draws panels in a grid of rows × cols (row-major; missing
// panels stay empty) into a PNG. Series keep their colour by position, so
// one method has one colour in every panel. NaN points are skipped.
func BandGrid(path string, rows, cols int, panels []BandPanel) error {
	if rows < 1 || cols < 1 || len(panels) > rows*cols {
		return fmt.Errorf("plot: %d panels do not fit a %d×%d grid", len(panels), rows, cols)
	}
	plots := make([][]*gplot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*gplot.Plot, cols)
	}
	for i, pn := range panels {
		p := gplot.New()
		p.Title.Text = pn.Title
		p.X.Label.Text = pn.XLabel
		p.Y.Label.Text = pn.YLabel
		var drawn []plotter.XYs
		entries := 0
		p.X.Tick.Marker = distinctTicks{}
		p.Y.Tick.Marker = distinctTicks{}
		for k, b := range pn.Bands {
			col := palette10[k%len(palette10)]
			var line, lo, hi plotter.XYs
			for j := range b.X {
				m := b.Mean[j]
				if math.IsNaN(m) || math.IsInf(m, 0) {
					continue
				}
				line = append(line, plotter.XY{X: b.X[j], Y: m})
				if b.Std != nil && b.Std[j] > 0 && !math.IsNaN(b.Std[j]) {
					lo = append(lo, plotter.XY{X: b.X[j], Y: m - b.Std[j]})
					hi = append(hi, plotter.XY{X: b.X[j], Y: m + b.Std[j]})
				}
			}
			if len(lo) > 1 {
				poly := append(lo, reversed(hi)...)
				pg, err := plotter.NewPolygon(poly)
				if err != nil {
					return err
				}
				r, g, bl, _ := col.RGBA()
				pg.Color = color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 50}
				pg.LineStyle.Width = 0
				p.Add(pg)
			}
			if len(line) == 0 {
				continue
			}
			l, err := plotter.NewLine(line)
			if err != nil {
				return err
			}
			l.Color = col
			l.Dashes = plotutil.Dashes(k / len(palette10))
			l.Width = vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(b.Name, l)
			drawn = append(drawn, line, lo, hi)
			entries++
		}
		placeLegend(p, drawn, entries, false)
		plots[i/cols][i%cols] = p
	}
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] == nil {
				plots[r][c] = gplot.New()
				plots[r][c].HideAxes()
			}
		}
	}
	const w, h = 4.5 * vg.Inch, 3.4 * vg.Inch
	img := vgimg.New(vg.Length(cols)*w, vg.Length(rows)*h)
	dc := draw.New(img)
	t := draw.Tiles{Rows: rows, Cols: cols, PadX: 2 * vg.Millimeter, PadY: 2 * vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: 2 * vg.Millimeter}
	canvases := gplot.Align(plots, t, dc)
	for r := range plots {
		for c, p := range plots[r] {
			p.Draw(canvases[r][c])
		}
	}
	return safefile.Write(path, func(wr io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(wr)
		return err
	})
}

func reversed(xy plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, len(xy))
	for i, p := range xy {
		out[len(xy)-1-i] = p
	}
	return out
}

// distinctTicks is gonum's default ticker with labels given just enough
// digits to tell them apart: on a narrow range (an EUBO between 11.5 and
// 12.1) the default labels repeat ("12 12 12").
type distinctTicks struct{}

func (distinctTicks) Ticks(lo, hi float64) []gplot.Tick {
	ts := gplot.DefaultTicks{}.Ticks(lo, hi)
	big := math.Max(math.Abs(lo), math.Abs(hi))
	format := func(v float64, prec int) string {
		if big >= 1e6 || big < 1e-3 {
			return strconv.FormatFloat(v, 'g', prec+1, 64)
		}
		return strconv.FormatFloat(v, 'f', prec, 64) // decimals
	}
	for prec := 0; prec <= 10; prec++ {
		seen := map[string]bool{}
		ok := true
		for i, t := range ts {
			if t.Label == "" {
				continue
			}
			l := format(t.Value, prec)
			// The label must say the tick's value, not a rounding of it.
			back, err := strconv.ParseFloat(l, 64)
			exact := err == nil && math.Abs(back-t.Value) <= 1e-9*math.Max(1, math.Abs(t.Value))
			ok = ok && exact && !seen[l]
			seen[l] = true
			ts[i].Label = l
		}
		if ok {
			break
		}
	}
	return ts
}
