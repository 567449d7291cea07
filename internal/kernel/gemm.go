package kernel

import "fmt"

// parallelMACs is the product size (m·n·k multiply-adds) above which the
// portable Go path splits the work across cores (about 75 µs of its work);
// below it, goroutine hand-off costs more than it saves. The SIMD backends,
// ten times faster, set their own threshold (microKernel.parallelMACs).
const parallelMACs = 1 << 19

// Gemm computes C = op(A)·op(B), or C += op(A)·op(B) when accumulate is true.
// op(A) is m×k and op(B) is k×n; op(X) is X, or Xᵀ when the matching trans
// flag is set. lda, ldb and ldc are the row strides of the stored matrices.
// Gemm panics if a slice is too short for the shapes given: that is a
// programmer error.
func Gemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	if m == 0 || n == 0 {
		return
	}
	checkShape("A", transA, m, k, len(a), lda)
	checkShape("B", transB, k, n, len(b), ldb)
	checkShape("C", false, m, n, len(c), ldc)
	if k == 0 {
		if !accumulate {
			for i := range m {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	if backend != BackendGo {
		gemmSIMD(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
		return
	}
	if parts := shareCount(); parts > 1 && m >= 2*parts && m*n*k >= parallelMACs {
		gemmParallel(parts, transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
		return
	}
	gemmRange(transA, transB, 0, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
}

func checkShape(name string, trans bool, rows, cols, length, ld int) {
	if trans {
		rows, cols = cols, rows
	}
	if ld < cols || (rows > 0 && length < (rows-1)*ld+cols) {
		panic(fmt.Sprintf("kernel: %s of %d×%d with stride %d does not fit in %d elements", name, rows, cols, ld, length))
	}
}

// gemmRange computes rows [lo, hi) of C with the portable kernels.
func gemmRange(transA, transB bool, lo, hi, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	if !accumulate {
		for i := lo; i < hi; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
	}
	switch {
	case !transA && !transB:
		gemmNN(lo, hi, n, k, a, lda, b, ldb, c, ldc)
	case transA && !transB:
		gemmTN(lo, hi, n, k, a, lda, b, ldb, c, ldc)
	case !transA && transB:
		gemmNT(lo, hi, n, k, a, lda, b, ldb, c, ldc)
	default:
		gemmTT(lo, hi, n, k, a, lda, b, ldb, c, ldc)
	}
}

// packTransposed writes Bᵀ (k×n) for B stored n×k into buf.
func packTransposed(buf *[]float32, b []float32, ldb, n, k int) []float32 {
	if cap(*buf) < k*n {
		*buf = make([]float32, k*n)
	}
	bp := (*buf)[:k*n]
	// Sequential writes and strided reads: for the few-column B of a policy
	// head (tinyNarrow) this measured about twice as fast as reading rows.
	for p := range k {
		dst := bp[p*n : (p+1)*n]
		src := b[p:]
		for j := range dst {
			dst[j] = src[j*ldb]
		}
	}
	return bp
}

// gemmParallel splits the rows of C into parts shares.
func gemmParallel(parts int, transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	j := newJob()
	chunk := (m + parts - 1) / parts
	for lo := 0; lo < m; lo += chunk {
		j.add(share{run: runPortable, transA: transA, transB: transB, lo: lo, hi: min(lo+chunk, m),
			n: n, k: k, a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc, accumulate: accumulate})
	}
	j.run()
}

func runPortable(s share, _ *scratch) {
	gemmRange(s.transA, s.transB, s.lo, s.hi, s.n, s.k, s.a, s.lda, s.b, s.ldb, s.c, s.ldc, s.accumulate)
}
