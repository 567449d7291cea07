package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"github.com/gfngo/gfn/safefile"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Series is one named curve, with an optional spread: the line through
// (X[i], Y[i]) and, where Std is given and positive, a shaded band
// Y ± Std (the paper's figures: mean ± std over seeds). Points with a
// NaN or infinite Y, or Y ≤ 0 on a log axis, are not drawn.
type Series struct {
	Name string
	X, Y []float64
	Std  []float64 // nil: no band
}

// Ref is a horizontal reference line at a known value the curves are
// measured against: the true log Z, the number of modes. Name is its
// legend entry ("true log Z").
type Ref struct {
	Name string
	Y    float64
}

// Chart is one line plot: its series, in colours by position (tab10, then
// dashed), so that one method keeps one colour across charts, and its
// reference lines, black and dashed.
type Chart struct {
	Title, XLabel, YLabel string
	Series                []Series
	Refs                  []Ref
	LogY                  bool
	// XMin and XMax, when XMax > XMin, is the range the x axis covers at
	// least: the whole run, when the curve's last point is before its end.
	XMin, XMax float64
	// YZero makes the y axis reach 0: counts (modes found) read against it.
	YZero bool
}

// ErrNoData is returned when no series has a point to draw.
var ErrNoData = errors.New("plot: no finite points to draw")

// The model of a chart is what it shows, decided before anything is
// drawn: the axes' ranges and labelled ticks, the lines with their
// points, the legend's entries. Tests read it; render turns it into a
// gonum plot.

type axisModel struct {
	Label    string // with the factor its tick labels leave out
	Min, Max float64
	Log      bool
	Ticks    []gplot.Tick
}

type lineModel struct {
	Name   string
	Color  color.Color
	Dashes []vg.Length
	Pts    plotter.XYs
	Band   plotter.XYs // the polygon of Y ± Std; nil: none
	Marks  bool        // a dot on every point: few points
}

type chartModel struct {
	Title   string
	X, Y    axisModel
	Lines   []lineModel // the series with a point to draw, in order
	Refs    []Ref       // in range: all on a linear axis, the positive on a log one
	Dropped int         // points not drawn: NaN, infinite, or ≤ 0 on a log axis
}

// legendNames are the chart's legend entries: one per line drawn, then
// one per reference line.
func (m chartModel) legendNames() []string {
	var ns []string
	for _, l := range m.Lines {
		ns = append(ns, l.Name)
	}
	for _, r := range m.Refs {
		ns = append(ns, r.Name)
	}
	return ns
}

// markLimit is the most points a line has with a dot on each.
const markLimit = 15

var refColor = color.Gray{Y: 40}
var refDashes = []vg.Length{vg.Points(5), vg.Points(3)}

// model decides what the chart shows.
func (c Chart) model() chartModel {
	m := chartModel{Title: c.Title}
	xlo, xhi := math.Inf(1), math.Inf(-1)
	ylo, yhi := math.Inf(1), math.Inf(-1)
	take := func(x, y float64) {
		xlo, xhi = math.Min(xlo, x), math.Max(xhi, x)
		ylo, yhi = math.Min(ylo, y), math.Max(yhi, y)
	}
	ok := func(y float64) bool { return !math.IsNaN(y) && !math.IsInf(y, 0) && (!c.LogY || y > 0) }
	for k, s := range c.Series {
		l := lineModel{Name: s.Name, Color: palette10[k%len(palette10)], Dashes: plotutil.Dashes(k / len(palette10))}
		var lo, hi plotter.XYs
		for j := range s.X {
			y := s.Y[j]
			if !ok(y) || math.IsNaN(s.X[j]) {
				m.Dropped++
				continue
			}
			l.Pts = append(l.Pts, plotter.XY{X: s.X[j], Y: y})
			take(s.X[j], y)
			if s.Std != nil && s.Std[j] > 0 && !math.IsInf(s.Std[j], 0) && ok(y-s.Std[j]) {
				lo = append(lo, plotter.XY{X: s.X[j], Y: y - s.Std[j]})
				hi = append(hi, plotter.XY{X: s.X[j], Y: y + s.Std[j]})
				take(s.X[j], y-s.Std[j])
				take(s.X[j], y+s.Std[j])
			}
		}
		if len(lo) > 1 {
			l.Band = append(lo, reversed(hi)...)
		}
		if len(l.Pts) == 0 {
			continue // no legend entry either; the colour stays the series'
		}
		l.Marks = len(l.Pts) <= markLimit
		m.Lines = append(m.Lines, l)
	}
	for _, r := range c.Refs {
		if ok(r.Y) {
			m.Refs = append(m.Refs, r)
			ylo, yhi = math.Min(ylo, r.Y), math.Max(yhi, r.Y)
		}
	}
	if c.XMax > c.XMin {
		xlo, xhi = math.Min(xlo, c.XMin), math.Max(xhi, c.XMax)
	}
	if c.YZero && !c.LogY && !math.IsInf(ylo, 1) {
		ylo, yhi = math.Min(ylo, 0), math.Max(yhi, 0)
	}
	if math.IsInf(xlo, 1) { // nothing to draw
		xlo, xhi = 0, 1
	}
	if !(xhi > xlo) {
		xlo, xhi = xlo-0.5, xhi+0.5
	}
	if math.IsInf(ylo, 1) {
		ylo, yhi = 0, 1
		if c.LogY {
			ylo = 0.1
		}
	}
	// A margin above and below the curves, none at the ends of the run.
	if c.LogY {
		if !(yhi > ylo) {
			ylo, yhi = ylo/2, yhi*2
		}
		f := math.Pow(yhi/ylo, 0.04)
		ylo, yhi = ylo/f, yhi*f
	} else {
		if !(yhi > ylo) {
			d := math.Max(0.5, 0.1*math.Abs(ylo))
			ylo, yhi = ylo-d, yhi+d
		}
		d := 0.04 * (yhi - ylo)
		ylo, yhi = ylo-d, yhi+d
	}
	m.X = axisModel{Min: xlo, Max: xhi}
	var k int
	m.X.Ticks, k = linearTicks(xlo, xhi)
	m.X.Label = c.XLabel + factorSuffix(k)
	m.Y = axisModel{Min: ylo, Max: yhi, Log: c.LogY}
	if c.LogY {
		m.Y.Ticks, k = logTicks(ylo, yhi)
	} else {
		m.Y.Ticks, k = linearTicks(ylo, yhi)
	}
	m.Y.Label = c.YLabel + factorSuffix(k)
	return m
}

func reversed(xy plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, len(xy))
	for i, p := range xy {
		out[len(xy)-1-i] = p
	}
	return out
}

// newPlot is a gonum plot drawing its text with handler.
func newPlot() *gplot.Plot {
	p := gplot.New()
	p.Title.TextStyle.Handler = handler
	p.Title.Padding = vg.Points(4)
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Handler = handler
		a.Tick.Label.Handler = handler
	}
	p.Legend.TextStyle.Handler = handler
	return p
}

// render draws the model as a gonum plot (without its legend) and
// returns the legend apart, to be drawn beside the plot: never on the
// data.
func (m chartModel) render() (*gplot.Plot, gplot.Legend, error) {
	p := newPlot()
	p.Title.Text = m.Title
	lg := newLegend()
	for _, l := range m.Lines {
		if l.Band != nil {
			pg, err := plotter.NewPolygon(l.Band)
			if err != nil {
				return nil, lg, err
			}
			r, g, b, _ := l.Color.RGBA()
			pg.Color = color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 50}
			pg.LineStyle.Width = 0
			p.Add(plotOnly{pg})
		}
	}
	for _, l := range m.Lines {
		ln, err := plotter.NewLine(l.Pts)
		if err != nil {
			return nil, lg, err
		}
		ln.Color, ln.Dashes, ln.Width = l.Color, l.Dashes, vg.Points(1.5)
		p.Add(plotOnly{ln})
		thumbs := []gplot.Thumbnailer{ln}
		if l.Marks {
			s, err := plotter.NewScatter(l.Pts)
			if err != nil {
				return nil, lg, err
			}
			s.GlyphStyle = draw.GlyphStyle{Color: l.Color, Radius: vg.Points(2.2), Shape: draw.CircleGlyph{}}
			p.Add(plotOnly{s})
			thumbs = append(thumbs, s)
		}
		lg.Add(l.Name, thumbs...)
	}
	for _, r := range m.Refs {
		ln, err := plotter.NewLine(plotter.XYs{{X: m.X.Min, Y: r.Y}, {X: m.X.Max, Y: r.Y}})
		if err != nil {
			return nil, lg, err
		}
		ln.Color, ln.Dashes, ln.Width = refColor, refDashes, vg.Points(1)
		p.Add(plotOnly{ln})
		lg.Add(r.Name, ln)
	}
	for _, a := range []struct {
		ax *gplot.Axis
		m  axisModel
	}{{&p.X, m.X}, {&p.Y, m.Y}} {
		a.ax.Min, a.ax.Max = a.m.Min, a.m.Max
		a.ax.Label.Text = a.m.Label
		a.ax.Tick.Marker = gplot.ConstantTicks(a.m.Ticks)
		if a.m.Log {
			a.ax.Scale = gplot.LogScale{}
		}
	}
	return p, lg, nil
}

func newLegend() gplot.Legend {
	lg := gplot.NewLegend()
	lg.TextStyle.Handler = handler
	lg.TextStyle.Font.Size = vg.Points(11)
	lg.Top, lg.Left = true, true
	lg.Padding = vg.Points(2)
	return lg
}

// legendWidth is the width a legend takes, 0 for none.
func legendWidth(lg *gplot.Legend) vg.Length {
	r := lg.Rectangle(draw.Canvas{})
	return r.Max.X - r.Min.X
}

// sameEntries reports whether every chart with a legend has the same
// entries in the same colours (the methods of a table): the figure then
// has one legend.
func sameEntries(ms []chartModel) bool {
	var first *chartModel
	for i := range ms {
		m := &ms[i]
		if len(m.legendNames()) == 0 {
			continue
		}
		if first == nil {
			first = m
			continue
		}
		if len(m.Lines) != len(first.Lines) || len(m.Refs) != len(first.Refs) {
			return false
		}
		for j, l := range m.Lines {
			if l.Name != first.Lines[j].Name || l.Color != first.Lines[j].Color {
				return false
			}
		}
		for j, r := range m.Refs {
			if r.Name != first.Refs[j].Name {
				return false
			}
		}
	}
	return true
}

// Curves draws one chart into a PNG, its legend to the right of the
// axes and the caption, if any, below. With no point to draw it returns
// ErrNoData and writes nothing.
func Curves(path string, c Chart, caption string) error {
	return Charts(path, 1, 1, []Chart{c}, caption)
}

// Charts draws the charts in a grid of rows × cols (row-major; missing
// charts leave their place empty) into a PNG. Legends go to the right of
// the axes: one for the figure when every chart lists the same entries,
// else one beside each chart. The caption goes below, with a note for
// each chart that left points out. With no point to draw in any chart it
// returns ErrNoData and writes nothing.
func Charts(path string, rows, cols int, charts []Chart, caption string) error {
	if rows < 1 || cols < 1 || len(charts) > rows*cols {
		return fmt.Errorf("plot: %d charts do not fit a %d×%d grid", len(charts), rows, cols)
	}
	ms := make([]chartModel, len(charts))
	drawn := false
	for i, c := range charts {
		ms[i] = c.model()
		drawn = drawn || len(ms[i].Lines) > 0
	}
	if !drawn {
		return ErrNoData
	}
	caption = withNotes(caption, charts, ms)
	plots := make([][]*gplot.Plot, rows)
	legends := make([][]*gplot.Legend, rows)
	for r := range plots {
		plots[r] = make([]*gplot.Plot, cols)
		legends[r] = make([]*gplot.Legend, cols)
	}
	var strip vg.Length
	for i, m := range ms {
		p, lg, err := m.render()
		if err != nil {
			return err
		}
		plots[i/cols][i%cols], legends[i/cols][i%cols] = p, &lg
		strip = max(strip, legendWidth(&lg))
	}
	shared := sameEntries(ms) && len(ms) > 1
	if strip > 0 {
		strip += 6 * vg.Millimeter
	}
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] == nil {
				plots[r][c] = newPlot()
				plots[r][c].HideAxes()
			}
		}
	}
	tileW, tileH := 6*vg.Inch, 4*vg.Inch
	if cols > 1 || rows > 1 {
		tileW, tileH = 4.5*vg.Inch, 3.4*vg.Inch
	}
	gridW := vg.Length(cols) * tileW
	if !shared {
		gridW += vg.Length(cols) * strip
	}
	width := gridW
	if shared {
		width += strip
	}
	capLines, capH := wrapCaption(caption, width-8*vg.Millimeter)
	img := vgimg.New(width, vg.Length(rows)*tileH+capH)
	dc := draw.New(img)
	grid := draw.Crop(dc, 0, -(width - gridW), capH, 0)
	t := draw.Tiles{Rows: rows, Cols: cols, PadX: 2 * vg.Millimeter, PadY: 2 * vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: 2 * vg.Millimeter}
	canvases := gplot.Align(plots, t, grid)
	for r := range plots {
		for c, p := range plots[r] {
			cv := canvases[r][c]
			if !shared {
				cv = draw.Crop(cv, 0, -strip, 0, 0)
			}
			p.Draw(cv)
			lg := legends[r][c]
			if lg == nil || shared {
				continue
			}
			da := p.DataCanvas(cv)
			lc := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: cv.Max.X + 3*vg.Millimeter, Y: da.Min.Y}, Max: vg.Point{X: cv.Max.X + strip, Y: da.Max.Y}}}
			lg.Draw(lc)
		}
	}
	if shared {
		for i := range ms {
			if len(ms[i].legendNames()) == 0 {
				continue
			}
			da := plots[0][0].DataCanvas(canvases[0][0])
			lc := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: gridW + 3*vg.Millimeter, Y: dc.Min.Y + capH}, Max: vg.Point{X: width, Y: da.Max.Y}}}
			legends[i/cols][i%cols].Draw(lc)
			break
		}
	}
	drawCaption(dc, capLines, capH)
	return writePNG(path, img)
}

// withNotes adds to the caption a note for each chart that left points
// out, so that no gap in a curve goes unexplained.
func withNotes(caption string, charts []Chart, ms []chartModel) string {
	var notes []string
	for i, m := range ms {
		if m.Dropped == 0 {
			continue
		}
		what := "not finite"
		if charts[i].LogY {
			what = "not finite or ≤ 0 (the log axis has no place for them)"
		}
		name := ""
		if len(ms) > 1 && m.Title != "" {
			name = " of “" + plain(m.Title) + "”"
		}
		n := "points"
		if m.Dropped == 1 {
			n = "point"
		}
		notes = append(notes, fmt.Sprintf("%d %s%s %s, not drawn.", m.Dropped, n, name, what))
	}
	return strings.TrimSpace(caption + " " + strings.Join(notes, " "))
}

// captionStyle is the caption's text style.
func captionStyle() text.Style {
	return text.Style{Font: font.From(gplot.DefaultFont, vg.Points(10)), Handler: handler, Color: color.Black}
}

// wrapCaption breaks the caption into lines at most width wide and
// returns them with the height they take (0 for no caption).
func wrapCaption(caption string, width vg.Length) ([]string, vg.Length) {
	if caption == "" {
		return nil, 0
	}
	sty := captionStyle()
	var lines []string
	line := ""
	for _, w := range strings.Fields(caption) {
		try := w
		if line != "" {
			try = line + " " + w
		}
		if line != "" && sty.Width(try) > width {
			lines = append(lines, line)
			try = w
		}
		line = try
	}
	lines = append(lines, line)
	return lines, vg.Length(len(lines))*sty.Font.Size*1.25 + 3*vg.Millimeter
}

// drawCaption writes the caption's lines at the bottom of the canvas.
func drawCaption(dc draw.Canvas, lines []string, h vg.Length) {
	sty := captionStyle()
	y := dc.Min.Y + h - vg.Millimeter - sty.Font.Size
	for _, l := range lines {
		dc.FillText(sty, vg.Point{X: dc.Min.X + 4*vg.Millimeter, Y: y}, l)
		y -= sty.Font.Size * 1.25
	}
}

// writePNG writes the image to path atomically.
func writePNG(path string, img *vgimg.Canvas) error {
	return safefile.Write(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
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
