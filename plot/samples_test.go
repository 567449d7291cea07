package plot

import (
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gmm25 is the log density of the 25-component Gaussian mixture with
// means {-10, -5, 0, 5, 10}² and variance 0.3, equal weights.
func gmm25(x, y float64) float64 {
	const v = 0.3
	m := math.Inf(-1)
	var terms [25]float64
	k := 0
	for i := -2; i <= 2; i++ {
		for j := -2; j <= 2; j++ {
			dx, dy := x-5*float64(i), y-5*float64(j)
			terms[k] = -(dx*dx + dy*dy) / (2 * v)
			m = math.Max(m, terms[k])
			k++
		}
	}
	s := 0.0
	for _, t := range terms {
		s += math.Exp(t - m)
	}
	return m + math.Log(s) - math.Log(25*2*math.Pi*v)
}

// gmm25Samples draws n exact samples of gmm25.
func gmm25Samples(rng *rand.Rand, n int) [][2]float32 {
	sd := math.Sqrt(0.3)
	pts := make([][2]float32, n)
	for i := range pts {
		cx, cy := 5*float64(rng.IntN(5)-2), 5*float64(rng.IntN(5)-2)
		pts[i] = [2]float32{float32(cx + sd*rng.NormFloat64()), float32(cy + sd*rng.NormFloat64())}
	}
	return pts
}

func decodeImage(t *testing.T, path string) image.Image {
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
	return img
}

// colours counts the pixels that are white, shaded by the density (pale
// blue: blue above red) and dotted (red well above blue).
func colours(img image.Image) (white, shaded, dotted int) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			switch {
			case r == 255 && g == 255 && bl == 255:
				white++
			case bl > r+20 && r > 120:
				shaded++
			case r > bl+40:
				dotted++
			}
		}
	}
	return white, shaded, dotted
}

func TestSamplesOnDensity(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	target := gmm25Samples(rng, 2000)
	// A student that found only the modes with x > 0, and a stray point.
	var student [][2]float32
	for _, p := range target {
		if p[0] > 2 {
			student = append(student, p)
		}
	}
	student = append(student, [2]float32{20, 0}, [2]float32{float32(math.NaN()), 0})
	p := filepath.Join(t.TempDir(), "s.png")
	opt := DensityOptions{XMin: -13, XMax: 13, YMin: -13, YMax: 13, Grid: 100}
	err := SamplesOnDensity(p, []SamplePanel{{"target (exact)", target}, {"Student", student}, {"Teacher", nil}}, gmm25, opt)
	if err != nil {
		t.Fatal(err)
	}
	img := decodeImage(t, p)
	if b := img.Bounds(); b.Dx() < 2*b.Dy() {
		t.Errorf("3 panels drawn %d×%d, want a wide image", b.Dx(), b.Dy())
	}
	white, shaded, dotted := colours(img)
	if white == 0 || shaded == 0 || dotted == 0 {
		t.Errorf("%d white, %d shaded, %d dotted pixels: want all three", white, shaded, dotted)
	}

	// Without points nothing is red, so the dots above came from the points.
	if err := SamplesOnDensity(p, []SamplePanel{{"empty", nil}}, gmm25, opt); err != nil {
		t.Fatal(err)
	}
	if _, shaded, dotted := colours(decodeImage(t, p)); shaded == 0 || dotted != 0 {
		t.Errorf("no points: %d shaded, %d dotted pixels; want some and none", shaded, dotted)
	}
}

func TestSamplesOnDensityRectangularBox(t *testing.T) {
	manywell := func(a, b float64) float64 { return -a*a*a*a + 6*a*a + 0.5*a - 0.5*b*b }
	rng := rand.New(rand.NewPCG(1, 2))
	pts := make([][2]float32, 500)
	for i := range pts {
		pts[i] = [2]float32{float32(1.7 + 0.3*rng.NormFloat64()), float32(rng.NormFloat64())}
	}
	p := filepath.Join(t.TempDir(), "m.png")
	opt := DensityOptions{XMin: -3, XMax: 3, YMin: -4, YMax: 4, XLabel: "x1", YLabel: "x2", Grid: 80}
	if err := SamplesOnDensity(p, []SamplePanel{{"Student", pts}}, manywell, opt); err != nil {
		t.Fatal(err)
	}
	if b := decodeImage(t, p).Bounds(); b.Dx() > b.Dy() || b.Dy() > b.Dx()*5/4 {
		t.Errorf("one panel drawn %d×%d, want a square with a caption below", b.Dx(), b.Dy())
	}
}

func TestSamplesOnDensityErrors(t *testing.T) {
	p := filepath.Join(t.TempDir(), "e.png")
	box := DensityOptions{XMin: -1, XMax: 1, YMin: -1, YMax: 1, Grid: 4}
	one := []SamplePanel{{"a", nil}}
	with := func(f func(*DensityOptions)) DensityOptions { o := box; f(&o); return o }
	for _, c := range []struct {
		name    string
		panels  []SamplePanel
		density Density2D
		opt     DensityOptions
		want    string // in the message
	}{
		{"no panels", nil, gmm25, box, "no panels"},
		{"nil density", one, nil, box, "nil density"},
		{"empty x", one, gmm25, with(func(o *DensityOptions) { o.XMin = 1 }), "[1, 1]"},
		{"reversed y", one, gmm25, with(func(o *DensityOptions) { o.YMin, o.YMax = 2, -2 }), "[2, -2]"},
		{"NaN box", one, gmm25, with(func(o *DensityOptions) { o.XMax = math.NaN() }), "NaN"},
		{"infinite box", one, gmm25, with(func(o *DensityOptions) { o.YMin = math.Inf(-1) }), "-Inf"},
		{"grid 1", one, gmm25, with(func(o *DensityOptions) { o.Grid = 1 }), "1 points"},
		{"negative depth", one, gmm25, with(func(o *DensityOptions) { o.Depth = -3 }), "-3"},
		{"negative levels", one, gmm25, with(func(o *DensityOptions) { o.Levels = -2 }), "-2"},
		{"NaN density", one, func(x, y float64) float64 { return math.NaN() }, box, "NaN at"},
		{"zero density", one, func(x, y float64) float64 { return math.Inf(-1) }, box, "-Inf everywhere"},
	} {
		err := SamplesOnDensity(p, c.panels, c.density, c.opt)
		if err == nil || !strings.HasPrefix(err.Error(), "plot: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one starting \"plot: \" containing %q", c.name, err, c.want)
		}
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("file written for bad input: %v", err)
	}
}

func TestContourLevels(t *testing.T) {
	for _, c := range []struct {
		zmin, zmax, depth float64
		n                 int
	}{
		{-40, -3.9, 12, 6}, // deep data: the levels span depth
		{-2, 1, 12, 6},     // shallow data: the levels span the data
		{0, 1e-9, 12, 1},
	} {
		ls := contourLevels(c.zmin, c.zmax, c.depth, c.n)
		if len(ls) != c.n {
			t.Fatalf("%+v: %d levels", c, len(ls))
		}
		for i, l := range ls {
			if !(l > c.zmin && l < c.zmax) || l < c.zmax-c.depth {
				t.Errorf("%+v: level %v outside (max(%v, zmax-depth), %v)", c, l, c.zmin, c.zmax)
			}
			if i > 0 && !(l > ls[i-1]) {
				t.Errorf("%+v: levels %v not increasing", c, ls)
			}
		}
	}
	if ls := contourLevels(2, 2, 12, 6); ls != nil {
		t.Errorf("flat density: levels %v, want none", ls)
	}
}

func TestDensityGridCoversBox(t *testing.T) {
	opt := DensityOptions{XMin: -3, XMax: 3, YMin: -4, YMax: 4, Grid: 10, Depth: 5}
	f := func(x, y float64) float64 {
		if x < 0 {
			return math.Inf(-1)
		}
		return -y * y
	}
	g, err := newDensityGrid(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	c, r := g.Dims()
	const tol = 1e-12
	if math.Abs(g.X(0)-g.dx/2-opt.XMin) > tol || math.Abs(g.X(c-1)+g.dx/2-opt.XMax) > tol ||
		math.Abs(g.Y(0)-g.dy/2-opt.YMin) > tol || math.Abs(g.Y(r-1)+g.dy/2-opt.YMax) > tol {
		t.Errorf("cells span [%v, %v] × [%v, %v], want the box", g.X(0)-g.dx/2, g.X(c-1)+g.dx/2, g.Y(0)-g.dy/2, g.Y(r-1)+g.dy/2)
	}
	// -Inf and values far below the maximum are raised to 2·Depth below it.
	if g.Min() != g.Max()-10 || g.Z(0, 5) != g.Min() {
		t.Errorf("min %v, max %v, Z(0, 5) = %v; want min = max - 10 = Z", g.Min(), g.Max(), g.Z(0, 5))
	}
}

func TestInBoxCountsLeftOutPoints(t *testing.T) {
	nan := float32(math.NaN())
	opt := DensityOptions{XMin: -1, XMax: 1, YMin: -2, YMax: 2}
	pts := [][2]float32{{0, 0}, {1, 2}, {1.5, 0}, {0, -3}, {nan, 0}, {0, nan}}
	xys, out := inBox(pts, opt)
	if len(xys) != 2 || out != 4 {
		t.Errorf("%d in, %d out; want 2 and 4", len(xys), out)
	}
}

// The Manywell figure is the 2-D marginal of a coordinate pair: the caller
// supplies the pair's marginal log density and extracts the two
// coordinates of each sample.
func ExampleSamplesOnDensity_marginal() {
	const d, a, b = 32, 0, 1
	var samples []float32 // n×d, row-major, from the sampler
	n := len(samples) / d
	pts := make([][2]float32, n)
	for i := range pts {
		pts[i] = [2]float32{samples[i*d+a], samples[i*d+b]}
	}
	pair := func(x, y float64) float64 { return -x*x*x*x + 6*x*x + 0.5*x - 0.5*y*y }
	opt := DensityOptions{XMin: -3, XMax: 3, YMin: -4, YMax: 4}
	_ = SamplesOnDensity("manywell.png", []SamplePanel{{"Student", pts}}, pair, opt)
}
