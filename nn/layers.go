package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Layer is a differentiable map on row batches. Forward returns a matrix
// owned by the layer (valid until its next Forward); Backward takes the
// gradient with respect to that output, accumulates parameter gradients and
// returns the gradient with respect to the input (nil where none is needed).
type Layer interface {
	Forward(x *Matrix) *Matrix
	Backward(dy *Matrix) *Matrix
	Params() []*Param
}

// Linear is y = x·W + b with W stored in×out.
type Linear struct {
	W, B *Param
	// NoInputGrad skips computing dx in Backward, for a first layer.
	NoInputGrad bool

	x     *Matrix
	y, dx Matrix
}

// NewLinear returns a layer with PyTorch's default initialisation:
// W ~ kaiming_uniform(a=√5), i.e. U(±1/√in), and b ~ U(±1/√in).
func NewLinear(name string, in, out int, rng *rand.Rand) *Linear {
	l := &Linear{W: NewParam(name+".weight", in, out), B: NewParam(name+".bias", out)}
	l.W.Transposed = true
	bound := 1 / math.Sqrt(float64(in))
	uniformInit(l.W.Value, bound, rng)
	uniformInit(l.B.Value, bound, rng)
	return l
}

func (l *Linear) In() int  { return l.W.Shape[0] }
func (l *Linear) Out() int { return l.W.Shape[1] }

func (l *Linear) Forward(x *Matrix) *Matrix {
	if x.Cols != l.In() {
		panic(fmt.Sprintf("nn: %s: input has %d columns, want %d", l.W.Name, x.Cols, l.In()))
	}
	l.x = x
	l.y.Resize(x.Rows, l.Out())
	for i := range x.Rows {
		copy(l.y.Row(i), l.B.Value)
	}
	MatMul(&l.y, x, false, &Matrix{Rows: l.In(), Cols: l.Out(), Data: l.W.Value}, false, true)
	return &l.y
}

func (l *Linear) Backward(dy *Matrix) *Matrix {
	in, out := l.In(), l.Out()
	MatMul(&Matrix{Rows: in, Cols: out, Data: l.W.Grad}, l.x, true, dy, false, true)
	for i := range dy.Rows {
		for j, g := range dy.Row(i) {
			l.B.Grad[j] += g
		}
	}
	if l.NoInputGrad {
		return nil
	}
	l.dx.Resize(dy.Rows, in)
	MatMul(&l.dx, dy, false, &Matrix{Rows: in, Cols: out, Data: l.W.Value}, true, false)
	return &l.dx
}

func (l *Linear) Params() []*Param { return []*Param{l.W, l.B} }

// OneHot is a linear layer whose input is a sparse 0/1 vector given as index
// lists: y = b + Σ_j W[idx_j]. It equals Linear on the one-hot encoding but
// costs a gather-and-sum per row instead of a dense product.
type OneHot struct {
	W, B *Param // W is vocab×out

	idx []int32
	k   int
	y   Matrix
}

// NewOneHot initialises as a PyTorch Linear(vocab, out) would.
func NewOneHot(name string, vocab, out int, rng *rand.Rand) *OneHot {
	l := &OneHot{W: NewParam(name+".weight", vocab, out), B: NewParam(name+".bias", out)}
	l.W.Transposed = true
	bound := 1 / math.Sqrt(float64(vocab))
	uniformInit(l.W.Value, bound, rng)
	uniformInit(l.B.Value, bound, rng)
	return l
}

func (l *OneHot) Vocab() int { return l.W.Shape[0] }
func (l *OneHot) Out() int   { return l.W.Shape[1] }

// ForwardIndices takes k indices per row (negative entries are padding).
func (l *OneHot) ForwardIndices(idx []int32, k int) *Matrix {
	if k <= 0 || len(idx)%k != 0 {
		panic(fmt.Sprintf("nn: OneHot: %d indices do not form rows of %d", len(idx), k))
	}
	rows, out, vocab := len(idx)/k, l.Out(), int32(l.Vocab())
	l.idx, l.k = idx, k
	l.y.Resize(rows, out)
	for r := range rows {
		y := l.y.Row(r)
		copy(y, l.B.Value)
		for _, j := range idx[r*k : (r+1)*k] {
			if j < 0 {
				continue
			}
			if j >= vocab {
				panic(fmt.Sprintf("nn: OneHot: index %d out of range [0,%d)", j, vocab))
			}
			w := l.W.Value[int(j)*out : int(j+1)*out]
			for c, v := range w {
				y[c] += v
			}
		}
	}
	return &l.y
}

// Backward scatters dy into the rows of W that were active.
func (l *OneHot) Backward(dy *Matrix) {
	out := l.Out()
	for r := range dy.Rows {
		g := dy.Row(r)
		for j, v := range g {
			l.B.Grad[j] += v
		}
		for _, j := range l.idx[r*l.k : (r+1)*l.k] {
			if j < 0 {
				continue
			}
			w := l.W.Grad[int(j)*out : int(j+1)*out]
			for c, v := range g {
				w[c] += v
			}
		}
	}
}

func (l *OneHot) Params() []*Param { return []*Param{l.W, l.B} }

// LeakyReLU is max(x, slope·x), slope 0.01 as torch.nn.LeakyReLU.
type LeakyReLU struct {
	Slope float32

	x     *Matrix
	y, dx Matrix
}

// NewLeakyReLU returns the activation with PyTorch's default slope 0.01.
func NewLeakyReLU() *LeakyReLU { return &LeakyReLU{Slope: 0.01} }

func (l *LeakyReLU) Forward(x *Matrix) *Matrix {
	l.x = x
	l.y.Resize(x.Rows, x.Cols)
	y := l.y.Data[:len(x.Data)]
	// Branch-free: the sign bit picks the factor (signs are random, so a
	// branch would mispredict half the time).
	k := [2]float32{1, l.Slope}
	for i, v := range x.Data {
		y[i] = v * k[math.Float32bits(v)>>31]
	}
	return &l.y
}

func (l *LeakyReLU) Backward(dy *Matrix) *Matrix {
	l.dx.Resize(dy.Rows, dy.Cols)
	dx, x := l.dx.Data, l.x.Data[:len(dy.Data)]
	k := [2]float32{1, l.Slope}
	for i, g := range dy.Data {
		dx[i] = g * k[math.Float32bits(x[i])>>31]
	}
	return &l.dx
}

func (l *LeakyReLU) Params() []*Param { return nil }
