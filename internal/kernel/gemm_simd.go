//go:build amd64 && !purego

package kernel

// SIMD path: a GotoBLAS-style blocked product. The k dimension is cut into
// blocks of kcBlock; for each, a block of mcBlock rows of op(A) is packed
// into micro-panels of mr rows (mr values contiguous per p), and a
// register-blocked micro-kernel multiplies each micro-panel with an nr-wide
// panel of B read in place (B is row-major after any transposition has been
// packed away). The packed A block stays in L2 and the B panel in L1.

const (
	kcBlock = 256
	mcBlock = 128
)

type microKernel struct {
	mr, nr int
	// mc is the rows of A per block (a multiple of mr, about mcBlock).
	mc int
	// parallelMACs is the product size (m·n·k) from which the work is split
	// across cores: handing a share to another core (waking an idle vCPU)
	// measured 20–35 µs on this project's 2-vCPU VMs, so a product pays
	// for it only from about 80 µs of one core's work.
	parallelMACs int
	// run adds (acc ≠ 0) or stores (acc = 0) an mr×nr tile of A·B, where
	// A(0..mr-1, p) are mr contiguous values at a + p·psA.
	run func(k int, a *float32, psA int, b *float32, ldb int, c *float32, ldc int, acc int)
	// few, when set, does the same for r < mr rows, with A(i, p) at
	// a[off + i·rsA + p·psA] and C at c[coff:]: a sampling step's few
	// distinct states would otherwise pay for a packed micro-panel of mostly
	// zero rows.
	few func(r, k int, a []float32, off, rsA, psA int, b *float32, ldb int, c []float32, coff, ldc, acc int)
	// rowStrided, when set, is run with A(i, p) at a + i·rsA + p·psA: the
	// AVX2 kernel reads the rows of a row-major A in place (rsA = lda,
	// psA = 1) instead of packing them (packing them is strided scalar
	// stores: a fifth of a 64-wide diffusion network's time measured here).
	rowStrided func(k int, a *float32, rsA, psA int, b *float32, ldb int, c *float32, ldc int, acc int)
	// packWideB packs a row-major B of packBCols columns or more (see
	// blocked).
	packWideB bool
	// wide, when set, holds for r < mr rows a kernel over wideCols(r)
	// columns of a row-major B read in place (same arguments as the few-row
	// kernels' pointers): a sampling step's product is then one pass with
	// enough accumulators, where the 32-column few kernels of one or two
	// rows were bound by the FMA latency.
	wide []wideKernel
}

type wideKernel func(k int, a *float32, rsA, psA int, b *float32, ldb int, c *float32, ldc int, acc int)

// wideCols is the column width of the r-row wide kernel; it must agree with
// wideZMM in gen_few.go.
func wideCols(r int) int {
	switch {
	case r <= 2:
		return 128
	case r <= 5:
		return 64
	}
	return 32
}

var (
	avx512Kernel = microKernel{8, 32, mcBlock, 1 << 23, kern8x32, few8x32, nil, false,
		[]wideKernel{nil, kern1w, kern2w, kern3w, kern4w, kern5w, kern6w, kern7w}}
	// The AVX2 tile is 6×16: twelve accumulators (a 4×16 tile's eight
	// left the FMA ports idle part of the time: on the AMD EPYC, the best
	// of 8 runs of 500×1024·1024×1024 went from 34 to 51 GFLOP/s, 64-wide
	// products stayed at 70–80). Blocks of 120 rows are 20 micro-panels.
	avx2Kernel = microKernel{6, 16, 120, 1 << 22, func(k int, a *float32, psA int, b *float32, ldb int, c *float32, ldc int, acc int) {
		kern6x16(k, a, 1, psA, b, ldb, c, ldc, acc)
	}, nil, kern6x16, true, nil}
)

// few8x32 covers r < 8 rows with the 4-, 2- and 1-row AVX-512 kernels.
func few8x32(r, k int, a []float32, off, rsA, psA int, b *float32, ldb int, c []float32, coff, ldc, acc int) {
	// The kernels read A up to row r-1 and p = k-1.
	_ = a[off+(r-1)*rsA+(k-1)*psA]
	for q := 0; q < r; {
		ap, cp := &a[off+q*rsA], &c[coff+q*ldc]
		switch {
		case r-q >= 4:
			kern4x32(k, ap, rsA, psA, b, ldb, cp, ldc, acc)
			q += 4
		case r-q >= 2:
			kern2x32(k, ap, rsA, psA, b, ldb, cp, ldc, acc)
			q += 2
		default:
			kern1x32(k, ap, rsA, psA, b, ldb, cp, ldc, acc)
			q++
		}
	}
}

var hasSIMD, hasAVX512 bool // set by init from the CPU features

func (b Backend) micro() microKernel {
	if b == backendAVX512 {
		return avx512Kernel
	}
	return avx2Kernel
}

func gemmSIMD(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	mk := backend.micro()
	if n < mk.nr/2 && (m < mk.nr || !transA) {
		// Narrow outputs of X·W (a policy's few logits) as dot products:
		// for a sampling step packing would cost more than the product,
		// and for every m a row's logits then come out with the same bits
		// whatever other rows share the product, so a model's passes
		// recorded step by step equal one pass over the whole batch.
		tinyNarrow(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
		return
	}
	if n < mk.nr/2 {
		// Narrow outputs of Aᵀ·B (a policy head's weight gradient) would
		// leave most of the micro-kernel idle: compute Cᵀ = op(B)ᵀ·op(A)ᵀ, which is wide.
		buf := packPool.Get().(*[]float32)
		defer packPool.Put(buf)
		ct := growF32(buf, n*m)
		gemmSIMD(!transB, !transA, n, m, k, b, ldb, a, lda, ct, m, false)
		for i := range m {
			crow := c[i*ldc : i*ldc+n]
			for j := range crow {
				if accumulate {
					crow[j] += ct[j*m+i]
				} else {
					crow[j] = ct[j*m+i]
				}
			}
		}
		return
	}
	parts := shareCount()
	// Up to two micro-panels of rows (a sampling step) stay on one core:
	// splitting the columns packed A twice and cost a hand-off, measured
	// 20–40% slower on 16×256×256 here, and made sampling slower overall.
	if parts == 1 || m*n*k < mk.parallelMACs || m <= 2*mk.mr {
		s := scratchPool.Get().(*scratch)
		blocked(mk, s, transA, transB, 0, m, 0, n, n, k, a, lda, b, ldb, c, ldc, accumulate)
		scratchPool.Put(s)
		return
	}
	j := newJob()
	s := share{run: runBlocked, be: backend, transA: transA, transB: transB, lo: 0, hi: m, jlo: 0, jhi: n,
		n: n, k: k, a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc, accumulate: accumulate}
	if m >= 2*mk.mc || n < 2*mk.nr {
		chunk := roundUp((m+parts-1)/parts, mk.mr)
		for lo := 0; lo < m; lo += chunk {
			s.lo, s.hi = lo, min(lo+chunk, m)
			j.add(s)
		}
	} else {
		chunk := roundUp((n+parts-1)/parts, mk.nr)
		for lo := 0; lo < n; lo += chunk {
			s.jlo, s.jhi = lo, min(lo+chunk, n)
			j.add(s)
		}
	}
	j.run()
}

func runBlocked(s share, scr *scratch) {
	blocked(s.be.micro(), scr, s.transA, s.transB, s.lo, s.hi, s.jlo, s.jhi, s.n, s.k, s.a, s.lda, s.b, s.ldb, s.c, s.ldc, s.accumulate)
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }

func growF32(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	return (*buf)[:n]
}

// blocked adds op(A)[lo:hi, :]·op(B)[:, jlo:jhi] to C. A row-major B is
// read in place; a transposed one is packed, per k block, into nr-wide
// panels (reading its rows contiguously).
func blocked(mk microKernel, s *scratch, transA, transB bool, lo, hi, jlo, jhi, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	mr, nr := mk.mr, mk.nr
	if cap(s.tile) < mr*nr {
		s.tile = make([]float32, mr*nr)
	}
	tile := s.tile[:mr*nr]
	for p0 := 0; p0 < k; p0 += kcBlock {
		kc := min(kcBlock, k-p0)
		// The first k block stores over C unless the caller accumulates.
		acc := 1
		if p0 == 0 && !accumulate {
			acc = 0
		}
		// A row-major B is packed too where its rows are many and the
		// rows of A to reuse the panels are many: read in place, a
		// panel's kc rows lie ldb apart, and at 1,024 columns (4 KiB)
		// they share one set of the L1 cache (AVX2 kernel only: not
		// measured with AVX-512's wide and few-row kernels).
		packedB := transB || mk.packWideB && !noPackWideB && n >= packBCols && hi-lo >= 4*mr
		if transB {
			packBT(s, b, ldb, jlo, jhi, p0, kc, nr)
		} else if packedB {
			packB(s, b, ldb, jlo, jhi, p0, kc, nr)
		}
		for i0 := lo; i0 < hi; i0 += mk.mc {
			mc := min(mk.mc, hi-i0)
			// A transposed A holds each micro-panel's mr values per p
			// contiguously already: its full panels are read in place
			// (measured 1.3–1.8× faster on Xᵀ·dY than packing them). A
			// row-major A is packed for AVX-512: reading its 8 rows in
			// place measured slower. The AVX2 kernel reads its rows in
			// place (rowStrided): on the AMD EPYC measured (with a 4×16
			// tile), 30000×64·64×64 took 5.5 ms against 10 ms packed, and
			// 16×256·256×256 44 µs against 51; the same kernel sums in the
			// same order, so the bits are the packed path's. A partial
			// last panel is read in place by the few-row kernels where the
			// backend has them (packing it cost a fifth of a sampling
			// step), else packed zero-padded.
			inPlace := 0
			rowsInPlace := !transA && mk.rowStrided != nil && !noRowsInPlace
			if transA || rowsInPlace {
				inPlace = mc - mc%mr
			}
			packEnd := mc
			if mk.few != nil {
				packEnd = mc - mc%mr
			}
			var pa []float32
			if inPlace < packEnd {
				pa = packA(s, transA, a, lda, i0+inPlace, packEnd-inPlace, p0, kc, mr)
			}
			// The partial panel's rows over an in-place B: wide kernels up
			// to wideEnd, the per-panel few kernels after it.
			wideEnd := jlo
			if tail := mc - packEnd; tail > 0 && mk.wide != nil && !transB {
				cols := wideCols(tail)
				wideEnd += (min(jhi, n) - jlo) / cols * cols
				off, rs, ps := (i0+packEnd)*lda+p0, lda, 1
				if transA {
					off, rs, ps = p0*lda+i0+packEnd, 1, lda
				}
				if wideEnd > jlo {
					// The kernel reads A up to row tail-1 and p = kc-1, and
					// writes C up to row tail-1, column wideEnd-1.
					_ = a[off+(tail-1)*rs+(kc-1)*ps]
					_ = b[(p0+kc-1)*ldb+wideEnd-1]
					_ = c[(i0+mc-1)*ldc+wideEnd-1]
				}
				for j := jlo; j < wideEnd; j += cols {
					mk.wide[tail](kc, &a[off], rs, ps, &b[p0*ldb+j], ldb, &c[(i0+packEnd)*ldc+j], ldc, acc)
				}
			}
			for j := jlo; j < jhi; j += nr {
				var bp *float32
				ldbp := nr
				switch {
				case packedB:
					bp = &s.b[(j-jlo)*kc]
				case j+nr <= n:
					bp, ldbp = &b[p0*ldb+j], ldb
				default:
					// The last panel is narrower than the kernel: copy it
					// zero-padded so the kernel never reads past B.
					s.edge = growF32(&s.edge, kc*nr)
					clear(s.edge)
					for p := range kc {
						copy(s.edge[p*nr:p*nr+n-j], b[(p0+p)*ldb+j:(p0+p)*ldb+n])
					}
					bp = &s.edge[0]
				}
				w := min(nr, jhi-j)
				for r0 := 0; r0 < mc; r0 += mr {
					valid := min(mr, mc-r0)
					if r0 >= packEnd {
						if j < wideEnd {
							continue
						}
						off, rs, ps := (i0+r0)*lda+p0, lda, 1
						if transA {
							off, rs, ps = p0*lda+i0+r0, 1, lda
						}
						if w == nr {
							mk.few(valid, kc, a, off, rs, ps, bp, ldbp, c, (i0+r0)*ldc+j, ldc, acc)
							continue
						}
						mk.few(valid, kc, a, off, rs, ps, bp, ldbp, tile, 0, nr, 0)
					} else {
						cp, ldcp, accp := &c[(i0+r0)*ldc+j], ldc, acc
						full := w == nr && valid == mr
						if !full {
							cp, ldcp, accp = &tile[0], nr, 0
						}
						switch {
						case r0 < inPlace && rowsInPlace:
							// Rows i0+r0.. of a row-major A, read in place.
							_ = a[(i0+r0+mr-1)*lda+p0+kc-1]
							mk.rowStrided(kc, &a[(i0+r0)*lda+p0], lda, 1, bp, ldbp, cp, ldcp, accp)
						case r0 < inPlace:
							mk.run(kc, &a[p0*lda+i0+r0], lda, bp, ldbp, cp, ldcp, accp)
						default:
							mk.run(kc, &pa[(r0-inPlace)*kc], mr, bp, ldbp, cp, ldcp, accp)
						}
						if full {
							continue
						}
					}
					for r := range valid {
						crow := c[(i0+r0+r)*ldc+j : (i0+r0+r)*ldc+j+w]
						t := tile[r*nr : r*nr+w]
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

// packBCols is the number of columns of a row-major B from which the
// AVX2 kernel packs it (packWideB).
const packBCols = 512

// packB packs B[p0:p0+kc, jlo:jhi] of a row-major B into panels of nr
// columns, each kc×nr row-major and zero-padded, as packBT does for a
// transposed one.
func packB(s *scratch, b []float32, ldb, jlo, jhi, p0, kc, nr int) {
	cols := roundUp(jhi-jlo, nr)
	bp := growF32(&s.b, cols*kc)
	for j := jlo; j < jlo+cols; j += nr {
		panel := bp[(j-jlo)*kc : (j-jlo+nr)*kc]
		w := min(nr, jhi-j)
		for p := range kc {
			dst := panel[p*nr : (p+1)*nr]
			copy(dst, b[(p0+p)*ldb+j:(p0+p)*ldb+j+w])
			clear(dst[w:])
		}
	}
}

// packBT packs op(B)[p0:p0+kc, jlo:jhi] for B stored n×k (op = transpose)
// into panels of nr columns, each kc×nr row-major and zero-padded.
func packBT(s *scratch, b []float32, ldb, jlo, jhi, p0, kc, nr int) {
	cols := roundUp(jhi-jlo, nr)
	bp := growF32(&s.b, cols*kc)
	for j := jlo; j < jlo+cols; j += nr {
		panel := bp[(j-jlo)*kc : (j-jlo+nr)*kc]
		for jj := 0; jj < nr; jj++ {
			if jj%8 == 0 && j+jj+8 <= jhi {
				packRows8(panel[jj:], nr, b, ldb, j+jj, p0, kc)
				jj += 7
				continue
			}
			if j+jj >= jhi {
				for p := range kc {
					panel[p*nr+jj] = 0
				}
				continue
			}
			row := b[(j+jj)*ldb+p0 : (j+jj)*ldb+p0+kc]
			for p, v := range row {
				panel[p*nr+jj] = v
			}
		}
	}
}

// packA copies op(A)[i0:i0+mc, p0:p0+kc] into micro-panels of mr rows: panel
// r0/mr holds, for each p, the mr values A(i0+r0..i0+r0+mr-1, p0+p), with
// rows past mc zero.
func packA(s *scratch, transA bool, a []float32, lda, i0, mc, p0, kc, mr int) []float32 {
	rows := roundUp(mc, mr)
	pa := growF32(&s.a, rows*kc)
	for r0 := 0; r0 < rows; r0 += mr {
		panel := pa[r0*kc : (r0+mr)*kc]
		valid := min(mr, mc-r0)
		if transA {
			// op(A) rows are columns of A: mr contiguous values per p.
			base := p0*lda + i0 + r0
			if valid == 8 && mr == 8 {
				_ = a[base+(kc-1)*lda+7]
				for p := range kc {
					// A fixed-size array copy compiles to two vector moves,
					// where copy() would call memmove for 32 bytes.
					*(*[8]float32)(panel[p*8:]) = *(*[8]float32)(a[base+p*lda:])
				}
				continue
			}
			for p := range kc {
				src := a[base+p*lda:]
				dst := panel[p*mr : (p+1)*mr]
				copy(dst, src[:valid])
				clear(dst[valid:])
			}
			continue
		}
		if valid == mr && mr == 8 {
			packRows8(panel, 8, a, lda, i0+r0, p0, kc)
			continue
		}
		for r := range mr {
			if r >= valid {
				for p := range kc {
					panel[p*mr+r] = 0
				}
				continue
			}
			i := i0 + r0 + r
			row := a[i*lda+p0 : i*lda+p0+kc]
			for p, v := range row {
				panel[p*mr+r] = v
			}
		}
	}
	return pa
}

// packRows8 interleaves rows i..i+7 of A (columns p0..p0+kc) into panel:
// panel[p·stride + r] = A[i+r, p0+p], 8 contiguous writes per p.
func packRows8(panel []float32, stride int, a []float32, lda, i, p0, kc int) {
	if blocks := kc / 8; blocks > 0 {
		// Rows i..i+7 end at (i+7)·lda + p0 + 8·blocks ≤ len(a), and the
		// panel's last written row at (8·blocks-1)·stride + 8 ≤ len(panel).
		_ = a[(i+7)*lda+p0+8*blocks-1]
		_ = panel[(8*blocks-1)*stride+7]
		transpose8(&panel[0], stride, &a[i*lda+p0], lda, blocks)
		done := 8 * blocks
		if done == kc {
			return
		}
		panel, p0, kc = panel[done*stride:], p0+done, kc-done
	}
	r0 := a[i*lda+p0 : i*lda+p0+kc]
	r1 := a[(i+1)*lda+p0 : (i+1)*lda+p0+kc]
	r2 := a[(i+2)*lda+p0 : (i+2)*lda+p0+kc]
	r3 := a[(i+3)*lda+p0 : (i+3)*lda+p0+kc]
	r4 := a[(i+4)*lda+p0 : (i+4)*lda+p0+kc]
	r5 := a[(i+5)*lda+p0 : (i+5)*lda+p0+kc]
	r6 := a[(i+6)*lda+p0 : (i+6)*lda+p0+kc]
	r7 := a[(i+7)*lda+p0 : (i+7)*lda+p0+kc]
	panel = panel[:(kc-1)*stride+8]
	for p := range r0 {
		d := panel[p*stride : p*stride+8 : p*stride+8]
		d[0], d[1], d[2], d[3] = r0[p], r1[p], r2[p], r3[p]
		d[4], d[5], d[6], d[7] = r4[p], r5[p], r6[p], r7[p]
	}
}

// tinyNarrow computes small products with few columns as dot products of
// rows of op(A) with columns of op(B) (packed contiguous when needed).
func tinyNarrow(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	if transA || k < 8 {
		gemmRange(transA, transB, 0, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
		return
	}
	bt, ldt := b, ldb // rows of bt are the columns of op(B)
	if !transB {
		buf := packPool.Get().(*[]float32)
		defer packPool.Put(buf)
		bt, ldt = packTransposed(buf, b, ldb, k, n), k
	}
	k8 := k &^ 7
	for i := range m {
		arow := a[i*lda : i*lda+k]
		for j := range n {
			brow := bt[j*ldt : j*ldt+k]
			s := dot8(&arow[0], &brow[0], k8)
			for p := k8; p < k; p++ {
				s += arow[p] * brow[p]
			}
			if accumulate {
				c[i*ldc+j] += s
			} else {
				c[i*ldc+j] = s
			}
		}
	}
}
