package timenet

import (
	"fmt"
	"math/rand/v2"

	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
)

// mlp is the Reference architecture (see the package comment).
type mlp struct {
	cfg   Config
	dim   int
	omega []float32 // ω_k = 2πk; read-only, shared by clones

	t1, t2 *dense // t_model: φ(t) → e_t, one row per block
	s1, s2 *dense // s_model: x → e_s
	// First joint layer on [e_s, e_t]: its in×out weight stacks the S rows
	// acting on e_s above the τ rows acting on e_t.
	jW, jB *nn.Param
	j1     blockGELU
	head   head // joint layers 2..L and the output layer

	in    *nn.Matrix // the pass's input x
	feat  nn.Matrix  // φ(t), one row per block
	bias  nn.Matrix  // e_t·C₁ᵗ + c₁, one row per block
	dBias nn.Matrix
	dTime nn.Matrix // gradient of e_t
	tape  tape
}

func newMLP(c Config, dim int, rng *rand.Rand) *mlp {
	h, H, S, tau := c.Hidden, c.Harmonics, c.StateEmb, c.TimeEmb
	n := &mlp{cfg: c, dim: dim, omega: harmonicFreqs(H)}
	// Construction order is the reference's: t_model, s_model, joint_model.
	n.t1 = newDense("t_model.t_model.0", 2*H, h, true, rng)
	n.t2 = newDense("t_model.t_model.2", h, tau, true, rng)
	n.s1 = newDense("s_model.x_model.0", dim, h, true, rng)
	n.s2 = newDense("s_model.x_model.2", h, S, true, rng)
	j := nn.NewLinear("joint_model.model.0", S+tau, h, rng)
	n.jW, n.jB = j.W, j.B
	for l := 1; l < c.JointLayers; l++ {
		n.head.hidden = append(n.head.hidden, newDense(fmt.Sprintf("joint_model.model.%d", 2*l), h, h, true, rng))
	}
	n.head.out = zeroDense(fmt.Sprintf("joint_model.model.%d", 2*c.JointLayers), h, c.out(dim), rng)
	// The products between hidden layers take c.Precision (Config).
	n.s2.prec, n.j1.prec = c.Precision, c.Precision
	for _, l := range n.head.hidden {
		l.prec = c.Precision
	}
	return n
}

func (n *mlp) Dim() int { return n.dim }

// SetOutputs implements OutputSetter.
func (n *mlp) SetOutputs(c int) { n.head.setOutputs(c) }

// Outputs implements OutputSetter.
func (n *mlp) Outputs() int { return n.head.out.used() }

// joint returns views of the first joint layer's weight (or gradient)
// blocks acting on e_s and on e_t.
func (n *mlp) joint(v []float32) (ws, wt nn.Matrix) {
	S, tau, h := n.cfg.StateEmb, n.cfg.TimeEmb, n.cfg.Hidden
	return view(S, h, v), view(tau, h, v[S*h:])
}

func (n *mlp) Forward(x *nn.Matrix, t []float32) *nn.Matrix {
	checkInput(x, t, n.dim)
	off, boff, in := n.tape.next(x, t, n)
	n.in = in
	h, H := n.cfg.Hidden, n.cfg.Harmonics
	extend(&n.feat, boff+len(t), 2*H, boff)
	feat := view(len(t), 2*H, n.feat.Data[boff*2*H:])
	fourier(&feat, t, n.omega, nil)
	et := n.t2.forward(n.t1.forward(&feat, boff), boff)
	ws, wt := n.joint(n.jW.Value)
	extend(&n.bias, boff+len(t), h, boff)
	bias := view(len(t), h, n.bias.Data[boff*h:])
	nn.MatMul(&bias, et, false, &wt, false, false)
	for k := range len(t) {
		kernel.AddTo(bias.Row(k), n.jB.Value)
	}
	es := n.s2.forward(n.s1.forward(x, off), off)
	return n.head.forward(n.j1.forward(es, &ws, &bias, off, boff), off)
}

func (n *mlp) Backward(dy *nn.Matrix) { n.backward(dy, nil) }

func (n *mlp) BackwardInput(dy, dx *nn.Matrix) {
	if dx == nil {
		panic("timenet: BackwardInput with a nil input gradient")
	}
	n.backward(dy, dx)
}

// backward is Backward, also setting dx to the input gradient unless it is
// nil.
func (n *mlp) backward(dy, dx *nn.Matrix) {
	checkGrad(dy, &n.head.out.y)
	// The gradient of j1's output is in a, b is free, and a is again once
	// j1 has used it.
	a, b := n.head.backward(dy, &n.j1.y)
	ws, wt := n.joint(n.jW.Value)
	gs, gt := n.joint(n.jW.Grad)
	des := n.j1.backward(a, &n.s2.y, &ws, &gs, &n.dBias, b)
	// The per-block bias e_t·C₁ᵗ + c₁: its block sums are the gradient of
	// the broadcast, and feed C₁ᵗ, c₁ and e_t.
	nn.MatMul(&gt, &n.t2.y, true, &n.dBias, false, true)
	kernel.AddRows(n.jB.Grad, n.dBias.Data)
	n.dTime.Resize(n.dBias.Rows, n.cfg.TimeEmb)
	nn.MatMul(&n.dTime, &n.dBias, false, &wt, true, false)
	n.t1.backward(n.t2.backward(&n.dTime, &n.t1.y, a), &n.feat, nil)
	n.s1.backward(n.s2.backward(des, &n.s1.y, a), n.in, dx)
}

func (n *mlp) Record(rows int) { n.tape.start(rows) }

func (n *mlp) EndRecord() *nn.Matrix {
	n.tape.stop()
	return &n.head.out.y
}

func (n *mlp) reserve(rows, blocks int) {
	c := n.cfg
	reserveRows(&n.feat, blocks, 2*c.Harmonics)
	reserveRows(&n.bias, blocks, c.Hidden)
	n.t1.reserve(blocks)
	n.t2.reserve(blocks)
	n.s1.reserve(rows)
	n.s2.reserve(rows)
	reserveRows(&n.j1.y, rows, c.Hidden)
	reserveRows(&n.j1.z, rows, c.Hidden)
	n.head.reserve(rows)
}

func (n *mlp) Params() []*nn.Param {
	ps := []*nn.Param{n.t1.w, n.t1.b, n.t2.w, n.t2.b, n.s1.w, n.s1.b, n.s2.w, n.s2.b, n.jW, n.jB}
	return n.head.params(ps)
}

func (n *mlp) Clone() Net {
	c := &mlp{cfg: n.cfg, dim: n.dim, omega: n.omega, jW: n.jW, jB: n.jB,
		t1: n.t1.share(), t2: n.t2.share(), s1: n.s1.share(), s2: n.s2.share(), head: n.head.share()}
	c.j1.prec = n.j1.prec
	return c
}
