package timenet

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
)

// TestSetOutputsBitIdentical: a net that computes only its first d
// outputs (a fixed variance's drift) gives those outputs, every parameter
// gradient and the input gradient with the bits of the whole net's, whose
// other outputs' weights are zero and gradients zero, on the SIMD
// backends at widths of 16 and more; within float32 rounding on the
// portable one (its products keep several partial sums over k). The
// unused columns of the output gradient are not read (they hold NaN
// here), and a clone keeps the setting.
func TestSetOutputsBitIdentical(t *testing.T) {
	onEveryBackend(t, func(t *testing.T) {
		exact := kernel.Name() != kernel.BackendGo
		for _, tc := range []testCase{
			{"pis-64", Config{Arch: PIS, Hidden: 64}, 16},
			{"pis-64", Config{Arch: PIS, Hidden: 64}, 40},
			{"reference", Config{Hidden: 32, Harmonics: 4}, 24},
		} {
			d := tc.dim
			whole, part := mustNew(t, tc.cfg, d, 3), mustNew(t, tc.cfg, d, 3)
			rng := rand.New(rand.NewPCG(4, 5))
			for _, n := range []Net{whole, part} {
				w, b := outputLayer(n)
				r := rand.New(rand.NewPCG(6, 7))
				out := w.Shape[1]
				for i := range w.Shape[0] {
					for j := range d {
						w.Value[i*out+j] = float32(0.1 * r.NormFloat64())
					}
				}
				for j := range d {
					b.Value[j] = float32(0.1 * r.NormFloat64())
				}
			}
			part.(OutputSetter).SetOutputs(d)
			x := randomMatrix(rng, 5*len(times), d, 2)
			dy := randomCoef(rng, x.Rows*2*d)
			dyWhole := &nn.Matrix{Rows: x.Rows, Cols: 2 * d, Data: append([]float32(nil), dy...)}
			dyPart := &nn.Matrix{Rows: x.Rows, Cols: 2 * d, Data: append([]float32(nil), dy...)}
			for r := range x.Rows {
				clear(dyWhole.Row(r)[d:])
				for j := d; j < 2*d; j++ {
					dyPart.Row(r)[j] = float32(math.NaN())
				}
			}
			check := func(what string, got, want []float32) {
				t.Helper()
				for i := range want {
					g, w := got[i], want[i]
					if exact && math.Float32bits(g) != math.Float32bits(w) || !exact && math.Abs(float64(g-w)) > 1e-5*(1+math.Abs(float64(w))) {
						t.Fatalf("%s d=%d: %s[%d] = %v with SetOutputs, %v without", tc.name, d, what, i, g, w)
					}
				}
			}
			for _, p := range []Net{part, part.Clone()} {
				nn.ZeroGrad(whole.Params())
				nn.ZeroGrad(p.Params())
				yw, yp := whole.Forward(x, times), p.Forward(x, times)
				for r := range x.Rows {
					check("output", yp.Row(r)[:d], yw.Row(r)[:d])
				}
				var dxw, dxp nn.Matrix
				whole.BackwardInput(&nn.Matrix{Rows: dyWhole.Rows, Cols: dyWhole.Cols, Data: append([]float32(nil), dyWhole.Data...)}, &dxw)
				p.BackwardInput(&nn.Matrix{Rows: dyPart.Rows, Cols: dyPart.Cols, Data: append([]float32(nil), dyPart.Data...)}, &dxp)
				check("dx", dxp.Data, dxw.Data)
				pw, pp := whole.Params(), p.Params()
				for i := range pw {
					check(pw[i].Name+" gradient", pp[i].Grad, pw[i].Grad)
				}
			}
		}
	})
}

func TestSetOutputsRange(t *testing.T) {
	n := mustNew(t, Config{Arch: PIS, Hidden: 16}, 3, 1)
	for _, c := range []int{-1, 7} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SetOutputs(%d) of a net with 6 outputs did not panic", c)
				}
			}()
			n.(OutputSetter).SetOutputs(c)
		}()
	}
	for _, c := range []struct{ set, want int }{{2, 2}, {0, 6}, {6, 6}, {5, 5}} {
		n.(OutputSetter).SetOutputs(c.set)
		if got := n.(OutputSetter).Outputs(); got != c.want {
			t.Errorf("SetOutputs(%d): Outputs() = %d, want %d", c.set, got, c.want)
		}
	}
}
