//go:build !purego

#include "textflag.h"

// func roundBF16s8(dst, src *float32, n int)
// dst[i] = src[i] rounded to bfloat16 and widened, n a multiple of 8:
// r = (u + 0x7fff + (u>>16 & 1)) &^ 0xffff; a NaN made quiet first; a
// result with a zero exponent made a zero of its sign (roundBF16s).
TEXT ·roundBF16s8(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JEQ  rbDone
	MOVL $1, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8 // 1
	MOVL $0x7fff, AX
	VMOVD AX, X9
	VPBROADCASTD X9, Y9 // 0x7fff
	MOVL $0xffff0000, AX
	VMOVD AX, X10
	VPBROADCASTD X10, Y10 // kept half
	MOVL $0x7fffffff, AX
	VMOVD AX, X11
	VPBROADCASTD X11, Y11 // magnitude
	MOVL $0x7f800000, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12 // Inf, the exponent field
	MOVL $0x00400000, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13 // quiet bit
	MOVL $0x80000000, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14 // sign
	VPXOR Y15, Y15, Y15
rbLoop:
	VMOVDQU (SI), Y0
	VPSRLD  $16, Y0, Y1
	VPAND   Y8, Y1, Y1
	VPADDD  Y0, Y1, Y1
	VPADDD  Y9, Y1, Y1
	VPAND   Y10, Y1, Y1 // rounded
	VPAND   Y11, Y0, Y2
	VPCMPGTD Y12, Y2, Y2 // NaN lanes
	VPOR    Y13, Y0, Y3
	VPAND   Y10, Y3, Y3 // quiet NaN, truncated
	VPBLENDVB Y2, Y3, Y1, Y1
	VPAND   Y12, Y1, Y4
	VPCMPEQD Y15, Y4, Y4 // zero exponent lanes
	VPAND   Y14, Y1, Y5
	VPBLENDVB Y4, Y5, Y1, Y1
	VMOVDQU Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNE     rbLoop
rbDone:
	VZEROUPPER
	RET
