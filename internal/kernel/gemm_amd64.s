//go:build !purego

#include "textflag.h"

// func kern4x16(k int, a *float32, rsA, psA int, b *float32, ldb int, c *float32, ldc int)
//
// C[r, 0:16] += Σ_p A(r, p)·B[p, 0:16] for r = 0..3, where A(r, p) is at
// a + r·rsA + p·psA (elements) and B row p at b + p·ldb. Eight YMM
// accumulators keep both FMA ports busy.
TEXT ·kern4x16(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rsA+16(FP), R8
	MOVQ psA+24(FP), R14
	MOVQ b+32(FP), DI
	MOVQ ldb+40(FP), R9
	MOVQ c+48(FP), DX
	MOVQ ldc+56(FP), R10
	SHLQ $2, R8
	SHLQ $2, R14
	SHLQ $2, R9
	SHLQ $2, R10
	LEAQ (SI)(R8*1), R11
	LEAQ (SI)(R8*2), R12
	LEAQ (R11)(R8*2), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ CX, CX
	JEQ   store4

loop4:
	VMOVUPS      (DI), Y8
	VMOVUPS      32(DI), Y9
	VBROADCASTSS (SI), Y10
	VFMADD231PS  Y8, Y10, Y0
	VFMADD231PS  Y9, Y10, Y1
	VBROADCASTSS (R11), Y11
	VFMADD231PS  Y8, Y11, Y2
	VFMADD231PS  Y9, Y11, Y3
	VBROADCASTSS (R12), Y12
	VFMADD231PS  Y8, Y12, Y4
	VFMADD231PS  Y9, Y12, Y5
	VBROADCASTSS (R13), Y13
	VFMADD231PS  Y8, Y13, Y6
	VFMADD231PS  Y9, Y13, Y7
	ADDQ         R14, SI
	ADDQ         R14, R11
	ADDQ         R14, R12
	ADDQ         R14, R13
	ADDQ         R9, DI
	DECQ         CX
	JNE          loop4

store4:
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Y2, Y2
	VADDPS  32(DX), Y3, Y3
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Y4, Y4
	VADDPS  32(DX), Y5, Y5
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Y6, Y6
	VADDPS  32(DX), Y7, Y7
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	VZEROUPPER
	RET

// func kern1x16(k int, a *float32, psA int, b *float32, ldb int, c *float32)
TEXT ·kern1x16(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ psA+16(FP), R14
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), R9
	MOVQ c+40(FP), DX
	SHLQ $2, R14
	SHLQ $2, R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TESTQ CX, CX
	JEQ   store1

loop1:
	VMOVUPS      (DI), Y8
	VMOVUPS      32(DI), Y9
	VBROADCASTSS (SI), Y10
	VFMADD231PS  Y8, Y10, Y0
	VFMADD231PS  Y9, Y10, Y1
	ADDQ         R14, SI
	ADDQ         R9, DI
	DECQ         CX
	JNE          loop1

store1:
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET
