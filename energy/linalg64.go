package energy

import (
	"fmt"
	"github.com/gfngo/gfn/internal/kernel"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Dense float64 linear algebra for the LGCP target: a Cholesky factor and
// the inverse of a triangular matrix, computed once at construction, and
// the batched triangular products that evaluate the Gaussian prior on a
// batch. All matrices are row-major n×n []float64.

// cholesky returns the lower-triangular L with L·Lᵀ = a (a is symmetric
// positive definite, only its lower triangle is read). The upper triangle
// of L is zero. It fails, naming the pivot, if a is not numerically
// positive definite.
func cholesky(a []float64, n int) ([]float64, error) {
	l := make([]float64, n*n)
	for j := range n {
		lj := l[j*n : j*n+j]
		d := a[j*n+j] - dot(lj, lj)
		if !(d > 0) {
			return nil, fmt.Errorf("energy: covariance is not positive definite (pivot %d is %g)", j, d)
		}
		djj := math.Sqrt(d)
		l[j*n+j] = djj
		// Rows below j: independent dot products, split across cores when
		// the column is long enough to pay for it.
		parallelRange(j+1, n, 64, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				li := l[i*n : i*n+j]
				l[i*n+j] = (a[i*n+j] - dot(li, lj)) / djj
			}
		})
	}
	return l, nil
}

// invLower returns L⁻¹ (lower triangular) for a lower-triangular L with a
// positive diagonal. Column j of the inverse solves L·m = e_j by forward
// substitution; the columns are independent and are split across cores.
func invLower(l []float64, n int) []float64 {
	m := make([]float64, n*n)
	parallelRange(0, n, 1, func(lo, hi int) {
		col := make([]float64, n)
		for j := lo; j < hi; j++ {
			clear(col)
			col[j] = 1 / l[j*n+j]
			for i := j + 1; i < n; i++ {
				col[i] = -dot(l[i*n+j:i*n+i], col[j:i]) / l[i*n+i]
			}
			for i := j; i < n; i++ {
				m[i*n+j] = col[i]
			}
		}
	})
	return m
}

// transpose returns the n×n transpose of a.
func transpose(a []float64, n int) []float64 {
	t := make([]float64, n*n)
	for i := range n {
		for j := range n {
			t[j*n+i] = a[i*n+j]
		}
	}
	return t
}

// dot returns Σ a_k b_k over len(a) terms (b at least as long), with four
// independent partial sums.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(a); k += 4 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
		s2 += a[k+2] * b[k+2]
		s3 += a[k+3] * b[k+3]
	}
	for ; k < len(a); k++ {
		s0 += a[k] * b[k]
	}
	return (s0 + s1) + (s2 + s3)
}

// parallelRange calls f on consecutive shares of [lo, hi) on up to
// GOMAXPROCS goroutines, none smaller than minShare.
func parallelRange(lo, hi, minShare int, f func(lo, hi int)) {
	n := hi - lo
	p := min(runtime.GOMAXPROCS(0), n/max(1, minShare))
	if p <= 1 {
		if n > 0 {
			f(lo, hi)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range p {
		a, b := lo+n*w/p, lo+n*(w+1)/p
		wg.Go(func() { f(a, b) })
	}
	wg.Wait()
}

// bandNT computes c[r·n+i] = Σ_{k ∈ band(i)} a[r·n+k]·b[i·n+k] for the
// rows r < rows of a (rows×n) and the rows i < n of b (n×n): C = A·Bᵀ where
// row i of B is zero outside its band, [0, i+1) if lower, else [i, n). With
// B = L⁻¹ it maps a batch of residuals to whitened residuals; with B = L⁻ᵀ
// it maps those back through L⁻ᵀ.
//
// The k dimension is cut into blocks of kBlock columns; a block of A
// (rows·kBlock values) stays in L2 while every core runs over its share of
// B's rows in 2×4 register tiles (2 rows of A, 4 of B: eight accumulators
// and six operands fit the 15 usable SSE registers). Each entry is summed
// in k order within a block and the blocks are added in order, so the
// result does not depend on how the work is split across cores, nor on the
// other rows of A. Products with B's stored zeros add exact zeros.
//
// bp, if not nil, is B packed by kernel.PackQuads: full quads of B's rows
// then go through kernel.DotQuads (8 rows of A at a time in AVX, the same
// bits).
func bandNT(a []float64, rows int, b, bp []float64, n int, lower bool, c []float64) {
	const kBlock = 256
	clear(c[:rows*n])
	if rows == 0 {
		return
	}
	quads := (n + 3) / 4
	p := runtime.GOMAXPROCS(0)
	if rows*n*n < 1<<20 {
		p = 1
	}
	for k0 := 0; k0 < n; k0 += kBlock {
		k1 := min(k0+kBlock, n)
		// The quads whose band meets [k0, k1).
		qlo, qhi := 0, quads
		if lower {
			qlo = k0 / 4 // rows i ≥ k0 have band [0, i+1) ⊇ [k0, ·)
		} else {
			qhi = min(quads, (k1+3)/4) // rows i < k1 have band [i, n)
		}
		var next atomic.Int64
		next.Store(int64(qlo))
		work := func() {
			for {
				q := int(next.Add(1)) - 1
				if q >= qhi {
					return
				}
				i0 := 4 * q
				i1 := min(i0+4, n)
				lo, hi := k0, k1
				if lower {
					hi = min(hi, i1) // rows i0..i1−1 are zero from column i1
				} else {
					lo = max(lo, i0) // rows i0..i1−1 are zero before column i0
				}
				if lo < hi {
					bandTile(a, rows, b, bp, n, i0, i1, lo, hi, c)
				}
			}
		}
		if p <= 1 {
			work()
			continue
		}
		var wg sync.WaitGroup
		for range min(p, qhi-qlo) {
			wg.Go(work)
		}
		wg.Wait()
	}
}

// bandTile adds to the columns i0..i1−1 (at most 4) of C, for every row of
// A, the sums over k ∈ [klo, khi).
func bandTile(a []float64, rows int, b, bp []float64, n, i0, i1, klo, khi int, c []float64) {
	if bp != nil && i1-i0 == 4 {
		kernel.DotQuads(c[i0:], n, a[klo:], n, rows, bp[(i0*n+4*klo):], khi-klo)
		return
	}
	if i1-i0 < 4 {
		for r := range rows {
			ar := a[r*n+klo : r*n+khi]
			for i := i0; i < i1; i++ {
				c[r*n+i] += serialDot(ar, b[i*n+klo:i*n+khi])
			}
		}
		return
	}
	m := khi - klo
	b0 := b[i0*n+klo : i0*n+khi][:m]
	b1 := b[(i0+1)*n+klo : (i0+1)*n+khi][:m]
	b2 := b[(i0+2)*n+klo : (i0+2)*n+khi][:m]
	b3 := b[(i0+3)*n+klo : (i0+3)*n+khi][:m]
	r := 0
	for ; r+2 <= rows; r += 2 {
		a0 := a[r*n+klo : r*n+khi][:m]
		a1 := a[(r+1)*n+klo : (r+1)*n+khi][:m]
		var c00, c01, c02, c03, c10, c11, c12, c13 float64
		for k := range b0 {
			x0, x1 := a0[k], a1[k]
			y0, y1, y2, y3 := b0[k], b1[k], b2[k], b3[k]
			c00 += x0 * y0
			c01 += x0 * y1
			c02 += x0 * y2
			c03 += x0 * y3
			c10 += x1 * y0
			c11 += x1 * y1
			c12 += x1 * y2
			c13 += x1 * y3
		}
		c0 := c[r*n+i0 : r*n+i0+4]
		c0[0] += c00
		c0[1] += c01
		c0[2] += c02
		c0[3] += c03
		c1 := c[(r+1)*n+i0 : (r+1)*n+i0+4]
		c1[0] += c10
		c1[1] += c11
		c1[2] += c12
		c1[3] += c13
	}
	for ; r < rows; r++ {
		ar := a[r*n+klo : r*n+khi]
		for i := i0; i < i1; i++ {
			c[r*n+i] += serialDot(ar, b[i*n+klo:i*n+khi])
		}
	}
}

// serialDot returns Σ a_k b_k summed in k order, the order of bandTile's
// register tiles, so that every entry of C has the same rounding whether
// its row falls in a tile or in the remainder.
func serialDot(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for k, v := range a {
		s += v * b[k]
	}
	return s
}
