package kernel

import "math"

// The "fma" path of GemmBF16, for CPUs with AVX2 and FMA but neither
// AVX512_BF16 nor AMX-BF16 (AMD Zen 2 and 3, Intel before Cooper Lake).
// Both operands are rounded to bfloat16 into float32 copies and multiplied
// by the float32 kernel: a product of two bfloat16 values has at most 16
// significant bits, so the FMA's product is exact as VDPBF16PS's is, and
// only the summation order differs (the float32 kernel's k blocks of
// kcBlock values). It is float32 Gemm's speed less the rounding pass over
// the operands, so bfloat16 results can be had, and checked, on any x86-64
// CPU of the last decade; it is not faster than float32.

// bf16FMA selects the fma path (set by init where the float32 kernel has
// SIMD and the CPU has no bfloat16 instructions; tests switch it).
var bf16FMA bool

// bf16Asm8 selects roundBF16s8 for whole groups of 8 values (tests clear it
// to compare with the Go loop).
var bf16Asm8 = true

// gemmBF16FMA is GemmBF16 (shapes checked, m, n, k > 0) on the float32
// kernel, through rounded compact copies of op(A) and op(B) as stored.
func gemmBF16FMA(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	s := scratchPool.Get().(*scratch)
	ra, ca := m, k
	if transA {
		ra, ca = k, m
	}
	rb, cb := k, n
	if transB {
		rb, cb = n, k
	}
	ah := roundStored(&s.rA, a, ra, ca, lda)
	bh := roundStored(&s.rB, b, rb, cb, ldb)
	gemmSIMD(transA, transB, m, n, k, ah, ca, bh, cb, c, ldc, accumulate)
	scratchPool.Put(s)
}

// roundStored rounds the rows×cols matrix stored in x with stride ld into
// buf, compactly (stride cols), in one pass where x is contiguous.
func roundStored(buf *[]float32, x []float32, rows, cols, ld int) []float32 {
	h := growF32s(buf, rows*cols)
	if ld == cols {
		roundBF16s(h, x[:rows*cols])
		return h
	}
	for i := range rows {
		roundBF16s(h[i*cols:(i+1)*cols], x[i*ld:i*ld+cols])
	}
	return h
}

// roundBF16s sets dst[i] to src[i] rounded to the nearest bfloat16 (as
// bf16Round) and widened back to float32, with bfloat16 subnormals made
// zeros of their sign, as the bfloat16 instructions read them.
func roundBF16s(dst, src []float32) {
	dst = dst[:len(src)]
	if n := len(src) &^ 7; n > 0 && hasSIMD && bf16Asm8 {
		roundBF16s8(&dst[0], &src[0], n)
		dst, src = dst[n:], src[n:]
	}
	for i, x := range src {
		h := bf16Round(x)
		if h&0x7f80 == 0 {
			h &= 0x8000
		}
		dst[i] = math.Float32frombits(h << 16)
	}
}
