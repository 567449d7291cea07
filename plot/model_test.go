package plot

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
)

var (
	decimalLabel = regexp.MustCompile(`^−?[0-9]+(\.[0-9]+)?$`)
	powerLabel   = regexp.MustCompile(`^10\^\{(−?[0-9]+)\}$`)
)

// checkLabels checks an axis's labelled ticks: at least two, distinct,
// all decimals or all powers of ten, each saying its tick's value
// exactly (times 10^k for decimals).
func checkLabels(t *testing.T, what string, ts []gplot.Tick, k int) {
	t.Helper()
	var decimals, powers int
	seen := map[string]bool{}
	for _, tk := range ts {
		l := tk.Label
		if l == "" {
			continue
		}
		if seen[l] {
			t.Errorf("%s: label %q repeats", what, l)
		}
		seen[l] = true
		var v float64
		switch {
		case decimalLabel.MatchString(l):
			decimals++
			x, _ := strconv.ParseFloat(strings.ReplaceAll(l, "−", "-"), 64)
			v = x * math.Pow(10, float64(k))
		case powerLabel.MatchString(l):
			powers++
			e, _ := strconv.Atoi(strings.ReplaceAll(powerLabel.FindStringSubmatch(l)[1], "−", "-"))
			v = math.Pow(10, float64(e))
		default:
			t.Errorf("%s: label %q is neither a plain decimal nor a power of ten", what, l)
			continue
		}
		if math.Abs(v-tk.Value) > 1e-9*math.Max(math.Abs(tk.Value), 1e-300) && !(v == 0 && math.Abs(tk.Value) < 1e-12) {
			t.Errorf("%s: label %q (×10^%d) for the tick at %v", what, l, k, tk.Value)
		}
	}
	if decimals > 0 && powers > 0 {
		t.Errorf("%s: %d decimal and %d power labels on one axis", what, decimals, powers)
	}
	if powers > 0 && k != 0 {
		t.Errorf("%s: power labels with a factor 10^%d", what, k)
	}
	if len(seen) < 2 {
		t.Errorf("%s: %d labels %v", what, len(seen), ts)
	}
}

// TestTickLabelsOneNotation: l1.png's y axis read "1.7e-05 … 0.00012";
// every axis now has one notation.
func TestTickLabelsOneNotation(t *testing.T) {
	for _, r := range [][2]float64{{1.7e-5, 1.2e-4}, {0.00069, 0.0075}, {7.3e-5, 8.7}, {0.57, 8.7}, {0.55, 0.65},
		{1e-12, 1}, {3, 3.5}, {1e5, 3e7}} {
		ts, k := logTicks(r[0], r[1])
		checkLabels(t, "log "+strconv.FormatFloat(r[0], 'g', -1, 64)+"…"+strconv.FormatFloat(r[1], 'g', -1, 64), ts, k)
	}
	for _, r := range [][2]float64{{11.5, 12.1}, {0.1, 0.1004}, {-3, 2}, {100, 5000}, {0, 16000}, {0, 2e6},
		{1.7e-5, 1.2e-4}, {-6.4, 8.7}, {0, 300}} {
		ts, k := linearTicks(r[0], r[1])
		checkLabels(t, "linear "+strconv.FormatFloat(r[0], 'g', -1, 64)+"…"+strconv.FormatFloat(r[1], 'g', -1, 64), ts, k)
	}
	// Small decimals leave out a factor, said in the axis label.
	if _, k := linearTicks(1.7e-5, 1.2e-4); k != -4 {
		t.Errorf("linear 1.7e-5…1.2e-4: factor 10^%d, want 10^-4", k)
	}
	if _, k := logTicks(1.7e-5, 1.2e-4); k != -4 {
		t.Errorf("log 1.7e-5…1.2e-4: factor 10^%d, want 10^-4", k)
	}
	if s := plain(factorSuffix(-4)); s != " (×10−4)" {
		t.Errorf("factor suffix reads %q", s)
	}
}

func names(m chartModel) []string { return m.legendNames() }

// TestChartModelLegendOnlyForDrawnLines: curves.png listed "log Z −
// ELBO-IS" whose gaps were all negative on a log axis, so never drawn.
func TestChartModelLegendOnlyForDrawnLines(t *testing.T) {
	x := []float64{0, 100, 200}
	c := Chart{Title: "gaps", LogY: true, Series: []Series{
		{Name: "positive", X: x, Y: []float64{8, 6, 5}},
		{Name: "negative", X: x, Y: []float64{-0.1, -0.2, -0.05}},
		{Name: "mixed", X: x, Y: []float64{0.5, -0.1, 0.2}},
	}, Refs: []Ref{{"zero", 0}, {"one", 1}}}
	m := c.model()
	if got, want := names(m), []string{"positive", "mixed", "one"}; !slices.Equal(got, want) {
		t.Errorf("legend %q, want %q", got, want)
	}
	for _, l := range m.Lines {
		if len(l.Pts) == 0 {
			t.Errorf("line %q in the model without points", l.Name)
		}
	}
	// The colour stays the series' place, drawn or not.
	if m.Lines[1].Color != palette10[2] {
		t.Errorf("third series drawn in %v, want %v", m.Lines[1].Color, palette10[2])
	}
	if m.Dropped != 4 {
		t.Errorf("%d points dropped, want 4", m.Dropped)
	}
	// The caption says so.
	if note := withNotes("", []Chart{c}, []chartModel{m}); !strings.Contains(note, "4 points") || !strings.Contains(note, "≤ 0") {
		t.Errorf("caption %q does not explain the 4 points left out", note)
	}
	if note := withNotes("cap.", []Chart{{}}, []chartModel{{}}); note != "cap." {
		t.Errorf("caption %q, want it unchanged", note)
	}
}

// TestChartModelAxesCoverRunAndRefs: curves.png's x axis stopped at
// iteration 200 of 300; reference lines must be in range.
func TestChartModelAxesCoverRunAndRefs(t *testing.T) {
	x := []float64{0, 100, 200}
	m := Chart{Series: []Series{{Name: "ELBO", X: x, Y: []float64{-6, -5, -5.5}}}, Refs: []Ref{{"true log Z", 0}}, XMax: 300}.model()
	if m.X.Min != 0 || m.X.Max != 300 {
		t.Errorf("x axis [%v, %v], want [0, 300]", m.X.Min, m.X.Max)
	}
	if !(m.Y.Min < -6 && m.Y.Max > 0) {
		t.Errorf("y axis [%v, %v] does not hold the curve and the line at 0 with a margin", m.Y.Min, m.Y.Max)
	}
	if got := names(m); !slices.Equal(got, []string{"ELBO", "true log Z"}) {
		t.Errorf("legend %q", got)
	}
	checkLabels(t, "x", m.X.Ticks, 0)
	if last := m.X.Ticks[len(m.X.Ticks)-1]; last.Value > 300 {
		t.Errorf("tick at %v beyond the axis", last.Value)
	}
	// Data beyond XMax widens the axis, never cuts it.
	if m := (Chart{Series: []Series{{Name: "a", X: []float64{0, 400}, Y: []float64{1, 2}}}, XMax: 300}).model(); m.X.Max != 400 {
		t.Errorf("x axis ends at %v, want 400", m.X.Max)
	}
	// Few points get dots, so that a lone point shows.
	if m := (Chart{Series: []Series{{Name: "a", X: []float64{39}, Y: []float64{11}}}, XMax: 39}).model(); !m.Lines[0].Marks || m.X.Min != 0 && m.X.Max != 39 {
		t.Errorf("one point: marks %v, x [%v, %v]", m.Lines[0].Marks, m.X.Min, m.X.Max)
	}
	// Counts read against 0.
	if m := (Chart{Series: []Series{{Name: "a", X: []float64{39}, Y: []float64{11}}}, YZero: true}).model(); !(m.Y.Min < 0 && m.Y.Max > 11) {
		t.Errorf("modes axis [%v, %v] does not reach 0", m.Y.Min, m.Y.Max)
	}
	// A log axis gets a factor in its label when its decimals are small.
	m = Chart{YLabel: "L1", LogY: true, Series: []Series{{Name: "a", X: x, Y: []float64{1.2e-4, 5e-5, 1.7e-5}}}}.model()
	if plain(m.Y.Label) != "L1 (×10−4)" {
		t.Errorf("y label %q", plain(m.Y.Label))
	}
}

func TestSameEntries(t *testing.T) {
	x := []float64{0, 1}
	a := Chart{Series: []Series{{Name: "tb", X: x, Y: x}, {Name: "teacher", X: x, Y: x}}}.model()
	b := Chart{Series: []Series{{Name: "tb", X: x, Y: x}, {Name: "teacher", X: x, Y: x}}}.model()
	c := Chart{Series: []Series{{Name: "tb", X: x, Y: x}, {Name: "teacher"}}}.model()
	if !sameEntries([]chartModel{a, b, {}}) || sameEntries([]chartModel{a, c}) {
		t.Error("sameEntries wrong")
	}
}

// TestHeatScale: distributions.png drew every panel on a linear scale to
// the target's maximum, the Teacher's spread-out mass all in the lowest
// colour, and had no colour bar.
func TestHeatScale(t *testing.T) {
	side := 4
	spread := make([]float64, side*side)
	peaked := make([]float64, side*side)
	for i := range spread {
		spread[i] = 1.0 / 16
		peaked[i] = 1e-9
	}
	peaked[0], peaked[1] = 0.5, 0.5-14e-9
	peaked[2] = 0
	s, err := heatScale([]Panel{{"target", side, peaked}, {"Teacher", side, spread}}, "probability")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Log || s.Max != math.Log10(0.5) || s.Min != -6 {
		t.Errorf("scale %+v, want log from 10^-6 (five decades below 0.5's) to log10(0.5)", s)
	}
	if s.Under != 14 {
		t.Errorf("%d cells below the bar, want 14 (13 at 1e-9, one empty)", s.Under)
	}
	for _, tk := range s.Ticks { // in log10 units
		if tk.Label != pow10(int(tk.Value)) || tk.Value != math.Trunc(tk.Value) {
			t.Errorf("bar tick at %v labelled %q", tk.Value, tk.Label)
		}
	}
	if s.Ticks[0].Value != -6 || s.Ticks[len(s.Ticks)-1].Value != -1 {
		t.Errorf("bar ticks %v, want 10^-6 … 10^-1", s.Ticks)
	}
	if c := plain(s.caption()); !strings.Contains(c, "log scale") || !strings.Contains(c, "less than 10−6") {
		t.Errorf("caption %q", c)
	}
	// The Teacher's cells all take distinct colours from the target's.
	g := grid{side, spread, s}
	if z := g.Z(0, 0); !(z > s.Min && z < s.Max) {
		t.Errorf("Teacher cell at %v, outside the bar (%v, %v)", z, s.Min, s.Max)
	}
	// Less than two decades: linear from 0.
	s, err = heatScale([]Panel{{"flat", side, spread}}, "probability")
	if err != nil {
		t.Fatal(err)
	}
	if s.Log || s.Min != 0 || s.Max != 1.0/16 || s.Under != 0 || !strings.Contains(s.caption(), "linear") {
		t.Errorf("flat panel: scale %+v", s)
	}
	checkLabels(t, "linear bar", s.Ticks, 0)
	if !strings.HasPrefix(s.Label, "probability") {
		t.Errorf("bar label %q", s.Label)
	}
}

func TestSupText(t *testing.T) {
	for in, want := range map[string][]segment{
		"10^{−4}":      {{"10", false}, {"−4", true}},
		"L1 (×10^{3})": {{"L1 (×10", false}, {"3", true}, {")", false}},
		"P_F^T":        {{"P_F^T", false}},
		"a^{b":         {{"a^{b", false}},
	} {
		if got := segments(in); !slices.Equal(got, want) {
			t.Errorf("segments(%q) = %v, want %v", in, got, want)
		}
	}
	w1, _, _ := handler.Box("10^{−4}", captionStyle().Font)
	w2, _, _ := handler.Box("10−4", captionStyle().Font)
	if !(w1 < w2 && w1 > w2/2) {
		t.Errorf("superscript width %v, plain %v", w1, w2)
	}
}
