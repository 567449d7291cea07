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

	t1, t2 *nn.Linear // t_model: φ(t) → e_t, one row per block
	s1, s2 *nn.Linear // s_model: x → e_s
	// First joint layer on [e_s, e_t]: its in×out weight stacks the S rows
	// acting on e_s above the τ rows acting on e_t.
	jW, jB *nn.Param
	j1     blockGELU
	hidden []*nn.Linear // joint layers 2..L
	out    *nn.Linear   // zero-initialised output layer

	feat  nn.Matrix  // φ(t), one row per block
	et    *nn.Matrix // e_t, owned by t2
	bias  nn.Matrix  // e_t·C₁ᵗ + c₁, one row per block
	y     *nn.Matrix // the output, owned by out
	dBias nn.Matrix
	dTime nn.Matrix // gradient of e_t
}

func newMLP(c Config, dim int, rng *rand.Rand) *mlp {
	h, H, S, tau := c.Hidden, c.Harmonics, c.StateEmb, c.TimeEmb
	n := &mlp{cfg: c, dim: dim, omega: harmonicFreqs(H)}
	// Construction order is the reference's: t_model, s_model, joint_model.
	n.t1 = linear("t_model.t_model.0", 2*H, h, nn.GELU, rng)
	n.t1.NoInputGrad = true
	n.t2 = linear("t_model.t_model.2", h, tau, nn.GELU, rng)
	n.s1 = linear("s_model.x_model.0", dim, h, nn.GELU, rng)
	n.s1.NoInputGrad = true
	n.s2 = linear("s_model.x_model.2", h, S, nn.GELU, rng)
	j := nn.NewLinear("joint_model.model.0", S+tau, h, rng)
	n.jW, n.jB = j.W, j.B
	for l := 1; l < c.JointLayers; l++ {
		n.hidden = append(n.hidden, linear(fmt.Sprintf("joint_model.model.%d", 2*l), h, h, nn.GELU, rng))
	}
	n.out = zeroLinear(fmt.Sprintf("joint_model.model.%d", 2*c.JointLayers), h, 2*dim, rng)
	return n
}

func (n *mlp) Dim() int { return n.dim }

// joint returns views of the first joint layer's weight (or gradient)
// blocks acting on e_s and on e_t.
func (n *mlp) joint(v []float32) (ws, wt nn.Matrix) {
	S, tau, h := n.cfg.StateEmb, n.cfg.TimeEmb, n.cfg.Hidden
	return view(S, h, v), view(tau, h, v[S*h:])
}

func (n *mlp) Forward(x *nn.Matrix, t []float32) *nn.Matrix {
	checkInput(x, t, n.dim)
	fourier(&n.feat, t, n.omega, nil)
	n.et = n.t2.Forward(n.t1.Forward(&n.feat))
	ws, wt := n.joint(n.jW.Value)
	n.bias.Resize(len(t), n.cfg.Hidden)
	nn.MatMul(&n.bias, n.et, false, &wt, false, false)
	for k := range len(t) {
		kernel.AddTo(n.bias.Row(k), n.jB.Value)
	}
	es := n.s2.Forward(n.s1.Forward(x))
	z := n.j1.forward(es, &ws, &n.bias)
	for _, l := range n.hidden {
		z = l.Forward(z)
	}
	n.y = n.out.Forward(z)
	return n.y
}

func (n *mlp) Backward(dy *nn.Matrix) {
	checkGrad(dy, n.y)
	g := n.out.Backward(dy)
	for i := len(n.hidden) - 1; i >= 0; i-- {
		g = n.hidden[i].Backward(g)
	}
	ws, wt := n.joint(n.jW.Value)
	gs, gt := n.joint(n.jW.Grad)
	des := n.j1.backward(g, &ws, &gs, &n.dBias, false)
	// The per-block bias e_t·C₁ᵗ + c₁: its block sums are the gradient of
	// the broadcast, and feed C₁ᵗ, c₁ and e_t.
	nn.MatMul(&gt, n.et, true, &n.dBias, false, true)
	kernel.AddRows(n.jB.Grad, n.dBias.Data)
	n.dTime.Resize(n.dBias.Rows, n.cfg.TimeEmb)
	nn.MatMul(&n.dTime, &n.dBias, false, &wt, true, false)
	n.t1.Backward(n.t2.Backward(&n.dTime))
	n.s1.Backward(n.s2.Backward(des))
}

func (n *mlp) Params() []*nn.Param {
	ps := []*nn.Param{n.t1.W, n.t1.B, n.t2.W, n.t2.B, n.s1.W, n.s1.B, n.s2.W, n.s2.B, n.jW, n.jB}
	for _, l := range n.hidden {
		ps = append(ps, l.W, l.B)
	}
	return append(ps, n.out.W, n.out.B)
}

func (n *mlp) Clone() Net {
	c := &mlp{cfg: n.cfg, dim: n.dim, omega: n.omega, jW: n.jW, jB: n.jB,
		t1: share(n.t1), t2: share(n.t2), s1: share(n.s1), s2: share(n.s2), out: share(n.out)}
	for _, l := range n.hidden {
		c.hidden = append(c.hidden, share(l))
	}
	return c
}
