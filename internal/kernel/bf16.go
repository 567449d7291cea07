package kernel

import "math"

// bfloat16 products. A bfloat16 is the top half of a float32 (sign, the
// same 8-bit exponent, 7 stored significand bits), so converting is
// rounding at bit 16 and widening is a shift. GemmBF16 rounds both operands
// to bfloat16 while packing them and sums their products in float32: on CPUs
// with AVX512_BF16 one VDPBF16PS does 32 multiply-adds (16 lanes × a pair of
// k), twice VFMADD231PS's 16.
//
// Without those instructions (the fma path, bf16_fma.go) the operands are
// rounded into float32 copies and multiplied by the float32 kernel.
//
// Packed layout: k is taken in pairs, each pair of bfloat16 values in one
// 32-bit word (k = 2q in the low half, 2q+1 in the high half; an odd k's
// last pair has a zero high half). B is packed per k block into panels of
// bfNR columns, panel row q holding the bfNR words of pair q. A is packed
// per block of bfMC rows, either row by row (word (i, q) at i·kp + q, from
// a row-major A) or pair by pair (word (i, q) at q·rows + i, from a
// transposed one); the micro-kernel reads both through a row and a pair
// stride.

const (
	// bfKC is the k block (even, so pairs never straddle blocks): a B panel
	// of bfKC/2 pairs × bfNR words is 32 KiB, within L1.
	bfKC = 512
	// bfMC is the rows of a packed A block (a multiple of bfMR): 120 rows ×
	// 256 pairs is 120 KiB, within L2.
	bfMC = 120
	// bfMR × bfNR is the micro-kernel's tile: 12 rows × 2 vectors of 16
	// float32 lanes is 24 accumulators, enough to cover a 6-cycle latency
	// at two instructions per cycle, with the two B vectors and six
	// broadcasts in the 32 ZMM registers. (The Xeon measured issues one
	// VDPBF16PS per two cycles, whatever the vector width, and the kernel
	// reaches about 97% of that.)
	bfMR = 12
	bfNR = 32
	// bfParallelMACs is the product size (m·n·k) from which GemmBF16 splits
	// its work across cores: twice float32's (the kernel is twice as fast),
	// so a share is again about 80 µs of one core's work.
	bfParallelMACs = 1 << 24
)

// hasBF16 is set by init on CPUs with AVX512_BF16; bf16Asm selects the
// assembly kernel and conversions (tests clear it to run the portable ones).
var hasBF16, bf16Asm bool

// HasBF16 reports whether GemmBF16 runs on bfloat16 hardware here: AMX-BF16
// (see BF16Kernel), or the AVX512_BF16 instructions (CPUID leaf 7, subleaf
// 1, EAX bit 5, with the AVX-512 register state enabled by the operating
// system) that its VDPBF16PS micro-kernel needs. Without either, GemmBF16
// runs the float32 kernel on rounded operands where the CPU has AVX2 and
// FMA (about Gemm's speed, see HasBF16Path), else portable Go at 2–8
// GFLOP/s, a few percent of Gemm's speed, which a caller should refuse,
// naming the features.
// Having the instructions does not make them fast. On the Intel Xeon
// (Emerald Rapids) this was measured on, VDPBF16PS issues once every two
// cycles, a quarter of VFMADD231PS's rate for twice its multiply-adds, and
// that path runs at about 0.55 of Gemm's speed; the same CPU's AMX tiles
// run GemmBF16 at 2–5 times Gemm's speed on products of a few hundred rows
// and more (docs/results/bf16-kernels.md). The first call may ask the OS
// for the AMX tile state, as BF16Kernel does.
func HasBF16() bool {
	amxOnce.Do(initAMX)
	return hasBF16 || hasAMX
}

// HasBF16Path reports whether GemmBF16 runs here on a path within reach of
// float32 Gemm's speed: bfloat16 hardware (HasBF16) or the float32 SIMD
// kernel on operands rounded to bfloat16 (BF16Kernel "fma": AVX2 and FMA).
// Only the portable Go path, a few percent of Gemm's speed, is not.
func HasBF16Path() bool { return BF16Kernel() != "go" }

// GemmBF16 is Gemm with both operands rounded to bfloat16: C = op(A)·op(B),
// or C += op(A)·op(B) when accumulate is true, for float32 A, B and C.
// Every element of op(A) and op(B) is rounded to the nearest bfloat16 (ties
// to even; NaN stays NaN, ±Inf stays ±Inf), products are exact and their
// sums are float32. A bfloat16 keeps 8 significant bits, so each rounded
// operand is within a relative 2^-8 of its float32 value, each product
// within 2^-7 + 2^-16, and
//
//	|C - op(A)·op(B)| ≤ (2^-7 + 2^-16 + γ·(1+2^-8)²)·Σ_p |A(i,p)|·|B(p,j)| + γ·|C₀|,
//
// γ = n·2^-24/(1 - n·2^-24) with n = k + ⌈k/256⌉ + 1 bounding the float32
// roundings a product goes through, and C₀ C's old value if accumulating: no factor k
// on the rounding of the operands, which the tests check. Bfloat16 subnormals (below 2^-126 in
// magnitude) count as zero, as VDPBF16PS and TDPBF16PS read them.
//
// Four paths compute this; BF16Kernel names the one that runs. On the
// AVX512_BF16 path ("avx512bf16") the sum for each element runs in k order
// in blocks of 512, the odd k of each pair first, and C₀ is added last; the
// portable path ("go") follows the same order, so both give the same bits
// unless a product or a partial sum is a float32 subnormal (below 2^-126),
// which the instruction flushes to zero and Go rounds gradually; each flush
// moves a sum by less than 2^-126, so then each path is within
// γ·(Σ_p |Â(i,p)|·|B̂(p,j)| + |C₀|) + (2k+2)·2^-126 of the exact product of
// the rounded operands Â, B̂, and the two paths differ by at most twice
// that. The AMX path ("amx") starts each element from C₀ (or zero) and
// lets TDPBF16PS add the products 32 values of k at a time, in an order and
// with intermediate roundings of the hardware's own: the Intel SDM's
// pseudocode is a sequential float32 sum, but the results measured on
// Emerald Rapids match no sequential order. So its bits differ from the
// other paths'; it meets the same bounds in the tests (it flushes
// subnormals too), so it is within twice them of the portable path. The
// fma path, for CPUs with AVX2 and FMA but no bfloat16 instructions, rounds
// the operands (subnormals to zero) into float32 copies and runs Gemm on
// them: exact products, float32 sums in Gemm's order (k blocks of 256, C₀
// added first), partial sums never flushed; it meets the same bounds, so
// it too is within twice them of the portable path.
// On every path the split across cores never changes a bit, as with Gemm,
// and a row of X·W does not depend on the other rows. GemmBF16 panics if a slice is too
// short for the shapes given: that is a programmer error.
func GemmBF16(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	if m == 0 || n == 0 {
		return
	}
	checkShape("A", transA, m, k, len(a), lda)
	checkShape("B", transB, k, n, len(b), ldb)
	checkShape("C", false, m, n, len(c), ldc)
	if k == 0 {
		if !accumulate {
			for i := range m {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	if amxOnce.Do(initAMX); bf16AMX {
		gemmAMX(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
		return
	}
	if bf16FMA && backend != BackendGo {
		gemmBF16FMA(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
		return
	}
	parts := shareCount()
	if parts == 1 || m*n*k < bfParallelMACs || m <= 2*bfMR {
		s := scratchPool.Get().(*scratch)
		blockedBF16(s, transA, transB, 0, m, 0, n, k, a, lda, b, ldb, c, ldc, accumulate)
		scratchPool.Put(s)
		return
	}
	j := newJob()
	s := share{run: runBF16, transA: transA, transB: transB, lo: 0, hi: m, jlo: 0, jhi: n,
		n: n, k: k, a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc, accumulate: accumulate}
	if m >= 2*bfMC || n < 2*bfNR {
		chunk := roundUpBF((m+parts-1)/parts, bfMR)
		for lo := 0; lo < m; lo += chunk {
			s.lo, s.hi = lo, min(lo+chunk, m)
			j.add(s)
		}
	} else {
		chunk := roundUpBF((n+parts-1)/parts, bfNR)
		for lo := 0; lo < n; lo += chunk {
			s.jlo, s.jhi = lo, min(lo+chunk, n)
			j.add(s)
		}
	}
	j.run()
}

func runBF16(s share, scr *scratch) {
	blockedBF16(scr, s.transA, s.transB, s.lo, s.hi, s.jlo, s.jhi, s.k, s.a, s.lda, s.b, s.ldb, s.c, s.ldc, s.accumulate)
}

func roundUpBF(x, m int) int { return (x + m - 1) / m * m }

func growU32(buf *[]uint32, n int) []uint32 {
	if cap(*buf) < n {
		*buf = make([]uint32, n)
	}
	return (*buf)[:n]
}

func growF32s(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	return (*buf)[:n]
}

// blockedBF16 adds (or stores) op(A)[lo:hi, :]·op(B)[:, jlo:jhi] into C.
// For each k block, B's columns are packed once and A's rows block by
// block; the micro-kernel multiplies each bfMR-row panel of A with each
// bfNR-column panel of B, partial tiles through a scratch tile.
func blockedBF16(s *scratch, transA, transB bool, lo, hi, jlo, jhi, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	tile := growF32s(&s.tile, bfMR*bfNR)
	for p0 := 0; p0 < k; p0 += bfKC {
		kc := min(bfKC, k-p0)
		kp := (kc + 1) / 2
		// The first k block stores over C unless the caller accumulates.
		acc := 1
		if p0 == 0 && !accumulate {
			acc = 0
		}
		pb := packBBF16(s, transB, b, ldb, jlo, jhi, p0, kc, kp)
		for i0 := lo; i0 < hi; i0 += bfMC {
			mc := min(bfMC, hi-i0)
			pa, rs, ps := packABF16(s, transA, a, lda, i0, mc, p0, kc)
			for j := jlo; j < jhi; j += bfNR {
				bp := pb[(j-jlo)*kp : (j-jlo+bfNR)*kp]
				w := min(bfNR, jhi-j)
				for r0 := 0; r0 < mc; r0 += bfMR {
					valid := min(bfMR, mc-r0)
					if w == bfNR && valid == bfMR {
						bfTile(kp, pa, r0*rs, rs, ps, bp, c, (i0+r0)*ldc+j, ldc, acc)
						continue
					}
					bfTile(kp, pa, r0*rs, rs, ps, bp, tile, 0, bfNR, 0)
					for r := range valid {
						crow := c[(i0+r0+r)*ldc+j : (i0+r0+r)*ldc+j+w]
						t := tile[r*bfNR : r*bfNR+w]
						if acc == 0 {
							copy(crow, t)
							continue
						}
						for q, v := range t {
							crow[q] += v
						}
					}
				}
			}
		}
	}
}

// bfTile computes a bfMR×bfNR tile, C[coff + i·ldc + j] (+)= Σ_q A(i, q)·B(q, j)
// over kp pairs, with A(i, q) = a[aoff + i·rs + q·ps] and B(q, j) = b[q·bfNR + j].
func bfTile(kp int, a []uint32, aoff, rs, ps int, b []uint32, c []float32, coff, ldc, acc int) {
	// Every word the kernels read and write must lie in the slices.
	_ = a[aoff+(bfMR-1)*rs+(kp-1)*ps]
	_ = b[kp*bfNR-1]
	_ = c[coff+(bfMR-1)*ldc+bfNR-1]
	if bf16Asm {
		bfkern12x32(kp, &a[aoff], rs, ps, &b[0], bfNR, &c[coff], ldc, acc)
		return
	}
	bfTileGo(kp, a, aoff, rs, ps, b, c, coff, ldc, acc)
}

// bfWiden returns the float32 values of the two bfloat16 halves of w (k = 2q
// from the low half, 2q+1 from the high one), subnormals read as zero as
// VDPBF16PS reads them.
func bfWiden(w uint32) (lo, hi float32) {
	l, h := w<<16, w&0xffff0000
	if l&0x7f800000 == 0 {
		l = 0
	}
	if h&0x7f800000 == 0 {
		h = 0
	}
	return math.Float32frombits(l), math.Float32frombits(h)
}

// bfTileGo is the portable micro-kernel: each element's sum starts from
// zero and adds, pair by pair, the high half's product and then the low
// half's, each rounded to float32, as VDPBF16PS does. The products of two
// bfloat16 values (8 significant bits each) are exact in float32.
func bfTileGo(kp int, a []uint32, aoff, rs, ps int, b []uint32, c []float32, coff, ldc, acc int) {
	var sum [bfMR][bfNR]float32
	var blo, bhi [bfNR]float32
	for q := range kp {
		for j, w := range b[q*bfNR : q*bfNR+bfNR] {
			blo[j], bhi[j] = bfWiden(w)
		}
		for i := range bfMR {
			alo, ahi := bfWiden(a[aoff+i*rs+q*ps])
			row := &sum[i]
			for j := range row {
				// The explicit conversions keep each product and sum rounded
				// apart (no fused multiply-add): the product is exact anyway.
				s := row[j] + float32(ahi*bhi[j])
				row[j] = s + float32(alo*blo[j])
			}
		}
	}
	for i := range bfMR {
		crow := c[coff+i*ldc : coff+i*ldc+bfNR]
		for j, v := range sum[i] {
			if acc != 0 {
				crow[j] += v
			} else {
				crow[j] = v
			}
		}
	}
}

// bf16Round returns the bfloat16 nearest x (ties to the even significand)
// in the low 16 bits: adding 0x7fff plus the lowest kept bit carries into
// bit 16 exactly when the dropped half is above one half, or equal to it
// with an odd kept part; the carry also takes the largest finite values to
// Inf. A NaN keeps its sign and top payload bits and is made quiet, so that
// dropping the low payload bits cannot turn it into Inf.
func bf16Round(x float32) uint32 {
	u := math.Float32bits(x)
	if u&0x7fffffff > 0x7f800000 {
		return u>>16 | 0x40
	}
	return (u + 0x7fff + u>>16&1) >> 16
}

// bfPair packs two float32 values as the bfloat16 pair word (lo, hi).
func bfPair(lo, hi float32) uint32 { return bf16Round(lo) | bf16Round(hi)<<16 }

// pairRows sets dst[q·ds + (j/bfNR)·cs + j%bfNR] = bfPair(src[2q·ss + j],
// src[(2q+1)·ss + j]) for q < rows2 and j < n: two rows of float32 become
// one row of pairs, cut every bfNR columns into chunks cs apart (cs = bfNR:
// one contiguous row).
func pairRows(dst []uint32, ds, cs int, src []float32, ss, rows2, n int) {
	if rows2 == 0 || n == 0 {
		return
	}
	// The last word written and the last value read.
	_ = dst[(rows2-1)*ds+(n-1)/bfNR*cs+(n-1)%bfNR]
	_ = src[(2*rows2-1)*ss+n-1]
	if bf16Asm {
		bfPairRows(&dst[0], ds, cs, &src[0], ss, rows2, n)
		return
	}
	for q := range rows2 {
		lo := src[2*q*ss : 2*q*ss+n]
		hi := src[(2*q+1)*ss : (2*q+1)*ss+n]
		for j0 := 0; j0 < n; j0 += bfNR {
			w := min(bfNR, n-j0)
			d := dst[q*ds+j0/bfNR*cs : q*ds+j0/bfNR*cs+w]
			for j := range d {
				d[j] = bfPair(lo[j0+j], hi[j0+j])
			}
		}
	}
}

// pairCols sets dst[r·ds + q] = bfPair(src[r·ss + 2q], src[r·ss + 2q+1]) for
// r < rows and q < np: neighbours along a row become one pair.
func pairCols(dst []uint32, ds int, src []float32, ss, rows, np int) {
	if rows == 0 || np == 0 {
		return
	}
	_ = dst[(rows-1)*ds+np-1]
	_ = src[(rows-1)*ss+2*np-1]
	if bf16Asm {
		bfPairCols(&dst[0], ds, &src[0], ss, rows, np)
		return
	}
	for r := range rows {
		d := dst[r*ds : r*ds+np]
		s := src[r*ss : r*ss+2*np]
		for q := range d {
			d[q] = bfPair(s[2*q], s[2*q+1])
		}
	}
}

// packBBF16 packs op(B)[p0:p0+kc, jlo:jhi] into panels of bfNR columns, each
// kpp ≥ (kc+1)/2 pair rows of bfNR words, columns past jhi, an odd kc's last
// high halves and the pair rows past (kc+1)/2 zero.
func packBBF16(s *scratch, transB bool, b []float32, ldb, jlo, jhi, p0, kc, kpp int) []uint32 {
	kp, k2 := (kc+1)/2, kc/2
	cols := roundUpBF(jhi-jlo, bfNR)
	pb := growU32(&s.bfB, cols*kpp)
	var panelT []float32
	if transB {
		panelT = growF32s(&s.b, kc*bfNR)
	}
	for j := jlo; j < jlo+cols; j += bfNR {
		panel := pb[(j-jlo)*kpp : (j-jlo+bfNR)*kpp]
		clear(panel[kp*bfNR:])
		w := min(bfNR, jhi-j)
		if transB {
			// B is stored n×k: transpose the panel's columns to kc rows of
			// bfNR float32 first (zero-padded), then pair its rows.
			transposePanel(panelT, b, ldb, j, w, p0, kc)
			pairRows(panel, bfNR, bfNR, panelT, bfNR, k2, bfNR)
			if kc%2 == 1 {
				last := panelT[(kc-1)*bfNR : kc*bfNR]
				d := panel[k2*bfNR : kp*bfNR]
				for jj, v := range last {
					d[jj] = bf16Round(v)
				}
			}
			continue
		}
		if kc%2 == 1 {
			last := b[(p0+kc-1)*ldb+j : (p0+kc-1)*ldb+j+w]
			d := panel[k2*bfNR : k2*bfNR+w]
			for jj, v := range last {
				d[jj] = bf16Round(v)
			}
		}
		if w < bfNR {
			for q := range kp {
				clear(panel[q*bfNR+w : (q+1)*bfNR])
			}
		}
	}
	if !transB {
		// Whole rows of B at once, each panel's part to its panel.
		pairRows(pb, bfNR, bfNR*kpp, b[p0*ldb+jlo:], ldb, k2, jhi-jlo)
	}
	return pb
}

// transposePanel writes dst[p·bfNR + jj] = B[j+jj, p0+p] for p < kc and
// jj < w, zero for jj ≥ w, B stored n×k: eight rows at a time through
// transpose8 where the SIMD element-wise kernels exist.
func transposePanel(dst []float32, b []float32, ldb, j, w, p0, kc int) {
	jj := 0
	if simdElementwise {
		if blocks := kc / 8; blocks > 0 {
			for ; jj+8 <= w; jj += 8 {
				// Rows j+jj..j+jj+7 end at (j+jj+7)·ldb + p0 + 8·blocks ≤ len(b).
				_ = b[(j+jj+7)*ldb+p0+8*blocks-1]
				_ = dst[(8*blocks-1)*bfNR+jj+7]
				transpose8(&dst[jj], bfNR, &b[(j+jj)*ldb+p0], ldb, blocks)
				for p := 8 * blocks; p < kc; p++ {
					for r := range 8 {
						dst[p*bfNR+jj+r] = b[(j+jj+r)*ldb+p0+p]
					}
				}
			}
		}
	}
	for ; jj < w; jj++ {
		row := b[(j+jj)*ldb+p0 : (j+jj)*ldb+p0+kc]
		for p, v := range row {
			dst[p*bfNR+jj] = v
		}
	}
	for ; jj < bfNR; jj++ {
		for p := range kc {
			dst[p*bfNR+jj] = 0
		}
	}
}

// packABF16 packs op(A)[i0:i0+mc, p0:p0+kc] for the micro-kernel, rows up to
// a multiple of bfMR (the padding zero), and returns the pairs with their
// row and pair strides: row by row from a row-major A, pair by pair from a
// transposed one (whose rows are then contiguous in each pair row).
func packABF16(s *scratch, transA bool, a []float32, lda, i0, mc, p0, kc int) (pa []uint32, rs, ps int) {
	kp, k2 := (kc+1)/2, kc/2
	rows := roundUpBF(mc, bfMR)
	pa = growU32(&s.bfA, rows*kp)
	if transA {
		// A is stored k×m: pair rows p0+2q and p0+2q+1 over columns i0..i0+mc.
		pairRows(pa, rows, bfNR, a[p0*lda+i0:], lda, k2, mc)
		if kc%2 == 1 {
			last := a[(p0+kc-1)*lda+i0 : (p0+kc-1)*lda+i0+mc]
			d := pa[k2*rows : k2*rows+mc]
			for i, v := range last {
				d[i] = bf16Round(v)
			}
		}
		if mc < rows {
			for q := range kp {
				clear(pa[q*rows+mc : (q+1)*rows])
			}
		}
		return pa, 1, rows
	}
	pairCols(pa, kp, a[i0*lda+p0:], lda, mc, k2)
	if kc%2 == 1 {
		for i := range mc {
			pa[i*kp+k2] = bf16Round(a[(i0+i)*lda+p0+kc-1])
		}
	}
	clear(pa[mc*kp:])
	return pa, kp, 1
}
