package plot

import (
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
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
	if err := Heatmaps(p, []Panel{{"target", side, v}, {"student", side, v}, {"teacher", side, v}}, "mass", ""); err != nil {
		t.Fatal(err)
	}
	if w, h := decode(t, p); w <= 2*h {
		t.Errorf("3 panels drawn %d×%d, want a wide image", w, h)
	}
	// The colour bar under the panels runs from viridis purple to yellow.
	img := decodeImage(t, p)
	b := img.Bounds()
	var purple, yellow bool
	for y := b.Min.Y + b.Dy()*4/5; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			purple = purple || (r < 0x50 && g < 0x10 && bl > 0x50 && bl < 0x60)
			yellow = yellow || (r > 0xf0 && g > 0xe0 && bl < 0x40)
		}
	}
	if !purple || !yellow {
		t.Errorf("no colour bar under the panels: purple %v, yellow %v", purple, yellow)
	}
	if err := Heatmaps(p, nil, "mass", ""); err == nil {
		t.Error("no error for no panels")
	}
	if err := Heatmaps(p, []Panel{{"short", side, v[:3]}}, "mass", ""); err == nil {
		t.Error("no error for a panel with too few values")
	}
	if err := Heatmaps(p, []Panel{{"zero", side, make([]float64, side*side)}}, "mass", ""); err == nil {
		t.Error("no error for panels without mass")
	}
}

func TestCurves(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.png")
	s := []Series{{Name: "a", X: []float64{0, 1, 2}, Y: []float64{1, 0.1, math.NaN()}}, {Name: "b", X: []float64{0, 1}, Y: []float64{0, 2}}}
	if err := Curves(p, Chart{Title: "L1", XLabel: "reward calls", YLabel: "L1", Series: s, LogY: true}, "a caption"); err != nil {
		t.Fatal(err)
	}
	decode(t, p)
}

func TestCurvesWithoutDrawablePointsReturnsErrNoData(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.png")
	// A log axis over only NaN and non-positive values has no range.
	s := []Series{{Name: "a", X: []float64{0, 1}, Y: []float64{math.NaN(), 0}}}
	if err := Curves(p, Chart{Title: "L1", Series: s, LogY: true}, ""); !errors.Is(err, ErrNoData) {
		t.Fatalf("err %v, want ErrNoData", err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("file written for an empty plot: %v", err)
	}
}

func TestChartsWritesPNG(t *testing.T) {
	dir := t.TempDir()
	x := []float64{0, 1, 2, 3}
	charts := []Chart{
		{Title: "modes", XLabel: "round", YLabel: "modes", Series: []Series{
			{Name: "a", X: x, Y: []float64{0, 1, 2, 3}, Std: []float64{0, 0.5, 0.5, 1}},
			{Name: "b", X: x, Y: []float64{0, math.NaN(), 1, 2}},
		}},
		{Title: "elbo", Series: []Series{{Name: "a", X: x, Y: []float64{-3, -2, -1, -1}}}, Refs: []Ref{{"true log Z", 0}}},
	}
	path := filepath.Join(dir, "bands.png")
	if err := Charts(path, 2, 2, charts, ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
		t.Fatalf("not a PNG (%d bytes, %v)", len(b), err)
	}
	if err := Charts(path, 1, 1, charts, ""); err == nil {
		t.Error("two charts in a 1×1 grid must be an error")
	}
}
