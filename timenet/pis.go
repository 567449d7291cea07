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

	phase  *nn.Param  // ϑ, 1×H as in the reference
	t1, t2 *nn.Linear // t_model: φ(t) → e_t (no final GELU)
	sW, sB *nn.Param  // s_model: x·B + b, b merged into the per-block bias
	s      blockGELU  // z₀ = G(x·B + (b + e_t))
	hidden []*nn.Linear
	out    *nn.Linear

	feat  nn.Matrix  // φ(t), one row per block
	bias  nn.Matrix  // b + e_t, one row per block
	y     *nn.Matrix // the output, owned by out
	dBias nn.Matrix
}

func newPIS(c Config, dim int, rng *rand.Rand) *pis {
	h, H := c.Hidden, c.Harmonics
	n := &pis{cfg: c, dim: dim, omega: linspaceFreqs(H)}
	// Construction order is the reference's: phase, t_model, s_model, joint_model.
	n.phase = nn.NewParam("t_model.timestep_phase", 1, H)
	for i := range n.phase.Value {
		n.phase.Value[i] = float32(rng.NormFloat64())
	}
	n.t1 = linear("t_model.t_model.0", 2*H, h, nn.GELU, rng)
	n.t2 = linear("t_model.t_model.2", h, h, nn.Identity, rng)
	s := nn.NewLinear("s_model.x_model", dim, h, rng)
	n.sW, n.sB = s.W, s.B
	// joint_model.model is Sequential(GELU, L × Sequential(Linear, GELU),
	// Linear): the leading GELU is z₀'s, and takes index 0.
	for l := 1; l <= c.JointLayers; l++ {
		n.hidden = append(n.hidden, linear(fmt.Sprintf("joint_model.model.%d.0", l), h, h, nn.GELU, rng))
	}
	n.out = zeroLinear(fmt.Sprintf("joint_model.model.%d", c.JointLayers+1), h, 2*dim, rng)
	return n
}

func (n *pis) Dim() int { return n.dim }

func (n *pis) Forward(x *nn.Matrix, t []float32) *nn.Matrix {
	checkInput(x, t, n.dim)
	fourier(&n.feat, t, n.omega, n.phase.Value)
	et := n.t2.Forward(n.t1.Forward(&n.feat))
	n.bias.Resize(len(t), n.cfg.Hidden)
	copy(n.bias.Data, et.Data)
	for k := range len(t) {
		kernel.AddTo(n.bias.Row(k), n.sB.Value)
	}
	w := view(n.dim, n.cfg.Hidden, n.sW.Value)
	z := n.s.forward(x, &w, &n.bias)
	for _, l := range n.hidden {
		z = l.Forward(z)
	}
	n.y = n.out.Forward(z)
	return n.y
}

func (n *pis) Backward(dy *nn.Matrix) {
	checkGrad(dy, n.y)
	g := n.out.Backward(dy)
	for i := len(n.hidden) - 1; i >= 0; i-- {
		g = n.hidden[i].Backward(g)
	}
	w := view(n.dim, n.cfg.Hidden, n.sW.Value)
	gw := view(n.dim, n.cfg.Hidden, n.sW.Grad)
	n.s.backward(g, &w, &gw, &n.dBias, true)
	// The per-block bias b + e_t: its block sums are the gradient of the
	// broadcast sum s + t, for b and for e_t alike.
	kernel.AddRows(n.sB.Grad, n.dBias.Data)
	df := n.t1.Backward(n.t2.Backward(&n.dBias))
	// ∂sin(a)/∂ϑ = cos(a) and ∂cos(a)/∂ϑ = −sin(a), both read from φ(t).
	H := n.cfg.Harmonics
	for k := range df.Rows {
		d, f := df.Row(k), n.feat.Row(k)
		for j := range H {
			n.phase.Grad[j] += d[j]*f[H+j] - d[H+j]*f[j]
		}
	}
}

func (n *pis) Params() []*nn.Param {
	ps := []*nn.Param{n.phase, n.t1.W, n.t1.B, n.t2.W, n.t2.B, n.sW, n.sB}
	for _, l := range n.hidden {
		ps = append(ps, l.W, l.B)
	}
	return append(ps, n.out.W, n.out.B)
}

func (n *pis) Clone() Net {
	c := &pis{cfg: n.cfg, dim: n.dim, omega: n.omega, phase: n.phase, sW: n.sW, sB: n.sB,
		t1: share(n.t1), t2: share(n.t2), out: share(n.out)}
	for _, l := range n.hidden {
		c.hidden = append(c.hidden, share(l))
	}
	return c
}
