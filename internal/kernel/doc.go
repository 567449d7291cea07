// Package kernel is the single entry point for dense float32 matrix products
// used by package nn. Keeping every product behind Gemm lets faster backends
// (SIMD assembly) replace the portable Go loops without touching the layers.
//
// All matrices are row-major. Gemm splits large products across the
// available cores; small ones run on the calling goroutine.
package kernel
