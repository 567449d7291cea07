//go:build openblas

package openblas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
void openblas_set_num_threads(int);
*/
import "C"

import "unsafe"

// SetThreads sets the number of threads OpenBLAS uses.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// Sgemm computes C = op(A)·op(B) for row-major float32 matrices with
// cblas_sgemm, with the argument convention of kernel.Gemm (no accumulate).
func Sgemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	ta, tb := uint32(C.CblasNoTrans), uint32(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, C.enum_CBLAS_TRANSPOSE(ta), C.enum_CBLAS_TRANSPOSE(tb),
		C.blasint(m), C.blasint(n), C.blasint(k), 1,
		(*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb), 0,
		(*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}
