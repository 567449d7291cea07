package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotQuadsMatchesLoop: on every backend, DotQuads over PackQuads's
// packing adds to C the bits of plain dot products of A's rows with B's
// rows (each from zero in k order, a product then an add), for row counts
// with and without a remainder of 8, any k range, and an n that is not a
// multiple of 4 (the last quad's missing rows are zeros).
func TestDotQuadsMatchesLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	const n = 23
	b := make([]float64, n*n)
	for i := range b {
		b[i] = r.NormFloat64()
	}
	bp := PackQuads(b, n)
	prev := Name()
	defer Use(prev)
	for _, be := range Available() {
		Use(be)
		for _, rows := range []int{0, 1, 7, 8, 9, 16, 21} {
			a := make([]float64, rows*n)
			for i := range a {
				a[i] = r.NormFloat64() * 3
			}
			for _, kr := range [][2]int{{0, n}, {3, 17}, {5, 6}} {
				klo, khi := kr[0], kr[1]
				for q := range (n + 3) / 4 {
					c := make([]float64, rows*n+4)
					want := make([]float64, len(c))
					for i := range c {
						c[i] = r.NormFloat64()
						want[i] = c[i]
					}
					for row := range rows {
						for l := range 4 {
							i := 4*q + l
							var s float64
							for k := klo; k < khi; k++ {
								bv := 0.0
								if i < n {
									bv = b[i*n+k]
								}
								s += a[row*n+k] * bv
							}
							want[row*n+4*q+l] += s
						}
					}
					if rows > 0 {
						DotQuads(c[4*q:], n, a[klo:], n, rows, bp[(q*n+klo)*4:], khi-klo)
					}
					for i := range c {
						if math.Float64bits(c[i]) != math.Float64bits(want[i]) {
							t.Fatalf("%s rows %d k [%d, %d) quad %d: c[%d] = %v, the loop %v", be, rows, klo, khi, q, i, c[i], want[i])
						}
					}
				}
			}
		}
	}
}

func BenchmarkDotQuads(b *testing.B) {
	const n, rows = 1600, 304
	bm := make([]float64, n*n)
	a := make([]float64, rows*n)
	for i := range bm {
		bm[i] = float64(i%17) / 9
	}
	for i := range a {
		a[i] = float64(i%13) / 7
	}
	bp := PackQuads(bm, n)
	c := make([]float64, rows*n)
	for b.Loop() {
		DotQuads(c[400:], n, a[100:], n, rows, bp[(100*n+100)*4:], 256)
	}
	b.ReportMetric(float64(2*rows*256*4)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
