//go:build !purego

#include "textflag.h"

// func kern4x16(k int, a *float32, rsA, psA int, b *float32, ldb int, c *float32, ldc int, acc int)
//
// C[r, 0:16] += Σ_p A(r, p)·B[p, 0:16] for r = 0..3, where A(r, p) is at
// a + r·rsA + p·psA (elements) and B row p at b + p·ldb. Eight YMM
// accumulators keep both FMA ports busy.
TEXT ·kern4x16(SB), NOSPLIT, $0-72
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
	MOVQ    acc+64(FP), AX
	TESTQ   AX, AX
	JEQ     over4
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

over4:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ    R10, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ    R10, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R10, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	VZEROUPPER
	RET

// func kern8x32(k int, a *float32, psA int, b *float32, ldb int, c *float32, ldc int, acc int)
// (acc = 0 stores the product over C instead of adding to it)
//
// AVX-512: C[0:8, 0:32] += A·B where A(0..7, p) are 8 contiguous values at
// a + p·psA (a packed panel: psA = 8; a transposed operand read in place:
// psA = its row stride) and B row p is at b + p·ldb. Sixteen ZMM
// accumulators; two B loads and eight broadcasts per step feed 16 FMAs.
TEXT ·kern8x32(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ psA+16(FP), R11
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), R9
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R10
	SHLQ $2, R11
	SHLQ $2, R9
	SHLQ $2, R10
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	TESTQ CX, CX
	JEQ   store8

loop8:
	VMOVUPS      (DI), Z16
	VMOVUPS      64(DI), Z17
	VBROADCASTSS (SI), Z18
	VBROADCASTSS 4(SI), Z19
	VFMADD231PS  Z16, Z18, Z0
	VFMADD231PS  Z17, Z18, Z1
	VFMADD231PS  Z16, Z19, Z2
	VFMADD231PS  Z17, Z19, Z3
	VBROADCASTSS 8(SI), Z20
	VBROADCASTSS 12(SI), Z21
	VFMADD231PS  Z16, Z20, Z4
	VFMADD231PS  Z17, Z20, Z5
	VFMADD231PS  Z16, Z21, Z6
	VFMADD231PS  Z17, Z21, Z7
	VBROADCASTSS 16(SI), Z22
	VBROADCASTSS 20(SI), Z23
	VFMADD231PS  Z16, Z22, Z8
	VFMADD231PS  Z17, Z22, Z9
	VFMADD231PS  Z16, Z23, Z10
	VFMADD231PS  Z17, Z23, Z11
	VBROADCASTSS 24(SI), Z24
	VBROADCASTSS 28(SI), Z25
	VFMADD231PS  Z16, Z24, Z12
	VFMADD231PS  Z17, Z24, Z13
	VFMADD231PS  Z16, Z25, Z14
	VFMADD231PS  Z17, Z25, Z15
	ADDQ         R11, SI
	ADDQ         R9, DI
	DECQ         CX
	JNE          loop8

store8:
	MOVQ    acc+56(FP), AX
	TESTQ   AX, AX
	JEQ     over8
	VADDPS  (DX), Z0, Z0
	VADDPS  64(DX), Z1, Z1
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Z2, Z2
	VADDPS  64(DX), Z3, Z3
	VMOVUPS Z2, (DX)
	VMOVUPS Z3, 64(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Z4, Z4
	VADDPS  64(DX), Z5, Z5
	VMOVUPS Z4, (DX)
	VMOVUPS Z5, 64(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Z6, Z6
	VADDPS  64(DX), Z7, Z7
	VMOVUPS Z6, (DX)
	VMOVUPS Z7, 64(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Z8, Z8
	VADDPS  64(DX), Z9, Z9
	VMOVUPS Z8, (DX)
	VMOVUPS Z9, 64(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Z10, Z10
	VADDPS  64(DX), Z11, Z11
	VMOVUPS Z10, (DX)
	VMOVUPS Z11, 64(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Z12, Z12
	VADDPS  64(DX), Z13, Z13
	VMOVUPS Z12, (DX)
	VMOVUPS Z13, 64(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Z14, Z14
	VADDPS  64(DX), Z15, Z15
	VMOVUPS Z14, (DX)
	VMOVUPS Z15, 64(DX)
	VZEROUPPER
	RET

over8:
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	ADDQ    R10, DX
	VMOVUPS Z2, (DX)
	VMOVUPS Z3, 64(DX)
	ADDQ    R10, DX
	VMOVUPS Z4, (DX)
	VMOVUPS Z5, 64(DX)
	ADDQ    R10, DX
	VMOVUPS Z6, (DX)
	VMOVUPS Z7, 64(DX)
	ADDQ    R10, DX
	VMOVUPS Z8, (DX)
	VMOVUPS Z9, 64(DX)
	ADDQ    R10, DX
	VMOVUPS Z10, (DX)
	VMOVUPS Z11, 64(DX)
	ADDQ    R10, DX
	VMOVUPS Z12, (DX)
	VMOVUPS Z13, 64(DX)
	ADDQ    R10, DX
	VMOVUPS Z14, (DX)
	VMOVUPS Z15, 64(DX)
	VZEROUPPER
	RET

// func kern4x32(k int, a *float32, rsA, psA int, b *float32, ldb int, c *float32, ldc int, acc int)
//
// AVX-512: C[r, 0:32] += Σ_p A(r, p)·B[p, 0:32] for r < 4 (acc = 0 stores),
// with A(r, p) at a + r·rsA + p·psA (elements), so A can be read in place:
// the rows a full kern8x32 panel would leave idle. 8 ZMM accumulators.
TEXT ·kern4x32(SB), NOSPLIT, $0-72
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
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	TESTQ CX, CX
	JEQ   fstore4

floop4:
	VMOVUPS      (DI), Z16
	VMOVUPS      64(DI), Z17
	VBROADCASTSS (SI), Z18
	VBROADCASTSS (R11), Z19
	VBROADCASTSS (R12), Z20
	VBROADCASTSS (R13), Z21
	VFMADD231PS  Z16, Z18, Z0
	VFMADD231PS  Z17, Z18, Z1
	VFMADD231PS  Z16, Z19, Z2
	VFMADD231PS  Z17, Z19, Z3
	VFMADD231PS  Z16, Z20, Z4
	VFMADD231PS  Z17, Z20, Z5
	VFMADD231PS  Z16, Z21, Z6
	VFMADD231PS  Z17, Z21, Z7
	ADDQ         R14, SI
	ADDQ         R14, R11
	ADDQ         R14, R12
	ADDQ         R14, R13
	ADDQ         R9, DI
	DECQ         CX
	JNE          floop4

fstore4:
	MOVQ    acc+64(FP), AX
	TESTQ   AX, AX
	JEQ     fover4
	VADDPS  (DX), Z0, Z0
	VADDPS  64(DX), Z1, Z1
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Z2, Z2
	VADDPS  64(DX), Z3, Z3
	VMOVUPS Z2, (DX)
	VMOVUPS Z3, 64(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Z4, Z4
	VADDPS  64(DX), Z5, Z5
	VMOVUPS Z4, (DX)
	VMOVUPS Z5, 64(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Z6, Z6
	VADDPS  64(DX), Z7, Z7
	VMOVUPS Z6, (DX)
	VMOVUPS Z7, 64(DX)
	VZEROUPPER
	RET

fover4:
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	ADDQ    R10, DX
	VMOVUPS Z2, (DX)
	VMOVUPS Z3, 64(DX)
	ADDQ    R10, DX
	VMOVUPS Z4, (DX)
	VMOVUPS Z5, 64(DX)
	ADDQ    R10, DX
	VMOVUPS Z6, (DX)
	VMOVUPS Z7, 64(DX)
	VZEROUPPER
	RET

// func kern2x32(k int, a *float32, rsA, psA int, b *float32, ldb int, c *float32, ldc int, acc int)
//
// AVX-512: C[r, 0:32] += Σ_p A(r, p)·B[p, 0:32] for r < 2 (acc = 0 stores),
// with A(r, p) at a + r·rsA + p·psA (elements), so A can be read in place:
// the rows a full kern8x32 panel would leave idle. 4 ZMM accumulators.
TEXT ·kern2x32(SB), NOSPLIT, $0-72
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
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	TESTQ CX, CX
	JEQ   fstore2

floop2:
	VMOVUPS      (DI), Z16
	VMOVUPS      64(DI), Z17
	VBROADCASTSS (SI), Z18
	VBROADCASTSS (R11), Z19
	VFMADD231PS  Z16, Z18, Z0
	VFMADD231PS  Z17, Z18, Z1
	VFMADD231PS  Z16, Z19, Z2
	VFMADD231PS  Z17, Z19, Z3
	ADDQ         R14, SI
	ADDQ         R14, R11
	ADDQ         R9, DI
	DECQ         CX
	JNE          floop2

fstore2:
	MOVQ    acc+64(FP), AX
	TESTQ   AX, AX
	JEQ     fover2
	VADDPS  (DX), Z0, Z0
	VADDPS  64(DX), Z1, Z1
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	ADDQ    R10, DX
	VADDPS  (DX), Z2, Z2
	VADDPS  64(DX), Z3, Z3
	VMOVUPS Z2, (DX)
	VMOVUPS Z3, 64(DX)
	VZEROUPPER
	RET

fover2:
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	ADDQ    R10, DX
	VMOVUPS Z2, (DX)
	VMOVUPS Z3, 64(DX)
	VZEROUPPER
	RET

// func kern1x32(k int, a *float32, rsA, psA int, b *float32, ldb int, c *float32, ldc int, acc int)
//
// AVX-512: C[r, 0:32] += Σ_p A(r, p)·B[p, 0:32] for r < 1 (acc = 0 stores),
// with A(r, p) at a + r·rsA + p·psA (elements), so A can be read in place:
// the rows a full kern8x32 panel would leave idle. 2 ZMM accumulators.
TEXT ·kern1x32(SB), NOSPLIT, $0-72
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
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	TESTQ CX, CX
	JEQ   fstore1

floop1:
	VMOVUPS      (DI), Z16
	VMOVUPS      64(DI), Z17
	VBROADCASTSS (SI), Z18
	VFMADD231PS  Z16, Z18, Z0
	VFMADD231PS  Z17, Z18, Z1
	ADDQ         R14, SI
	ADDQ         R9, DI
	DECQ         CX
	JNE          floop1

fstore1:
	MOVQ    acc+64(FP), AX
	TESTQ   AX, AX
	JEQ     fover1
	VADDPS  (DX), Z0, Z0
	VADDPS  64(DX), Z1, Z1
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	VZEROUPPER
	RET

fover1:
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	VZEROUPPER
	RET
