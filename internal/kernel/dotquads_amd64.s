//go:build !purego

#include "textflag.h"

// func dotQuads8(c *float64, ldc int, a *float64, lda, rows int, bp *float64, m int)
// rows a multiple of 8, m ≥ 1. Y0..Y7 are the 8 rows' sums of the 4
// columns; per k one load of the quad, one broadcast a row, a multiply and
// an add (the scalar loop's rounding).
TEXT ·dotQuads8(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ ldc+8(FP), R11
	SHLQ $3, R11 // ldc in bytes
	MOVQ a+16(FP), SI
	MOVQ lda+24(FP), R8
	SHLQ $3, R8 // lda in bytes
	MOVQ rows+32(FP), BX
	SHRQ $3, BX
	MOVQ bp+40(FP), DX
	MOVQ m+48(FP), R13
	LEAQ (R8)(R8*2), R9 // 3·lda
	LEAQ (R11)(R11*2), R12 // 3·ldc
dqRows:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ SI, AX          // rows 0..3 at k
	LEAQ (SI)(R8*4), R10 // rows 4..7 at k
	MOVQ DX, R14         // the quad at k
	MOVQ R13, CX
dqK:
	VMOVUPD      (R14), Y8
	VBROADCASTSD (AX), Y9
	VMULPD       Y8, Y9, Y9
	VADDPD       Y9, Y0, Y0
	VBROADCASTSD (AX)(R8*1), Y10
	VMULPD       Y8, Y10, Y10
	VADDPD       Y10, Y1, Y1
	VBROADCASTSD (AX)(R8*2), Y11
	VMULPD       Y8, Y11, Y11
	VADDPD       Y11, Y2, Y2
	VBROADCASTSD (AX)(R9*1), Y12
	VMULPD       Y8, Y12, Y12
	VADDPD       Y12, Y3, Y3
	VBROADCASTSD (R10), Y9
	VMULPD       Y8, Y9, Y9
	VADDPD       Y9, Y4, Y4
	VBROADCASTSD (R10)(R8*1), Y10
	VMULPD       Y8, Y10, Y10
	VADDPD       Y10, Y5, Y5
	VBROADCASTSD (R10)(R8*2), Y11
	VMULPD       Y8, Y11, Y11
	VADDPD       Y11, Y6, Y6
	VBROADCASTSD (R10)(R9*1), Y12
	VMULPD       Y8, Y12, Y12
	VADDPD       Y12, Y7, Y7
	ADDQ $8, AX
	ADDQ $8, R10
	ADDQ $32, R14
	DECQ CX
	JNE  dqK
	// c[r·ldc + 0..3] += the sums, rows 0..7.
	VADDPD  (DI), Y0, Y0
	VMOVUPD Y0, (DI)
	VADDPD  (DI)(R11*1), Y1, Y1
	VMOVUPD Y1, (DI)(R11*1)
	VADDPD  (DI)(R11*2), Y2, Y2
	VMOVUPD Y2, (DI)(R11*2)
	VADDPD  (DI)(R12*1), Y3, Y3
	VMOVUPD Y3, (DI)(R12*1)
	LEAQ    (DI)(R11*4), DI
	VADDPD  (DI), Y4, Y4
	VMOVUPD Y4, (DI)
	VADDPD  (DI)(R11*1), Y5, Y5
	VMOVUPD Y5, (DI)(R11*1)
	VADDPD  (DI)(R11*2), Y6, Y6
	VMOVUPD Y6, (DI)(R11*2)
	VADDPD  (DI)(R12*1), Y7, Y7
	VMOVUPD Y7, (DI)(R12*1)
	LEAQ    (DI)(R11*4), DI
	LEAQ    (SI)(R8*8), SI
	DECQ BX
	JNE  dqRows
	VZEROUPPER
	RET
