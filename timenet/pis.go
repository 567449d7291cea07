package timenet

import (
	"fmt"
	"math/rand/v2"

	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
)

// pis is the PIS architecture (see the package comment).
type pis struct {
	cfg   Config
	dim   int
	omega []float32 // linspace(0.1, 100, H); read-only, shared by clones

	phase  *nn.Param // ϑ, 1×H as in the reference
	t1, t2 *dense    // t_model: φ(t) → e_t (no final GELU)
	sW, sB *nn.Param // s_model: x·B + b, b merged into the per-block bias
	s      blockGELU // z₀ = G(x·B + (b + e_t))
	head   head      // joint layers and the output layer

	in    *nn.Matrix // the pass's input x
	feat  nn.Matrix  // φ(t), one row per block
	bias  nn.Matrix  // b + e_t, one row per block
	dBias nn.Matrix
	tape  tape
}

func newPIS(c Config, dim int, rng *rand.Rand) *pis {
	h, H := c.Hidden, c.Harmonics
	n := &pis{cfg: c, dim: dim, omega: linspaceFreqs(H)}
	// Construction order is the reference's: phase, t_model, s_model, joint_model.
	n.phase = nn.NewParam("t_model.timestep_phase", 1, H)
	for i := range n.phase.Value {
		n.phase.Value[i] = float32(rng.NormFloat64())
	}
	n.t1 = newDense("t_model.t_model.0", 2*H, h, true, rng)
	n.t2 = newDense("t_model.t_model.2", h, h, false, rng)
	s := nn.NewLinear("s_model.x_model", dim, h, rng)
	n.sW, n.sB = s.W, s.B
	// joint_model.model is Sequential(GELU, L × Sequential(Linear, GELU),
	// Linear): the leading GELU is z₀'s, and takes index 0.
	for l := 1; l <= c.JointLayers; l++ {
		n.head.hidden = append(n.head.hidden, newDense(fmt.Sprintf("joint_model.model.%d.0", l), h, h, true, rng))
	}
	n.head.out = zeroDense(fmt.Sprintf("joint_model.model.%d", c.JointLayers+1), h, c.out(dim), rng)
	// The products between hidden layers take c.Precision (Config).
	for _, l := range n.head.hidden {
		l.prec = c.Precision
	}
	return n
}

func (n *pis) Dim() int { return n.dim }

// SetOutputs implements OutputSetter.
func (n *pis) SetOutputs(c int) { n.head.setOutputs(c) }

// Outputs implements OutputSetter.
func (n *pis) Outputs() int { return n.head.out.used() }

func (n *pis) Forward(x *nn.Matrix, t []float32) *nn.Matrix {
	checkInput(x, t, n.dim)
	off, boff, in := n.tape.next(x, t, n)
	n.in = in
	h, H := n.cfg.Hidden, n.cfg.Harmonics
	extend(&n.feat, boff+len(t), 2*H, boff)
	feat := view(len(t), 2*H, n.feat.Data[boff*2*H:])
	fourier(&feat, t, n.omega, n.phase.Value)
	et := n.t2.forward(n.t1.forward(&feat, boff), boff)
	extend(&n.bias, boff+len(t), h, boff)
	bias := view(len(t), h, n.bias.Data[boff*h:])
	copy(bias.Data, et.Data)
	for k := range len(t) {
		kernel.AddTo(bias.Row(k), n.sB.Value)
	}
	w := view(n.dim, h, n.sW.Value)
	return n.head.forward(n.s.forward(x, &w, &bias, off, boff), off)
}

func (n *pis) Backward(dy *nn.Matrix) { n.backward(dy, nil) }

func (n *pis) BackwardInput(dy, dx *nn.Matrix) {
	if dx == nil {
		panic("timenet: BackwardInput with a nil input gradient")
	}
	n.backward(dy, dx)
}

// backward is Backward, also setting dx to the input gradient unless it is
// nil.
func (n *pis) backward(dy, dx *nn.Matrix) {
	checkGrad(dy, &n.head.out.y)
	// The gradient of z₀ is in a, b is free, and a is again once s has
	// used it.
	a, b := n.head.backward(dy, &n.s.y)
	w := view(n.dim, n.cfg.Hidden, n.sW.Value)
	gw := view(n.dim, n.cfg.Hidden, n.sW.Grad)
	n.s.backward(a, n.in, &w, &gw, &n.dBias, dx)
	// The per-block bias b + e_t: its block sums are the gradient of the
	// broadcast sum s + t, for b and for e_t alike.
	kernel.AddRows(n.sB.Grad, n.dBias.Data)
	df := n.t1.backward(n.t2.backward(&n.dBias, &n.t1.y, a), &n.feat, b)
	// ∂sin(a)/∂ϑ = cos(a) and ∂cos(a)/∂ϑ = −sin(a), both read from φ(t).
	H := n.cfg.Harmonics
	for k := range df.Rows {
		d, f := df.Row(k), n.feat.Row(k)
		for j := range H {
			n.phase.Grad[j] += d[j]*f[H+j] - d[H+j]*f[j]
		}
	}
}

func (n *pis) Record(rows int) { n.tape.start(rows) }

func (n *pis) EndRecord() *nn.Matrix {
	n.tape.stop()
	return &n.head.out.y
}

func (n *pis) reserve(rows, blocks int) {
	c := n.cfg
	reserveRows(&n.feat, blocks, 2*c.Harmonics)
	reserveRows(&n.bias, blocks, c.Hidden)
	n.t1.reserve(blocks)
	n.t2.reserve(blocks)
	reserveRows(&n.s.y, rows, c.Hidden)
	reserveRows(&n.s.z, rows, c.Hidden)
	n.head.reserve(rows)
}

func (n *pis) Params() []*nn.Param {
	ps := []*nn.Param{n.phase, n.t1.w, n.t1.b, n.t2.w, n.t2.b, n.sW, n.sB}
	return n.head.params(ps)
}

func (n *pis) Clone() Net {
	c := &pis{cfg: n.cfg, dim: n.dim, omega: n.omega, phase: n.phase, sW: n.sW, sB: n.sB,
		t1: n.t1.share(), t2: n.t2.share(), head: n.head.share()}
	return c
}
