package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// bfPaths lists the GemmBF16 paths this machine runs: the portable one
// always, the fma one where the float32 kernel has SIMD, the AVX512_BF16
// one where the CPU has it, the AMX one where the CPU has AMX-BF16 and the
// OS grants the tile state; the one GemmBF16 takes by default is last.
func bfPaths() []string {
	amxOnce.Do(initAMX)
	paths := []string{"go"}
	if hasSIMD {
		paths = append(paths, "fma")
	}
	if hasBF16 {
		paths = append(paths, "avx512bf16")
	}
	if hasAMX {
		paths = append(paths, "amx")
	}
	return paths
}

// useBF16Path switches GemmBF16's path (a name BF16Kernel gives) and
// returns the previous one. The AMX path packs with the AVX-512
// conversions where the CPU has them. The fma path runs on the float32
// backend in use (Use).
func useBF16Path(path string) string {
	prev := BF16Kernel()
	bf16Asm = hasBF16 && path != "go" && path != "fma"
	bf16AMX = path == "amx"
	bf16FMA = path == "fma"
	return prev
}

// nearestBF16 is bf16Round computed another way: the two bfloat16 values
// around x (x's top half, and the next one away from zero) compared in
// float64, where their distances to x are exact; a tie goes to the even
// significand, and past the largest finite value rounding goes to Inf as if
// 2^128 were the next value up. A NaN must come out a quiet NaN of the same
// sign, which the caller checks.
func nearestBF16(x float32) uint32 {
	u := math.Float32bits(x)
	down := u &^ 0xffff
	up := down + 0x10000 // one unit of the kept part further from zero
	vx := math.Abs(float64(x))
	vd := math.Abs(float64(math.Float32frombits(down)))
	vu := math.Ldexp(1, 128)
	if up&0x7fffffff < 0x7f800000 {
		vu = math.Abs(float64(math.Float32frombits(up)))
	}
	switch dd, du := vx-vd, vu-vx; {
	case dd < du:
		return down >> 16
	case du < dd:
		return up >> 16
	case down>>16&1 == 0:
		return down >> 16
	}
	return up >> 16
}

func isNaNBF16(h uint32) bool { return h&0x7f80 == 0x7f80 && h&0x7f != 0 }

// checkRound compares bf16Round(x) with nearestBF16 (or, for a NaN, with
// a quiet NaN of x's sign keeping its top payload bits).
func checkRound(t *testing.T, x float32) {
	t.Helper()
	u := math.Float32bits(x)
	got := bf16Round(x)
	if x != x {
		if want := u>>16 | 0x40; got != want || !isNaNBF16(got) {
			t.Fatalf("bf16Round(NaN %#08x) = %#04x, want quiet NaN %#04x", u, got, want)
		}
		return
	}
	if want := nearestBF16(x); got != want {
		t.Fatalf("bf16Round(%g = %#08x) = %#04x, want %#04x", x, u, got, want)
	}
}

// TestBF16RoundNearestEven checks the conversion of float32 to bfloat16
// against nearestBF16: every low half under top halves around the edges
// (zero and the subnormals, the smallest normals, one, the largest finite
// values, Inf and NaN, both signs), then random bit patterns.
func TestBF16RoundNearestEven(t *testing.T) {
	for _, hi := range []uint32{0x0000, 0x0001, 0x007f, 0x0080, 0x0081, 0x3f80, 0x3f81, 0x4049, 0x7f7e, 0x7f7f, 0x7f80, 0x7fc0} {
		for _, sign := range []uint32{0, 0x8000} {
			for lo := range uint32(1 << 16) {
				checkRound(t, math.Float32frombits((hi|sign)<<16|lo))
			}
		}
	}
	r := rand.New(rand.NewPCG(21, 22))
	for range 1 << 20 {
		checkRound(t, math.Float32frombits(r.Uint32()))
	}
	// The ties and near-ties the rule is about, spelled out.
	for _, c := range []struct {
		x    uint32
		want uint32
	}{
		{0x3f808000, 0x3f80}, // 1 + 2^-8: tie, 1 is even
		{0x3f818000, 0x3f82}, // tie, the odd 0x3f81 rounds up
		{0x3f808001, 0x3f81}, // just above the tie
		{0x3f807fff, 0x3f80}, // just below
		{0x7f7f8000, 0x7f80}, // tie past the largest finite: to Inf (even)
		{0x7f7f7fff, 0x7f7f}, // stays finite
		{0x00008000, 0x0000}, // subnormal tie to zero
		{0x00018000, 0x0002}, // subnormal tie up to even
		{0x007fffff, 0x0080}, // largest subnormal rounds to the smallest normal
		{0x80008001, 0x8001}, // negative subnormal
		{0x7f800000, 0x7f80}, // +Inf
		{0xff800000, 0xff80}, // -Inf
		{0x7f800001, 0x7fc0}, // a signalling NaN whose payload is all dropped stays NaN
		{0xffc00000, 0xffc0}, // negative quiet NaN
	} {
		if got := bf16Round(math.Float32frombits(c.x)); got != c.want {
			t.Errorf("bf16Round(%#08x) = %#04x, want %#04x", c.x, got, c.want)
		}
	}
}

// bitPatterns returns n float32 values with random bits, a third of them
// rewritten into NaNs, infinities, subnormals and ties.
func bitPatterns(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		u := r.Uint32()
		switch r.IntN(9) {
		case 0:
			u |= 0x7f800000 // Inf or NaN
		case 1:
			u &= 0x807fffff // zero or subnormal
		case 2:
			u = u&^0xffff | 0x8000 // a tie
		}
		s[i] = math.Float32frombits(u)
	}
	return s
}

// TestBF16PackingConversions checks that the packing conversions (the
// AVX-512 ones where the CPU has AVX512_BF16, and the portable ones) give
// bf16Round's bits for every kind of value, over whole 32-column chunks,
// masked tails and chunks placed apart.
func TestBF16PackingConversions(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	const rows, cols = 6, 75
	withSub := bitPatterns(r, rows*cols+1)
	// The same without subnormals, which the AVX-512 pairCols converts 16
	// pairs at a time with VCVTNE2PS2BF16 (it flushes subnormals, so a
	// vector holding one goes the long way): NaN, Inf and ties there too.
	noSub := slices.Clone(withSub)
	for i, v := range noSub {
		if u := math.Float32bits(v); u&0x7f800000 == 0 && u&0x007fffff != 0 {
			noSub[i] = math.Float32frombits(u | 0x00800000)
		}
	}
	for _, src := range [][]float32{withSub, noSub} {
		for _, path := range bfPaths() {
			prev := useBF16Path(path)
			for _, n := range []int{1, 5, 16, 17, 32, 33, 64, 71} {
				// Three pair rows of n columns, chunks of 32 columns 200 apart.
				const ds, cs = 40, 200
				dst := make([]uint32, (rows/2-1)*ds+(n-1)/bfNR*cs+bfNR)
				pairRows(dst, ds, cs, src[1:], cols, rows/2, n) // odd start
				for q := range rows / 2 {
					for j := range n {
						lo, hi := src[1+2*q*cols+j], src[1+(2*q+1)*cols+j]
						if got, want := dst[q*ds+j/bfNR*cs+j%bfNR], bf16Round(lo)|bf16Round(hi)<<16; got != want {
							t.Fatalf("%s: pairRows n=%d: (%d, %d) of %#08x, %#08x = %#08x, want %#08x", path, n, q, j,
								math.Float32bits(lo), math.Float32bits(hi), got, want)
						}
					}
				}
				if np := (n + 1) / 2; 2*np <= cols {
					dst := make([]uint32, rows*cols)
					pairCols(dst, cols, src[1:], cols, rows, np)
					for i := range rows {
						for q := range np {
							lo, hi := src[1+i*cols+2*q], src[1+i*cols+2*q+1]
							if got, want := dst[i*cols+q], bf16Round(lo)|bf16Round(hi)<<16; got != want {
								t.Fatalf("%s: pairCols np=%d: (%d, %d) of %#08x, %#08x = %#08x, want %#08x", path, np, i, q,
									math.Float32bits(lo), math.Float32bits(hi), got, want)
							}
						}
						// Nothing written past the pairs asked for.
						for q := np; q < cols; q++ {
							if dst[i*cols+q] != 0 {
								t.Fatalf("%s: pairCols np=%d wrote (%d, %d)", path, np, i, q)
							}
						}
					}
				}
			}
			useBF16Path(prev)
		}
	}
}

// bfValue widens a bfloat16 to float64.
func bfValue(h uint32) float64 { return float64(math.Float32frombits(h << 16)) }

// refBF16 computes, in float64, C's expected value two ways: want from the
// float32 operands (with s = Σ_p |A(i,p)|·|B(p,j)|, for the bound), and
// wantBF from the operands rounded to bfloat16 (with sBF its Σ|·||·|).
func refBF16(tA, tB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c0 []float32, ldc int, acc bool) (want, s, wantBF, sBF []float64) {
	want, s = make([]float64, m*n), make([]float64, m*n)
	wantBF, sBF = make([]float64, m*n), make([]float64, m*n)
	// op(A) by rows and op(B) by columns, as float64 and rounded to bfloat16.
	ar, arb := make([]float64, m*k), make([]float64, m*k)
	bc, bcb := make([]float64, n*k), make([]float64, n*k)
	for p := range k {
		for i := range m {
			ia := i*lda + p
			if tA {
				ia = p*lda + i
			}
			v := a[ia]
			ar[i*k+p], arb[i*k+p] = float64(v), bfValue(bf16Round(v))
		}
		for j := range n {
			ib := p*ldb + j
			if tB {
				ib = j*ldb + p
			}
			v := b[ib]
			bc[j*k+p], bcb[j*k+p] = float64(v), bfValue(bf16Round(v))
		}
	}
	for i := range m {
		for j := range n {
			var w, sum, wb, sb float64
			x, xb := ar[i*k:(i+1)*k], arb[i*k:(i+1)*k]
			y, yb := bc[j*k:(j+1)*k], bcb[j*k:(j+1)*k]
			for p := range x {
				w += x[p] * y[p]
				sum += math.Abs(x[p] * y[p])
				wb += xb[p] * yb[p]
				sb += math.Abs(xb[p] * yb[p])
			}
			if acc {
				w += float64(c0[i*ldc+j])
				wb += float64(c0[i*ldc+j])
			}
			want[i*n+j], s[i*n+j], wantBF[i*n+j], sBF[i*n+j] = w, sum, wb, sb
		}
	}
	return
}

// bfGamma is the float32 summation bound γ = n·u/(1-n·u), u = 2^-24, for
// the roundings one product goes through: at most k within its k block and
// the blocks after it, one more for C's old value. The blocks are the fma
// path's (the SIMD kernel's kcBlock, 256, which portable builds lack), the
// shorter: so more of them, a bound for every path.
func bfGamma(k int) float64 {
	const kc = 256
	nu := float64(k+(k+kc-1)/kc+1) * 0x1p-24
	return nu / (1 - nu)
}

// checkBF16 checks got against the two bounds: from the rounded operands,
// |C - C_bf| ≤ γ·(Σ|â||b̂| + |C₀|) (float32 summation only); from the float32
// operands, |C - C_ref| ≤ (2^-7 + 2^-16 + γ·(1+2^-8)²)·Σ|a||b| + γ·|C₀|
// (a bfloat16 keeps 8 significant bits, so each rounded operand is within a
// factor 1 ± 2^-8 and each product within 1 ± (2^-7 + 2^-16)). It returns the largest ratio of error to bound of the
// second, to show the bound is not vacuous.
func checkBF16(t *testing.T, name string, m, n int, got []float32, ldc int, c0 []float32, acc bool, want, s, wantBF, sBF []float64, k int) float64 {
	t.Helper()
	g := bfGamma(k)
	const ub = 0x1p-8 // bfloat16's unit roundoff
	worst := 0.0
	for i := range m {
		for j := range n {
			v := float64(got[i*ldc+j])
			var old float64
			if acc {
				old = math.Abs(float64(c0[i*ldc+j]))
			}
			e := i*n + j
			if d, bound := math.Abs(v-wantBF[e]), g*(sBF[e]+old); d > bound {
				t.Fatalf("%s: C[%d,%d] = %v, the rounded operands' product %v: error %.3g > %.3g", name, i, j, v, wantBF[e], d, bound)
			}
			bound := (2*ub+ub*ub+g*(1+ub)*(1+ub))*s[e] + g*old
			d := math.Abs(v - want[e])
			if d > bound {
				t.Fatalf("%s: C[%d,%d] = %v, want %v: error %.3g > bound %.3g", name, i, j, v, want[e], d, bound)
			}
			if bound > 0 {
				worst = max(worst, d/bound)
			}
		}
		// Padding between rows must be untouched.
		for j := n; j < ldc && i < m-1; j++ {
			if got[i*ldc+j] != c0[i*ldc+j] {
				t.Fatalf("%s: wrote padding C[%d,%d]", name, i, j)
			}
		}
	}
	return worst
}

var bfTrans = [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}}

// TestGemmBF16MatchesReference runs GemmBF16 on odd shapes and edges (a
// partial micro-panel of rows or columns, odd k, which pads the last pair,
// k over one block), every transposition, accumulating or not, with strides
// wider than the rows, on every path; checks the bounds of checkBF16; and
// checks that the portable path gives the assembly's bits.
func TestGemmBF16MatchesReference(t *testing.T) {
	sizes := []int{1, 3, 17, 31, 33, 63, 65}
	var shapes [][3]int
	for _, m := range sizes {
		for _, n := range sizes {
			for _, k := range sizes {
				shapes = append(shapes, [3]int{m, n, k})
			}
		}
	}
	shapes = append(shapes, [][3]int{{257, 33, 65}, {33, 257, 63}, {31, 65, 257}, {257, 257, 17},
		{17, 40, 513}, {25, 33, 1025}, {130, 70, 600},
		// Whole 32×32 blocks and 32-value k steps (AMX), with and without edges.
		{32, 32, 32}, {64, 64, 64}, {64, 96, 32}, {96, 64, 544}, {160, 96, 1024}, {300, 64, 64}, {129, 161, 1030}}...)
	if testing.Short() {
		shapes = slices.DeleteFunc(shapes, func(s [3]int) bool { return s[0]*s[1]*s[2] > 200_000 && s[2] < 513 })
	}
	r := rand.New(rand.NewPCG(25, 26))
	worst := 0.0
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		for _, tr := range bfTrans {
			tA, tB := tr[0], tr[1]
			ra, ca, rb, cb := stored(tA, tB, m, n, k)
			lda, ldb, ldc := ca+1, cb+2, n+3 // strides wider than the rows
			a := randSlice(r, ra*lda)
			b := randSlice(r, rb*ldb)
			c0 := randSlice(r, m*ldc)
			for _, acc := range []bool{false, true} {
				name := fmt.Sprintf("tA=%v/tB=%v/%dx%dx%d/acc=%v", tA, tB, m, n, k, acc)
				want, sum, wantBF, sumBF := refBF16(tA, tB, m, n, k, a, lda, b, ldb, c0, ldc, acc)
				var first []float32
				for _, path := range bfPaths() {
					prev := useBF16Path(path)
					c := slices.Clone(c0)
					GemmBF16(tA, tB, m, n, k, a, lda, b, ldb, c, ldc, acc)
					useBF16Path(prev)
					worst = max(worst, checkBF16(t, path+"/"+name, m, n, c, ldc, c0, acc, want, sum, wantBF, sumBF, k))
					switch {
					case first == nil:
						first = c
					case path == "amx" || path == "fma":
						// Another summation order: within twice the bound.
						checkPathsAgree(t, path+"/"+name, m, n, first, c, ldc, c0, acc, sumBF, k, 0)
					default:
						if i := bitsDiffer(first, c); i >= 0 {
							t.Fatalf("%s: portable C[%d] = %v (%#08x), assembly %v (%#08x)", name, i,
								first[i], math.Float32bits(first[i]), c[i], math.Float32bits(c[i]))
						}
					}
				}
			}
		}
	}
	// Rounding the operands must show: the error should use a good part of
	// its bound somewhere, or the operands were not rounded at all.
	if worst < 0.05 {
		t.Errorf("largest error is %.3g of the bound: were the operands rounded to bfloat16?", worst)
	}
	t.Logf("largest error: %.3f of the bound", worst)
}

// TestGemmBF16TinyValues covers what the bit-for-bit agreement of the two
// paths leaves out: products and partial sums below 2^-126, the float32
// subnormals, which VDPBF16PS flushes to zero and the portable path rounds
// gradually. Each flush moves a sum by less than 2^-126, and a result goes
// through at most k products and k additions (two per pair) plus the
// accumulator's value read as zero; so each path is within the float32
// summation bound of the rounded operands' exact product (checkBF16's
// first bound) plus (2k+2)·2^-126, and the two paths differ by at most
// twice that. The test checks the bound on both paths and that they do
// differ, so that the case is exercised.
func TestGemmBF16TinyValues(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	const m, n, k = 30, 40, 50
	differ := false
	for _, acc := range []bool{false, true} {
		// Operands near 2^-63: products near 2^-126, both sides of it.
		a, b := randSlice(r, m*k), randSlice(r, k*n)
		for i := range a {
			a[i] *= 0x1p-63
		}
		for i := range b {
			b[i] *= 0x1p-63
		}
		c0 := randSlice(r, m*n)
		for i := range c0 {
			c0[i] *= 0x1p-125
		}
		_, _, wantBF, sBF := refBF16(false, false, m, n, k, a, k, b, n, c0, n, acc)
		g := bfGamma(k)
		var first []float32
		for _, path := range bfPaths() {
			prev := useBF16Path(path)
			c := slices.Clone(c0)
			GemmBF16(false, false, m, n, k, a, k, b, n, c, n, acc)
			useBF16Path(prev)
			for e, v := range c {
				var old float64
				if acc {
					old = math.Abs(float64(c0[e]))
				}
				bound := g*(sBF[e]+old) + float64(2*k+2)*0x1p-126
				if d := math.Abs(float64(v) - wantBF[e]); d > bound {
					t.Fatalf("%s acc=%v: C[%d] = %g, want %g: error %.3g > %.3g", path, acc, e, v, wantBF[e], d, bound)
				}
			}
			if first == nil {
				first = c
			} else if bitsDiffer(first, c) >= 0 {
				differ = true
			}
		}
	}
	if hasBF16 && !differ {
		t.Error("the paths agreed on every tiny value: the test does not reach the subnormal range")
	}
}

// checkPathsAgree checks that the AMX or fma path's C (got) and the portable
// path's (ref) differ by at most twice the float32 summation bound of the
// rounded operands, 2γ·(Σ|â||b̂| + |C₀|) + 2·flush (each path is within
// γ·(Σ|â||b̂| + |C₀|) of the rounded operands' exact product, plus flush
// where subnormals are flushed: checkBF16's first bound and
// TestGemmBF16TinyValues'). The two sum in different orders, so the bits
// may differ.
func checkPathsAgree(t *testing.T, name string, m, n int, ref, got []float32, ldc int, c0 []float32, acc bool, sBF []float64, k int, flush float64) {
	t.Helper()
	g := bfGamma(k)
	for i := range m {
		for j := range n {
			var old float64
			if acc {
				old = math.Abs(float64(c0[i*ldc+j]))
			}
			d := math.Abs(float64(got[i*ldc+j]) - float64(ref[i*ldc+j]))
			if bound := 2*g*(sBF[i*n+j]+old) + 2*flush; d > bound {
				t.Fatalf("%s: C[%d,%d] = %v, portable %v: differ by %.3g > %.3g", name, i, j,
					got[i*ldc+j], ref[i*ldc+j], d, bound)
			}
		}
	}
}

// bitsDiffer returns the first index where x and y differ in their bits, or -1.
func bitsDiffer(x, y []float32) int {
	for i := range x {
		if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
			return i
		}
	}
	return -1
}

// TestGemmBF16SpecialValues: NaN and Inf in an operand reach exactly the
// elements they feed, and values whose bfloat16 products are exact come
// out exact.
func TestGemmBF16SpecialValues(t *testing.T) {
	const m, n, k = 20, 40, 9
	for _, path := range bfPaths() {
		prev := useBF16Path(path)
		a := make([]float32, m*k)
		b := make([]float32, k*n)
		for i := range a {
			a[i] = float32(i%7) - 3 // small integers: products and sums exact
		}
		for i := range b {
			b[i] = float32(i%5) - 2
		}
		c := make([]float32, m*n)
		want := make([]float32, m*n)
		refGemm(false, false, m, n, k, a, k, b, n, want, n, false)
		GemmBF16(false, false, m, n, k, a, k, b, n, c, n, false)
		if i := bitsDiffer(c, want); i >= 0 {
			t.Fatalf("%s: exact product C[%d] = %v, want %v", path, i, c[i], want[i])
		}
		a[3*k+4] = float32(math.NaN())   // row 3
		b[6*n+11] = float32(math.Inf(1)) // column 11, times nonzero A(i, 6) → ±Inf
		b[2*n+17] = 0x1.fffffep127       // column 17: rounds to +Inf in bfloat16
		GemmBF16(false, false, m, n, k, a, k, b, n, c, n, false)
		for i := range m {
			for j := range n {
				v := float64(c[i*n+j])
				switch {
				case i == 3:
					if !math.IsNaN(v) {
						t.Fatalf("%s: C[3,%d] = %v, want NaN (A(3,4) is NaN)", path, j, v)
					}
				case j == 11 || j == 17:
					p := 6
					if j == 17 {
						p = 2
					}
					av := a[i*k+p]
					// Inf·0 is NaN; Inf with the sign of A otherwise (a
					// second infinity in the column has another p).
					if av == 0 && !math.IsNaN(v) || av != 0 && !math.IsInf(v, int(math.Copysign(1, float64(av)))) {
						t.Fatalf("%s: C[%d,%d] = %v with A(%d,%d) = %v times +Inf", path, i, j, v, i, p, av)
					}
				case float32(v) != want[i*n+j]:
					t.Fatalf("%s: C[%d,%d] = %v, want %v", path, i, j, v, want[i*n+j])
				}
			}
		}
		useBF16Path(prev)
	}
}

// TestGemmBF16RowsIndependentOfBatch: a row of X·W has the same bits alone
// or among other rows (as Gemm guarantees), so sampling passes equal the
// training pass in bfloat16 too.
func TestGemmBF16RowsIndependentOfBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, path := range bfPaths() {
		prev := useBF16Path(path)
		for _, kn := range [][2]int{{64, 256}, {301, 96}, {600, 70}} {
			k, n := kn[0], kn[1]
			const m = 40
			a := randSlice(r, m*k)
			b := randSlice(r, k*n)
			all := make([]float32, m*n)
			GemmBF16(false, false, m, n, k, a, k, b, n, all, n, false)
			for _, rows := range []int{1, 2, 5, 12, 13} {
				part := make([]float32, rows*n)
				for i0 := 0; i0+rows <= m; i0 += rows {
					GemmBF16(false, false, rows, n, k, a[i0*k:], k, b, n, part, n, false)
					if i := bitsDiffer(part, all[i0*n:(i0+rows)*n]); i >= 0 {
						useBF16Path(prev)
						t.Fatalf("%s k=%d: row %d computed in %d rows differs from among %d", path, k, i0+i/n, rows, m)
					}
				}
			}
		}
		useBF16Path(prev)
	}
}

// TestGemmBF16SplitAcrossCores covers products split over goroutines by
// rows and by columns: within the bound, and the same bits as on one core.
func TestGemmBF16SplitAcrossCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	r := rand.New(rand.NewPCG(29, 30))
	shapes := [][3]int{{600, 100, 300}, {100, 300, 600}} // by rows; by columns
	for _, path := range bfPaths() {
		prev := useBF16Path(path)
		for si, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			for ti, tr := range bfTrans[:3] {
				if path == "go" && (si != 0 || ti != 1) {
					continue // the portable path is slow: one case suffices
				}
				tA, tB := tr[0], tr[1]
				ra, ca, rb, cb := stored(tA, tB, m, n, k)
				a, b := randSlice(r, ra*ca), randSlice(r, rb*cb)
				c0 := randSlice(r, m*n)
				for _, acc := range []bool{false, true} {
					name := fmt.Sprintf("%s/tA=%v/tB=%v/%dx%dx%d/acc=%v", path, tA, tB, m, n, k, acc)
					c := slices.Clone(c0)
					GemmBF16(tA, tB, m, n, k, a, ca, b, cb, c, n, acc)
					if !testing.Short() {
						want, sum, wantBF, sumBF := refBF16(tA, tB, m, n, k, a, ca, b, cb, c0, n, acc)
						checkBF16(t, name, m, n, c, n, c0, acc, want, sum, wantBF, sumBF, k)
					}
					one := slices.Clone(c0)
					procs := runtime.GOMAXPROCS(1)
					GemmBF16(tA, tB, m, n, k, a, ca, b, cb, one, n, acc)
					runtime.GOMAXPROCS(procs)
					if i := bitsDiffer(one, c); i >= 0 {
						useBF16Path(prev)
						t.Fatalf("%s: split product differs from the one on one core at %d", name, i)
					}
				}
			}
		}
		useBF16Path(prev)
	}
}

// TestGemmBF16DoesNotAllocate: once the packing space has grown, products
// on one core allocate nothing, and split ones only the runtime's rare
// wait descriptors (see TestGemmSplitDoesNotAllocate). The portable path,
// slow, is measured on one core only: the split is the same code.
func TestGemmBF16DoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	r := rand.New(rand.NewPCG(31, 32))
	runtime.GC() // not during the measurement: a collection empties pools
	for _, path := range bfPaths() {
		prev := useBF16Path(path)
		// 64: one core; 272: split across two.
		for _, m := range []int{64, 272} {
			if m > 64 && path == "go" {
				continue
			}
			a, b, c := randSlice(r, m*m), randSlice(r, m*m), make([]float32, m*m)
			for _, tr := range bfTrans[:3] {
				f := func() { GemmBF16(tr[0], tr[1], m, m, m, a, m, b, m, c, m, false) }
				if m == 64 {
					if allocs := testing.AllocsPerRun(50, f); allocs != 0 {
						t.Errorf("%s %d³ tA=%v tB=%v: %.2f allocations per product", path, m, tr[0], tr[1], allocs)
					}
					continue
				}
				procs := runtime.GOMAXPROCS(2)
				// Grow the packing space (one per P) and let the split's
				// jobs come into circulation.
				for range 100 {
					f()
				}
				allocs := mallocsPerRun(1000, f)
				runtime.GOMAXPROCS(procs)
				if allocs > 0.25 {
					t.Errorf("%s %d³ tA=%v tB=%v: %.2f allocations per product", path, m, tr[0], tr[1], allocs)
				}
			}
		}
		useBF16Path(prev)
	}
}

// TestBF16Kernel: BF16Kernel names the path GemmBF16 takes, AMX wherever
// the CPU has it and the OS grants the tile state, then VDPBF16PS, then
// the float32 kernel on rounded operands; HasBF16 only for the first two.
func TestBF16Kernel(t *testing.T) {
	paths := bfPaths()
	got := BF16Kernel()
	if want := paths[len(paths)-1]; got != want {
		t.Fatalf("BF16Kernel() = %q, want %q (paths here: %v)", got, want, paths)
	}
	if hw := got == "amx" || got == "avx512bf16"; hw != HasBF16() {
		t.Fatalf("BF16Kernel() = %q but HasBF16() = %v", got, HasBF16())
	}
	t.Logf("GemmBF16 runs %q (paths tested: %v)", got, paths)
}

func TestGemmBF16PanicsOnShortSlice(t *testing.T) {
	defer func() {
		e := recover()
		if e == nil {
			t.Fatal("GemmBF16 did not panic on a short slice")
		}
		if s, ok := e.(string); !ok || !strings.HasPrefix(s, "kernel: ") {
			t.Fatalf("panic %v is not prefixed with \"kernel: \"", e)
		}
	}()
	GemmBF16(false, true, 2, 2, 2, make([]float32, 4), 2, make([]float32, 3), 2, make([]float32, 4), 2, false)
}

func TestGemmBF16EmptyShapes(t *testing.T) {
	c := []float32{1, 2, 3, 4}
	GemmBF16(false, false, 2, 2, 0, nil, 0, nil, 2, c, 2, true)
	if !slices.Equal(c, []float32{1, 2, 3, 4}) {
		t.Fatalf("k = 0 accumulating changed C: %v", c)
	}
	GemmBF16(false, false, 2, 2, 0, nil, 0, nil, 2, c, 2, false)
	if !slices.Equal(c, []float32{0, 0, 0, 0}) {
		t.Fatalf("k = 0 storing left C = %v, want zeros", c)
	}
	GemmBF16(false, false, 0, 2, 3, nil, 3, make([]float32, 6), 2, nil, 2, false)
}

// BenchmarkGemmBF16 is BenchmarkGemm's products through GemmBF16, on the
// path BF16Kernel names (AMX where the CPU and the OS allow it).
func BenchmarkGemmBF16(b *testing.B) { benchProducts(b, GemmBF16) }

// BenchmarkGemmBF16VDP is BenchmarkGemmBF16 on the AVX512_BF16 path
// (VDPBF16PS), which runs where AMX does not.
func BenchmarkGemmBF16VDP(b *testing.B) {
	if !hasBF16 {
		b.Skip("no AVX512_BF16")
	}
	defer useBF16Path(useBF16Path("avx512bf16"))
	benchProducts(b, GemmBF16)
}

// BenchmarkGemmBF16Portable times the portable path (what a CPU without
// AVX512_BF16 would run) on two of the shapes; compare with BenchmarkGemm's.
func BenchmarkGemmBF16Portable(b *testing.B) {
	defer useBF16Path(useBF16Path("go"))
	for _, s := range [][3]int{{300, 64, 64}, {4096, 256, 256}} {
		b.Run(fmt.Sprintf("XW/%dx%dx%d", s[0], s[1], s[2]), func(b *testing.B) {
			benchGemm(b, GemmBF16, false, false, s[0], s[1], s[2])
		})
	}
}

// TestRoundBF16s: the fma path's rounding (the AVX2 loop and the Go one)
// gives bf16Round's bits widened, with bfloat16 subnormals as zeros of
// their sign, for every kind of value and every length around the
// 8-value groups.
func TestRoundBF16s(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	src := bitPatterns(r, 1<<16)
	for _, asm := range []bool{false, true} {
		bf16Asm8 = asm
		for _, n := range []int{0, 1, 7, 8, 9, 23, 1 << 16} {
			dst := make([]float32, n+1)
			dst[n] = 42
			roundBF16s(dst[:n], src[:n])
			for i, x := range src[:n] {
				h := bf16Round(x)
				if h&0x7f80 == 0 {
					h &= 0x8000
				}
				if got, want := math.Float32bits(dst[i]), h<<16; got != want {
					t.Fatalf("asm=%v n=%d: roundBF16s(%#08x) = %#08x, want %#08x", asm, n, math.Float32bits(x), got, want)
				}
			}
			if dst[n] != 42 {
				t.Fatalf("asm=%v n=%d: wrote past the end", asm, n)
			}
		}
	}
	bf16Asm8 = true
}
