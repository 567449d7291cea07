package train

import (
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/nn"
)

// GAFN (Pan et al. 2023) as the reference grid code runs it: a random
// network distillation (RND) module gives every state s' an intrinsic
// reward r_i(s') = scale·‖f̂(s') − f(s')‖₂ (f a fixed random MLP, f̂ a
// trained predictor, both on one-hot states, 256-256-128). The terminal
// reward becomes R(x) + r_i(x), and each transition into a non-terminal
// s' enters TB as log(P_B(s|s') + r_i(s')/F(s')), with F a state-flow head
// of the policy. The predictor minimises the mean ‖f̂ − f‖₂ over the
// batch's states (weight 1), in the same Adam as the policy.

type gafnState struct {
	target, pred *nn.MLP
	ri           []float64 // intrinsic reward of each transition's child
	rows         []int32   // all states of the batch: sources then finals
	mask         []bool
	narrow, logp nn.Matrix
	dlogp        nn.Matrix
	dlogits      nn.Matrix
	dfull        nn.Matrix
	dpred        nn.Matrix
	idx          []int32
	delta        []float64
	predOut      *nn.Matrix // the predictor's output of the last rndDistance
	opt          *nn.Adam   // the predictor's Adam (the reference's shared Adam, per parameter)
}

// GAFN settings (reference defaults).
const (
	rndHidden, rndLatent = 256, 128
)

func newGAFN(env discrete.Env, lr float64, rng *rand.Rand) *gafnState {
	sizes := []int{rndHidden, rndHidden, rndLatent}
	g := &gafnState{
		target: nn.NewOneHotMLP("target", env.FeatureLen(), sizes, nn.LeakyReLU, rng),
		pred:   nn.NewOneHotMLP("predictor", env.FeatureLen(), sizes, nn.LeakyReLU, rng),
	}
	g.opt = nn.NewAdam(nn.Group{Params: g.pred.Params(), LR: lr})
	return g
}

// features encodes rows states (StateLen words each) as index lists.
func (g *gafnState) features(env discrete.Env, states []int32, rows int) []int32 {
	w, k := env.StateLen(), env.FeaturesPerState()
	if cap(g.idx) < rows*k {
		g.idx = make([]int32, rows*k)
	}
	g.idx = g.idx[:rows*k]
	for r := range rows {
		env.Features(states[r*w:(r+1)*w], g.idx[r*k:(r+1)*k])
	}
	return g.idx
}

// rndDistance returns ‖f̂(s) − f(s)‖₂ per row and leaves the predictor's
// forward pass (and the target's outputs in tgt) ready for a backward pass.
func (g *gafnState) rndDistance(env discrete.Env, states []int32, rows int, tgt *nn.Matrix) []float64 {
	k := env.FeaturesPerState()
	idx := g.features(env, states, rows)
	t := g.target.ForwardIndices(idx, k)
	tgt.Resize(t.Rows, t.Cols)
	copy(tgt.Data, t.Data)
	p := g.pred.ForwardIndices(idx, k)
	g.predOut = p
	d := make([]float64, rows)
	for r := range rows {
		var s float64
		pr, tr := p.Row(r), tgt.Row(r)
		for j := range pr {
			e := float64(pr[j] - tr[j])
			s += e * e
		}
		d[r] = math.Sqrt(s)
	}
	return d
}

// stepGAFN trains the Student with the GAFN objective on t.batch.
func (t *Trainer) stepGAFN(it *Iteration) {
	cfg, g, env, tr := t.Cfg, t.gafn, t.Env, &t.batch
	n, T, w, na := tr.Len(), tr.NumTransitions(), env.StateLen(), env.NumActions()
	it.MeanLength = float64(T) / float64(n)

	// Intrinsic rewards of each transition's child, from the current
	// predictor (the reference computes them while sampling).
	next := make([]int32, 0, T*w)
	for b := range n {
		for k := tr.Off[b] + 1; k < tr.Off[b+1]; k++ {
			next = append(next, tr.State(k)...)
		}
		next = append(next, tr.FinalState(b)...)
	}
	var tgt nn.Matrix
	g.ri = g.rndDistance(env, next, T, &tgt)
	for i := range g.ri {
		g.ri[i] *= cfg.GAFNScale
	}

	// Policy and flow forward on the source states.
	nn.ZeroGrad(t.Student.Params())
	out := t.Student.Model.Forward(tr.States, T)
	if cap(g.mask) < T*na {
		g.mask = make([]bool, T*na)
	}
	g.mask = g.mask[:T*na]
	for r := range T {
		env.ForwardMask(tr.States[r*w:(r+1)*w], g.mask[r*na:(r+1)*na])
	}
	nn.LogSoftmax(&g.logp, discrete.Narrow(&g.narrow, out, na), g.mask)
	logZ := float64(t.Student.LogZ.Value[0])
	g.delta = grow(g.delta, n)
	var loss float64
	// per transition: P_B and flow of the child (row k+1) for non-final ones.
	for b := range n {
		d := logZ
		for k := tr.Off[b]; k < tr.Off[b+1]; k++ {
			d += float64(g.logp.Data[k*na+int(tr.Actions[k])])
			pb := 1 / float64(env.BackwardCount(tr.States[k*w:(k+1)*w], int(tr.Actions[k])))
			if k+1 < tr.Off[b+1] {
				f := math.Exp(float64(out.Data[(k+1)*out.Cols+na]))
				d -= math.Log(pb + g.ri[k]/f)
			} else {
				d -= math.Log(pb)
			}
		}
		d -= math.Log(math.Exp(t.logR[b]) + g.ri[tr.Off[b+1]-1] + 1e-8)
		g.delta[b] = d
		loss += d * d
	}
	loss /= float64(n)

	// Gradients of mean δ² (δ here is forward minus backward flow).
	g.dlogp.Resize(T, na)
	g.dlogp.Zero()
	g.dfull.Resize(T, out.Cols)
	g.dfull.Zero()
	var dz float64
	for b := range n {
		c := 2 * g.delta[b] / float64(n)
		dz += c
		for k := tr.Off[b]; k < tr.Off[b+1]; k++ {
			g.dlogp.Data[k*na+int(tr.Actions[k])] = float32(c)
			if k+1 < tr.Off[b+1] {
				pb := 1 / float64(env.BackwardCount(tr.States[k*w:(k+1)*w], int(tr.Actions[k])))
				u := float64(out.Data[(k+1)*out.Cols+na])
				q := g.ri[k] * math.Exp(-u)
				// d/du of −log(pb + ri·e^{−u}) = q/(pb + q)
				g.dfull.Data[(k+1)*out.Cols+na] += float32(c * q / (pb + q))
			}
		}
	}
	t.Student.LogZ.Grad[0] += float32(dz)
	nn.LogSoftmaxBackward(&g.dlogits, &g.logp, &g.dlogp)
	for r := range T {
		copy(g.dfull.Row(r)[:na], g.dlogits.Row(r))
	}
	t.Student.Model.Backward(&g.dfull)
	t.Student.update(cfg.ClipNorm) // the reference clips policy and log Z, not the RND

	// RND loss: mean over trajectories of the mean distance over their
	// states (s0 … x).
	all := make([]int32, 0, (T+n)*w)
	weight := make([]float64, 0, T+n)
	for b := range n {
		m := tr.Off[b+1] - tr.Off[b] + 1
		all = append(all, tr.States[tr.Off[b]*w:tr.Off[b+1]*w]...)
		all = append(all, tr.FinalState(b)...)
		for range m {
			weight = append(weight, 1/float64(m*n))
		}
	}
	rows := len(weight)
	dist := g.rndDistance(env, all, rows, &tgt)
	p := g.predOut
	g.dpred.Resize(rows, p.Cols)
	var rndLoss float64
	for r := range rows {
		rndLoss += weight[r] * dist[r]
		if dist[r] == 0 {
			clear(g.dpred.Row(r))
			continue
		}
		scale := weight[r] / dist[r]
		pr, trow, dr := p.Row(r), tgt.Row(r), g.dpred.Row(r)
		for j := range dr {
			dr[j] = float32(scale * float64(pr[j]-trow[j]))
		}
	}
	nn.ZeroGrad(g.pred.Params())
	g.pred.Backward(&g.dpred)
	g.opt.Step()
	it.StudentLoss = loss + rndLoss
}
