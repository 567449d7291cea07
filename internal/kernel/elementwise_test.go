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
		for _, cols := range []int{1, 3, 8, 17, 256, 257} {
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
