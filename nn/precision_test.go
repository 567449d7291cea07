package nn

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/internal/kernel"
)

func TestPrecisionNames(t *testing.T) {
	for _, p := range []Precision{FP32, BF16} {
		q, err := ParsePrecision(p.String())
		if err != nil || q != p {
			t.Fatalf("ParsePrecision(%q) = %v, %v", p.String(), q, err)
		}
	}
	if _, err := ParsePrecision("fp16"); err == nil || !strings.HasPrefix(err.Error(), "nn: ") {
		t.Fatalf("ParsePrecision(fp16): error %v", err)
	}
	// In a configuration: FP32 is left out under omitempty, BF16 is named.
	type config struct {
		Precision Precision `json:"precision,omitempty"`
	}
	for _, c := range []struct {
		p    Precision
		want string
	}{{FP32, `{}`}, {BF16, `{"precision":"bf16"}`}} {
		b, err := json.Marshal(config{c.p})
		if err != nil || string(b) != c.want {
			t.Fatalf("%v in JSON: %s, %v; want %s", c.p, b, err, c.want)
		}
		var back config
		if err := json.Unmarshal(b, &back); err != nil || back.Precision != c.p {
			t.Fatalf("%s read back as %v, %v", b, back.Precision, err)
		}
	}
	var back config
	if err := json.Unmarshal([]byte(`{"precision":"bf17"}`), &back); err == nil {
		t.Fatal("an unknown precision was read without error")
	}
	if _, err := json.Marshal(config{Precision(7)}); err == nil {
		t.Fatal("an unknown precision was written without error")
	}
}

// TestPrecisionRefusedWithoutBF16: on a CPU without AVX512_BF16 (simulated
// here if this one has it) BF16 is an error naming the feature, and the
// layers keep their precision.
func TestPrecisionRefusedWithoutBF16(t *testing.T) {
	if err := FP32.Check(); err != nil {
		t.Fatal(err)
	}
	if err := BF16.Check(); (err == nil) != kernel.HasBF16Path() {
		t.Fatalf("BF16.Check() = %v with HasBF16Path %v", err, kernel.HasBF16Path())
	}
	defer func(f func() bool) { hasBF16 = f }(hasBF16)
	hasBF16 = func() bool { return false }
	m := NewMLP("m", 3, []int{4, 4, 4, 2}, LeakyReLU, rand.New(rand.NewPCG(1, 1)))
	for name, err := range map[string]error{"Check": BF16.Check(), "MLP": m.SetPrecision(BF16), "Linear": m.First.SetPrecision(BF16)} {
		if err == nil || !strings.HasPrefix(err.Error(), "nn: ") || !strings.Contains(err.Error(), "AVX512_BF16") {
			t.Fatalf("%s: BF16 without the instructions: error %v", name, err)
		}
	}
	for _, l := range append([]*Linear{m.First}, m.Layers...) {
		if l.Precision() != FP32 {
			t.Fatalf("%s: a refused precision was set", l.W.Name)
		}
	}
	if err := Precision(9).Check(); err == nil {
		t.Fatal("an unknown precision passed Check")
	}
}

// TestPrecisionMatMul: FP32.MatMul is MatMul, BF16.MatMul is GemmBF16, bit
// for bit, transposed and accumulating.
func TestPrecisionMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	a := &Matrix{Rows: 20, Cols: 30, Data: randomCoef(rng, 600)}
	b := &Matrix{Rows: 40, Cols: 30, Data: randomCoef(rng, 1200)}
	c0 := randomCoef(rng, 800)
	want := &Matrix{Rows: 20, Cols: 40, Data: slices.Clone(c0)}
	MatMul(want, a, false, b, true, true)
	got := &Matrix{Rows: 20, Cols: 40, Data: slices.Clone(c0)}
	FP32.MatMul(got, a, false, b, true, true)
	if !slices.Equal(got.Data, want.Data) {
		t.Fatal("FP32.MatMul differs from MatMul")
	}
	copy(want.Data, c0)
	kernel.GemmBF16(false, true, 20, 40, 30, a.Data, 30, b.Data, 30, want.Data, 40, true)
	copy(got.Data, c0)
	BF16.MatMul(got, a, false, b, true, true)
	if !slices.Equal(got.Data, want.Data) {
		t.Fatal("BF16.MatMul differs from GemmBF16")
	}
}

func skipWithoutBF16(t testing.TB) {
	if !kernel.HasBF16Path() {
		t.Skip("this CPU runs no fast bfloat16 path: BF16 is refused (TestPrecisionRefusedWithoutBF16)")
	}
}

// bfBound is the bound GemmBF16 states for one result element with k
// terms, Σ|a|·|b| = s and old value c0, plus one float32 rounding of the
// result (a bias or activation after it): bfloat16 operands are within a
// factor 1 ± 2^-8 of the float32 ones, so products within 2^-7 + 2^-16.
func bfBound(k int, s, c0, result float64) float64 {
	nu := float64(k+(k+511)/512+1) * 0x1p-24
	g := nu / (1 - nu)
	const ub = 0x1p-8
	return (2*ub+ub*ub+g*(1+ub)*(1+ub))*s + g*math.Abs(c0) + 0x1p-24*math.Abs(result)
}

// checkLinearBF16 checks a BF16 layer's Forward, then its Backward, against
// float64 products of the same float32 operands within bfBound: the
// output before the activation (LeakyReLU and the identity do not widen a
// difference), the weight gradient accumulated onto a nonzero one, the
// input gradient. The bias gradient must have a float32 layer's bits. It
// returns the largest error as a fraction of its bound.
func checkLinearBF16(t *testing.T, l *Linear, x, dy *Matrix) float64 {
	t.Helper()
	in, out, rows := l.In(), l.Out(), x.Rows
	worst := 0.0
	check := func(what string, got, want, bound float64) {
		t.Helper()
		if d := math.Abs(got - want); d > bound {
			t.Fatalf("%s: %s = %v, float64 %v: error %.3g > bound %.3g", l.W.Name, what, got, want, d, bound)
		} else if bound > 0 {
			worst = max(worst, d/bound)
		}
	}
	slope := 1.0
	if l.Act == LeakyReLU {
		slope = leakySlope
	}
	act := func(v float64) float64 {
		if v < 0 {
			return slope * v
		}
		return v
	}
	y := l.Forward(x)
	for r := range rows {
		for j := range out {
			var want, s float64
			for i := range in {
				p := float64(x.At(r, i)) * float64(l.W.Value[i*out+j])
				want, s = want+p, s+math.Abs(p)
			}
			b := float64(l.B.Value[j])
			check("y", float64(y.At(r, j)), act(want+b), bfBound(in, s, b, want+b))
		}
	}
	// Backward: dy is overwritten with the gradient before the activation.
	g0 := slices.Clone(l.W.Grad)
	dyIn := slices.Clone(dy.Data)
	dyPre := make([]float64, len(dyIn))
	for e, v := range dyIn {
		dyPre[e] = float64(v)
		if y.Data[e] < 0 {
			dyPre[e] *= slope
		}
	}
	clear(l.B.Grad)
	dx := l.Backward(dy)
	for i := range in {
		for j := range out {
			var want, s float64
			for r := range rows {
				p := float64(x.At(r, i)) * dyPre[r*out+j]
				want, s = want+p, s+math.Abs(p)
			}
			g := float64(g0[i*out+j])
			check("dW", float64(l.W.Grad[i*out+j]), want+g, bfBound(rows, s, g, 0))
		}
	}
	if !l.NoInputGrad {
		for r := range rows {
			for i := range in {
				var want, s float64
				for j := range out {
					p := dyPre[r*out+j] * float64(l.W.Value[i*out+j])
					want, s = want+p, s+math.Abs(p)
				}
				check("dx", float64(dx.At(r, i)), want, bfBound(out, s, 0, 0))
			}
		}
	}
	// The bias gradient is a float32 sum whatever the precision.
	ref := &Linear{W: &Param{Shape: l.W.Shape, Value: l.W.Value, Grad: make([]float32, in*out)}, B: &Param{Shape: l.B.Shape, Grad: make([]float32, out)}, NoInputGrad: true}
	ref.x = x
	ref.y = *y
	ref.Act = l.Act
	ref.Backward(&Matrix{Rows: rows, Cols: out, Data: slices.Clone(dyIn)})
	if !slices.Equal(ref.B.Grad, l.B.Grad) {
		t.Fatalf("%s: the bias gradient differs from the float32 layer's", l.W.Name)
	}
	return worst
}

// TestLinearBF16WithinBound runs BF16 layers of odd widths, with and
// without LeakyReLU, and checks their three products against float64.
func TestLinearBF16WithinBound(t *testing.T) {
	skipWithoutBF16(t)
	rng := rand.New(rand.NewPCG(41, 42))
	worst := 0.0
	for _, s := range [][3]int{{1, 7, 5}, {37, 45, 70}, {130, 33, 64}, {20, 600, 3}} {
		rows, in, out := s[0], s[1], s[2]
		for _, act := range []Activation{Identity, LeakyReLU} {
			l := NewLinear("l", in, out, rng)
			l.Act = act
			for i := range l.W.Grad {
				l.W.Grad[i] = float32(rng.NormFloat64())
			}
			if err := l.SetPrecision(BF16); err != nil {
				t.Fatal(err)
			}
			x := &Matrix{Rows: rows, Cols: in, Data: randomCoef(rng, rows*in)}
			dy := &Matrix{Rows: rows, Cols: out, Data: randomCoef(rng, rows*out)}
			worst = max(worst, checkLinearBF16(t, l, x, dy))
		}
	}
	// The operands must have been rounded: float32 products stay near
	// 1% of the bound (the float32 rounding of an accumulated gradient).
	if worst < 0.05 {
		t.Fatalf("largest error %.3g of the bound: were the products bfloat16?", worst)
	}
	t.Logf("largest error: %.3f of the bound", worst)
}

// bfMLP returns a dense or one-hot MLP with three hidden layers (two of
// them hidden-to-hidden) set to BF16, and a float32 clone sharing its
// parameters.
func bfMLP(t *testing.T, dense bool, act Activation, seed uint64) (m, f *MLP) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	if dense {
		m = NewMLP("m", 6, []int{24, 40, 24, 3}, act, rng)
	} else {
		m = NewOneHotMLP("m", 20, []int{24, 40, 24, 3}, act, rng)
	}
	f = m.Clone()
	if err := m.SetPrecision(BF16); err != nil {
		t.Fatal(err)
	}
	return m, f
}

// TestMLPSetPrecision: BF16 reaches the hidden-to-hidden layers only, and
// clones; a one-hidden-layer network is unchanged.
func TestMLPSetPrecision(t *testing.T) {
	skipWithoutBF16(t)
	for _, dense := range []bool{false, true} {
		m, f := bfMLP(t, dense, LeakyReLU, 1)
		want := []Precision{BF16, BF16, FP32}
		for i, l := range m.Layers {
			if l.Precision() != want[i] {
				t.Fatalf("dense=%v: layer %d is %v, want %v", dense, i, l.Precision(), want[i])
			}
		}
		if dense && m.First.Precision() != FP32 {
			t.Fatal("the input layer was set to BF16")
		}
		if m.Precision() != BF16 || f.Precision() != FP32 {
			t.Fatalf("Precision() = %v, %v", m.Precision(), f.Precision())
		}
		if c := m.Clone(); c.Layers[0].Precision() != BF16 || c.Layers[2].Precision() != FP32 {
			t.Fatal("Clone lost the precisions")
		}
		if err := m.SetPrecision(FP32); err != nil || m.Precision() != FP32 {
			t.Fatalf("back to FP32: %v, %v", m.Precision(), err)
		}
	}
	one := NewMLP("m", 3, []int{8, 2}, LeakyReLU, rand.New(rand.NewPCG(2, 2)))
	if err := one.SetPrecision(BF16); err != nil || one.Layers[0].Precision() != FP32 || one.Precision() != FP32 {
		t.Fatalf("one hidden layer: %v, %v", one.Layers[0].Precision(), err)
	}
}

// TestMLPBF16Layers: in a BF16 network, each hidden-to-hidden layer is
// within the bfloat16 bound of float64 on its own input (forward and
// backward), and the input and output layers give a float32 network's bits
// on the same inputs.
func TestMLPBF16Layers(t *testing.T) {
	skipWithoutBF16(t)
	for _, dense := range []bool{false, true} {
		m, f := bfMLP(t, dense, LeakyReLU, 3)
		rng := rand.New(rand.NewPCG(4, 4))
		const rows, k = 50, 3
		x := &Matrix{Rows: rows, Cols: 6, Data: randomCoef(rng, rows*6)}
		idx := make([]int32, rows*k)
		for i := range idx {
			idx[i] = int32(rng.IntN(20))
		}
		fwd := func(n *MLP) *Matrix {
			if dense {
				return n.Forward(x)
			}
			return n.ForwardIndices(idx, k)
		}
		y := slices.Clone(fwd(m).Data)
		fwd(f)
		// The input layer: float32 bits.
		var in, fin *Matrix
		if dense {
			in, fin = &m.First.y, &f.First.y
		} else {
			in, fin = &m.OneHot.y, &f.OneHot.y
		}
		if !slices.Equal(in.Data, fin.Data) {
			t.Fatalf("dense=%v: the input layer's output differs from float32's", dense)
		}
		// The output layer: float32 bits on the BF16 network's last hidden rows.
		last := m.Layers[2]
		ref := &Linear{W: last.W, B: last.B}
		if got := ref.Forward(&m.Layers[1].y); !slices.Equal(got.Data, y) {
			t.Fatalf("dense=%v: the output layer is not float32", dense)
		}
		// The BF16 layers on their own inputs, forward and backward.
		for i, l := range m.Layers[:2] {
			lin := &m.Layers[0].y
			if i == 0 {
				lin = in
			}
			xl := &Matrix{Rows: lin.Rows, Cols: lin.Cols, Data: slices.Clone(lin.Data)}
			dy := &Matrix{Rows: rows, Cols: l.Out(), Data: randomCoef(rng, rows*l.Out())}
			checkLinearBF16(t, l, xl, dy)
		}
	}
}

// TestMLPBF16Gradients: the gradients of a BF16 network's backward pass
// agree with finite differences of the float32 network's loss, as the
// float32 ones do (checkParamGrads' tolerance of 2e-2, relative; the
// bfloat16 products move a gradient by about 2^-7 of its terms' absolute
// sum, under 1e-2 here). Differences of the BF16 loss itself would be
// steps of bfloat16 weights, 2^-9 apart near 0.25: wider than the step h.
func TestMLPBF16Gradients(t *testing.T) {
	skipWithoutBF16(t)
	for _, act := range activations {
		for _, dense := range []bool{false, true} {
			m, f := bfMLP(t, dense, act, 5)
			rng := rand.New(rand.NewPCG(6, 6))
			const rows, k = 9, 3
			x := &Matrix{Rows: rows, Cols: 6, Data: randomCoef(rng, rows*6)}
			idx := make([]int32, rows*k)
			for i := range idx {
				idx[i] = int32(rng.IntN(20))
			}
			fwd := func(n *MLP) *Matrix {
				if dense {
					return n.Forward(x)
				}
				return n.ForwardIndices(idx, k)
			}
			c := randomCoef(rng, rows*3)
			fwd(m)
			ZeroGrad(m.Params())
			m.Backward(&Matrix{Rows: rows, Cols: 3, Data: slices.Clone(c)})
			checkParamGrads(t, m.Params(), func() float64 { return weightedSum(fwd(f), c) }, rng)
		}
	}
}

// TestMLPBF16DoesNotAllocate: a BF16 network's forward and backward passes
// allocate nothing once its buffers have grown, as the float32 ones.
func TestMLPBF16DoesNotAllocate(t *testing.T) {
	skipWithoutBF16(t)
	m, f := bfMLP(t, true, GELU, 8)
	rng := rand.New(rand.NewPCG(9, 9))
	const rows = 64
	x := &Matrix{Rows: rows, Cols: 6, Data: randomCoef(rng, rows*6)}
	dy := &Matrix{Rows: rows, Cols: 3, Data: randomCoef(rng, rows*3)}
	for _, n := range []*MLP{f, m} {
		step := func() {
			n.Forward(x)
			n.Backward(dy)
		}
		step()
		if allocs := testing.AllocsPerRun(20, step); allocs != 0 {
			t.Errorf("%v: %.1f allocations per forward and backward pass", n.Precision(), allocs)
		}
	}
}
