package diffusion

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/timenet"
)

// pathIntegral evaluates and differentiates the path integral sampler's objective
// (Zhang & Chen 2022) in gfn-diffusion's form (the pis loss of
// energy_sampling/gflownet_losses.py): on n reparameterised forward
// trajectories
//
//	x_{i+1} = x_i + dt·u(x_i, t_i) + √(dt·e^λ)·ε_i,  ε_i ~ N(0, I),
//
// the loss is
//
//	L = 1/(n·d) · Σ_b [Σ_i log P_F − Σ_i log P_B − log R(x_T)]_b,
//
// differentiated with respect to the network's parameters through the
// states: through each x_{i+1} into the next step's network input, into
// the Brownian-bridge terms log P_B and into log R(x_T) by its gradient.
// L·d is minus the batch's ELBO. log P_F of a reparameterised step is
// −½·Σ(ε² + log 2π + log dt + λ): it depends on the parameters only
// through a learned λ. With a fixed variance (the reference setting) the
// bridge makes Σ log P_F − Σ log P_B equal, sample by sample, to the
// control cost Σ_i [dt·|u_i|²/(2σ²) + √dt·u_i·ε_i/σ] + log N(x_T; 0, σ²·I).
//
// The backward sweep is the adjoint of the Euler–Maruyama recursion:
// with g_{i+1} = ∂L/∂x_{i+1}, the step's output gradient is dt·g_{i+1} for
// u (and, for a learned variance, ½·√(dt·e^λ)·ε·g_{i+1} − 1/(2·n·d) for λ),
// and g_i = g_{i+1} + (the network's input gradient) + ∂L/∂x_i of the
// bridge terms. Each step's activations are kept by its own clone of the
// network (T clones sharing the parameters, about T·n·(5h + 2d) float32
// values for the PIS network of width h), so nothing is recomputed.
//
// A pathIntegral keeps scratch space between calls (not safe for concurrent use).
type pathIntegral struct {
	base timenet.Net   // the network the clones share parameters with
	nets []timenet.Net // one clone per step, holding its activations
	outs []*nn.Matrix  // the steps' outputs (owned by the clones)

	xs   []nn.Matrix // the steps' inputs (headers on the batch's states, which the clones keep)
	ts   [1]float32
	eps  []float64 // the noises ε, step-major like the states
	grad []float64 // ∇log R(x_T)
	g    []float64 // the adjoint ∂L/∂x_{i+1}
	dy   nn.Matrix
	dx   nn.Matrix
	n    int // trajectories of the last Eval (0: none to differentiate)
}

// Eval draws n reparameterised trajectories of net into b (states, LogPF
// in the ε form above, LogPB), sets logR (n values) and the gradient of
// log R at x_T, and returns the loss L. The noises are drawn from rng in
// sampler.Forward's order. Grad then differentiates this loss; the
// parameters must not change in between.
func (p *pathIntegral) Eval(proc Process, net timenet.Net, e energy.Gradient, n int, rng *rand.Rand, b *batch, logR []float64) (float64, error) {
	if net.Dim() != proc.Dim || e.Dim() != proc.Dim {
		panic(fmt.Sprintf("diffusion: PIS with a policy of dimension %d and an energy of dimension %d for a process of dimension %d", net.Dim(), e.Dim(), proc.Dim))
	}
	p.n = 0
	p.clones(net, proc.Steps)
	b.Reset(proc, n)
	d, dt := proc.Dim, proc.dt()
	p.eps = growF(p.eps, proc.Steps*n*d)
	clear(b.Step(0))
	clear(b.LogPF)
	ldt := math.Log(dt)
	lv0 := math.Log(proc.Sigma2)
	v0 := dt * math.Exp(lv0)
	sd0 := math.Sqrt(v0)
	for i := range proc.Steps {
		p.xs[i] = nn.Matrix{Rows: n, Cols: d, Data: b.Step(i)}
		p.ts[0] = float32(float64(i) * dt)
		out := p.nets[i].Forward(&p.xs[i], p.ts[:])
		p.outs[i] = out
		xi, xn := b.Step(i), b.Step(i+1)
		eps := p.eps[i*n*d : (i+1)*n*d]
		for r := range n {
			o := out.Row(r)
			var lp float64
			for k := range d {
				lv, sd := lv0, sd0
				if proc.LearnedVariance {
					lv = proc.logVar(o[d+k])
					sd = math.Sqrt(dt * kernel.Exp(lv))
				}
				z := rng.NormFloat64()
				eps[r*d+k] = z
				xn[r*d+k] = float32(float64(xi[r*d+k]) + dt*proc.drift(o[k]) + sd*z)
				lp += z*z + log2Pi + ldt + lv
			}
			b.LogPF[r] -= lp / 2
		}
	}
	proc.scoreBackward(b)
	p.grad = growF(p.grad, n*d)
	if err := e.GradLogReward(b.Final(), logR[:n], p.grad); err != nil {
		return math.NaN(), err
	}
	var loss float64
	for r := range n {
		loss += b.LogPF[r] - b.LogPB[r] - logR[r]
	}
	p.n = n
	return loss / float64(n*d), nil
}

// clones gives p one clone of net per step.
func (p *pathIntegral) clones(net timenet.Net, steps int) {
	if p.base != net {
		p.base, p.nets = net, p.nets[:0]
	}
	for len(p.nets) < steps {
		p.nets = append(p.nets, net.Clone())
	}
	if cap(p.outs) < steps {
		p.outs = make([]*nn.Matrix, steps)
		p.xs = make([]nn.Matrix, steps)
	}
	p.outs, p.xs = p.outs[:steps], p.xs[:steps]
}

// Grad adds the gradient of the last Eval's loss to the parameters'
// gradients, b being that Eval's batch.
func (p *pathIntegral) Grad(proc Process, b *batch) {
	n, d, dt := p.n, proc.Dim, proc.dt()
	if n == 0 || b.N != n {
		panic("diffusion: pathIntegral.Grad without a matching Eval")
	}
	p.n = 0
	T := proc.Steps
	s := 1 / float64(n*d)
	// −log P_B(x_i | x_{i+1}) = |x_i − a·x_{i+1}|²/(2w) + const, with
	// a = i/(i+1) and w = σ²·dt·a, i ≥ 1: bridge adds s·e/w to g_i and
	// −s·a·e/w to g_{i+1}, e = x_i − a·x_{i+1}.
	bridge := func(i int, toNext bool, g []float64) {
		a := float64(i) / float64(i+1)
		c := s / (proc.Sigma2 * dt * a)
		if toNext {
			c *= -a
		}
		xi, xn := b.Step(i), b.Step(i+1)
		for j := range g {
			g[j] += c * (float64(xi[j]) - a*float64(xn[j]))
		}
	}
	p.g = growF(p.g, n*d)
	g := p.g
	for j := range g {
		g[j] = -s * p.grad[j]
	}
	if T >= 2 {
		bridge(T-1, true, g)
	}
	for i := T - 1; i >= 0; i-- {
		p.dy.Resize(n, 2*d)
		eps := p.eps[i*n*d : (i+1)*n*d]
		out := p.outs[i]
		if !proc.LearnedVariance {
			// The drift columns alone (the net reads nothing else when it
			// computes only them: driftOnly).
			zeroVar := !driftOnly(p.nets[i], d)
			for r := range n {
				dy, o, gr := p.dy.Row(r), out.Row(r)[:d], g[r*d:(r+1)*d]
				proc.scaleDrift(dy[:d], gr, o, dt)
				if zeroVar {
					clear(dy[d : 2*d])
				}
			}
		} else {
			p.learnedGrad(proc, out, g, eps, s)
		}
		if i == 0 {
			p.nets[0].Backward(&p.dy) // x_0 = 0 is fixed
			break
		}
		p.nets[i].BackwardInput(&p.dy, &p.dx)
		for j, v := range p.dx.Data[:n*d] {
			g[j] += float64(v)
		}
		bridge(i, false, g)
		if i >= 2 {
			bridge(i-1, true, g)
		}
	}
}

// learnedGrad sets p.dy to a learned variance's output gradients of one
// step from the adjoint g, the step's outputs and noises, and s = 1/(n·d).
func (p *pathIntegral) learnedGrad(proc Process, out *nn.Matrix, g, eps []float64, s float64) {
	d, dt := proc.Dim, proc.dt()
	for r := range out.Rows {
		dy, o := p.dy.Row(r), out.Row(r)
		for k := range d {
			gk := g[r*d+k]
			dy[k] = float32(dt * gk)
			if proc.clipped(o[k]) {
				dy[k] = 0
			}
			sd := math.Sqrt(dt * kernel.Exp(proc.logVar(o[d+k])))
			dl := gk*sd*eps[r*d+k]/2 - s/2
			th := kernel.Tanh(float64(o[d+k]))
			dy[d+k] = float32(dl * proc.VarianceRange * (1 - th*th))
		}
	}
}

// iteratePIS is Iterate for the pis method: one PIS step on a fresh
// batch of the Student.
func (t *Trainer) iteratePIS() (Iteration, error) {
	cfg, a := t.cfg, t.Student
	it := Iteration{Role: teacher.Student, TeacherLoss: math.NaN()}
	nn.ZeroGrad(a.Params())
	t.logR = growF(t.logR, cfg.Batch)
	loss, err := a.pis.Eval(t.Proc, a.Model, t.Energy.(energy.Gradient), cfg.Batch, t.rng, &t.batch, t.logR)
	if err != nil {
		return it, &RewardError{Iteration: t.Step, Err: err}
	}
	if err := checkOverflow(t.batch.Final(), cfg.Batch, t.Proc.Dim, t.Step, "Student", t.Proc.Clip); err != nil {
		return it, err
	}
	if err := t.checkFinite(t.batch.Final(), t.logR); err != nil {
		return it, err
	}
	t.RewardCalls += cfg.Batch // after the checks: a failed batch is redone on resume
	a.pis.Grad(t.Proc, &t.batch)
	if g := nn.GradNorm(a.Params()); math.IsNaN(g) || math.IsInf(g, 0) {
		return it, &GradientError{Iteration: t.Step, Loss: loss, Norm: g}
	}
	a.step(cfg.lrScale(t.Step))
	it.StudentLoss = loss
	it.StudentLogZ, it.StudentGradNorm, it.TeacherGradNorm = float64(a.LogZ.Value[0]), a.gradNorm, math.NaN()
	t.Step++
	return it, nil
}
