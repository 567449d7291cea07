package kernel

import (
	"sync"
	"unsafe"
)

// GemmBF16 on AMX-BF16. TDPBF16PS multiplies a tile of 16 rows × 16 pairs
// of k (bfloat16) by one of 16 pairs × 16 columns and adds the 16×16 float32
// products into an accumulator tile: 8,192 multiply-adds per instruction.
// amxTiles keeps a 32×32 block of C in four accumulator tiles and takes k
// 32 values (16 pairs) at a time. The packed operands are GemmBF16's own
// (bf16.go) with k padded: A row by row, kpp pairs per row (kpp a multiple
// of 16, the pairs past k zero) and rows up to a multiple of 32 (zero); B in
// panels of 32 columns (bfNR), kpp pair rows of 32 words each, which is the
// pair-interleaved layout a B tile wants (a tile is 16 pair rows × 16
// columns of one panel, loaded 128 bytes a row).
//
// The k blocks of amxKC values are summed into C in the accumulator tiles:
// the first block starts from zero, or from C's old value if the caller
// accumulates; each later block starts from the C the previous one stored.
// Blocks of C past the last full 32 rows or columns go through a scratch
// buffer that holds C's old value the same way, so every element is
// computed by the same operations wherever it lies: a row of X·W does not
// depend on the other rows, and the split across cores changes no bit.

const (
	// amxKC is the k block: a B panel of 256 pairs × 32 columns and an A
	// strip of 32 rows × 256 pairs are 32 KiB each.
	amxKC = 512
	// amxMC is the rows of a packed A block (a multiple of 32).
	amxMC = 128
	// amxParallelMACs is the product size (m·n·k) from which the AMX path
	// splits its work across cores.
	amxParallelMACs = 1 << 24
)

var (
	amxOnce sync.Once
	// hasAMX is set once, by the first GemmBF16 (or BF16Kernel): the CPU
	// has AMX-TILE and AMX-BF16 and the OS granted the tile state.
	hasAMX bool
	// bf16AMX selects the AMX path (hasAMX; tests clear it).
	bf16AMX bool
	// amxCfg is the tile configuration (palette 1): tmm0–7 all 16 rows of
	// 64 bytes.
	amxCfg [64]byte
)

func initAMX() {
	amxCfg[0] = 1
	for t := range 8 {
		amxCfg[16+2*t] = 64 // colsb, little-endian uint16
		amxCfg[48+t] = 16   // rows
	}
	hasAMX = requestAMX()
	bf16AMX = hasAMX
}

// BF16Kernel names the kernel GemmBF16 runs on this machine: "amx" (AMX-BF16
// tile instructions, TDPBF16PS; Intel Xeon from Sapphire Rapids on, on Linux,
// which must grant the process the tile state), "avx512bf16" (VDPBF16PS) or
// "go" (portable, a few percent of float32 Gemm's speed). The first call
// asks the OS for the AMX permission if the CPU has AMX.
func BF16Kernel() string {
	amxOnce.Do(initAMX)
	switch {
	case bf16AMX:
		return "amx"
	case bf16Asm:
		return "avx512bf16"
	case bf16FMA && backend != BackendGo:
		return "fma"
	}
	return "go"
}

// gemmAMX is GemmBF16 (shapes checked, m, n, k > 0) on AMX: split like the
// VDPBF16PS path, in multiples of 32 rows or columns.
func gemmAMX(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	parts := shareCount()
	if parts == 1 || m*n*k < amxParallelMACs || (m < 64 && n < 64) {
		s := scratchPool.Get().(*scratch)
		blockedAMX(s, transA, transB, 0, m, 0, n, k, a, lda, b, ldb, c, ldc, accumulate)
		scratchPool.Put(s)
		return
	}
	j := newJob()
	s := share{run: runAMX, transA: transA, transB: transB, lo: 0, hi: m, jlo: 0, jhi: n,
		n: n, k: k, a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc, accumulate: accumulate}
	if m >= 2*amxMC || n < 64 {
		chunk := roundUpBF((m+parts-1)/parts, 32)
		for lo := 0; lo < m; lo += chunk {
			s.lo, s.hi = lo, min(lo+chunk, m)
			j.add(s)
		}
	} else {
		chunk := roundUpBF((n+parts-1)/parts, 32)
		for lo := 0; lo < n; lo += chunk {
			s.jlo, s.jhi = lo, min(lo+chunk, n)
			j.add(s)
		}
	}
	j.run()
}

func runAMX(s share, scr *scratch) {
	blockedAMX(scr, s.transA, s.transB, s.lo, s.hi, s.jlo, s.jhi, s.k, s.a, s.lda, s.b, s.ldb, s.c, s.ldc, s.accumulate)
}

// blockedAMX adds (or stores) op(A)[lo:hi, :]·op(B)[:, jlo:jhi] into C: for
// each k block, B's columns are packed once and A's rows block by block;
// one amxTiles call covers the block's full 32×32 blocks of C in place, and
// at most two more its last rows and columns through s.tile.
func blockedAMX(s *scratch, transA, transB bool, lo, hi, jlo, jhi, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	nc := jhi - jlo
	panels, wEdge := nc/32, nc%32
	for p0 := 0; p0 < k; p0 += amxKC {
		kc := min(amxKC, k-p0)
		kpp := roundUpBF((kc+1)/2, 16)
		acc := 1
		if p0 == 0 && !accumulate {
			acc = 0
		}
		pb := packBBF16(s, transB, b, ldb, jlo, jhi, p0, kc, kpp)
		for i0 := lo; i0 < hi; i0 += amxMC {
			mc := min(amxMC, hi-i0)
			pa := packAAMX(s, transA, a, lda, i0, mc, p0, kc, kpp)
			strips, hEdge := mc/32, mc%32
			if strips > 0 && panels > 0 {
				// The last element written lies in C.
				_ = c[(i0+32*strips-1)*ldc+jlo+32*panels-1]
				amxTiles(&amxCfg[0], &pa[0], 4*kpp, 64*kpp, &pb[0], 128*kpp,
					&c[i0*ldc+jlo], 4*ldc, 64*ldc, strips, panels, kpp/16, acc)
			}
			if wEdge > 0 {
				// The last columns, every row of the block.
				amxEdge(s, pa, kpp, 0, mc, pb[32*panels*kpp:], panels*32, nc, c, i0, jlo, ldc, acc)
			}
			if hEdge > 0 && panels > 0 {
				// The last rows, the full panels.
				amxEdge(s, pa, kpp, 32*strips, mc, pb, 0, 32*panels, c, i0, jlo, ldc, acc)
			}
		}
	}
}

// amxEdge computes rows [r0, r1) and columns [j0, j1) of the block of C at
// row i0, column jlo (relative to it) through s.tile: C's old values copied
// in (if acc), amxTiles over the strips and panels the edge touches, the
// part in C copied back. pa is the packed A block, pb the packed B from
// panel j0/32 on.
func amxEdge(s *scratch, pa []uint32, kpp, r0, r1 int, pb []uint32, j0, j1 int, c []float32, i0, jlo, ldc, acc int) {
	rows, cols := roundUpBF(r1-r0, 32), roundUpBF(j1-j0, 32)
	t := growF32s(&s.tile, rows*cols)
	w := j1 - j0
	if acc != 0 {
		for r := r0; r < r1; r++ {
			copy(t[(r-r0)*cols:(r-r0)*cols+w], c[(i0+r)*ldc+jlo+j0:])
		}
	}
	_ = pa[(r0+rows)*kpp-1]
	_ = pb[cols*kpp-1]
	amxTiles(&amxCfg[0], &pa[r0*kpp], 4*kpp, 64*kpp, &pb[0], 128*kpp,
		&t[0], 4*cols, 64*cols, rows/32, cols/32, kpp/16, acc)
	for r := r0; r < r1; r++ {
		copy(c[(i0+r)*ldc+jlo+j0:(i0+r)*ldc+jlo+j1], t[(r-r0)*cols:])
	}
}

// packAAMX packs op(A)[i0:i0+mc, p0:p0+kc] row by row, kpp pairs per row,
// rows up to a multiple of 32; the padding is zero. A transposed A (stored
// k×m) is paired pair row by pair row first, as packABF16 does, then
// transposed as 32-bit words.
func packAAMX(s *scratch, transA bool, a []float32, lda, i0, mc, p0, kc, kpp int) []uint32 {
	kp, k2 := (kc+1)/2, kc/2
	rows := roundUpBF(mc, 32)
	pa := growU32(&s.bfA, rows*kpp)
	if !transA {
		pairCols(pa, kpp, a[i0*lda+p0:], lda, mc, k2)
		if kc%2 == 1 {
			for i := range mc {
				pa[i*kpp+k2] = bf16Round(a[(i0+i)*lda+p0+kc-1])
			}
		}
		if kp < kpp {
			for i := range mc {
				clear(pa[i*kpp+kp : (i+1)*kpp])
			}
		}
		clear(pa[mc*kpp:])
		return pa
	}
	t := growU32(&s.bfT, kpp*rows)
	pairRows(t, rows, bfNR, a[p0*lda+i0:], lda, k2, mc)
	if kc%2 == 1 {
		last := a[(p0+kc-1)*lda+i0 : (p0+kc-1)*lda+i0+mc]
		d := t[k2*rows : k2*rows+mc]
		for i, v := range last {
			d[i] = bf16Round(v)
		}
	}
	if mc < rows {
		for q := range kp {
			clear(t[q*rows+mc : (q+1)*rows])
		}
	}
	clear(t[kp*rows:])
	transposeWords(pa, kpp, t, rows)
	return pa
}

// transposeWords sets dst[i·q + p] = src[p·r + i] for p < q, i < r (q and r
// multiples of 8): eight rows of src at a time through transpose8 where the
// SIMD element-wise kernels exist. The words are moved, not converted.
func transposeWords(dst []uint32, q int, src []uint32, r int) {
	_ = dst[r*q-1]
	_ = src[q*r-1]
	if simdElementwise {
		f32 := func(x *uint32) *float32 { return (*float32)(unsafe.Pointer(x)) }
		for p := 0; p < q; p += 8 {
			transpose8(f32(&dst[p]), q, f32(&src[p*r]), r, r/8)
		}
		return
	}
	for p := range q {
		row := src[p*r : (p+1)*r]
		for i, v := range row {
			dst[i*q+p] = v
		}
	}
}
