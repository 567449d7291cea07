//go:build !purego

#include "textflag.h"

// func addTo8(dst, src *float32, n int)   dst[i] += src[i], n a multiple of 8
TEXT ·addTo8(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JEQ  addDone
addLoop:
	VMOVUPS (SI), Y0
	VADDPS  (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNE     addLoop
addDone:
	VZEROUPPER
	RET

// func gatherSum8(dst, table *float32, off *int, k, n int)
// dst[j] = ((+0 + table[off[0]+j]) + table[off[1]+j]) + … for j < n (a
// multiple of 8), k ≥ 1 offsets (elements). Blocks of 64 columns in Y0–Y7,
// then 8 at a time.
TEXT ·gatherSum8(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ table+8(FP), SI
	MOVQ off+16(FP), R8
	MOVQ k+24(FP), R9
	MOVQ n+32(FP), BX
	XORQ R10, R10 // column offset in bytes
gsBlock64:
	CMPQ BX, $64
	JLT  gsBlock8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ   CX, CX
gsRows64:
	MOVQ   (R8)(CX*8), AX
	LEAQ   (SI)(AX*4), DX
	ADDQ   R10, DX
	VADDPS (DX), Y0, Y0
	VADDPS 32(DX), Y1, Y1
	VADDPS 64(DX), Y2, Y2
	VADDPS 96(DX), Y3, Y3
	VADDPS 128(DX), Y4, Y4
	VADDPS 160(DX), Y5, Y5
	VADDPS 192(DX), Y6, Y6
	VADDPS 224(DX), Y7, Y7
	INCQ   CX
	CMPQ   CX, R9
	JLT    gsRows64
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ    $256, DI
	ADDQ    $256, R10
	SUBQ    $64, BX
	JMP     gsBlock64
gsBlock8:
	TESTQ BX, BX
	JEQ   gsDone
	VXORPS Y0, Y0, Y0
	XORQ   CX, CX
gsRows8:
	MOVQ   (R8)(CX*8), AX
	LEAQ   (SI)(AX*4), DX
	ADDQ   R10, DX
	VADDPS (DX), Y0, Y0
	INCQ   CX
	CMPQ   CX, R9
	JLT    gsRows8
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, R10
	SUBQ    $8, BX
	JMP     gsBlock8
gsDone:
	VZEROUPPER
	RET

// func scale8(x *float32, n int, c float32)   x[i] *= c, n a multiple of 8
TEXT ·scale8(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS c+16(FP), Y1
	SHRQ         $3, CX
	JEQ          scaleDone
scaleLoop:
	VMULPS  (DI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JNE     scaleLoop
scaleDone:
	VZEROUPPER
	RET

// func addRows8(dst, src *float32, n, rows, ld int)
// dst[j] += src[r·ld + j] for r = 0…rows-1 in order, j < n (a multiple of
// 8, rows ≥ 1). Blocks of up to 64 columns keep their sums in Y0–Y7 over
// all rows; narrower leftovers go 8 columns at a time.
TEXT ·addRows8(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), BX
	MOVQ rows+24(FP), R8
	MOVQ ld+32(FP), R9
	SHLQ $2, R9
rowsBlock64:
	CMPQ BX, $64
	JLT  rowsBlock8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	MOVQ    SI, DX
	MOVQ    R8, CX
rowsLoop64:
	VADDPS (DX), Y0, Y0
	VADDPS 32(DX), Y1, Y1
	VADDPS 64(DX), Y2, Y2
	VADDPS 96(DX), Y3, Y3
	VADDPS 128(DX), Y4, Y4
	VADDPS 160(DX), Y5, Y5
	VADDPS 192(DX), Y6, Y6
	VADDPS 224(DX), Y7, Y7
	ADDQ   R9, DX
	DECQ   CX
	JNE    rowsLoop64
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ    $256, DI
	ADDQ    $256, SI
	SUBQ    $64, BX
	JMP     rowsBlock64
rowsBlock8:
	TESTQ BX, BX
	JEQ   rowsDone
	VMOVUPS (DI), Y0
	MOVQ    SI, DX
	MOVQ    R8, CX
rowsLoop8:
	VADDPS (DX), Y0, Y0
	ADDQ   R9, DX
	DECQ   CX
	JNE    rowsLoop8
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	SUBQ    $8, BX
	JMP     rowsBlock8
rowsDone:
	VZEROUPPER
	RET

// func biasLeaky8(y, b *float32, n int, slope float32)
// y[i] = max(y[i]+b[i], slope·(y[i]+b[i])), n a multiple of 8.
TEXT ·biasLeaky8(SB), NOSPLIT, $0-28
	MOVQ         y+0(FP), DI
	MOVQ         b+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS slope+24(FP), Y3
	SHRQ         $3, CX
	JEQ          blDone
blLoop:
	VMOVUPS (DI), Y0
	VADDPS  (SI), Y0, Y0
	VMULPS  Y3, Y0, Y1
	VMAXPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNE     blLoop
blDone:
	VZEROUPPER
	RET

// func leakyGrad8(d, y *float32, n int, slope float32)
// d[i] *= (y[i] < 0 ? slope : 1), taking y's sign bit as the blend mask.
TEXT ·leakyGrad8(SB), NOSPLIT, $0-28
	MOVQ         d+0(FP), DI
	MOVQ         y+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS slope+24(FP), Y3
	MOVL         $0x3f800000, AX
	MOVL         AX, X4
	VBROADCASTSS X4, Y4
	SHRQ         $3, CX
	JEQ          lgDone
lgLoop:
	VMOVUPS   (SI), Y1
	VBLENDVPS Y1, Y3, Y4, Y2
	VMULPS    (DI), Y2, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	DECQ      CX
	JNE       lgLoop
lgDone:
	VZEROUPPER
	RET

// func transpose8(dst *float32, dstStride int, src *float32, srcStride int, blocks int)
//
// For q < blocks: the 8×8 block of rows src + r·srcStride, columns 8q..8q+7
// is written transposed to rows 8q..8q+7 of dst (stride dstStride), 8
// floats each. Strides are in elements.
TEXT ·transpose8(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ dstStride+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ srcStride+24(FP), BX
	MOVQ blocks+32(FP), CX
	SHLQ $2, DX
	SHLQ $2, BX
	LEAQ (BX)(BX*2), R8  // 3·srcStride
	LEAQ (BX)(BX*4), R9  // 5·srcStride
	LEAQ (R8)(R8*1), R10 // 6·srcStride
	LEAQ (R9)(BX*2), R11 // 7·srcStride
	LEAQ (DX)(DX*2), R12 // 3·dstStride
	TESTQ CX, CX
	JEQ   trDone

trLoop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(BX*1), Y1
	VMOVUPS (SI)(BX*2), Y2
	VMOVUPS (SI)(R8*1), Y3
	VMOVUPS (SI)(BX*4), Y4
	VMOVUPS (SI)(R9*1), Y5
	VMOVUPS (SI)(R10*1), Y6
	VMOVUPS (SI)(R11*1), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(DX*1)
	VMOVUPS Y10, (DI)(DX*2)
	VMOVUPS Y11, (DI)(R12*1)
	LEAQ    (DI)(DX*4), AX
	VMOVUPS Y12, (AX)
	VMOVUPS Y13, (AX)(DX*1)
	VMOVUPS Y14, (AX)(DX*2)
	VMOVUPS Y15, (AX)(R12*1)
	LEAQ    (AX)(DX*4), DI
	ADDQ    $32, SI
	DECQ    CX
	JNE     trLoop

trDone:
	VZEROUPPER
	RET

// func adam8(w, grad, m, v *float32, n int, b1, ob1, b2, ob2, step, sqrtBC2, eps float32)
//
// One Adam update of n (a multiple of 8) parameters, with the same
// operation order as the Go fallback (no fused multiply-adds), so both
// give identical results:
//   m = b1·m + ob1·g;  v = b2·v + (ob2·g)·g;  w -= (step·m) / (√v/sqrtBC2 + eps)
TEXT ·adam8(SB), NOSPLIT, $0-68
	MOVQ         w+0(FP), DI
	MOVQ         grad+8(FP), SI
	MOVQ         m+16(FP), R8
	MOVQ         v+24(FP), R9
	MOVQ         n+32(FP), CX
	VBROADCASTSS b1+40(FP), Y8
	VBROADCASTSS ob1+44(FP), Y9
	VBROADCASTSS b2+48(FP), Y10
	VBROADCASTSS ob2+52(FP), Y11
	VBROADCASTSS step+56(FP), Y12
	VBROADCASTSS sqrtBC2+60(FP), Y13
	VBROADCASTSS eps+64(FP), Y14
	SHRQ         $3, CX
	JEQ          adDone

adLoop:
	VMOVUPS (SI), Y0       // g
	VMULPS  (R8), Y8, Y1   // b1·m
	VMULPS  Y0, Y9, Y2     // ob1·g
	VADDPS  Y2, Y1, Y1     // m
	VMOVUPS Y1, (R8)
	VMULPS  (R9), Y10, Y3  // b2·v
	VMULPS  Y0, Y11, Y4    // ob2·g
	VMULPS  Y0, Y4, Y4     // ·g
	VADDPS  Y4, Y3, Y3     // v
	VMOVUPS Y3, (R9)
	VSQRTPS Y3, Y3
	VDIVPS  Y13, Y3, Y3    // √v / sqrtBC2
	VADDPS  Y14, Y3, Y3    // + eps
	VMULPS  Y1, Y12, Y1    // step·m
	VDIVPS  Y3, Y1, Y1
	VMOVUPS (DI), Y5
	VSUBPS  Y1, Y5, Y5
	VMOVUPS Y5, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, R8
	ADDQ    $32, R9
	DECQ    CX
	JNE     adLoop

adDone:
	VZEROUPPER
	RET

// func dot8(x, y *float32, n int) float32   Σ x[i]·y[i], n a multiple of 8
TEXT ·dot8(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	SHRQ   $3, CX
	JEQ    dotSum
	TESTQ  $1, CX
	JEQ    dotPairs
	VMOVUPS     (SI), Y2
	VFMADD231PS (DI), Y2, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	DECQ        CX
	JEQ         dotSum
dotPairs:
	VMOVUPS     (SI), Y2
	VMOVUPS     32(SI), Y3
	VFMADD231PS (DI), Y2, Y0
	VFMADD231PS 32(DI), Y3, Y1
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $2, CX
	JNE         dotPairs
dotSum:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, ret+24(FP)
	VZEROUPPER
	RET

// func sumSq16(x *float32, n int, lanes *[16]float64)
// Lane sums of float64(x[i])² for n a multiple of 16: lane 4j+l holds the
// elements i ≡ 4j+l (mod 16). Four YMM accumulators of four doubles break
// the add latency chain; squares of float32 values are exact in float64, so
// FMA and a separate multiply-add agree.
TEXT ·sumSq16(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	SHRQ   $4, CX
	JEQ    ssDone

ssLoop:
	VCVTPS2PD   (SI), Y4
	VCVTPS2PD   16(SI), Y5
	VCVTPS2PD   32(SI), Y6
	VCVTPS2PD   48(SI), Y7
	VFMADD231PD Y4, Y4, Y0
	VFMADD231PD Y5, Y5, Y1
	VFMADD231PD Y6, Y6, Y2
	VFMADD231PD Y7, Y7, Y3
	ADDQ        $64, SI
	DECQ        CX
	JNE         ssLoop

ssDone:
	MOVQ    lanes+16(FP), DI
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VZEROUPPER
	RET
