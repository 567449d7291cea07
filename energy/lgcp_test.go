package energy

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/gfngo/gfn/internal/kernel"
)

func TestPinesChecksum(t *testing.T) {
	sum := sha256.Sum256([]byte(finpinesCSV))
	if got := hex.EncodeToString(sum[:]); got != finpinesSHA256 {
		t.Fatalf("data/finpines.csv SHA-256 = %s, want %s", got, finpinesSHA256)
	}
	pts, err := pinesPoints()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 126 {
		t.Fatalf("%d points, want 126", len(pts))
	}
	for _, grid := range []int{6, 40} {
		var total float64
		for _, c := range must(NewLGCP(grid)).Counts() {
			total += c
		}
		if total != 126 {
			t.Errorf("grid %d: counts sum to %v, want 126", grid, total)
		}
	}
}

// denseLGCP evaluates log R from the definition with no factor at all:
// K built afresh, K v = x − μ solved and log det K taken by Gaussian
// elimination with partial pivoting, the counts binned afresh.
func denseLGCP(grid int, x []float32) float64 {
	d := grid * grid
	pts, _ := pinesPoints()
	counts := make([]float64, d)
	for _, p := range pts {
		r := min(grid-1, int(p[0]*float64(grid)))
		c := min(grid-1, int(p[1]*float64(grid)))
		counts[r*grid+c]++
	}
	mu := math.Log(126) - 1.91/2
	a := make([][]float64, d)
	for i := range d {
		a[i] = make([]float64, d+1)
		for j := range d {
			dist := math.Hypot(float64(i/grid-j/grid), float64(i%grid-j%grid))
			a[i][j] = 1.91 * math.Exp(-dist*33/float64(grid))
		}
		a[i][d] = float64(x[i]) - mu
	}
	logDet := 0.0
	for c := range d {
		p := c
		for r := c + 1; r < d; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		logDet += math.Log(math.Abs(a[c][c]))
		for r := c + 1; r < d; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k <= d; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	v := make([]float64, d)
	for i := d - 1; i >= 0; i-- {
		s := a[i][d]
		for k := i + 1; k < d; k++ {
			s -= a[i][k] * v[k]
		}
		v[i] = s / a[i][i]
	}
	var quad, like float64
	for i := range d {
		quad += (float64(x[i]) - mu) * v[i]
		like += float64(x[i])*counts[i] - math.Exp(float64(x[i]))/float64(d)
	}
	return -0.5*float64(d)*math.Log(2*math.Pi) - 0.5*logDet - 0.5*quad + like
}

func TestLGCPAgainstDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	for _, grid := range []int{3, 6, 12} {
		e := must(NewLGCP(grid))
		d := e.Dim()
		const n = 7
		x := make([]float32, n*d)
		for i := range x {
			x[i] = float32(e.Mean() + 1.5*rng.NormFloat64())
		}
		out := make([]float64, n)
		e.LogReward(x, out)
		for b := range n {
			want := denseLGCP(grid, x[b*d:(b+1)*d])
			if math.Abs(out[b]-want) > 1e-10*max(1, math.Abs(want)) {
				t.Errorf("grid %d row %d: log R = %.15g, dense %.15g", grid, b, out[b], want)
			}
		}
	}
}

func TestLGCP1600(t *testing.T) {
	t0 := time.Now()
	e := LGCP{}
	d := e.Dim()
	p := e.params()
	t.Logf("d = %d: factor and inverse in %v (or cached)", d, time.Since(t0))
	if d != 1600 || math.Abs(e.Mean()-(math.Log(126)-0.955)) > 1e-15 {
		t.Fatalf("Dim %d, Mean %v", d, e.Mean())
	}
	// L·Lᵀ = K on sampled entries, and L·L⁻¹ = I on sampled entries.
	rng := rand.New(rand.NewPCG(22, 1))
	k := lgcpCovariance(40)
	for range 200 {
		i, j := rng.IntN(d), rng.IntN(d)
		if s := dot(p.chol[i*d:i*d+min(i, j)+1], p.chol[j*d:j*d+min(i, j)+1]); math.Abs(s-k[i*d+j]) > 1e-12 {
			t.Fatalf("(L·Lᵀ)[%d,%d] = %v, K = %v", i, j, s, k[i*d+j])
		}
		var s float64
		for m := range d {
			s += p.chol[i*d+m] * p.linv[m*d+j]
		}
		if want := float64(b2i(i == j)); math.Abs(s-want) > 1e-9 {
			t.Fatalf("(L·L⁻¹)[%d,%d] = %v", i, j, s)
		}
	}
	// log R of a few rows against forward substitution with L (no inverse)
	// and a direct sum of the likelihood.
	const n = 5
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(e.Mean() + 1.4*rng.NormFloat64())
	}
	out := make([]float64, n)
	e.LogReward(x, out)
	var halfLogDet float64
	for i := range d {
		halfLogDet += math.Log(p.chol[i*d+i])
	}
	for b := range n {
		w := make([]float64, d)
		var quad, like float64
		for i := range d {
			s := float64(x[b*d+i]) - e.Mean()
			for m := range i {
				s -= p.chol[i*d+m] * w[m]
			}
			w[i] = s / p.chol[i*d+i]
			quad += w[i] * w[i]
			like += float64(x[b*d+i])*p.counts[i] - math.Exp(float64(x[b*d+i]))/1600
		}
		want := -800*math.Log(2*math.Pi) - halfLogDet - quad/2 + like
		if math.Abs(out[b]-want) > 1e-11*math.Abs(want) {
			t.Errorf("row %d: log R = %.15g, forward substitution %.15g", b, out[b], want)
		}
	}
	// Gradient against central differences on 24 coordinates.
	for i, v := range x {
		x[i] = float32(math.Round(float64(v)*4096) / 4096)
	}
	coords := []int{0, 1, 39, 40, 41, 799, 800, 1559, 1560, 1599}
	for range 14 {
		coords = append(coords, rng.IntN(d))
	}
	fdCheck(t, "lgcp", e, x, n, d, 1.0/1024, coords)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestLGCPRowsIndependent(t *testing.T) {
	// A row's log R and gradient have the same bits alone, in a batch, and
	// with one core or all.
	e := must(NewLGCP(12))
	d := e.Dim()
	rng := rand.New(rand.NewPCG(23, 1))
	const n = 11
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(e.Mean() + rng.NormFloat64())
	}
	logR, grad := make([]float64, n), make([]float64, n*d)
	e.GradLogReward(x, logR, grad)
	one, g1 := make([]float64, 1), make([]float64, d)
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	for _, b := range []int{0, 5, 10} {
		e.GradLogReward(x[b*d:(b+1)*d], one, g1)
		if one[0] != logR[b] {
			t.Errorf("row %d: alone %v, in the batch %v", b, one[0], logR[b])
		}
		for j := range d {
			if g1[j] != grad[b*d+j] {
				t.Fatalf("row %d coordinate %d: gradient alone %v, in the batch %v", b, j, g1[j], grad[b*d+j])
			}
		}
	}
}

func BenchmarkLGCP(b *testing.B) {
	e := LGCP{}
	e.params()
	const n = 300
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n*e.Dim())
	for i := range x {
		x[i] = float32(e.Mean() + 1.4*rng.NormFloat64())
	}
	out, grad := make([]float64, n), make([]float64, len(x))
	b.Run("logR/rows=300", func(b *testing.B) {
		for b.Loop() {
			e.LogReward(x, out)
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/batch")
	})
	b.Run("grad/rows=300", func(b *testing.B) {
		for b.Loop() {
			e.GradLogReward(x, out, grad)
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/batch")
	})
}

// TestBandNTPackedBitIdentical: bandNT through kernel.DotQuads on B packed
// gives the bits of its scalar tiles, lower and upper, for row counts with
// and without a remainder of 8, an n that crosses a k block and is not a
// multiple of 4, one core or several.
func TestBandNTPackedBitIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	const n = 301
	b := make([]float64, n*n)
	for i := range n {
		for k := range n {
			b[i*n+k] = r.NormFloat64()
		}
	}
	lowerB, upperB := make([]float64, n*n), make([]float64, n*n)
	for i := range n {
		for k := range n {
			if k <= i {
				lowerB[i*n+k] = b[i*n+k]
			} else {
				upperB[i*n+k] = b[i*n+k]
			}
		}
	}
	for _, rows := range []int{1, 8, 13, 40} {
		a := make([]float64, rows*n)
		for i := range a {
			a[i] = r.NormFloat64()
		}
		for _, lower := range []bool{true, false} {
			bm := upperB
			if lower {
				bm = lowerB
			}
			want, got := make([]float64, rows*n), make([]float64, rows*n)
			bandNT(a, rows, bm, nil, n, lower, want)
			bandNT(a, rows, bm, kernel.PackQuads(bm, n), n, lower, got)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("rows %d lower %v: c[%d] = %v packed, %v scalar", rows, lower, i, got[i], want[i])
				}
			}
			// And against the plain product.
			for row := range rows {
				for i := range n {
					var s float64
					for k := range n {
						s += a[row*n+k] * bm[i*n+k]
					}
					if math.Abs(s-got[row*n+i]) > 1e-9*(1+math.Abs(s)) {
						t.Fatalf("rows %d lower %v: c[%d,%d] = %v, the product %v", rows, lower, row, i, got[row*n+i], s)
					}
				}
			}
		}
	}
}
