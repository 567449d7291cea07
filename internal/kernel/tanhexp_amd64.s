//go:build !purego

#include "textflag.h"

// Constants of tanhexp.go, each in 4 lanes.
// TE4 stores a constant in the 4 lanes of the entry at byte off.
#define TE4(off, v) DATA teC<>+(off)(SB)/8, v; DATA teC<>+(off+8)(SB)/8, v; DATA teC<>+(off+16)(SB)/8, v; DATA teC<>+(off+24)(SB)/8, v

TE4(0, $0x3ff71547652b82fe) // log2(e)
TE4(32, $0x3fe62e42fee00000) // ln2Hi
TE4(64, $0x3dea39ef35793c76) // ln2Lo
TE4(96, $0x3ff0000000000000) // 1
TE4(128, $0x4000000000000000) // 2
TE4(160, $0xc087500000000000) // -746
TE4(192, $0x4086300000000000) // 710
TE4(224, $0x4034000000000000) // 20
TE4(256, $0x7fffffffffffffff) // magnitude
TE4(288, $0x8000000000000000) // sign
TE4(320, $1023) // exponent bias
TE4(352, $0x3de6124613a86d09) // 1/13!
TE4(384, $0x3e21eed8eff8d898) // 1/12!
TE4(416, $0x3e5ae64567f544e4) // 1/11!
TE4(448, $0x3e927e4fb7789f5c) // 1/10!
TE4(480, $0x3ec71de3a556c734) // 1/9!
TE4(512, $0x3efa01a01a01a01a) // 1/8!
TE4(544, $0x3f2a01a01a01a01a) // 1/7!
TE4(576, $0x3f56c16c16c16c17) // 1/6!
TE4(608, $0x3f81111111111111) // 1/5!
TE4(640, $0x3fa5555555555555) // 1/4!
TE4(672, $0x3fc5555555555555) // 1/3!
TE4(704, $0x3fe0000000000000) // 1/2!
GLOBL teC<>(SB), RODATA|NOPTR, $736

// REDUCE: from x in Y1, k in Y4 and r in Y5 (teReduce).
#define REDUCE \
	VMULPD   teC<>+0(SB), Y1, Y4 \
	VROUNDPD $0, Y4, Y4 \
	VMOVAPD  Y1, Y5 \
	VFNMADD231PD teC<>+32(SB), Y4, Y5 \
	VFNMADD231PD teC<>+64(SB), Y4, Y5

// POLY: S(r) of r in Y5 into Y6 (teS).
#define POLY \
	VMOVUPD teC<>+352(SB), Y6 \
	VFMADD213PD teC<>+384(SB), Y5, Y6 \
	VFMADD213PD teC<>+416(SB), Y5, Y6 \
	VFMADD213PD teC<>+448(SB), Y5, Y6 \
	VFMADD213PD teC<>+480(SB), Y5, Y6 \
	VFMADD213PD teC<>+512(SB), Y5, Y6 \
	VFMADD213PD teC<>+544(SB), Y5, Y6 \
	VFMADD213PD teC<>+576(SB), Y5, Y6 \
	VFMADD213PD teC<>+608(SB), Y5, Y6 \
	VFMADD213PD teC<>+640(SB), Y5, Y6 \
	VFMADD213PD teC<>+672(SB), Y5, Y6 \
	VFMADD213PD teC<>+704(SB), Y5, Y6 \
	VFMADD213PD teC<>+96(SB), Y5, Y6

// SCALE: Y7 = (Y7·2^⌊k/2⌋)·2^(k−⌊k/2⌋) for k in Y4 (teScale).
#define SCALE \
	VCVTPD2DQY Y4, X8 \
	VPSRAD    $1, X8, X9 \
	VPSUBD    X9, X8, X8 \
	VPMOVSXDQ X9, Y9 \
	VPMOVSXDQ X8, Y8 \
	VPADDQ    teC<>+320(SB), Y9, Y9 \
	VPADDQ    teC<>+320(SB), Y8, Y8 \
	VPSLLQ    $52, Y9, Y9 \
	VPSLLQ    $52, Y8, Y8 \
	VMULPD    Y9, Y7, Y7 \
	VMULPD    Y8, Y7, Y7

// func tanhExp4(th, ev *float64, x *float32, n int, a, b float64)
// th[i] = Tanh(x[i]), ev[i] = Exp(a + b·th[i]) for i < n, n a multiple of 4.
TEXT ·tanhExp4(SB), NOSPLIT, $0-48
	MOVQ th+0(FP), DI
	MOVQ ev+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	VBROADCASTSD a+32(FP), Y14
	VBROADCASTSD b+40(FP), Y15
	SHRQ $2, CX
	JEQ  teDone
teLoop:
	VCVTPS2PD (SI), Y0 // x
	// tanh
	VANDPD  teC<>+256(SB), Y0, Y1
	VMINPD  teC<>+224(SB), Y1, Y1
	VADDPD  Y1, Y1, Y1 // y = 2·min(|x|, 20)
	REDUCE
	POLY
	VMULPD  Y6, Y5, Y2 // q when k = 0: r·S
	VMOVUPD teC<>+96(SB), Y7
	VFMADD231PD Y6, Y5, Y7 // 1 + r·S
	SCALE
	VSUBPD  teC<>+96(SB), Y7, Y7 // 2^k·(1 + r·S) − 1
	VXORPD  Y10, Y10, Y10
	VCMPPD  $0, Y10, Y4, Y11 // k == 0
	VBLENDVPD Y11, Y2, Y7, Y7
	VADDPD  teC<>+128(SB), Y7, Y3
	VDIVPD  Y3, Y7, Y7 // q/(q+2)
	VANDPD  teC<>+288(SB), Y0, Y3
	VORPD   Y3, Y7, Y7 // sign of x
	VCMPPD  $3, Y0, Y0, Y10 // NaN lanes keep x
	VBLENDVPD Y10, Y0, Y7, Y7
	VMOVUPD Y7, (DI)
	// exp(a + b·th)
	VMULPD  Y15, Y7, Y0
	VADDPD  Y14, Y0, Y0
	VMAXPD  teC<>+160(SB), Y0, Y1
	VMINPD  teC<>+192(SB), Y1, Y1
	REDUCE
	POLY
	VMOVUPD teC<>+96(SB), Y7
	VFMADD231PD Y6, Y5, Y7
	SCALE
	VCMPPD  $3, Y0, Y0, Y10
	VBLENDVPD Y10, Y0, Y7, Y7
	VMOVUPD Y7, (DX)
	ADDQ    $16, SI
	ADDQ    $32, DI
	ADDQ    $32, DX
	DECQ    CX
	JNE     teLoop
teDone:
	VZEROUPPER
	RET
