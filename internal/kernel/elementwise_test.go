package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestElementwise(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, be := range Available() {
		prev := Use(be)
		// 72, 200: a 64-column block plus 8-column leftovers (and a tail).
		for _, cols := range []int{1, 3, 8, 17, 72, 200, 256, 257} {
			rows := 5
			y := randSlice(r, rows*cols)
			b := randSlice(r, cols)
			want := make([]float32, len(y))
			for i, v := range y {
				v += b[i%cols]
				if v < 0 {
					v *= 0.01
				}
				want[i] = v
			}
			got := append([]float32(nil), y...)
			BiasLeakyReLU(got, b, 0.01)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s cols %d: BiasLeakyReLU[%d] = %v, want %v", be, cols, i, got[i], want[i])
				}
			}
			d := randSlice(r, len(y))
			wantD := make([]float32, len(d))
			for i := range d {
				wantD[i] = d[i]
				if want[i] < 0 {
					wantD[i] *= 0.01
				}
			}
			LeakyReLUGrad(d, want, 0.01)
			for i := range d {
				if d[i] != wantD[i] {
					t.Fatalf("%s cols %d: LeakyReLUGrad[%d] = %v, want %v", be, cols, i, d[i], wantD[i])
				}
			}
			src := randSlice(r, cols)
			dst := randSlice(r, cols)
			wantA := make([]float32, cols)
			for i := range dst {
				wantA[i] = dst[i] + src[i]
			}
			AddTo(dst, src)
			for i := range dst {
				if math.Abs(float64(dst[i]-wantA[i])) != 0 {
					t.Fatalf("%s: AddTo[%d] = %v, want %v", be, i, dst[i], wantA[i])
				}
			}
			// AddRows equals one AddTo per row, bit for bit.
			many := randSlice(r, rows*cols)
			wantR := append([]float32(nil), dst...)
			for q := range rows {
				for j := range wantR {
					wantR[j] += many[q*cols+j]
				}
			}
			AddRows(dst, many)
			for i := range dst {
				if dst[i] != wantR[i] {
					t.Fatalf("%s cols %d: AddRows[%d] = %v, want %v", be, cols, i, dst[i], wantR[i])
				}
			}
			// GatherSum equals clearing and adding the rows, bit for bit;
			// negative indices are skipped. -0 rows check the +0 start.
			table := randSlice(r, 5*cols)
			for j := range cols {
				if j%3 == 0 {
					table[4*cols+j] = float32(math.Copysign(0, -1))
				}
			}
			for _, idx := range [][]int32{{2}, {0, 3}, {4, -1, 1, 4}, {-1}, {4}, {0, 1, 2, 3, 4, 0, 1, 2, 3}} {
				want := make([]float32, cols)
				for _, j := range idx {
					if j >= 0 {
						for c := range want {
							want[c] += table[int(j)*cols+c]
						}
					}
				}
				got := randSlice(r, cols)
				GatherSum(got, table, idx)
				for c := range got {
					if math.Float32bits(got[c]) != math.Float32bits(want[c]) {
						t.Fatalf("%s cols %d: GatherSum(%v)[%d] = %v, want %v", be, cols, idx, c, got[c], want[c])
					}
				}
			}
			wantS := append([]float32(nil), dst...)
			for i := range wantS {
				wantS[i] *= 0.37
			}
			Scale(dst, 0.37)
			for i := range dst {
				if dst[i] != wantS[i] {
					t.Fatalf("%s cols %d: Scale[%d] = %v, want %v", be, cols, i, dst[i], wantS[i])
				}
			}
		}
		Use(prev)
	}
}

func TestAdamBackendsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	const n = 37
	c := AdamCoef{B1: 0.9, OneMinusB1: 0.1, B2: 0.999, OneMinusB2: 1 - float32(0.999), Step: 1e-3 / 0.1, SqrtBC2: 0.0316, Eps: 1e-8}
	var ref []float32
	for _, be := range Available() {
		prev := Use(be)
		r2 := rand.New(rand.NewPCG(7, 7))
		w, m, v := randSlice(r2, n), randSlice(r2, n), randSlice(r2, n)
		for i := range v {
			v[i] *= v[i]
		}
		for range 5 {
			Adam(w, randSlice(r2, n), m, v, c)
		}
		Use(prev)
		if ref == nil {
			ref = w
			continue
		}
		for i := range w {
			if w[i] != ref[i] {
				t.Fatalf("%s: w[%d] = %v, Go gives %v", be, i, w[i], ref[i])
			}
		}
	}
	_ = r
}

// TestSumSquares checks the sum of squares against a plain float64 loop and
// that every backend returns the same bits (a gradient norm decides
// clipping, so the backends must not disagree on it).
func TestSumSquares(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{0, 1, 15, 16, 17, 100, 4099} {
		x := randSlice(r, n)
		var want float64
		for _, v := range x {
			want += float64(v) * float64(v)
		}
		var first float64
		for i, be := range Available() {
			prev := Use(be)
			got := SumSquares(x)
			Use(prev)
			if math.Abs(got-want) > 1e-12*(1+want) {
				t.Errorf("%s n=%d: %v, want %v", be, n, got, want)
			}
			if i == 0 {
				first = got
			} else if got != first {
				t.Errorf("%s n=%d: %v, the %s backend gives %v", be, n, got, Available()[0], first)
			}
		}
	}
}

// BenchmarkElementwise reports values per nanosecond of the fused layer
// kernels on a 4096×256 activation.
func BenchmarkElementwise(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const rows, cols = 4096, 256
	y0 := randSlice(r, rows*cols)
	bias := randSlice(r, cols)
	y, z, d := make([]float32, len(y0)), make([]float32, len(y0)), randSlice(r, len(y0))
	m, v := make([]float32, len(y0)), make([]float32, len(y0))
	c := AdamCoef{B1: 0.9, OneMinusB1: 0.1, B2: 0.999, OneMinusB2: 0.001, Step: 1e-3, SqrtBC2: 1, Eps: 1e-8}
	// A bias gradient's rows come from a product just computed: 1500 rows
	// (a late batch's distinct states) are still in L2.
	const gradRows = 1500
	idx := make([]int32, 2*gradRows)
	for i := range idx {
		idx[i] = int32(r.IntN(128) + 128*(i%2))
	}
	for _, k := range []struct {
		name string
		f    func()
		n    int // values per call, if not rows·cols
	}{
		{"BiasLeakyReLU", func() { copy(y, y0); BiasLeakyReLU(y, bias, 0.01) }, 0},
		{"LeakyReLUGrad", func() { LeakyReLUGrad(d, y0, 0.01) }, 0},
		{"BiasGELU", func() { copy(y, y0); BiasGELU(y, z, bias) }, 0},
		{"GELUGrad", func() { GELUGrad(d, y0) }, 0},
		{"Adam", func() { Adam(y, d, m, v, c) }, 0},
		{"SumSquares", func() { _ = SumSquares(d) }, 0},
		{"Scale", func() { Scale(d, 1) }, 0},
		{"GatherSum", func() { // a one-hot layer on d=2 grid states: 2 of 256 rows
			for r := 0; r < gradRows; r++ {
				GatherSum(y[r*cols:(r+1)*cols], y0[:256*cols], idx[2*r:2*r+2])
			}
		}, gradRows * cols},
		{"ClearAddTo", func() { // what GatherSum replaces
			for r := 0; r < gradRows; r++ {
				row := y[r*cols : (r+1)*cols]
				clear(row)
				for _, j := range idx[2*r : 2*r+2] {
					AddTo(row, y0[int(j)*cols:int(j+1)*cols])
				}
			}
		}, gradRows * cols},
		{"AddRows", func() { AddRows(bias, d[:gradRows*cols]) }, gradRows * cols},
		{"AddToPerRow", func() { // what AddRows replaces
			for r := 0; r < gradRows*cols; r += cols {
				AddTo(bias, d[r:r+cols])
			}
		}, gradRows * cols},
	} {
		n := k.n
		if n == 0 {
			n = len(y0)
		}
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				k.f()
			}
			b.ReportMetric(float64(n)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "values/ns")
		})
	}
}
