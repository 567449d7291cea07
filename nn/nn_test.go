package nn

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gfngo/gfn/safetensors"
)

// weightedSum is the test loss L = Σ c_ij·y_ij, whose gradient dL/dy = c.
func weightedSum(y *Matrix, c []float32) float64 {
	var s float64
	for i, v := range y.Data {
		s += float64(v) * float64(c[i])
	}
	return s
}

func randomCoef(rng *rand.Rand, n int) []float32 {
	c := make([]float32, n)
	for i := range c {
		c[i] = float32(rng.NormFloat64())
	}
	return c
}

// checkParamGrads compares analytic gradients of loss() with central finite
// differences on a sample of entries of every parameter.
func checkParamGrads(t *testing.T, ps []*Param, loss func() float64, rng *rand.Rand) {
	t.Helper()
	const h = 1e-3
	for _, p := range ps {
		for trial := 0; trial < 12; trial++ {
			i := rng.IntN(p.Len())
			old := p.Value[i]
			p.Value[i] = old + h
			lp := loss()
			p.Value[i] = old - h
			lm := loss()
			p.Value[i] = old
			num := (lp - lm) / (2 * h)
			got := float64(p.Grad[i])
			if math.Abs(num-got) > 2e-2*(1+math.Abs(num)) {
				t.Errorf("%s[%d]: analytic %.6g, finite difference %.6g", p.Name, i, got, num)
			}
		}
	}
}

var activations = []Activation{LeakyReLU, GELU}

func TestOneHotMLPGradients(t *testing.T) {
	for _, act := range activations {
		testOneHotMLPGradients(t, act)
	}
}

func testOneHotMLPGradients(t *testing.T, act Activation) {
	rng := rand.New(rand.NewPCG(3, 4))
	const vocab, k, rows = 20, 3, 7
	m := NewOneHotMLP("net", vocab, []int{16, 16, 5}, act, rng)
	idx := make([]int32, rows*k)
	for i := range idx {
		idx[i] = int32(rng.IntN(vocab))
	}
	idx[4] = -1 // padding is ignored
	c := randomCoef(rng, rows*5)
	loss := func() float64 { return weightedSum(m.ForwardIndices(idx, k), c) }
	loss()
	ZeroGrad(m.Params())
	m.Backward(&Matrix{Rows: rows, Cols: 5, Data: c})
	checkParamGrads(t, m.Params(), loss, rng)
}

func TestDenseMLPGradients(t *testing.T) {
	for _, act := range activations {
		testDenseMLPGradients(t, act)
	}
}

func testDenseMLPGradients(t *testing.T, act Activation) {
	rng := rand.New(rand.NewPCG(5, 6))
	const in, rows = 6, 9
	m := NewMLP("net", in, []int{12, 8, 3}, act, rng)
	x := &Matrix{Rows: rows, Cols: in, Data: randomCoef(rng, rows*in)}
	c := randomCoef(rng, rows*3)
	loss := func() float64 { return weightedSum(m.Forward(x), c) }
	loss()
	ZeroGrad(m.Params())
	dx := m.Backward(&Matrix{Rows: rows, Cols: 3, Data: c})
	checkParamGrads(t, m.Params(), loss, rng)
	// Input gradient.
	xp := &Param{Name: "x", Value: x.Data, Grad: append([]float32(nil), dx.Data...)}
	checkParamGrads(t, []*Param{xp}, loss, rng)
}

func TestLogSoftmaxMaskedAndGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	logits := &Matrix{Rows: 3, Cols: 4, Data: randomCoef(rng, 12)}
	logits.Data[0] = 80 // large values must not overflow
	mask := []bool{true, true, false, true, false, true, true, true, true, false, false, false}
	mask[9], mask[8] = true, false
	var out Matrix
	LogSoftmax(&out, logits, mask)
	for i := range 3 {
		var s float64
		for j := range 4 {
			v := out.At(i, j)
			if !mask[i*4+j] {
				if !math.IsInf(float64(v), -1) {
					t.Errorf("masked (%d,%d) = %v, want -Inf", i, j, v)
				}
				continue
			}
			s += math.Exp(float64(v))
		}
		if math.Abs(s-1) > 1e-6 {
			t.Errorf("row %d sums to %v", i, s)
		}
	}
	if out.At(2, 1) != 0 {
		t.Errorf("single allowed entry has log-prob %v, want 0", out.At(2, 1))
	}
	// Gradient of L = Σ c_ij·logp_ij over allowed entries.
	c := randomCoef(rng, 12)
	for i, ok := range mask {
		if !ok {
			c[i] = 0
		}
	}
	loss := func() float64 {
		LogSoftmax(&out, logits, mask)
		var s float64
		for i, v := range out.Data {
			if mask[i] {
				s += float64(c[i]) * float64(v)
			}
		}
		return s
	}
	loss()
	var d Matrix
	LogSoftmaxBackward(&d, &out, &Matrix{Rows: 3, Cols: 4, Data: c})
	checkParamGrads(t, []*Param{{Name: "logits", Value: logits.Data, Grad: d.Data}}, loss, rng)
	for i, ok := range mask {
		if !ok && d.Data[i] != 0 {
			t.Errorf("masked gradient %d = %v", i, d.Data[i])
		}
	}
}

func TestLogSoftmaxPanicsOnEmptyRow(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a fully masked row")
		}
	}()
	var out Matrix
	LogSoftmax(&out, NewMatrix(1, 2), []bool{false, false})
}

func TestPyTorchDefaultInit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	l := NewLinear("l", 256, 256, rng)
	bound := 1 / math.Sqrt(256)
	var ss float64
	for _, v := range l.W.Value {
		if math.Abs(float64(v)) > bound {
			t.Fatalf("weight %v outside ±%v", v, bound)
		}
		ss += float64(v) * float64(v)
	}
	std := math.Sqrt(ss / float64(l.W.Len()))
	if want := bound / math.Sqrt(3); math.Abs(std-want) > 0.02*want {
		t.Errorf("weight std %v, want %v", std, want)
	}
	for _, v := range l.B.Value {
		if math.Abs(float64(v)) > bound {
			t.Fatalf("bias %v outside ±%v", v, bound)
		}
	}
}

// adamRef is Adam in float64, written from the paper's pseudo-code.
type adamRef struct{ m, v []float64 }

// TestAdamMatchesReference also covers torch's coupled weight decay
// (g + λ·θ).
func TestAdamMatchesReference(t *testing.T) {
	for _, wd := range []float64{0, 0.05} {
		adamCase(t, wd)
	}
}

func adamCase(t *testing.T, wd float64) {
	rng := rand.New(rand.NewPCG(9, 9))
	p := NewParam("w", 5)
	q := NewParam("z")
	for i := range p.Value {
		p.Value[i] = float32(rng.NormFloat64())
	}
	opt := NewAdam(Group{Params: []*Param{p}, LR: 1e-3}, Group{Params: []*Param{q}, LR: 0.1})
	opt.WeightDecay = wd
	w := []float64{}
	for _, v := range append(append([]float32{}, p.Value...), q.Value...) {
		w = append(w, float64(v))
	}
	lrs := []float64{1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 0.1}
	ref := adamRef{make([]float64, 6), make([]float64, 6)}
	for step := 1; step <= 50; step++ {
		g := make([]float64, 6)
		for i := range g {
			g[i] = rng.NormFloat64()
		}
		for i := range 5 {
			p.Grad[i] = float32(g[i])
		}
		q.Grad[0] = float32(g[5])
		g[5] = float64(q.Grad[0])
		for i := range 5 {
			g[i] = float64(p.Grad[i])
		}
		opt.Step()
		for i := range w {
			g[i] += wd * w[i]
			ref.m[i] = 0.9*ref.m[i] + 0.1*g[i]
			ref.v[i] = 0.999*ref.v[i] + 0.001*g[i]*g[i]
			mh := ref.m[i] / (1 - math.Pow(0.9, float64(step)))
			vh := ref.v[i] / (1 - math.Pow(0.999, float64(step)))
			w[i] -= lrs[i] * mh / (math.Sqrt(vh) + 1e-8)
		}
	}
	got := append(append([]float32{}, p.Value...), q.Value...)
	for i := range w {
		if math.Abs(float64(got[i])-w[i]) > 1e-4 {
			t.Errorf("weight decay %v: param %d = %v, reference %v", wd, i, got[i], w[i])
		}
	}
}

func TestClipGradNorm(t *testing.T) {
	a := NewParam("a", 2)
	b := NewParam("b")
	a.Grad[0], a.Grad[1], b.Grad[0] = 3, 0, 4
	if n := ClipGradNorm([]*Param{a, b}, 1); math.Abs(n-5) > 1e-12 {
		t.Errorf("norm %v, want 5", n)
	}
	if n := GradNorm([]*Param{a, b}); math.Abs(n-1) > 1e-5 {
		t.Errorf("norm after clipping %v, want 1", n)
	}
	a.Grad[0], b.Grad[0] = 0.3, 0.4
	ClipGradNorm([]*Param{a, b}, 1)
	if a.Grad[0] != 0.3 || b.Grad[0] != 0.4 {
		t.Errorf("small gradient changed: %v %v", a.Grad, b.Grad)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	m := NewOneHotMLP("student", 10, []int{4, 3}, LeakyReLU, rng)
	opt := NewAdam(Group{Params: m.Params(), LR: 1e-3})
	for _, p := range m.Params() {
		for i := range p.Grad {
			p.Grad[i] = float32(rng.NormFloat64())
		}
	}
	opt.Step()
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, append(ParamTensors("", m.Params()), opt.StateTensors("optim.")...), nil); err != nil {
		t.Fatal(err)
	}
	ts, _, err := safetensors.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range ts {
		if tt.Name == "student.0.weight" && (tt.Shape[0] != 4 || tt.Shape[1] != 10) {
			t.Errorf("first weight saved as %v, want PyTorch layout [4 10]", tt.Shape)
		}
	}
	m2 := NewOneHotMLP("student", 10, []int{4, 3}, LeakyReLU, rand.New(rand.NewPCG(7, 7)))
	opt2 := NewAdam(Group{Params: m2.Params(), LR: 1e-3})
	if err := LoadParams("", m2.Params(), ts); err != nil {
		t.Fatal(err)
	}
	if err := opt2.LoadState("optim.", ts); err != nil {
		t.Fatal(err)
	}
	idx := []int32{1, 7}
	y1 := append([]float32(nil), m.ForwardIndices(idx, 1).Data...)
	y2 := m2.ForwardIndices(idx, 1).Data
	for i := range y1 {
		if y1[i] != y2[i] {
			t.Fatalf("outputs differ after reload: %v vs %v", y1, y2)
		}
	}
	if opt2.Steps != 1 {
		t.Errorf("steps %d", opt2.Steps)
	}
	// Wrong architecture: a clear error.
	m3 := NewOneHotMLP("student", 11, []int{4, 3}, LeakyReLU, rng)
	if err := LoadParams("", m3.Params(), ts); err == nil {
		t.Error("loading into a different shape did not fail")
	}
}

// A recorded sequence of small forward passes must give the same gradients
// as one forward pass over all the rows.
func TestRecordMatchesSingleForward(t *testing.T) {
	for _, act := range activations {
		testRecordMatchesSingleForward(t, act)
	}
}

func testRecordMatchesSingleForward(t *testing.T, act Activation) {
	for _, dense := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(11, 12))
		var a, b *MLP
		if dense {
			a = NewMLP("m", 5, []int{16, 16, 3}, act, rng)
			b = NewMLP("m", 5, []int{16, 16, 3}, act, rand.New(rand.NewPCG(11, 12)))
		} else {
			a = NewOneHotMLP("m", 9, []int{16, 16, 3}, act, rng)
			b = NewOneHotMLP("m", 9, []int{16, 16, 3}, act, rand.New(rand.NewPCG(11, 12)))
		}
		const k = 2
		sizes := []int{4, 3, 1, 5}
		var allIdx []int32
		var allX []float32
		for round := 0; round < 2; round++ { // the second round reuses the tape buffers
			allIdx, allX = allIdx[:0], allX[:0]
			a.Record()
			for _, rows := range sizes {
				idx := make([]int32, rows*k)
				for i := range idx {
					idx[i] = int32(rng.IntN(9))
				}
				x := &Matrix{Rows: rows, Cols: 5, Data: randomCoef(rng, rows*5)}
				if dense {
					a.Forward(x)
				} else {
					a.ForwardIndices(idx, k)
				}
				allIdx = append(allIdx, idx...)
				allX = append(allX, x.Data...)
			}
			ya := a.EndRecord()
			n := len(allIdx) / k
			var yb *Matrix
			if dense {
				yb = b.Forward(&Matrix{Rows: n, Cols: 5, Data: allX})
			} else {
				yb = b.ForwardIndices(allIdx, k)
			}
			for i := range yb.Data {
				if ya.Data[i] != yb.Data[i] {
					t.Fatalf("dense=%v: recorded output %d = %v, single pass %v", dense, i, ya.Data[i], yb.Data[i])
				}
			}
			c := randomCoef(rng, n*3)
			ZeroGrad(a.Params())
			ZeroGrad(b.Params())
			a.Backward(&Matrix{Rows: n, Cols: 3, Data: append([]float32(nil), c...)})
			b.Backward(&Matrix{Rows: n, Cols: 3, Data: c})
			pa, pb := a.Params(), b.Params()
			for i := range pa {
				for j := range pa[i].Grad {
					if math.Abs(float64(pa[i].Grad[j]-pb[i].Grad[j])) > 1e-5 {
						t.Fatalf("dense=%v round %d: %s grad %d = %v, single pass %v", dense, round, pa[i].Name, j, pa[i].Grad[j], pb[i].Grad[j])
					}
				}
			}
		}
	}
}

// Training on representatives of duplicate rows, with summed gradients,
// equals training on every row.
func TestKeepRowsMatchesAllRows(t *testing.T) {
	for _, act := range activations {
		testKeepRowsMatchesAllRows(t, act)
	}
}

func testKeepRowsMatchesAllRows(t *testing.T, act Activation) {
	for _, dense := range []bool{false, true} {
		for _, record := range []bool{false, true} {
			mk := func() *MLP {
				r := rand.New(rand.NewPCG(21, 22))
				if dense {
					return NewMLP("m", 4, []int{8, 8, 3}, act, r)
				}
				return NewOneHotMLP("m", 6, []int{8, 8, 3}, act, r)
			}
			a, b := mk(), mk()
			rng := rand.New(rand.NewPCG(5, 1))
			// Rows 0..4 with duplicates: 0=2=4, 1=3.
			uniqIdx := []int32{1, 4, 2, 5}
			uniqX := randomCoef(rng, 8)
			var idx []int32
			var xs []float32
			for _, u := range []int{0, 1, 0, 1, 0} {
				idx = append(idx, uniqIdx[2*u:2*u+2]...)
				xs = append(xs, uniqX[4*u:4*u+4]...)
			}
			fwd := func(m *MLP, rowsIdx []int32, rowsX []float32) *Matrix {
				if dense {
					return m.Forward(&Matrix{Rows: len(rowsX) / 4, Cols: 4, Data: rowsX})
				}
				return m.ForwardIndices(rowsIdx, 2)
			}
			c := randomCoef(rng, 15)
			// a: all five rows.
			ZeroGrad(a.Params())
			if record {
				a.Record()
				fwd(a, idx[:4], xs[:8])
				fwd(a, idx[4:], xs[8:])
				a.EndRecord()
			} else {
				fwd(a, idx, xs)
			}
			a.KeepRows([]int32{0, 1, 2, 3, 4}) // every row in order: a no-op
			a.Backward(&Matrix{Rows: 5, Cols: 3, Data: append([]float32(nil), c...)})
			// b: the same pass reduced to rows 0 and 1, gradients summed.
			ZeroGrad(b.Params())
			if record {
				b.Record()
				fwd(b, idx[:4], xs[:8])
				fwd(b, idx[4:], xs[8:])
				b.EndRecord()
			} else {
				fwd(b, idx, xs)
			}
			b.KeepRows([]int32{0, 1})
			d := make([]float32, 6)
			for r, u := range []int{0, 1, 0, 1, 0} {
				for j := range 3 {
					d[u*3+j] += c[r*3+j]
				}
			}
			b.Backward(&Matrix{Rows: 2, Cols: 3, Data: d})
			pa, pb := a.Params(), b.Params()
			for i := range pa {
				for j := range pa[i].Grad {
					if math.Abs(float64(pa[i].Grad[j]-pb[i].Grad[j])) > 1e-5 {
						t.Fatalf("dense=%v record=%v: %s grad %d: %v all rows, %v kept rows", dense, record, pa[i].Name, j, pa[i].Grad[j], pb[i].Grad[j])
					}
				}
			}
		}
	}
}

// A clone shares the parameters (an update shows in both) and computes the
// same outputs, with buffers of its own.
func TestCloneSharesParameters(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	m := NewOneHotMLP("m", 6, []int{8, 8, 3}, LeakyReLU, r)
	c := m.Clone()
	idx := []int32{0, 3, 1, 5, 2, 4}
	want := append([]float32(nil), m.ForwardIndices(idx, 2).Data...)
	got := c.ForwardIndices(idx, 2)
	if !slices.Equal(got.Data, want) {
		t.Fatalf("clone output %v, want %v", got.Data, want)
	}
	if &got.Data[0] == &m.Output().Data[0] {
		t.Fatal("clone shares the output buffer")
	}
	m.Params()[0].Value[0] += 1
	a := append([]float32(nil), m.ForwardIndices(idx, 2).Data...)
	if b := c.ForwardIndices(idx, 2).Data; !slices.Equal(a, b) || slices.Equal(a, want) {
		t.Fatal("a parameter change did not reach both the MLP and its clone")
	}
}
