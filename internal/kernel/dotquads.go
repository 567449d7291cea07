package kernel

import "fmt"

// PackQuads returns b (n×n, row-major) packed for DotQuads: its rows in
// quads 4q..4q+3, each quad k-major, bp[(q·n + k)·4 + l] = b[(4q+l)·n + k],
// zero past the last row.
func PackQuads(b []float64, n int) []float64 {
	if len(b) < n*n {
		panic(fmt.Sprintf("kernel: PackQuads of %d values as %d×%d", len(b), n, n))
	}
	quads := (n + 3) / 4
	bp := make([]float64, quads*n*4)
	for q := range quads {
		for l := range 4 {
			i := 4*q + l
			if i >= n {
				break
			}
			row := b[i*n : (i+1)*n]
			for k, v := range row {
				bp[(q*n+k)*4+l] = v
			}
		}
	}
	return bp
}

// DotQuads adds to c[r·ldc + l], for rows r < rows and l < 4, the sum
// Σ_{k<m} a[r·lda + k]·bp[4k + l]: four dot products of each row of a with
// a quad of packed rows (PackQuads). Each sum starts from zero and takes
// its terms in k order, a product rounded and then added (no fused
// multiply-add), and is then added to c: the bits of the scalar loop
// whatever the rows' count. Rows go 8 at a time through float64 AVX, the
// rest through Go.
func DotQuads(c []float64, ldc int, a []float64, lda, rows int, bp []float64, m int) {
	if rows == 0 || m == 0 {
		return
	}
	if len(bp) < 4*m || len(a) < (rows-1)*lda+m || len(c) < (rows-1)*ldc+4 {
		panic(fmt.Sprintf("kernel: DotQuads of %d rows of %d (stride %d) with %d packed values into %d (stride %d)", rows, m, lda, len(bp), len(c), ldc))
	}
	r := 0
	if useSIMD() && rows >= 8 {
		r = rows &^ 7
		dotQuads8(&c[0], ldc, &a[0], lda, r, &bp[0], m)
	}
	for ; r < rows; r++ {
		ar := a[r*lda : r*lda+m]
		var s0, s1, s2, s3 float64
		for k, x := range ar {
			q := bp[4*k : 4*k+4]
			s0 += x * q[0]
			s1 += x * q[1]
			s2 += x * q[2]
			s3 += x * q[3]
		}
		cr := c[r*ldc : r*ldc+4]
		cr[0] += s0
		cr[1] += s1
		cr[2] += s2
		cr[3] += s3
	}
}
