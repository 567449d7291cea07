//go:build openblas

package openblas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gfngo/gfn/internal/kernel"
)

// shapes are the benchmark shapes: a training batch, one sampling
// step of 16, and a small layer.
var shapes = [][3]int{{4096, 256, 256}, {16, 256, 256}, {300, 64, 64}}

var transpositions = []struct {
	name   string
	tA, tB bool
}{{"XW", false, false}, {"XtDY", true, false}, {"DYWt", false, true}}

func operands(r *rand.Rand, tA, tB bool, m, n, k int) (a []float32, lda int, b []float32, ldb int) {
	ra, lda := m, k
	if tA {
		ra, lda = k, m
	}
	rb, ldb := k, n
	if tB {
		rb, ldb = n, k
	}
	a, b = make([]float32, ra*lda), make([]float32, rb*ldb)
	for i := range a {
		a[i] = float32(r.NormFloat64())
	}
	for i := range b {
		b[i] = float32(r.NormFloat64())
	}
	return a, lda, b, ldb
}

// TestAgreesWithOpenBLAS checks the active kernel backend against OpenBLAS
// on odd shapes and all transpositions.
func TestAgreesWithOpenBLAS(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, s := range [][3]int{{1, 1, 1}, {3, 17, 5}, {17, 255, 257}, {257, 3, 64}, {300, 64, 64}} {
		for _, tr := range transpositions {
			m, n, k := s[0], s[1], s[2]
			a, lda, b, ldb := operands(r, tr.tA, tr.tB, m, n, k)
			want, got := make([]float32, m*n), make([]float32, m*n)
			Sgemm(tr.tA, tr.tB, m, n, k, a, lda, b, ldb, want, n)
			kernel.Gemm(tr.tA, tr.tB, m, n, k, a, lda, b, ldb, got, n, false)
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Sqrt(float64(k))*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("%s %v [%d]: kernel %v, OpenBLAS %v", tr.name, s, i, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkProducts runs each shape with OpenBLAS and with kernel.Gemm back
// to back, so that both see the same machine state.
func BenchmarkProducts(b *testing.B) {
	for _, s := range shapes {
		for _, tr := range transpositions {
			m, n, k := s[0], s[1], s[2]
			if tr.tA { // Xᵀ·dY: the result is k×n with m rows summed over
				m, n, k = s[1], s[2], s[0]
			}
			r := rand.New(rand.NewPCG(1, 2))
			a, lda, bb, ldb := operands(r, tr.tA, tr.tB, m, n, k)
			c := make([]float32, m*n)
			for _, impl := range []string{"openblas", "gfn"} {
				b.Run(fmt.Sprintf("%s/%s/%dx%dx%d", tr.name, impl, s[0], s[1], s[2]), func(b *testing.B) {
					SetThreads(runtime.GOMAXPROCS(0))
					for b.Loop() {
						if impl == "openblas" {
							Sgemm(tr.tA, tr.tB, m, n, k, a, lda, bb, ldb, c, n)
						} else {
							kernel.Gemm(tr.tA, tr.tB, m, n, k, a, lda, bb, ldb, c, n, false)
						}
					}
					b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}
