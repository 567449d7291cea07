package view

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Series is one run's line in a chart.
type Series struct {
	Name  string // the run's ID
	Label string // its legend text
	Color string
	X, Y  []float64
}

// Chart geometry in SVG user units; the browser scales the viewBox.
const (
	chartW, chartH         = 440.0, 230.0
	padL, padR, padT, padB = 58.0, 10.0, 22.0, 34.0
)

// palette is Tableau 10, distinguishable in colour and in print.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// Color is the i-th run's colour.
func Color(i int) string { return palette[i%len(palette)] }

// WriteChart draws series as one SVG chart of column (values of y
// against xLabel): axes with plain tick labels, a logarithmic y axis
// when every value is positive and they span more than three decades,
// one path per series broken where a value is NaN or infinite, and a
// <title> per path (the browser's tooltip). Each path carries
// data-run, data-points and data-last (the last finite value) for
// scripts and tests.
func WriteChart(w io.Writer, column, xLabel string, series []Series) error {
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for i, y := range s.Y {
			x := s.X[i]
			if !finite(x) || !finite(y) {
				continue
			}
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s" data-column="%s">`,
		chartW, chartH, html.EscapeString(column), html.EscapeString(column))
	fmt.Fprintf(&b, `<text x="%g" y="14" class="title">%s</text>`, padL, html.EscapeString(column))
	if math.IsInf(xmin, 1) {
		fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle" class="empty">no values yet</text></svg>`, chartW/2, chartH/2)
		_, err := io.WriteString(w, b.String())
		return err
	}
	logY := ymin > 0 && ymax/ymin > 1e3
	ty := func(v float64) float64 { return v }
	if logY {
		ty = math.Log10
	}
	y0, y1 := ty(ymin), ty(ymax)
	if y0 == y1 {
		y0, y1 = y0-1, y1+1
		if !logY && ymin == 0 {
			y0 = 0
		}
	} else {
		pad := (y1 - y0) * 0.04
		y0, y1 = y0-pad, y1+pad
	}
	x0, x1 := xmin, xmax
	if x0 == x1 {
		x0, x1 = x0-1, x1+1
	}
	pw, ph := chartW-padL-padR, chartH-padT-padB
	px := func(x float64) float64 { return padL + (x-x0)/(x1-x0)*pw }
	py := func(y float64) float64 { return padT + (1-(ty(y)-y0)/(y1-y0))*ph }
	// Frame, grid and ticks.
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" class="frame"/>`, padL, padT, pw, ph)
	xt := ticks(x0, x1, 6)
	for i, l := range tickLabels(xt) {
		x := px(xt[i])
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" class="grid"/><text x="%.1f" y="%g" text-anchor="middle" class="tick">%s</text>`,
			x, padT, x, padT+ph, x, padT+ph+13, l)
	}
	var yt []float64
	if logY {
		for e := math.Ceil(y0); e <= y1; e++ {
			yt = append(yt, math.Pow(10, e))
		}
	} else {
		yt = ticks(y0, y1, 5)
	}
	for i, l := range tickLabels(yt) {
		y := py(yt[i])
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" class="grid"/><text x="%g" y="%.1f" text-anchor="end" class="tick">%s</text>`,
			padL, y, padL+pw, y, padL-4, y+3.5, l)
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle" class="axis">%s</text>`, padL+pw/2, chartH-4, html.EscapeString(xLabel))
	if logY {
		fmt.Fprintf(&b, `<text x="%g" y="14" text-anchor="end" class="axis">log scale</text>`, chartW-padR)
	}
	// The lines.
	for _, s := range series {
		var d strings.Builder
		pen, n, last := "M", 0, math.NaN()
		for i, y := range s.Y {
			x := s.X[i]
			if !finite(x) || !finite(y) {
				pen = "M"
				continue
			}
			fmt.Fprintf(&d, "%s%.1f %.1f", pen, px(x), py(y))
			pen, n, last = "L", n+1, y
		}
		fmt.Fprintf(&b, `<path d="%s" stroke="%s" class="line" data-run="%s" data-points="%d" data-last="%s"><title>%s: %s = %s</title></path>`,
			d.String(), s.Color, html.EscapeString(s.Name), n, label(last), html.EscapeString(s.Label), html.EscapeString(column), label(last))
		if n == 1 { // a lone point has no line to show it
			xs, ys := lastFinite(s.X, s.Y)
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`, px(xs), py(ys), s.Color)
		}
	}
	b.WriteString(`</svg>`)
	_, err := io.WriteString(w, b.String())
	return err
}

func lastFinite(x, y []float64) (float64, float64) {
	for i := len(y) - 1; i >= 0; i-- {
		if finite(x[i]) && finite(y[i]) {
			return x[i], y[i]
		}
	}
	return math.NaN(), math.NaN()
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// ticks returns about n round values (1, 2 or 5 times a power of ten
// apart) in [lo, hi].
func ticks(lo, hi float64, n int) []float64 {
	raw := (hi - lo) / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	var t []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		t = append(t, math.Round(v/step)*step)
	}
	return t
}

// tickLabels formats an axis's ticks in one notation: plain decimals
// when every nonzero tick lies in [1e-4, 1e6), else mantissa-e-exponent
// for all ("2e-5", "4e-5"; never "2e-5" beside "0.0001").
func tickLabels(ts []float64) []string {
	plain := true
	for _, t := range ts {
		if a := math.Abs(t); t != 0 && (a < 1e-4 || a >= 1e6) {
			plain = false
		}
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		switch {
		case t == 0:
			out[i] = "0"
		case plain:
			out[i] = strconv.FormatFloat(roundSig(t, 6), 'f', -1, 64)
		default:
			out[i] = exponent(t)
		}
	}
	return out
}

// label formats a tick or a value plainly: no exponent between 1e-4 and
// 1e6, at most 4 significant digits.
func label(v float64) string {
	switch {
	case math.IsNaN(v):
		return "none"
	case v == 0:
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e-4 && a < 1e6 {
		return strconv.FormatFloat(roundSig(v, 4), 'f', -1, 64)
	}
	return exponent(v)
}

// exponent formats v as "1.25e-5": at most 4 significant digits.
func exponent(v float64) string {
	s := strconv.FormatFloat(v, 'e', 3, 64)
	mant, exp, _ := strings.Cut(s, "e")
	mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
	e, _ := strconv.Atoi(exp)
	return mant + "e" + strconv.Itoa(e)
}

func roundSig(v float64, digits int) float64 {
	s := strconv.FormatFloat(v, 'g', digits, 64)
	r, _ := strconv.ParseFloat(s, 64)
	return r
}
