package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/internal/kernel"
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

// Activation is an element-wise function fused into a layer's output.
type Activation int

// The activations: φ(v) = v, the leaky ReLU and the GELU.
const (
	Identity  Activation = iota
	LeakyReLU            // max(v, 0.01·v), torch.nn.LeakyReLU's default slope
	GELU                 // v·Φ(v), torch.nn.GELU's default (erf) form
)

// leakySlope is torch.nn.LeakyReLU's default negative slope.
const leakySlope = 0.01

// activate applies bias and activation to y in place (rows of len(b)).
// GELU also keeps the pre-activation in z, which its gradient needs.
func activate(act Activation, y *Matrix, b []float32, z *Matrix) {
	switch act {
	case LeakyReLU:
		kernel.BiasLeakyReLU(y.Data, b, leakySlope)
	case GELU:
		z.Resize(y.Rows, y.Cols)
		kernel.BiasGELU(y.Data, z.Data, b)
	default:
		for r := 0; r < len(y.Data); r += len(b) {
			kernel.AddTo(y.Data[r:r+len(b)], b)
		}
	}
}

// activationGrad turns dy into the gradient before the activation, in
// place, from the layer's output y (or pre-activation z for GELU).
func activationGrad(act Activation, dy, y, z *Matrix) {
	switch act {
	case LeakyReLU:
		// LeakyReLU keeps the sign, so the output tells which side.
		kernel.LeakyReLUGrad(dy.Data, y.Data, leakySlope)
	case GELU:
		kernel.GELUGrad(dy.Data, z.Data)
	}
}

// Linear is y = act(x·W + b) with W stored in×out. Its products run in
// float32 unless SetPrecision chose another precision.
type Linear struct {
	W, B *Param
	Act  Activation
	// NoInputGrad skips computing dx in Backward, for a first layer.
	NoInputGrad bool

	prec     Precision
	x        *Matrix
	y, dx, z Matrix // z: the pre-activation, kept for GELU
}

// NewLinear returns a layer with PyTorch's default initialisation:
// W ~ kaiming_uniform(a=√5), i.e. U(±1/√in), and b ~ U(±1/√in).
func NewLinear(name string, in, out int, rng *rand.Rand) *Linear {
	w, b := newAffine(name, in, out, rng)
	return &Linear{W: w, B: b}
}

// newAffine makes the in×out weight (PyTorch layout out×in in checkpoints)
// and bias of a linear map, initialised as torch.nn.Linear.
func newAffine(name string, in, out int, rng *rand.Rand) (w, b *Param) {
	w, b = NewParam(name+".weight", in, out), NewParam(name+".bias", out)
	w.Transposed = true
	bound := 1 / math.Sqrt(float64(in))
	uniformInit(w.Value, bound, rng)
	uniformInit(b.Value, bound, rng)
	return w, b
}

// In is the input width.
func (l *Linear) In() int { return l.W.Shape[0] }

// Out is the output width.
func (l *Linear) Out() int { return l.W.Shape[1] }

// SetPrecision sets the precision of the layer's three products (x·W in
// Forward, xᵀ·dy and dy·Wᵀ in Backward). It returns p.Check's error, and
// then leaves the precision as it was.
func (l *Linear) SetPrecision(p Precision) error {
	if err := p.Check(); err != nil {
		return err
	}
	l.prec = p
	return nil
}

// Precision returns the precision of the layer's products.
func (l *Linear) Precision() Precision { return l.prec }

// Forward returns act(x·W + b), owned by the layer until its next Forward.
// It keeps x for Backward.
func (l *Linear) Forward(x *Matrix) *Matrix {
	if x.Cols != l.In() {
		panic(fmt.Sprintf("nn: %s: input has %d columns, want %d", l.W.Name, x.Cols, l.In()))
	}
	l.x = x
	l.y.Resize(x.Rows, l.Out())
	matMul(l.prec, &l.y, x, false, &Matrix{Rows: l.In(), Cols: l.Out(), Data: l.W.Value}, false, false)
	activate(l.Act, &l.y, l.B.Value, &l.z)
	return &l.y
}

// Backward may overwrite dy (with the gradient before the activation).
func (l *Linear) Backward(dy *Matrix) *Matrix {
	in, out := l.In(), l.Out()
	activationGrad(l.Act, dy, &l.y, &l.z)
	matMul(l.prec, &Matrix{Rows: in, Cols: out, Data: l.W.Grad}, l.x, true, dy, false, true)
	kernel.AddRows(l.B.Grad, dy.Data[:dy.Rows*dy.Cols])
	if l.NoInputGrad {
		return nil
	}
	l.dx.Resize(dy.Rows, in)
	matMul(l.prec, &l.dx, dy, false, &Matrix{Rows: in, Cols: out, Data: l.W.Value}, true, false)
	return &l.dx
}

// Params returns W and b.
func (l *Linear) Params() []*Param { return []*Param{l.W, l.B} }

// OneHot is a linear layer whose input is a sparse 0/1 vector given as index
// lists: y = act(b + Σ_j W[idx_j]). It equals Linear on the one-hot encoding
// but costs a gather-and-sum per row instead of a dense product.
type OneHot struct {
	W, B *Param // W is vocab×out
	Act  Activation

	idx  []int32
	k    int
	y, z Matrix // z: the pre-activation, kept for GELU
}

// NewOneHot initialises as a PyTorch Linear(vocab, out) would.
func NewOneHot(name string, vocab, out int, rng *rand.Rand) *OneHot {
	w, b := newAffine(name, vocab, out, rng)
	return &OneHot{W: w, B: b}
}

// Vocab is the input width: the number of one-hot positions.
func (l *OneHot) Vocab() int { return l.W.Shape[0] }

// Out is the output width.
func (l *OneHot) Out() int { return l.W.Shape[1] }

// ForwardIndices takes k indices per row (negative entries are padding).
func (l *OneHot) ForwardIndices(idx []int32, k int) *Matrix {
	if k <= 0 || len(idx)%k != 0 {
		panic(fmt.Sprintf("nn: OneHot: %d indices do not form rows of %d", len(idx), k))
	}
	rows, out, vocab := len(idx)/k, l.Out(), int32(l.Vocab())
	l.idx, l.k = idx, k
	l.y.Resize(rows, out)
	for _, j := range idx {
		if j >= vocab {
			panic(fmt.Sprintf("nn: OneHot: index %d out of range [0,%d)", j, vocab))
		}
	}
	for r := range rows {
		kernel.GatherSum(l.y.Row(r), l.W.Value, idx[r*k:(r+1)*k])
	}
	activate(l.Act, &l.y, l.B.Value, &l.z)
	return &l.y
}

// Backward scatters dy into the rows of W that were active. It may
// overwrite dy.
func (l *OneHot) Backward(dy *Matrix) {
	out := l.Out()
	activationGrad(l.Act, dy, &l.y, &l.z)
	kernel.AddRows(l.B.Grad, dy.Data[:dy.Rows*dy.Cols])
	for r := range dy.Rows {
		g := dy.Row(r)
		for _, j := range l.idx[r*l.k : (r+1)*l.k] {
			if j >= 0 {
				kernel.AddTo(l.W.Grad[int(j)*out:int(j+1)*out], g)
			}
		}
	}
}

// Params returns W and b.
func (l *OneHot) Params() []*Param { return []*Param{l.W, l.B} }
