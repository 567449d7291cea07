package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// refGemm is the textbook triple loop in float64.
func refGemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, acc bool) {
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			if acc {
				s += float64(c[i*ldc+j])
			}
			c[i*ldc+j] = float32(s)
		}
	}
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// stored returns the stored shapes of op(A) (m×k) and op(B) (k×n).
func stored(tA, tB bool, m, n, k int) (ra, ca, rb, cb int) {
	ra, ca, rb, cb = m, k, k, n
	if tA {
		ra, ca = k, m
	}
	if tB {
		rb, cb = n, k
	}
	return
}

// near reports whether a product element summed over k terms is within
// float32 rounding of the float64 reference.
func near(got, want float32, k int) bool {
	return math.Abs(float64(got-want)) <= 1e-4*math.Sqrt(float64(k))*(1+math.Abs(float64(want)))
}

func TestGemmMatchesReference(t *testing.T) {
	for _, be := range Available() {
		t.Run(string(be), func(t *testing.T) {
			prev := Use(be)
			defer Use(prev)
			testGemmMatchesReference(t)
		})
	}
}

func testGemmMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 3, 17, 64, 255, 257}
	if testing.Short() {
		sizes = []int{1, 3, 17, 64}
	}
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			for _, m := range sizes {
				for _, n := range []int{1, 3, 17, 257} {
					for _, k := range []int{1, 3, 17, 255} {
						for _, acc := range []bool{false, true} {
							name := fmt.Sprintf("tA=%v/tB=%v/%dx%dx%d/acc=%v", tA, tB, m, n, k, acc)
							ra, ca, rb, cb := stored(tA, tB, m, n, k)
							lda, ldb, ldc := ca+1, cb+2, n+3 // strides wider than the rows
							a := randSlice(r, ra*lda)
							b := randSlice(r, rb*ldb)
							c := randSlice(r, m*ldc)
							want := append([]float32(nil), c...)
							refGemm(tA, tB, m, n, k, a, lda, b, ldb, want, ldc, acc)
							Gemm(tA, tB, m, n, k, a, lda, b, ldb, c, ldc, acc)
							for i := range m {
								for j := range n {
									g, w := c[i*ldc+j], want[i*ldc+j]
									if !near(g, w, k) {
										t.Fatalf("%s: C[%d,%d] = %v, want %v", name, i, j, g, w)
									}
								}
								// Padding between rows must be untouched.
								for j := n; j < ldc && i < m-1; j++ {
									if c[i*ldc+j] != want[i*ldc+j] {
										t.Fatalf("%s: wrote padding C[%d,%d]", name, i, j)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmPartialPanels covers the row counts that leave a partial
// micro-panel (AVX-512: read in place by the 4-, 2- and 1-row kernels; AVX2:
// packed and zero-padded), with full and partial column panels and more than
// one k block, so that a later block accumulates onto the first.
func TestGemmPartialPanels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, be := range Available() {
		prev := Use(be)
		for _, m := range []int{1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 13, 15, 20, 23} {
			// 96, 160 and 200 leave columns past the wide kernels' last
			// full stretch (200 also a partial panel).
			for _, n := range []int{32, 40, 64, 96, 160, 200, 256} {
				for _, k := range []int{256, 300, 600} {
					for _, tA := range []bool{false, true} {
						ra, ca, _, _ := stored(tA, false, m, n, k)
						a := randSlice(r, ra*ca)
						b := randSlice(r, k*n)
						for _, acc := range []bool{false, true} {
							c := randSlice(r, m*n)
							want := append([]float32(nil), c...)
							refGemm(tA, false, m, n, k, a, ca, b, n, want, n, acc)
							Gemm(tA, false, m, n, k, a, ca, b, n, c, n, acc)
							for i, w := range want {
								if !near(c[i], w, k) {
									Use(prev)
									t.Fatalf("%s: tA=%v %dx%dx%d acc=%v: C[%d,%d] = %v, want %v", be, tA, m, n, k, acc, i/n, i%n, c[i], w)
								}
							}
						}
					}
				}
			}
		}
		Use(prev)
	}
}

// TestGemmRowsIndependentOfBatch checks that a row of X·W comes out bit for
// bit the same whether it is computed alone or among other rows: reusing the
// sampling pass's activations (few rows per step) for the training pass
// (many rows) is exact only then.
func TestGemmRowsIndependentOfBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, be := range Available() {
		prev := Use(be)
		// n = 3 and 5: a policy head's logits.
		for _, kn := range [][2]int{{64, 256}, {300, 256}, {256, 224}, {256, 3}, {300, 5}} {
			k, n := kn[0], kn[1]
			const m = 40 // above a micro-panel width, so narrow outputs are not "tiny"
			a := randSlice(r, m*k)
			b := randSlice(r, k*n)
			all := make([]float32, m*n)
			Gemm(false, false, m, n, k, a, k, b, n, all, n, false)
			for _, rows := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 14, 16} {
				part := make([]float32, rows*n)
				for i0 := 0; i0+rows <= m; i0 += rows {
					Gemm(false, false, rows, n, k, a[i0*k:], k, b, n, part, n, false)
					for q, v := range part {
						if w := all[i0*n+q]; v != w {
							Use(prev)
							t.Fatalf("%s k=%d: row %d computed in %d rows = %v, among %d rows = %v", be, k, i0+q/n, rows, v, m, w)
						}
					}
				}
			}
		}
		Use(prev)
	}
}

// TestGemmSplitAcrossCores covers products large enough to be split over
// goroutines, by rows and (few rows, many columns) by columns, whatever
// GOMAXPROCS the test runs with.
func TestGemmSplitAcrossCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	r := rand.New(rand.NewPCG(7, 8))
	for _, be := range Available() {
		prev := Use(be)
		for _, s := range [][3]int{{600, 100, 200}, {100, 300, 300}, {1030, 70, 130}} {
			m, n, k := s[0], s[1], s[2]
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}} {
				tA, tB := tr[0], tr[1]
				ra, ca, rb, cb := stored(tA, tB, m, n, k)
				a, b := randSlice(r, ra*ca), randSlice(r, rb*cb)
				for _, acc := range []bool{false, true} {
					c := randSlice(r, m*n)
					want := append([]float32(nil), c...)
					refGemm(tA, tB, m, n, k, a, ca, b, cb, want, n, acc)
					one := append([]float32(nil), c...)
					Gemm(tA, tB, m, n, k, a, ca, b, cb, c, n, acc)
					for i, w := range want {
						if !near(c[i], w, k) {
							Use(prev)
							t.Fatalf("%s: tA=%v tB=%v %dx%dx%d acc=%v: C[%d,%d] = %v, want %v", be, tA, tB, m, n, k, acc, i/n, i%n, c[i], w)
						}
					}
					// The split must not change a bit: runs are reproducible
					// whatever the number of cores.
					procs := runtime.GOMAXPROCS(1)
					Gemm(tA, tB, m, n, k, a, ca, b, cb, one, n, acc)
					runtime.GOMAXPROCS(procs)
					if !slices.Equal(one, c) {
						Use(prev)
						t.Fatalf("%s: tA=%v tB=%v %dx%dx%d acc=%v: split product differs from the one on one core", be, tA, tB, m, n, k, acc)
					}
				}
			}
		}
		Use(prev)
	}
}

// TestGemmSplitConcurrentCallers runs split products from several
// goroutines at once, more than there are cores: every product must still
// come out as when computed alone.
func TestGemmSplitConcurrentCallers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const m, n, k, callers = 600, 128, 128, 4
	r := rand.New(rand.NewPCG(9, 10))
	b := randSlice(r, k*n)
	var as, want [callers][]float32
	for i := range callers {
		as[i] = randSlice(r, m*k)
		want[i] = make([]float32, m*n)
		Gemm(false, false, m, n, k, as[i], k, b, n, want[i], n, false)
	}
	errs := make(chan string, callers)
	for i := range callers {
		go func() {
			c := make([]float32, m*n)
			for range 20 {
				Gemm(false, false, m, n, k, as[i], k, b, n, c, n, false)
				if !slices.Equal(c, want[i]) {
					errs <- fmt.Sprintf("caller %d: product differs from the one computed alone", i)
					return
				}
			}
			errs <- ""
		}()
	}
	for range callers {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

// TestGemmSplitDoesNotAllocate: a product split across cores starts its
// goroutines and waits for them without allocating.
func TestGemmSplitDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(11, 12))
	runtime.GC() // not during the measurement: a collection empties pools
	for _, be := range Available() {
		prev := Use(be)
		// Square, so that one stride fits every transposition, and just
		// large enough to be split.
		m := 208
		if be == BackendGo {
			m = 96
		}
		a, b, c := randSlice(r, m*m), randSlice(r, m*m), make([]float32, m*m)
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}} {
			f := func() { Gemm(tr[0], tr[1], m, m, m, a, m, b, m, c, m, false) }
			for range 10 { // grow the packing space (one per P)
				f()
			}
			// Blocking waits draw the runtime's wait descriptors (sudogs)
			// from per-P caches of at most 128 and a central one; as the
			// waiting goroutine changes P, up to a few hundred are made
			// before they circulate. Over 2000 products that stays below
			// 0.25 per product, where go statements with arguments made 3.
			if allocs := mallocsPerRun(2000, f); allocs > 0.25 {
				t.Errorf("%s tA=%v tB=%v: %.2f allocations per product", be, tr[0], tr[1], allocs)
			}
		}
		Use(prev)
	}
}

// mallocsPerRun is testing.AllocsPerRun without its GOMAXPROCS(1), which
// would keep products from being split.
func mallocsPerRun(runs int, f func()) float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(runs)
}

func TestGemmPanicsOnShortSlice(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Gemm did not panic on a short slice")
		}
	}()
	Gemm(false, false, 2, 2, 2, make([]float32, 3), 2, make([]float32, 4), 2, make([]float32, 4), 2, false)
}

// benchGemm times f (Gemm or GemmBF16) on one product and reports its
// rate in GFLOP/s.
func benchGemm(b *testing.B, f func(bool, bool, int, int, int, []float32, int, []float32, int, []float32, int, bool), tA, tB bool, m, n, k int) {
	r := rand.New(rand.NewPCG(1, 2))
	ra, ca, rb, cb := stored(tA, tB, m, n, k)
	a := randSlice(r, ra*ca)
	bb := randSlice(r, rb*cb)
	c := make([]float32, m*n)
	b.ResetTimer()
	for b.Loop() {
		f(tA, tB, m, n, k, a, ca, bb, cb, c, n, false)
	}
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// benchShapes are the batch×out×in shapes of BenchmarkGemm and
// BenchmarkGemmBF16: the issues' 4096×256×256, 300×64×64 and
// 500×1024×1024; 1, 4, 13 and 16×256×256, late sampling steps, where a
// handful of distinct states is left (a partial micro-panel, alone or
// after a full one); and the SSR policy's products in a sequence task's
// training step on 32 trajectories (its distinct nodes, or distinct
// parents, times H = E): sEHstr 4848 and 175 × 1024, QM9str 2061 × 1024,
// TFbind8 1228 × 128 and L14-RNA1 2763 × 128.
var benchShapes = [][3]int{{4096, 256, 256}, {300, 64, 64}, {500, 1024, 1024},
	{16, 256, 256}, {4, 256, 256}, {1, 256, 256}, {13, 256, 256},
	{4848, 1024, 1024}, {175, 1024, 1024}, {2061, 1024, 1024}, {1228, 128, 128}, {2763, 128, 128}}

// benchProducts runs f on a layer's three products for every shape of
// benchShapes, as sub-benchmarks named product/shape (X·W, Xᵀ·dY, dY·Wᵀ):
// Xᵀ·dY's result is in×out with the batch summed over.
func benchProducts(b *testing.B, f func(bool, bool, int, int, int, []float32, int, []float32, int, []float32, int, bool)) {
	for _, s := range benchShapes {
		for _, tr := range []struct {
			name   string
			tA, tB bool
		}{{"XW", false, false}, {"XtDY", true, false}, {"DYWt", false, true}} {
			m, n, k := s[0], s[1], s[2]
			if tr.tA {
				m, n, k = s[1], s[2], s[0]
			}
			b.Run(fmt.Sprintf("%s/%dx%dx%d", tr.name, s[0], s[1], s[2]), func(b *testing.B) {
				benchGemm(b, f, tr.tA, tr.tB, m, n, k)
			})
		}
	}
}

// BenchmarkGemm times float32 products; BenchmarkGemmBF16 has the same
// sub-benchmarks, so that
//
//	benchstat -col .name file
//
// sets the two precisions side by side.
func BenchmarkGemm(b *testing.B) { benchProducts(b, Gemm) }

// TestGemmRowsInPlaceBitIdentical: the AVX2 backend's reading of a
// row-major A in place, and its packing of a wide row-major B, give the
// bits of packing A and reading B in place, on full and partial
// micro-panels and B panels, several k blocks and row blocks, storing and
// accumulating.
func TestGemmRowsInPlaceBitIdentical(t *testing.T) {
	if !hasSIMD {
		t.Skip("no AVX2 backend")
	}
	defer Use(Use(backendAVX2))
	r := rand.New(rand.NewPCG(51, 52))
	for _, s := range [][3]int{{4, 16, 8}, {7, 33, 65}, {300, 64, 64}, {129, 40, 300}, {261, 17, 513}, {40, 70, 520}, {131, 300, 1030}} {
		m, n, k := s[0], s[1], s[2]
		for _, tB := range []bool{false, true} {
			_, _, rb, cb := stored(false, tB, m, n, k)
			lda, ldc := k+3, n+1
			a, b := randSlice(r, m*lda), randSlice(r, rb*cb)
			c0 := randSlice(r, m*ldc)
			for _, acc := range []bool{false, true} {
				packed, inPlace := slices.Clone(c0), slices.Clone(c0)
				noRowsInPlace, noPackWideB = true, true
				Gemm(false, tB, m, n, k, a, lda, b, cb, packed, ldc, acc)
				noRowsInPlace, noPackWideB = false, false
				Gemm(false, tB, m, n, k, a, lda, b, cb, inPlace, ldc, acc)
				for i := range packed {
					if math.Float32bits(packed[i]) != math.Float32bits(inPlace[i]) {
						t.Fatalf("%dx%dx%d tB=%v acc=%v: C[%d] = %v in place, %v packed", m, n, k, tB, acc, i, inPlace[i], packed[i])
					}
				}
			}
		}
	}
}
