package timenet

import (
	"fmt"
	"math/rand/v2"

	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
)

// The layers here write the rows of a forward pass at a row offset of their
// buffers: 0 for a plain Forward, after the rows recorded so far while
// recording. A recorded step then lands where one pass over every step
// would put it, and the buffers are the tape: nothing is copied when the
// recording ends. Backward reads the whole buffers and takes each layer's
// input from the caller, so it runs unchanged on a plain or a recorded
// pass.

// dense is y = act(x·W + b), W stored in×out, act the identity or GELU:
// torch.nn.Linear, optionally followed by torch.nn.GELU.
type dense struct {
	w, b *nn.Param
	gelu bool
	prec nn.Precision // of the layer's three products
	// cols, when positive and below the output width, is the number of
	// leading output columns computed (SetOutputs); the others are left
	// as they are and their gradients taken as zero.
	cols int

	y, z nn.Matrix // output and pre-activation (GELU) of the pass
	last nn.Matrix // the rows of the latest call: a view of y
}

// newDense returns a layer named prefix.weight and prefix.bias with
// torch.nn.Linear's default initialisation, U(±1/√in).
func newDense(prefix string, in, out int, gelu bool, rng *rand.Rand) *dense {
	l := nn.NewLinear(prefix, in, out, rng)
	return &dense{w: l.W, b: l.B, gelu: gelu}
}

// zeroDense returns the output layer: drawn as torch draws it, then
// zeroed as the reference's zero_init does (always on in its train.py).
func zeroDense(prefix string, in, out int, rng *rand.Rand) *dense {
	l := newDense(prefix, in, out, false, rng)
	clear(l.w.Value)
	clear(l.b.Value)
	return l
}

// share returns a layer with l's parameters and its own buffers.
func (l *dense) share() *dense {
	return &dense{w: l.w, b: l.b, gelu: l.gelu, prec: l.prec, cols: l.cols}
}

// used is the number of leading output columns the layer computes.
func (l *dense) used() int {
	if l.cols > 0 && l.cols < l.out() {
		return l.cols
	}
	return l.out()
}

func (l *dense) in() int  { return l.w.Shape[0] }
func (l *dense) out() int { return l.w.Shape[1] }

// forward writes act(x·W + b) to rows [off, off+x.Rows) of the pass, keeping
// rows [0, off), and returns those rows (a view, valid until the next call).
func (l *dense) forward(x *nn.Matrix, off int) *nn.Matrix {
	in, out := l.in(), l.out()
	if x.Cols != in {
		panic(fmt.Sprintf("timenet: %s: input has %d columns, want %d", l.w.Name, x.Cols, in))
	}
	rows := off + x.Rows
	extend(&l.y, rows, out, off)
	l.last = view(x.Rows, out, l.y.Data[off*out:])
	if c := l.used(); c < out {
		// Only the columns in use (a plain float32 layer: the output one).
		kernel.Gemm(false, false, x.Rows, c, in, x.Data, in, l.w.Value, out, l.last.Data, out, false)
		for r := range x.Rows {
			kernel.AddTo(l.last.Row(r)[:c], l.b.Value[:c])
		}
		return &l.last
	}
	w := view(in, out, l.w.Value)
	l.prec.MatMul(&l.last, x, false, &w, false, false)
	if l.gelu {
		extend(&l.z, rows, out, off)
		kernel.BiasGELU(l.last.Data, l.z.Data[off*out:], l.b.Value)
	} else {
		for r := range x.Rows {
			kernel.AddTo(l.last.Row(r), l.b.Value)
		}
	}
	return &l.last
}

// backward takes the gradient dy (overwritten) of the whole pass's output
// and its input x, adds the parameter gradients and, unless dx is nil,
// sets dx to dy·Wᵀ and returns it.
func (l *dense) backward(dy, x, dx *nn.Matrix) *nn.Matrix {
	in, out := l.in(), l.out()
	if c := l.used(); c < out {
		// The unused columns' gradients are zero: they add nothing to the
		// weights' and bias's gradients, nor to dx.
		rows := dy.Rows
		kernel.Gemm(true, false, in, c, rows, x.Data, in, dy.Data, out, l.w.Grad, out, true)
		for r := range rows {
			kernel.AddTo(l.b.Grad[:c], dy.Row(r)[:c])
		}
		if dx == nil {
			return nil
		}
		dx.Resize(rows, in)
		kernel.Gemm(false, true, rows, in, c, dy.Data, out, l.w.Value, out, dx.Data, in, false)
		return dx
	}
	if l.gelu {
		kernel.GELUGrad(dy.Data, l.z.Data)
	}
	wg := view(in, out, l.w.Grad)
	l.prec.MatMul(&wg, x, true, dy, false, true)
	kernel.AddRows(l.b.Grad, dy.Data[:dy.Rows*dy.Cols])
	if dx == nil {
		return nil
	}
	w := view(in, out, l.w.Value)
	dx.Resize(dy.Rows, in)
	l.prec.MatMul(dx, dy, false, &w, true, false)
	return dx
}

// blockGELU is y = G(x·W + c_k) on the rows of x taken in equal blocks,
// block k adding bias row c_k: a linear layer whose bias differs per
// sampling step. W is a view, given at each call.
type blockGELU struct {
	y, z   nn.Matrix    // output and pre-activation of the pass
	last   nn.Matrix    // the rows of the latest call: a view of y
	blocks int          // blocks of the pass
	prec   nn.Precision // of the layer's three products
}

// forward writes the rows of x, in c.Rows blocks, to rows [off, off+x.Rows)
// of the pass, whose blocks before them number boff, and returns them.
func (l *blockGELU) forward(x, w, c *nn.Matrix, off, boff int) *nn.Matrix {
	rows, out := off+x.Rows, w.Cols
	l.blocks = boff + c.Rows
	extend(&l.y, rows, out, off)
	extend(&l.z, rows, out, off)
	l.last = view(x.Rows, out, l.y.Data[off*out:])
	l.prec.MatMul(&l.last, x, false, w, false, false)
	n := x.Rows / c.Rows * out
	z := l.z.Data[off*out:]
	for k := range c.Rows {
		kernel.BiasGELU(l.last.Data[k*n:(k+1)*n], z[k*n:(k+1)*n], c.Row(k))
	}
	return &l.last
}

// backward turns dy (overwritten), the gradient of the whole pass's output,
// into the pre-activation gradient, adds xᵀ·dy to wGrad for the pass's
// input x, sets row k of dc to the sum of block k's rows (the gradient of
// block k's bias) and, unless dx is nil, sets dx to dy·Wᵀ and returns it.
func (l *blockGELU) backward(dy, x, w, wGrad, dc, dx *nn.Matrix) *nn.Matrix {
	kernel.GELUGrad(dy.Data, l.z.Data)
	l.prec.MatMul(wGrad, x, true, dy, false, true)
	dc.Resize(l.blocks, w.Cols)
	n := dy.Rows / l.blocks * w.Cols
	for k := range l.blocks {
		clear(dc.Row(k))
		kernel.AddRows(dc.Row(k), dy.Data[k*n:(k+1)*n])
	}
	if dx == nil {
		return nil
	}
	dx.Resize(dy.Rows, w.Rows)
	l.prec.MatMul(dx, dy, false, w, true, false)
	return dx
}

// extend gives m rows×cols elements, keeping the first keep rows (of cols
// columns): with keep = 0, it is m.Resize. Outgrown storage with rows to
// keep is replaced by one twice as large, so that a recording of T steps
// without a hint reallocates O(log T) times, and only the first time.
func extend(m *nn.Matrix, rows, cols, keep int) {
	n := rows * cols
	if keep == 0 {
		m.Resize(rows, cols)
		return
	}
	if cap(m.Data) < n {
		d := make([]float32, n, max(n, 2*cap(m.Data)))
		copy(d, m.Data[:keep*cols])
		m.Data = d
	}
	m.Rows, m.Cols, m.Data = rows, cols, m.Data[:n]
}

// view is a matrix header on v (rows×cols), aliasing it.
func view(rows, cols int, v []float32) nn.Matrix {
	return nn.Matrix{Rows: rows, Cols: cols, Data: v[:rows*cols]}
}

// reserve gives the buffers room for a pass of rows rows.
func (l *dense) reserve(rows int) {
	reserveRows(&l.y, rows, l.out())
	if l.gelu {
		reserveRows(&l.z, rows, l.out())
	}
}

// setOutputs is OutputSetter's SetOutputs for the head's output layer.
func (h *head) setOutputs(n int) {
	if n < 0 || n > h.out.out() {
		panic(fmt.Sprintf("timenet: SetOutputs(%d) of a net with %d outputs", n, h.out.out()))
	}
	h.out.cols = n
}

// head is what both architectures put after their first joint layer:
// hidden GELU layers and the zero-initialised output layer, with the two
// buffers their input gradients alternate in.
type head struct {
	hidden []*dense
	out    *dense
	grad   [2]nn.Matrix
}

// share returns a head with the same parameters and buffers of its own.
func (h *head) share() head {
	c := head{out: h.out.share()}
	for _, l := range h.hidden {
		c.hidden = append(c.hidden, l.share())
	}
	return c
}

// forward maps z, the first joint layer's output, to the network's output.
func (h *head) forward(z *nn.Matrix, off int) *nn.Matrix {
	for _, l := range h.hidden {
		z = l.forward(z, off)
	}
	return h.out.forward(z, off)
}

// backward back-propagates dy, the gradient of the output, to first, the
// head's input of the last forward pass. The gradient is left in a; b is
// the other buffer, free for the caller, as is a once the gradient is used.
func (h *head) backward(dy, first *nn.Matrix) (a, b *nn.Matrix) {
	a, b = &h.grad[0], &h.grad[1]
	z := first // the input of the output layer
	if len(h.hidden) > 0 {
		z = &h.hidden[len(h.hidden)-1].y
	}
	h.out.backward(dy, z, a)
	for i := len(h.hidden) - 1; i >= 0; i-- {
		z := first
		if i > 0 {
			z = &h.hidden[i-1].y
		}
		h.hidden[i].backward(a, z, b)
		a, b = b, a
	}
	return a, b
}

// reserve sizes the layers' buffers for rows rows.
func (h *head) reserve(rows int) {
	for _, l := range h.hidden {
		l.reserve(rows)
	}
	h.out.reserve(rows)
}

// params appends the head's parameters to ps in the reference's order.
func (h *head) params(ps []*nn.Param) []*nn.Param {
	for _, l := range h.hidden {
		ps = append(ps, l.w, l.b)
	}
	return append(ps, h.out.w, h.out.b)
}
