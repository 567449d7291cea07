//go:build !purego

#include "textflag.h"

DATA gaussAbs<>+0(SB)/8, $0x7fffffffffffffff
DATA gaussAbs<>+8(SB)/8, $0x7fffffffffffffff
DATA gaussAbs<>+16(SB)/8, $0x7fffffffffffffff
DATA gaussAbs<>+24(SB)/8, $0x7fffffffffffffff
GLOBL gaussAbs<>(SB), RODATA|NOPTR, $32

// GCONSTS broadcasts Gauss.consts from AX: Y8 dt, Y9 clip, Y10 −clip,
// Y11 sd, Y12 v, Y13..Y15 the three added constants.
#define GCONSTS \
	VBROADCASTSD 0(AX), Y8 \
	VBROADCASTSD 8(AX), Y9 \
	VBROADCASTSD 16(AX), Y10 \
	VBROADCASTSD 24(AX), Y11 \
	VBROADCASTSD 32(AX), Y12 \
	VBROADCASTSD 40(AX), Y13 \
	VBROADCASTSD 48(AX), Y14 \
	VBROADCASTSD 56(AX), Y15

// DRIFT: Y0 = dt·clamp(o) for the 4 outputs at (R8). VMINPD and VMAXPD
// return their last Go operand when either is NaN, so NaN stays NaN as
// with Go's min and max.
#define DRIFT \
	VCVTPS2PD (R8), Y0 \
	VMINPD    Y0, Y9, Y0 \
	VMAXPD    Y0, Y10, Y0 \
	VMULPD    Y8, Y0, Y0

// TERM: Y3 = ((r²/v + a0) + a1) + a2 for r in Y3.
#define TERM \
	VMULPD Y3, Y3, Y3 \
	VDIVPD Y12, Y3, Y3 \
	VADDPD Y13, Y3, Y3 \
	VADDPD Y14, Y3, Y3 \
	VADDPD Y15, Y3, Y3

// SUM4: X7 += the 4 lanes of Y3, one after the other (the scalar order).
#define SUM4 \
	VADDSD       X3, X7, X7 \
	VUNPCKHPD    X3, X3, X4 \
	VADDSD       X4, X7, X7 \
	VEXTRACTF128 $1, Y3, X5 \
	VADDSD       X5, X7, X7 \
	VUNPCKHPD    X5, X5, X6 \
	VADDSD       X6, X7, X7

// func gaussStep4(xn, x, o *float32, z *float64, n int, c *[8]float64, lp float64) float64
TEXT ·gaussStep4(SB), NOSPLIT, $0-64
	MOVQ  xn+0(FP), DI
	MOVQ  x+8(FP), SI
	MOVQ  o+16(FP), R8
	MOVQ  z+24(FP), R9
	MOVQ  n+32(FP), CX
	MOVQ  c+40(FP), AX
	VMOVSD lp+48(FP), X7
	GCONSTS
	SHRQ  $2, CX
	JEQ   gsDone
gsLoop:
	DRIFT
	VCVTPS2PD  (SI), Y1
	VADDPD     Y0, Y1, Y1 // m = x + dt·u
	VMULPD     (R9), Y11, Y2
	VADDPD     Y2, Y1, Y2 // m + sd·z
	VCVTPD2PSY Y2, X3
	VMOVUPS    X3, (DI)
	VCVTPS2PD  X3, Y3
	VSUBPD     Y1, Y3, Y3 // r = xn − m
	TERM
	SUM4
	ADDQ $16, DI
	ADDQ $16, SI
	ADDQ $16, R8
	ADDQ $32, R9
	DECQ CX
	JNE  gsLoop
gsDone:
	VMOVSD X7, ret+56(FP)
	VZEROUPPER
	RET

// RESID: Y3 = (xn − x) − dt·u for the 4 coordinates at (DI), (SI), (R8).
#define RESID \
	DRIFT \
	VCVTPS2PD (DI), Y3 \
	VCVTPS2PD (SI), Y1 \
	VSUBPD    Y1, Y3, Y3 \
	VSUBPD    Y0, Y3, Y3

// func gaussScore4(xn, x, o *float32, n int, c *[8]float64, lp float64) float64
TEXT ·gaussScore4(SB), NOSPLIT, $0-56
	MOVQ  xn+0(FP), DI
	MOVQ  x+8(FP), SI
	MOVQ  o+16(FP), R8
	MOVQ  n+24(FP), CX
	MOVQ  c+32(FP), AX
	VMOVSD lp+40(FP), X7
	GCONSTS
	SHRQ  $2, CX
	JEQ   gcDone
gcLoop:
	RESID
	TERM
	SUM4
	ADDQ $16, DI
	ADDQ $16, SI
	ADDQ $16, R8
	DECQ CX
	JNE  gcLoop
gcDone:
	VMOVSD X7, ret+48(FP)
	VZEROUPPER
	RET

// func gaussGrad4(dst, xn, x, o *float32, n int, c *[8]float64, w, ev float64)
TEXT ·gaussGrad4(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DX
	MOVQ xn+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ o+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), AX
	GCONSTS
	VBROADCASTSD w+48(FP), Y13
	VBROADCASTSD ev+56(FP), Y14
	VMOVUPD gaussAbs<>(SB), Y15
	SHRQ $2, CX
	JEQ  ggDone
ggLoop:
	RESID
	VMULPD     Y13, Y3, Y3 // w·r
	VDIVPD     Y14, Y3, Y3 // (w·r)/ev
	VCVTPS2PD  (R8), Y2
	VANDPD     Y15, Y2, Y2 // |o|
	VCMPPD     $0x1e, Y9, Y2, Y2 // |o| > clip (ordered: false for NaN)
	VANDNPD    Y3, Y2, Y3 // 0 where clipped
	VCVTPD2PSY Y3, X3
	VMOVUPS    X3, (DX)
	ADDQ $16, DX
	ADDQ $16, DI
	ADDQ $16, SI
	ADDQ $16, R8
	DECQ CX
	JNE  ggLoop
ggDone:
	VZEROUPPER
	RET

// func bridgeSq4(x, y *float32, n int, a, q float64) float64
TEXT ·bridgeSq4(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSD a+24(FP), Y8
	VMOVSD q+32(FP), X7
	SHRQ $2, CX
	JEQ  bqDone
bqLoop:
	VCVTPS2PD (SI), Y3
	VCVTPS2PD (DI), Y1
	VMULPD    Y8, Y1, Y1 // a·y
	VSUBPD    Y1, Y3, Y3 // x − a·y
	VMULPD    Y3, Y3, Y3
	SUM4
	ADDQ $16, SI
	ADDQ $16, DI
	DECQ CX
	JNE  bqLoop
bqDone:
	VMOVSD X7, ret+40(FP)
	VZEROUPPER
	RET
