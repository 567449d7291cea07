//go:build !purego

#include "textflag.h"

// GELU (the erf form, torch.nn.GELU's default) on 8 float32 lanes with
// AVX2+FMA. Φ(z) comes from erfc(|z|/√2) by the rational-exponential
// approximation of Numerical Recipes (erfcc: t = 1/(1+u/2),
// erfc(u) = t·exp(-u² + P(t)), fractional error < 1.2e-7 everywhere), so
// the negative tail keeps its relative accuracy; exp is Cephes's expf
// (x·log2e rounded, a two-part ln 2 reduction, a degree-5 polynomial, and
// 2^n built in the exponent bits), with x clamped at -87.3 so 2^n stays
// normal. Each constant is stored broadcast to 8 lanes.

#define ONE geluK<>+0(SB)
#define HALF geluK<>+32(SB)
#define RSQRT2 geluK<>+64(SB)
#define RSQRT2PI geluK<>+96(SB)
#define ABSMASK geluK<>+128(SB)
#define EC9 geluK<>+160(SB)
#define EC8 geluK<>+192(SB)
#define EC7 geluK<>+224(SB)
#define EC6 geluK<>+256(SB)
#define EC5 geluK<>+288(SB)
#define EC4 geluK<>+320(SB)
#define EC3 geluK<>+352(SB)
#define EC2 geluK<>+384(SB)
#define EC1 geluK<>+416(SB)
#define EC0 geluK<>+448(SB)
#define EXPLO geluK<>+480(SB)
#define LOG2E geluK<>+512(SB)
#define LN2HI geluK<>+544(SB)
#define LN2LO geluK<>+576(SB)
#define EP5 geluK<>+608(SB)
#define EP4 geluK<>+640(SB)
#define EP3 geluK<>+672(SB)
#define EP2 geluK<>+704(SB)
#define EP1 geluK<>+736(SB)
#define EP0 geluK<>+768(SB)
#define BIAS127 geluK<>+800(SB)

DATA geluK<>+0(SB)/8, $0x3f8000003f800000
DATA geluK<>+8(SB)/8, $0x3f8000003f800000
DATA geluK<>+16(SB)/8, $0x3f8000003f800000
DATA geluK<>+24(SB)/8, $0x3f8000003f800000
DATA geluK<>+32(SB)/8, $0x3f0000003f000000
DATA geluK<>+40(SB)/8, $0x3f0000003f000000
DATA geluK<>+48(SB)/8, $0x3f0000003f000000
DATA geluK<>+56(SB)/8, $0x3f0000003f000000
DATA geluK<>+64(SB)/8, $0x3f3504f33f3504f3
DATA geluK<>+72(SB)/8, $0x3f3504f33f3504f3
DATA geluK<>+80(SB)/8, $0x3f3504f33f3504f3
DATA geluK<>+88(SB)/8, $0x3f3504f33f3504f3
DATA geluK<>+96(SB)/8, $0x3ecc422a3ecc422a
DATA geluK<>+104(SB)/8, $0x3ecc422a3ecc422a
DATA geluK<>+112(SB)/8, $0x3ecc422a3ecc422a
DATA geluK<>+120(SB)/8, $0x3ecc422a3ecc422a
DATA geluK<>+128(SB)/8, $0x7fffffff7fffffff
DATA geluK<>+136(SB)/8, $0x7fffffff7fffffff
DATA geluK<>+144(SB)/8, $0x7fffffff7fffffff
DATA geluK<>+152(SB)/8, $0x7fffffff7fffffff
DATA geluK<>+160(SB)/8, $0x3e2ef9453e2ef945
DATA geluK<>+168(SB)/8, $0x3e2ef9453e2ef945
DATA geluK<>+176(SB)/8, $0x3e2ef9453e2ef945
DATA geluK<>+184(SB)/8, $0x3e2ef9453e2ef945
DATA geluK<>+192(SB)/8, $0xbf527892bf527892
DATA geluK<>+200(SB)/8, $0xbf527892bf527892
DATA geluK<>+208(SB)/8, $0xbf527892bf527892
DATA geluK<>+216(SB)/8, $0xbf527892bf527892
DATA geluK<>+224(SB)/8, $0x3fbe87b03fbe87b0
DATA geluK<>+232(SB)/8, $0x3fbe87b03fbe87b0
DATA geluK<>+240(SB)/8, $0x3fbe87b03fbe87b0
DATA geluK<>+248(SB)/8, $0x3fbe87b03fbe87b0
DATA geluK<>+256(SB)/8, $0xbf914e5dbf914e5d
DATA geluK<>+264(SB)/8, $0xbf914e5dbf914e5d
DATA geluK<>+272(SB)/8, $0xbf914e5dbf914e5d
DATA geluK<>+280(SB)/8, $0xbf914e5dbf914e5d
DATA geluK<>+288(SB)/8, $0x3e8ec7cc3e8ec7cc
DATA geluK<>+296(SB)/8, $0x3e8ec7cc3e8ec7cc
DATA geluK<>+304(SB)/8, $0x3e8ec7cc3e8ec7cc
DATA geluK<>+312(SB)/8, $0x3e8ec7cc3e8ec7cc
DATA geluK<>+320(SB)/8, $0xbe3ec24cbe3ec24c
DATA geluK<>+328(SB)/8, $0xbe3ec24cbe3ec24c
DATA geluK<>+336(SB)/8, $0xbe3ec24cbe3ec24c
DATA geluK<>+344(SB)/8, $0xbe3ec24cbe3ec24c
DATA geluK<>+352(SB)/8, $0x3dc636c93dc636c9
DATA geluK<>+360(SB)/8, $0x3dc636c93dc636c9
DATA geluK<>+368(SB)/8, $0x3dc636c93dc636c9
DATA geluK<>+376(SB)/8, $0x3dc636c93dc636c9
DATA geluK<>+384(SB)/8, $0x3ebf88fb3ebf88fb
DATA geluK<>+392(SB)/8, $0x3ebf88fb3ebf88fb
DATA geluK<>+400(SB)/8, $0x3ebf88fb3ebf88fb
DATA geluK<>+408(SB)/8, $0x3ebf88fb3ebf88fb
DATA geluK<>+416(SB)/8, $0x3f8000c73f8000c7
DATA geluK<>+424(SB)/8, $0x3f8000c73f8000c7
DATA geluK<>+432(SB)/8, $0x3f8000c73f8000c7
DATA geluK<>+440(SB)/8, $0x3f8000c73f8000c7
DATA geluK<>+448(SB)/8, $0xbfa1fc4ebfa1fc4e
DATA geluK<>+456(SB)/8, $0xbfa1fc4ebfa1fc4e
DATA geluK<>+464(SB)/8, $0xbfa1fc4ebfa1fc4e
DATA geluK<>+472(SB)/8, $0xbfa1fc4ebfa1fc4e
DATA geluK<>+480(SB)/8, $0xc2ae999ac2ae999a
DATA geluK<>+488(SB)/8, $0xc2ae999ac2ae999a
DATA geluK<>+496(SB)/8, $0xc2ae999ac2ae999a
DATA geluK<>+504(SB)/8, $0xc2ae999ac2ae999a
DATA geluK<>+512(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA geluK<>+520(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA geluK<>+528(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA geluK<>+536(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA geluK<>+544(SB)/8, $0x3f3180003f318000
DATA geluK<>+552(SB)/8, $0x3f3180003f318000
DATA geluK<>+560(SB)/8, $0x3f3180003f318000
DATA geluK<>+568(SB)/8, $0x3f3180003f318000
DATA geluK<>+576(SB)/8, $0xb95e8083b95e8083
DATA geluK<>+584(SB)/8, $0xb95e8083b95e8083
DATA geluK<>+592(SB)/8, $0xb95e8083b95e8083
DATA geluK<>+600(SB)/8, $0xb95e8083b95e8083
DATA geluK<>+608(SB)/8, $0x3950696739506967
DATA geluK<>+616(SB)/8, $0x3950696739506967
DATA geluK<>+624(SB)/8, $0x3950696739506967
DATA geluK<>+632(SB)/8, $0x3950696739506967
DATA geluK<>+640(SB)/8, $0x3ab743ce3ab743ce
DATA geluK<>+648(SB)/8, $0x3ab743ce3ab743ce
DATA geluK<>+656(SB)/8, $0x3ab743ce3ab743ce
DATA geluK<>+664(SB)/8, $0x3ab743ce3ab743ce
DATA geluK<>+672(SB)/8, $0x3c0889083c088908
DATA geluK<>+680(SB)/8, $0x3c0889083c088908
DATA geluK<>+688(SB)/8, $0x3c0889083c088908
DATA geluK<>+696(SB)/8, $0x3c0889083c088908
DATA geluK<>+704(SB)/8, $0x3d2aa9c13d2aa9c1
DATA geluK<>+712(SB)/8, $0x3d2aa9c13d2aa9c1
DATA geluK<>+720(SB)/8, $0x3d2aa9c13d2aa9c1
DATA geluK<>+728(SB)/8, $0x3d2aa9c13d2aa9c1
DATA geluK<>+736(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA geluK<>+744(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA geluK<>+752(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA geluK<>+760(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA geluK<>+768(SB)/8, $0x3f0000003f000000
DATA geluK<>+776(SB)/8, $0x3f0000003f000000
DATA geluK<>+784(SB)/8, $0x3f0000003f000000
DATA geluK<>+792(SB)/8, $0x3f0000003f000000
DATA geluK<>+800(SB)/8, $0x0000007f0000007f
DATA geluK<>+808(SB)/8, $0x0000007f0000007f
DATA geluK<>+816(SB)/8, $0x0000007f0000007f
DATA geluK<>+824(SB)/8, $0x0000007f0000007f
GLOBL geluK<>(SB), RODATA|NOPTR, $832

// EXP8 sets X = exp(X) using T1..T4; below -87.3 (and for NaN) it gives 0.
#define EXP8(X, T1, T2, T3, T4) \
	VCMPPS       $0x1d, EXPLO, X, T4; \
	VMAXPS       EXPLO, X, X; \
	VMULPS       LOG2E, X, T1; \
	VROUNDPS     $0, T1, T1; \
	VFNMADD231PS LN2HI, T1, X; \
	VFNMADD231PS LN2LO, T1, X; \
	VMOVUPS      EP5, T2; \
	VFMADD213PS  EP4, X, T2; \
	VFMADD213PS  EP3, X, T2; \
	VFMADD213PS  EP2, X, T2; \
	VFMADD213PS  EP1, X, T2; \
	VFMADD213PS  EP0, X, T2; \
	VMULPS       X, X, T3; \
	VFMADD213PS  X, T3, T2; \
	VADDPS       ONE, T2, T2; \
	VCVTPS2DQ    T1, T1; \
	VPADDD       BIAS127, T1, T1; \
	VPSLLD       $23, T1, T1; \
	VMULPS       T1, T2, X; \
	VANDPS       T4, X, X

// PHI8 sets P = Φ(Z) (the standard normal CDF) using T0..T4; Z is kept.
#define PHI8(Z, P, T0, T1, T2, T3, T4) \
	VANDPS       ABSMASK, Z, T0; \
	VMULPS       RSQRT2, T0, T0; \
	VMULPS       HALF, T0, T1; \
	VADDPS       ONE, T1, T1; \
	VMOVUPS      ONE, T2; \
	VDIVPS       T1, T2, T1; \
	VMOVUPS      EC9, P; \
	VFMADD213PS  EC8, T1, P; \
	VFMADD213PS  EC7, T1, P; \
	VFMADD213PS  EC6, T1, P; \
	VFMADD213PS  EC5, T1, P; \
	VFMADD213PS  EC4, T1, P; \
	VFMADD213PS  EC3, T1, P; \
	VFMADD213PS  EC2, T1, P; \
	VFMADD213PS  EC1, T1, P; \
	VFMADD213PS  EC0, T1, P; \
	VFNMADD231PS T0, T0, P; \
	EXP8(P, T2, T3, T4, T0); \
	VMULPS       T1, P, P; \
	VMULPS       HALF, P, P; \
	VMOVUPS      ONE, T0; \
	VSUBPS       P, T0, T0; \
	VBLENDVPS    Z, P, T0, P

// func biasGELU8(y, z, b *float32, n int)
// z[i] = y[i] + b[i]; y[i] = z[i]·Φ(z[i]); n a multiple of 8.
TEXT ·biasGELU8(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ z+8(FP), DX
	MOVQ b+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ  bgDone
bgLoop:
	VMOVUPS (DI), Y0
	VADDPS  (SI), Y0, Y0
	VMOVUPS Y0, (DX)
	PHI8(Y0, Y1, Y2, Y3, Y4, Y5, Y6)
	VMULPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, DX
	ADDQ    $32, SI
	DECQ    CX
	JNE     bgLoop
bgDone:
	VZEROUPPER
	RET

// func geluGrad8(d, z *float32, n int)
// d[i] *= Φ(z[i]) + z[i]·φ(z[i]); n a multiple of 8.
TEXT ·geluGrad8(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ z+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JEQ  ggDone
ggLoop:
	VMOVUPS (SI), Y0
	PHI8(Y0, Y1, Y2, Y3, Y4, Y5, Y6)
	VMULPS       Y0, Y0, Y7
	VMULPS       HALF, Y7, Y7
	VXORPS       Y8, Y8, Y8
	VSUBPS       Y7, Y8, Y7
	EXP8(Y7, Y2, Y3, Y4, Y5)
	VMULPS       RSQRT2PI, Y7, Y7
	VFMADD231PS  Y7, Y0, Y1
	VMULPS       (DI), Y1, Y1
	VMOVUPS      Y1, (DI)
	ADDQ         $32, DI
	ADDQ         $32, SI
	DECQ         CX
	JNE          ggLoop
ggDone:
	VZEROUPPER
	RET
