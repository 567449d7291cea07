//go:build amd64 && !purego

package kernel

var hasSIMD bool // set by init when the CPU has AVX2 and FMA

// gemmSIMD computes rows [lo, hi) of C += op(A)·B with B stored k×n
// (callers pack a transposed B first). Columns are taken in panels of 16 so
// one k×16 panel of B stays in cache while every row block streams past it.
func gemmSIMD(transA bool, lo, hi, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	rsA, psA := lda, 1
	if transA {
		rsA, psA = 1, lda
	}
	n16 := n &^ 15
	for j := 0; j < n16; j += 16 {
		i := lo
		for ; i+4 <= hi; i += 4 {
			kern4x16(k, &a[i*rsA], rsA, psA, &b[j], ldb, &c[i*ldc+j], ldc)
		}
		for ; i < hi; i++ {
			kern1x16(k, &a[i*rsA], psA, &b[j], ldb, &c[i*ldc+j])
		}
	}
	if n16 == n {
		return
	}
	for i := lo; i < hi; i++ {
		crow := c[i*ldc+n16 : i*ldc+n]
		for p := range k {
			av := a[i*rsA+p*psA]
			brow := b[p*ldb+n16 : p*ldb+n]
			for j, bv := range brow {
				crow[j] += av * bv
			}
		}
	}
}
