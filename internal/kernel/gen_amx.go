//go:build ignore

// gen_amx writes amx_amd64.s: GemmBF16's AMX-BF16 kernel, which multiplies
// packed bfloat16 blocks with TDPBF16PS into 32×32 blocks of C held in four
// accumulator tiles.
//
// Go's assembler knows no AMX instruction, so the generator encodes them as
// bytes (VEX.128, map 0F38, W0), from the Intel SDM:
//
//	LDTILECFG m512            VEX.128.NP.0F38.W0 49 !(11):000:bbb
//	TILERELEASE               VEX.128.NP.0F38.W0 49 C0
//	TILEZERO tmm              VEX.128.F2.0F38.W0 49 11:rrr:000
//	TILELOADD tmm, [b+i*1+d]  VEX.128.F2.0F38.W0 4B !(11):rrr:100 (SIB)
//	TILESTORED [b+i*1+d], tmm VEX.128.F3.0F38.W0 4B !(11):rrr:100 (SIB)
//	TDPBF16PS t1, t2, t3      VEX.128.F3.0F38.W0 5C 11:t1:t2, vvvv = t3
//
// and checks its encoder against the bytes GNU as 2.40 gives for the same
// instructions (gcc -c -mamx-tile -mamx-bf16, objdump -d), listed in
// gasBytes, before writing anything.
//
//	go generate ./internal/kernel
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"strings"
)

// Go's register numbers.
var regs = map[string]int{"AX": 0, "CX": 1, "DX": 2, "BX": 3, "SP": 4, "BP": 5, "SI": 6, "DI": 7,
	"R8": 8, "R9": 9, "R10": 10, "R11": 11, "R12": 12, "R13": 13, "R14": 14, "R15": 15}

// vex3 is the three-byte VEX prefix for map 0F38, W0, L0: R is always 0 (the
// tile registers and the reserved ModRM.reg of LDTILECFG are below 8), X and
// B extend the SIB index and the base, vvvv names a register (1111 if
// none), pp is the implied prefix (0 none, 1 66, 2 F3, 3 F2).
func vex3(x, b, vvvv, pp int) []byte {
	return []byte{0xc4, byte(1<<7 | (^x&1)<<6 | (^b&1)<<5 | 0x02), byte((^vvvv&15)<<3 | pp)}
}

// mem encodes ModRM (with reg), SIB and displacement for [base + index*1 + disp].
func mem(reg int, base, index string, disp int) (x, b int, tail []byte) {
	rb, ri := regs[base], regs[index]
	if ri == 4 {
		log.Fatalf("SP cannot be an index")
	}
	mod := 0
	if disp != 0 || rb&7 == 5 {
		mod = 1
		if disp < -128 || disp > 127 {
			log.Fatalf("displacement %d does not fit a byte", disp)
		}
	}
	tail = []byte{byte(mod<<6 | reg<<3 | 4), byte((ri&7)<<3 | rb&7)}
	if mod == 1 {
		tail = append(tail, byte(int8(disp)))
	}
	return ri >> 3, rb >> 3, tail
}

func ldtilecfg(base string) []byte {
	rb := regs[base]
	if rb&7 == 4 || rb&7 == 5 {
		log.Fatalf("LDTILECFG: base %s needs a SIB or displacement", base)
	}
	return append(vex3(0, rb>>3, 0, 0), 0x49, byte(rb&7))
}

func tilerelease() []byte { return append(vex3(0, 0, 0, 0), 0x49, 0xc0) }

func tilezero(t int) []byte { return append(vex3(0, 0, 0, 3), 0x49, byte(0xc0|t<<3)) }

func tileloadd(t int, base, index string, disp int) []byte {
	x, b, tail := mem(t, base, index, disp)
	return append(append(vex3(x, b, 0, 3), 0x4b), tail...)
}

func tilestored(base, index string, disp, t int) []byte {
	x, b, tail := mem(t, base, index, disp)
	return append(append(vex3(x, b, 0, 2), 0x4b), tail...)
}

// tdpbf16ps: dst += a·b, a's rows the rows of C, b's the pairs of k.
func tdpbf16ps(dst, a, b int) []byte {
	return append(vex3(0, 0, b, 2), 0x5c, byte(0xc0|dst<<3|a))
}

// gasBytes are GNU as's encodings (Intel syntax) of instructions the
// kernel uses, or of the same forms.
var gasBytes = []struct {
	got  []byte
	want string
}{
	{ldtilecfg("DI"), "c4 e2 78 49 07"},                      // ldtilecfg [rdi]
	{ldtilecfg("AX"), "c4 e2 78 49 00"},                      // ldtilecfg [rax]
	{tilerelease(), "c4 e2 78 49 c0"},                        // tilerelease
	{tilezero(0), "c4 e2 7b 49 c0"},                          // tilezero tmm0
	{tilezero(3), "c4 e2 7b 49 d8"},                          // tilezero tmm3
	{tileloadd(0, "CX", "R10", 0), "c4 a2 7b 4b 04 11"},      // tileloadd tmm0,[rcx+r10*1]
	{tileloadd(1, "BX", "R10", 0), "c4 a2 7b 4b 0c 13"},      // tileloadd tmm1,[rbx+r10*1]
	{tileloadd(4, "SI", "R8", 0), "c4 a2 7b 4b 24 06"},       // tileloadd tmm4,[rsi+r8*1]
	{tileloadd(5, "AX", "R8", 0), "c4 a2 7b 4b 2c 00"},       // tileloadd tmm5,[rax+r8*1]
	{tileloadd(6, "DX", "R9", 0), "c4 a2 7b 4b 34 0a"},       // tileloadd tmm6,[rdx+r9*1]
	{tileloadd(7, "BX", "R9", 0), "c4 a2 7b 4b 3c 0b"},       // tileloadd tmm7,[rbx+r9*1]
	{tileloadd(6, "DX", "R9", 64), "c4 a2 7b 4b 74 0a 40"},   // tileloadd tmm6,[rdx+r9*1+0x40]
	{tileloadd(4, "BX", "R8", 0), "c4 a2 7b 4b 24 03"},       // tileloadd tmm4,[rbx+r8*1]
	{tileloadd(5, "R14", "R8", 0), "c4 82 7b 4b 2c 06"},      // tileloadd tmm5,[r14+r8*1]
	{tileloadd(6, "R15", "R9", 0), "c4 82 7b 4b 34 0f"},      // tileloadd tmm6,[r15+r9*1]
	{tileloadd(7, "R15", "R9", 64), "c4 82 7b 4b 7c 0f 40"},  // tileloadd tmm7,[r15+r9*1+0x40]
	{tileloadd(0, "DI", "R10", 0), "c4 a2 7b 4b 04 17"},      // tileloadd tmm0,[rdi+r10*1]
	{tileloadd(1, "DI", "R10", 64), "c4 a2 7b 4b 4c 17 40"},  // tileloadd tmm1,[rdi+r10*1+0x40]
	{tilestored("CX", "R10", 0, 0), "c4 a2 7a 4b 04 11"},     // tilestored [rcx+r10*1],tmm0
	{tilestored("BX", "R10", 0, 1), "c4 a2 7a 4b 0c 13"},     // tilestored [rbx+r10*1],tmm1
	{tilestored("DI", "R10", 64, 1), "c4 a2 7a 4b 4c 17 40"}, // tilestored [rdi+r10*1+0x40],tmm1
	{tilestored("BX", "R10", 64, 3), "c4 a2 7a 4b 5c 13 40"}, // tilestored [rbx+r10*1+0x40],tmm3
	{tileloadd(2, "BX", "R10", 0), "c4 a2 7b 4b 14 13"},      // tileloadd tmm2,[rbx+r10*1]
	{tileloadd(3, "BX", "R10", 64), "c4 a2 7b 4b 5c 13 40"},  // tileloadd tmm3,[rbx+r10*1+0x40]
	{tilestored("DI", "R10", 0, 0), "c4 a2 7a 4b 04 17"},     // tilestored [rdi+r10*1],tmm0
	{tilestored("BX", "R10", 0, 2), "c4 a2 7a 4b 14 13"},     // tilestored [rbx+r10*1],tmm2
	{tdpbf16ps(0, 4, 6), "c4 e2 4a 5c c4"},                   // tdpbf16ps tmm0,tmm4,tmm6
	{tdpbf16ps(1, 4, 7), "c4 e2 42 5c cc"},                   // tdpbf16ps tmm1,tmm4,tmm7
	{tdpbf16ps(2, 5, 6), "c4 e2 4a 5c d5"},                   // tdpbf16ps tmm2,tmm5,tmm6
	{tdpbf16ps(3, 5, 7), "c4 e2 42 5c dd"},                   // tdpbf16ps tmm3,tmm5,tmm7
}

func hex(b []byte) string {
	s := make([]string, len(b))
	for i, x := range b {
		s[i] = fmt.Sprintf("%02x", x)
	}
	return strings.Join(s, " ")
}

func main() {
	for _, c := range gasBytes {
		if got := hex(c.got); got != c.want {
			log.Fatalf("encoder gives %s, GNU as %s", got, c.want)
		}
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by gen_amx.go; DO NOT EDIT.\n\n//go:build !purego\n\n#include \"textflag.h\"\n")
	kernel(&b)
	if err := os.WriteFile("amx_amd64.s", b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

// kernel writes amxTiles. Tiles: tmm0..3 the accumulators of a 32×32 block
// of C (tmm0 rows 0–15 columns 0–15, tmm1 rows 0–15 columns 16–31, tmm2 and
// tmm3 rows 16–31), tmm4 and tmm5 the two 16-row tiles of A, tmm6 and tmm7
// the two 16-column tiles of B, every tile 16 rows of 64 bytes (the
// configuration Go passes). One k step (16 pairs, 32 values of k) loads
// four tiles and issues four TDPBF16PS.
func kernel(b *bytes.Buffer) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	enc := func(code []byte, comment string) {
		s := make([]string, len(code))
		for i, x := range code {
			s[i] = fmt.Sprintf("BYTE $0x%02x", x)
		}
		p("\t%s // %s", strings.Join(s, "; "), comment)
	}
	p("")
	p("// func amxTiles(cfg *byte, a *uint32, lda, aTile int, b *uint32, bPanel int, c *float32, ldc, cTile int, strips, panels, ksteps, acc int)")
	p("//")
	p("// AMX-BF16: for each of panels B panels (32 columns, bPanel bytes apart) and")
	p("// each of strips A strips (32 rows, 2·aTile bytes apart), C's 32×32 block")
	p("// (+)= A strip · B panel over ksteps steps of 32 k. A: rows of bfloat16 pairs,")
	p("// lda bytes apart, aTile = 16·lda; B: rows of 32 pairs (one pair of k, 32")
	p("// columns), 128 bytes apart; C: float32 rows ldc bytes apart, cTile = 16·ldc,")
	p("// the block of strip i and panel j at c + 2·i·cTile + 128·j. acc ≠ 0 loads")
	p("// C's old values into the accumulators, acc = 0 starts them at zero. The")
	p("// tile configuration is loaded from cfg on entry and the tiles released on")
	p("// return: no Go code runs while the tiles are live.")
	p("TEXT ·amxTiles(SB), NOSPLIT, $0-104")
	p("\tMOVQ cfg+0(FP), DI")
	enc(ldtilecfg("DI"), "LDTILECFG (DI)")
	for _, s := range []string{"MOVQ a+8(FP), SI", "MOVQ lda+16(FP), R8", "MOVQ b+32(FP), DX", "MOVQ $128, R9",
		"MOVQ c+48(FP), CX", "MOVQ ldc+56(FP), R10", "MOVQ panels+80(FP), R12"} {
		p("\t%s", s)
	}
	p("")
	p("amxpanel:")
	p("\tMOVQ strips+72(FP), R11")
	p("\tMOVQ SI, AX")
	p("\tMOVQ CX, DI")
	p("")
	p("amxstrip:")
	p("\tMOVQ DI, BX")
	p("\tADDQ cTile+64(FP), BX")
	p("\tCMPQ acc+96(FP), $0")
	p("\tJEQ  amxzero")
	enc(tileloadd(0, "DI", "R10", 0), "TILELOADD (DI)(R10*1), TMM0")
	enc(tileloadd(1, "DI", "R10", 64), "TILELOADD 64(DI)(R10*1), TMM1")
	enc(tileloadd(2, "BX", "R10", 0), "TILELOADD (BX)(R10*1), TMM2")
	enc(tileloadd(3, "BX", "R10", 64), "TILELOADD 64(BX)(R10*1), TMM3")
	p("\tJMP  amxk")
	p("")
	p("amxzero:")
	for t := range 4 {
		enc(tilezero(t), fmt.Sprintf("TILEZERO TMM%d", t))
	}
	p("")
	p("amxk:")
	for _, s := range []string{"MOVQ AX, BX", "MOVQ AX, R14", "ADDQ aTile+24(FP), R14", "MOVQ DX, R15",
		"MOVQ ksteps+88(FP), R13"} {
		p("\t%s", s)
	}
	p("")
	p("amxkloop:")
	enc(tileloadd(4, "BX", "R8", 0), "TILELOADD (BX)(R8*1), TMM4")
	enc(tileloadd(6, "R15", "R9", 0), "TILELOADD (R15)(R9*1), TMM6")
	enc(tdpbf16ps(0, 4, 6), "TDPBF16PS TMM6, TMM4, TMM0")
	enc(tileloadd(7, "R15", "R9", 64), "TILELOADD 64(R15)(R9*1), TMM7")
	enc(tdpbf16ps(1, 4, 7), "TDPBF16PS TMM7, TMM4, TMM1")
	enc(tileloadd(5, "R14", "R8", 0), "TILELOADD (R14)(R8*1), TMM5")
	enc(tdpbf16ps(2, 5, 6), "TDPBF16PS TMM6, TMM5, TMM2")
	enc(tdpbf16ps(3, 5, 7), "TDPBF16PS TMM7, TMM5, TMM3")
	for _, s := range []string{"ADDQ $64, BX", "ADDQ $64, R14", "ADDQ $2048, R15", "DECQ R13", "JNE  amxkloop"} {
		p("\t%s", s)
	}
	p("")
	enc(tilestored("DI", "R10", 0, 0), "TILESTORED TMM0, (DI)(R10*1)")
	enc(tilestored("DI", "R10", 64, 1), "TILESTORED TMM1, 64(DI)(R10*1)")
	p("\tMOVQ DI, BX")
	p("\tADDQ cTile+64(FP), BX")
	enc(tilestored("BX", "R10", 0, 2), "TILESTORED TMM2, (BX)(R10*1)")
	enc(tilestored("BX", "R10", 64, 3), "TILESTORED TMM3, 64(BX)(R10*1)")
	for _, s := range []string{"MOVQ aTile+24(FP), R13", "LEAQ (AX)(R13*2), AX", "MOVQ cTile+64(FP), R13",
		"LEAQ (DI)(R13*2), DI", "DECQ R11", "JNE  amxstrip"} {
		p("\t%s", s)
	}
	p("")
	for _, s := range []string{"ADDQ bPanel+40(FP), DX", "ADDQ $128, CX", "DECQ R12", "JNE  amxpanel"} {
		p("\t%s", s)
	}
	enc(tilerelease(), "TILERELEASE")
	p("\tRET")
}
