package plot

import (
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func decode(t *testing.T, path string) (w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", path, err)
	}
	b := img.Bounds()
	return b.Dx(), b.Dy()
}

func TestHeatmaps(t *testing.T) {
	side := 8
	v := make([]float64, side*side)
	for i := range v {
		v[i] = float64(i)
	}
	p := filepath.Join(t.TempDir(), "d.png")
	if err := Heatmaps(p, []Panel{{"target", side, v}, {"student", side, v}, {"teacher", side, v}}, 40); err != nil {
		t.Fatal(err)
	}
	if w, h := decode(t, p); w <= 2*h {
		t.Errorf("3 panels drawn %d×%d, want a wide image", w, h)
	}
	if err := Heatmaps(p, nil, 1); err == nil {
		t.Error("no error for no panels")
	}
}

func TestCurves(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.png")
	s := []Series{{"a", []float64{0, 1, 2}, []float64{1, 0.1, math.NaN()}}, {"b", []float64{0, 1}, []float64{0, 2}}}
	if err := Curves(p, "L1", "reward calls", "L1", s, true); err != nil {
		t.Fatal(err)
	}
	decode(t, p)
}

func TestSpreadTicksLabelSubDecadeRanges(t *testing.T) {
	var st spreadTicks
	ts := st.Ticks(0.0014, 0.0075)
	if len(ts) != 5 || ts[0].Label != "0.0014" || ts[4].Label != "0.0075" {
		t.Errorf("ticks %+v", ts)
	}
	if st.Ticks(0, 1) != nil {
		t.Error("ticks for a range including 0 on a log axis")
	}
}

func TestCurvesWithoutDrawablePointsReturnsErrNoData(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.png")
	// A log axis over only NaN and non-positive values has no range.
	s := []Series{{"a", []float64{0, 1}, []float64{math.NaN(), 0}}}
	if err := Curves(p, "L1", "reward calls", "L1", s, true); !errors.Is(err, ErrNoData) {
		t.Fatalf("err %v, want ErrNoData", err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("file written for an empty plot: %v", err)
	}
}

func TestBandGridWritesPNG(t *testing.T) {
	dir := t.TempDir()
	x := []float64{0, 1, 2, 3}
	panels := []BandPanel{
		{Title: "modes", XLabel: "round", YLabel: "modes", Bands: []Band{
			{Name: "a", X: x, Mean: []float64{0, 1, 2, 3}, Std: []float64{0, 0.5, 0.5, 1}},
			{Name: "b", X: x, Mean: []float64{0, math.NaN(), 1, 2}},
		}},
		{Title: "elbo", Bands: []Band{{Name: "a", X: x, Mean: []float64{-3, -2, -1, -1}}}},
	}
	path := filepath.Join(dir, "bands.png")
	if err := BandGrid(path, 2, 2, panels); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
		t.Fatalf("not a PNG (%d bytes, %v)", len(b), err)
	}
	if err := BandGrid(path, 1, 1, panels); err == nil {
		t.Error("two panels in a 1×1 grid must be an error")
	}
}

func TestDistinctTickLabels(t *testing.T) {
	for _, r := range [][2]float64{{11.5, 12.1}, {0.1, 0.1004}, {-3, 2}, {100, 5000}, {0, 2000}} {
		seen := map[string]bool{}
		for _, tk := range (distinctTicks{}).Ticks(r[0], r[1]) {
			if tk.Label == "" {
				continue
			}
			if seen[tk.Label] {
				t.Errorf("range %v: label %q repeats", r, tk.Label)
			}
			if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || math.Abs(v-tk.Value) > 1e-9*math.Max(1, math.Abs(tk.Value)) {
				t.Errorf("range %v: label %q for the tick at %v", r, tk.Label, tk.Value)
			}
			if strings.ContainsAny(tk.Label, "e") && r[1] < 1e6 {
				t.Errorf("range %v: label %q in exponent form", r, tk.Label)
			}
			seen[tk.Label] = true
		}
		if len(seen) < 2 {
			t.Errorf("range %v: %d labels", r, len(seen))
		}
	}
}
