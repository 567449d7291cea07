package diffusion

import (
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/run"
)

// TestCurvesCharts: curves.png listed a gap line never drawn (ELBO-IS's,
// negative), stopped its x axis at 200 of 300 iterations, and had no
// true log Z line.
func TestCurvesCharts(t *testing.T) {
	e, err := energy.Named("25gmm")
	if err != nil {
		t.Fatal(err)
	}
	tr := &Trainer{Energy: e, Step: 300}
	c := &run.Curve{}
	for _, n := range []string{"step", "elbo", "elbo_is", "eubo", "student_logz"} {
		c.Columns = append(c.Columns, run.Column{Name: n})
	}
	c.Rows = [][]float64{{0, -6.4, -1.4, 8.7, -0.1}, {100, -5.8, 0.1, 6.1, -2.4}, {200, -6.3, -0.9, 5.5, -2.3}}
	cs := charts(tr, c)
	if len(cs) != 2 {
		t.Fatalf("%d charts, want the estimates and the gaps", len(cs))
	}
	for _, ch := range cs {
		if ch.XMax != 300 {
			t.Errorf("%s: x axis to %v, want 300", ch.Title, ch.XMax)
		}
	}
	if len(cs[0].Refs) != 1 || cs[0].Refs[0].Name != "true log Z" || cs[0].Refs[0].Y != 0 {
		t.Errorf("estimates refs %v, want true log Z = 0", cs[0].Refs)
	}
	var gapNames []string
	for _, s := range cs[1].Series {
		if len(s.Y) > 0 {
			gapNames = append(gapNames, s.Name)
		}
	}
	if !cs[1].LogY || !slices.Equal(gapNames, []string{"log Z − ELBO", "EUBO − log Z"}) {
		t.Errorf("gaps chart: log %v, lines %q; want the two bounds' gaps on a log axis", cs[1].LogY, gapNames)
	}
	if cap := curvesCaption(tr, c); !strings.Contains(cap, "iteration 200 of the run's 300") {
		t.Errorf("caption %q does not say the curve stops before the run's end", cap)
	}
}
