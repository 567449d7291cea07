//go:build !amd64 || purego

package kernel

const hasSIMD = false

func gemmSIMD(transA bool, lo, hi, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	panic("kernel: no SIMD backend in this build")
}
