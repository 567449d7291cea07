// Package kernel is the single entry point for dense float32 matrix products
// used by package nn. Keeping every product behind Gemm lets faster backends
// (SIMD assembly) replace the portable Go loops without touching the layers.
//
// All matrices are row-major. Gemm splits large products across the
// available cores, a goroutine per share, without allocating; small ones,
// and any of at most two micro-panels of rows (a sampling step), run on the
// calling goroutine. A split never changes the result: each element is
// summed in the same order whoever computes it. A row of X·W (A not
// transposed) comes out with the same bits whatever the other rows are:
// wide outputs through kernels that sum each element in k order, narrow
// ones (a policy's logits) as dot products. So a network's passes recorded
// step by step while sampling equal one training pass over the batch.
//
// GemmBF16 is Gemm with both operands rounded to bfloat16 and float32 sums,
// on AMX-BF16 tiles where the CPU has them and Linux grants the tile state,
// else on AVX512_BF16's VDPBF16PS, else as Gemm on operands rounded to
// bfloat16 (AVX2 and FMA), else in portable Go; BF16Kernel names the path
// that runs, and all four keep the properties above.
//
// The element-wise kernels fuse what a layer does around its product: bias
// and LeakyReLU or GELU (forward, and backward from the saved output or
// pre-activation), the Adam update, and the float64 sum of squares of a
// gradient norm. On amd64 they run 8 lanes at a time with AVX2+FMA; the
// portable versions are the reference they are tested against. The exact
// GELU and its gradient (gelu.go) run 16 lanes with AVX-512, are split
// across cores when large, and are tested against float64 in ulps and,
// bit for bit, against a float32 model of the vector code.
//
// The float64 kernels of the diffusion samplers' Gaussian transitions
// (Gauss: sampling, scoring and the drift gradient with a fixed variance;
// BridgeSq: a Brownian bridge step's squared residual; TanhExp, Exp and
// Tanh for learned variances) run 4 lanes of AVX and keep every sum's
// order, so they give the bits of the scalar loops they replace.
package kernel
