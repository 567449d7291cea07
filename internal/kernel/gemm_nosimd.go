//go:build !amd64 || purego

package kernel

const hasSIMD, hasAVX512 = false, false

func gemmSIMD(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	panic("kernel: no SIMD backend in this build")
}
