package diffusion

import (
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/objective"
	"github.com/gfngo/gfn/timenet"
)

// DefaultLambda is SubTB's λ for the diffusion samplers: gfn-diffusion's
// --subtb_lambda default, 2, which weighs a sub-trajectory of j − i steps
// by 2^(j−i) and so leans towards the long ones (Madan et al.'s discrete
// 0.9 leans towards the short).
const DefaultLambda = 2

// DefaultFlowLR is the flow network's Adam learning rate when
// Optim.FlowLR is 0: gfn-diffusion's --lr_flow default.
const DefaultFlowLR = 1e-2

// flowObjective is the Student's DB, SubTB or forward-looking DB/SubTB:
// it turns a batch into package objective's per-step inputs and sends the
// objective's gradient back into the policy and the flow network.
//
// The states are s_i = (x_i, t_i = i/T), i = 0..T, with x_0 = 0. The
// learned log-flow of s_i, i < T, is the flow network's output F̃(x_i,
// t_i); s_0's, the same for every trajectory, plays log Z; s_T's is
// log R(x_T). The forward-looking flows add gfn-diffusion's partial
// energy: log F(s_i) = F̃(x_i, t_i) + (1 − t_i)·log p_ref,i(x_i) +
// t_i·log R(x_i), with p_ref,i = N(0, σ²·t_max(1,i)·I) the Brownian
// motion's marginal; this costs T − 1 energy evaluations per trajectory.
// A transition's log P_B(x_0 | x_1) is 0.
type flowObjective struct {
	obj     objective.Objective
	net     timenet.Net
	forward bool // forward-looking flows

	// Step-major (row i·n + r) per-transition and per-state values.
	stepPF, stepPB, flows, w []float64
	lp, stateR               []float64 // forward-looking: log p_ref,i, log R(x_i)

	in   objective.Batch
	grad objective.Grad
	res  objective.Result

	x, dy nn.Matrix
	ts    []float32
}

// flowObjectives are the Student's objectives with a flow network.
var flowObjectives = map[string]bool{"db": true, "subtb": true, "fl-db": true, "fl-subtb": true}

// newFlowObjective returns cfg's flow objective with a flow network of
// cfg.Net's architecture and one output, its parameters named
// flow_model.*, drawn from rng.
func newFlowObjective(cfg Config, dim int, rng *rand.Rand) (*flowObjective, error) {
	lambda := cfg.Lambda
	if lambda == 0 {
		lambda = DefaultLambda
	}
	obj, err := objective.New(cfg.objective(), lambda)
	if err != nil {
		return nil, err
	}
	nc := cfg.Net
	nc.Out, nc.Precision = 1, cfg.Precision
	net, err := timenet.New(nc, dim, rng)
	if err != nil {
		return nil, err
	}
	for _, p := range net.Params() {
		p.Name = "flow_model." + p.Name
	}
	_, fl := obj.(*objective.ForwardLooking)
	return &flowObjective{obj: obj, net: net, forward: fl}, nil
}

// eval computes the objective on t's Student batch, whose per-step
// log P_F the Student's balance has just written into f.stepPF (and, for
// forward-looking flows, whose intermediate states partialEnergy has
// scored), and sets t.delta to sign(δ)·√ℓ per object (ℓ its loss, δ its
// signed residual: what the Teacher's reward reads); it
// returns the loss in the family's convention, half the objective's
// (gfn-diffusion's ½·Σ d² per trajectory for DB), and the objective's
// estimate of log Z.
func (f *flowObjective) eval(t *Trainer) (loss, logZ float64) {
	p, b := t.Proc, &t.batch
	n, T := b.N, p.Steps
	f.stepPB = growF(f.stepPB, T*n)
	p.scoreBackwardSteps(b, f.stepPB)
	f.flows = growF(f.flows, T*n)
	f.forwardFlows(p, b)
	in := &f.in
	in.Off = in.Off[:0]
	for k := 0; k <= n; k++ {
		in.Off = append(in.Off, k*T)
	}
	in.LogPF, in.LogPB = growF(in.LogPF, n*T), growF(in.LogPB, n*T)
	in.LogF = growF(in.LogF, n*(T+1))
	in.LogR = t.logR[:n]
	if f.forward {
		in.StateLogR = growF(in.StateLogR, n*(T+1))
	}
	for r := range n {
		for i := range T {
			in.LogPF[r*T+i], in.LogPB[r*T+i] = f.stepPF[i*n+r], f.stepPB[i*n+r]
			s := r*(T+1) + i
			in.LogF[s] = f.flows[i*n+r]
			if f.forward {
				// F̃ + (1 − t)·lp + t·log R = (F̃ + lp) + t·(log R − lp),
				// with objective.ForwardLooking's c_i = i/T = t_i.
				in.LogF[s] += f.lp[i*n+r]
				in.StateLogR[s] = f.stateR[i*n+r] - f.lp[i*n+r]
			}
		}
		in.LogF[r*(T+1)+T] = 0 // x's flow is log R(x), not read
		if f.forward {
			in.StateLogR[r*(T+1)+T] = t.logR[r]
		}
	}
	if err := f.obj.Eval(in, &f.grad, &f.res); err != nil {
		panic(err) // the sizes are the trainer's own
	}
	// The Teacher is paid from the per-object loss ℓ, its sign the
	// objective's (R above the estimate), as in the other families.
	for r := range n {
		t.delta[r] = math.Copysign(math.Sqrt(f.res.PerObject[r]), f.res.Delta[r])
	}
	return f.res.Loss / 2, f.res.LogZ
}

// forwardFlows runs the flow network on the states x_0..x_{T−1} of b into
// f.flows, in one pass (T·n rows of activations, which backward reuses).
func (f *flowObjective) forwardFlows(p Process, b *batch) {
	out := f.pass(p, b, 0, p.Steps)
	for k, v := range out.Data[:p.Steps*b.N] {
		f.flows[k] = float64(v)
	}
}

// pass runs the flow network on the states of steps [i0, i0+k) of b.
func (f *flowObjective) pass(p Process, b *batch, i0, k int) *nn.Matrix {
	d := p.Dim
	f.x.Rows, f.x.Cols, f.x.Data = k*b.N, d, b.X[i0*b.N*d:(i0+k)*b.N*d]
	f.ts = f.ts[:0]
	for j := range k {
		f.ts = append(f.ts, float32(float64(i0+j)*p.dt()))
	}
	return f.net.Forward(&f.x, f.ts)
}

// partialEnergy sets f.stateR to log R(x_i) of the intermediate states
// (i = 1..T−1; 0 at i = 0, whose weight t_0 is 0) and f.lp to
// log p_ref,i(x_i), counting the energy evaluations as reward calls.
func (f *flowObjective) partialEnergy(t *Trainer) error {
	p, b := t.Proc, &t.batch
	n, T, d := b.N, p.Steps, p.Dim
	f.stateR, f.lp = growF(f.stateR, T*n), growF(f.lp, T*n)
	clear(f.stateR[:n])
	if T > 1 {
		x := b.X[n*d : T*n*d]
		if err := t.Energy.LogReward(x, f.stateR[n:T*n]); err != nil {
			return &RewardError{Iteration: t.Step, Stage: "intermediate states", Err: err}
		}
		t.RewardCalls += (T - 1) * n
		if err := nonFinite(x, f.stateR[n:T*n], d, t.Step, false); err != nil {
			return err
		}
	}
	for i := range T {
		v := p.Sigma2 * float64(max(1, i)) * p.dt()
		c := float64(d) * (log2Pi + math.Log(v))
		xs := b.Step(i)
		for r := range n {
			var q float64
			for _, x := range xs[r*d : (r+1)*d] {
				q += float64(x) * float64(x)
			}
			f.lp[i*n+r] = -(q/v + c) / 2
		}
	}
	return nil
}

// backward accumulates the gradient of eval's loss into the policy (the
// Student's balance, which must still hold the pass eval scored) and the
// flow network (which must not have run since eval).
func (f *flowObjective) backward(t *Trainer) {
	p, b, s := t.Proc, &t.batch, t.Student
	n, T := b.N, p.Steps
	f.w = growF(f.w, T*n)
	for r := range n {
		for i := range T {
			f.w[i*n+r] = f.grad.LogPF[r*T+i] / 2
		}
	}
	s.tb.GradSteps(p, s.Model, b, f.w)
	f.dy.Resize(T*n, 1)
	for r := range n {
		for i := range T {
			f.dy.Data[i*n+r] = float32(f.grad.LogF[r*(T+1)+i] / 2)
		}
	}
	f.net.Backward(&f.dy)
}

// params is the flow network's parameters.
func (f *flowObjective) params() []*nn.Param { return f.net.Params() }

// FlowNet is the Student's flow network F̃(x, t) of the objectives db,
// subtb, fl-db and fl-subtb (one output; the forward-looking objectives
// add the partial energy to it), or nil for the others.
func (t *Trainer) FlowNet() timenet.Net {
	if t.flows == nil {
		return nil
	}
	return t.flows.net
}
