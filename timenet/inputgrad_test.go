package timenet

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gfngo/gfn/nn"
)

// The input gradient of BackwardInput against central finite differences
// with respect to every input value, of the float32 Forward itself (step
// 1e-3, tolerance 2e-2·(1+|fd|), as TestGradients) and of the float64
// naive network (step 1e-5, tolerance 2e-5 of the gradient's RMS scale).
// The parameter gradients are Backward's, bit for bit.
func TestInputGradient(t *testing.T) { onEveryBackend(t, testInputGradient) }

func testInputGradient(t *testing.T) {
	for _, tc := range testCases {
		n, x, c := setup(t, tc)
		ps := n.Params()
		// Backward alone, for the bit-for-bit comparison.
		nn.ZeroGrad(ps)
		n.Forward(x, times)
		n.Backward(&nn.Matrix{Rows: x.Rows, Cols: 2 * tc.dim, Data: slices.Clone(c)})
		var want []float32
		for _, p := range ps {
			want = append(want, p.Grad...)
		}
		nn.ZeroGrad(ps)
		n.Forward(x, times)
		var dx nn.Matrix
		n.BackwardInput(&nn.Matrix{Rows: x.Rows, Cols: 2 * tc.dim, Data: slices.Clone(c)}, &dx)
		var got []float32
		for _, p := range ps {
			got = append(got, p.Grad...)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: BackwardInput's parameter gradients differ from Backward's", tc.name)
		}
		if dx.Rows != x.Rows || dx.Cols != tc.dim {
			t.Fatalf("%s: input gradient is %d×%d, want %d×%d", tc.name, dx.Rows, dx.Cols, x.Rows, tc.dim)
		}
		var scale float64
		for _, g := range dx.Data {
			scale += float64(g) * float64(g)
		}
		scale = math.Sqrt(scale / float64(len(dx.Data)))
		if scale == 0 {
			t.Fatalf("%s: zero input gradient", tc.name)
		}
		ref := newNaive(n)
		var worst32, worst64 float64
		for i := range x.Data {
			g := float64(dx.Data[i])
			old := x.Data[i]
			const h32 = 1e-3
			x.Data[i] = old + h32
			lp := weightedSum(n.Forward(x, times), c)
			x.Data[i] = old - h32
			lm := weightedSum(n.Forward(x, times), c)
			fd := (lp - lm) / (2 * h32)
			worst32 = max(worst32, math.Abs(fd-g)/(2e-2*(1+math.Abs(fd))))
			if math.Abs(fd-g) > 2e-2*(1+math.Abs(fd)) {
				t.Errorf("%s: dx[%d]: analytic %.6g, float32 finite difference %.6g", tc.name, i, g, fd)
			}
			// The float64 network on a float64 copy of x.
			const h64 = 1e-5
			lp = naiveShifted(ref, x, old, i, h64, c)
			lm = naiveShifted(ref, x, old, i, -h64, c)
			x.Data[i] = old
			fd = (lp - lm) / (2 * h64)
			worst64 = max(worst64, math.Abs(fd-g)/(2e-5*(scale+math.Abs(fd))))
			if math.Abs(fd-g) > 2e-5*(scale+math.Abs(fd)) {
				t.Errorf("%s: dx[%d]: analytic %.8g, float64 finite difference %.8g (gradient scale %.3g)", tc.name, i, g, fd, scale)
			}
		}
		t.Logf("%s: largest input-gradient error / tolerance: %.3g (float32 loss), %.3g (float64 loss)", tc.name, worst32, worst64)
	}
}

// naiveShifted is the naive float64 loss with input value i set to
// old + h exactly (not rounded to float32).
func naiveShifted(v *naive, x *nn.Matrix, old float32, i int, h float64, c []float32) float64 {
	block := x.Rows / len(times)
	var s float64
	for r := range x.Rows {
		xr := make([]float64, x.Cols)
		for j, e := range x.Row(r) {
			xr[j] = float64(e)
			if r*x.Cols+j == i {
				xr[j] = float64(old) + h
			}
		}
		for j, e := range v.row(xr, float64(times[r/block])) {
			s += e * float64(c[r*2*v.dim+j])
		}
	}
	return s
}

// After a recording, BackwardInput's input gradient covers every recorded
// row and equals, bit for bit, that of one Forward on their concatenation;
// a clone's equals the original's.
func TestInputGradientRecordedAndCloned(t *testing.T) {
	for _, tc := range testCases {
		n, x, c := setup(t, tc)
		block := x.Rows / len(times)
		n.Forward(x, times)
		var want nn.Matrix
		n.BackwardInput(&nn.Matrix{Rows: x.Rows, Cols: 2 * tc.dim, Data: slices.Clone(c)}, &want)

		r := n.(Recorder)
		r.Record(0)
		for k := range times {
			xk := view(block, tc.dim, x.Data[k*block*tc.dim:])
			r.Forward(&xk, times[k:k+1])
		}
		r.EndRecord()
		var got nn.Matrix
		r.BackwardInput(&nn.Matrix{Rows: x.Rows, Cols: 2 * tc.dim, Data: slices.Clone(c)}, &got)
		if !slices.Equal(got.Data, want.Data) || got.Rows != want.Rows {
			t.Errorf("%s: recorded input gradient differs from one pass", tc.name)
		}

		cl := n.Clone()
		cl.Forward(x, times)
		var gc nn.Matrix
		cl.BackwardInput(&nn.Matrix{Rows: x.Rows, Cols: 2 * tc.dim, Data: slices.Clone(c)}, &gc)
		if !slices.Equal(gc.Data, want.Data) {
			t.Errorf("%s: the clone's input gradient differs", tc.name)
		}
	}
}

// BackwardInput allocates nothing once its buffers and dx have grown.
func TestInputGradientAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	for _, tc := range slices.Concat(testCases, fullSize[1:2]) {
		n, x, c := setup(t, tc)
		dy := nn.NewMatrix(x.Rows, 2*tc.dim)
		var dx nn.Matrix
		step := func() {
			n.Forward(x, times)
			copy(dy.Data, c)
			n.BackwardInput(dy, &dx)
		}
		step()
		if a := testing.AllocsPerRun(10, step); a != 0 {
			t.Errorf("%s: %v allocations per Forward+BackwardInput", tc.name, a)
		}
	}
}

// A nil dx is a programmer error.
func TestInputGradientNilPanics(t *testing.T) {
	n := mustNew(t, Config{Arch: PIS, Hidden: 8}, 2, 1)
	x := randomMatrix(rand.New(rand.NewPCG(1, 2)), 3, 2, 1)
	n.Forward(x, []float32{0})
	defer func() {
		if recover() == nil {
			t.Error("BackwardInput(dy, nil) did not panic")
		}
	}()
	n.BackwardInput(nn.NewMatrix(3, 4), nil)
}
