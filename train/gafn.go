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
	feat         discrete.Featurizer // the environment's, as the policies'
	ri           []float64           // intrinsic reward of each transition's child
	mask         []bool
	narrow, logp nn.Matrix
	grad         discrete.HeadGrad
	dpred        nn.Matrix
	idx          []int32
	delta        []float64
	predOut      *nn.Matrix // the predictor's output of the last rndDistance
	opt          *nn.Adam   // the predictor's Adam (the reference's shared Adam, per parameter)

	groups          discrete.Groups
	ids, src        []int32
	next, all       []int32
	ustates         []int32
	weight, uweight []float64
}

// GAFN settings (reference defaults).
const (
	rndHidden, rndLatent = 256, 128
)

func newGAFN(env discrete.FeaturizedEnv, lr float64, rng *rand.Rand) *gafnState {
	sizes := []int{rndHidden, rndHidden, rndLatent}
	g := &gafnState{
		feat:   env,
		target: nn.NewOneHotMLP("target", env.FeatureLen(), sizes, nn.LeakyReLU, rng),
		pred:   nn.NewOneHotMLP("predictor", env.FeatureLen(), sizes, nn.LeakyReLU, rng),
	}
	g.opt = nn.NewAdam(nn.Group{Params: g.pred.Params(), LR: lr})
	return g
}

// features encodes rows states (StateLen words each) as index lists.
func (g *gafnState) features(env discrete.Env, states []int32, rows int) []int32 {
	w, k := env.StateLen(), g.feat.FeaturesPerState()
	if cap(g.idx) < rows*k {
		g.idx = make([]int32, rows*k)
	}
	g.idx = g.idx[:rows*k]
	for r := range rows {
		g.feat.Features(states[r*w:(r+1)*w], g.idx[r*k:(r+1)*k])
	}
	return g.idx
}

// rndDistance returns ‖f̂(s) − f(s)‖₂ per row and leaves the predictor's
// forward pass (and the target's outputs in tgt) ready for a backward pass.
func (g *gafnState) rndDistance(env discrete.Env, states []int32, rows int, tgt *nn.Matrix) []float64 {
	k := g.feat.FeaturesPerState()
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

// uniqueRows groups the rows of states and returns the representative
// states (contiguous) and each row's group in ids.
func (g *gafnState) uniqueRows(states []int32, rows, w int, ids *[]int32, out *[]int32) int {
	if cap(*ids) < rows {
		*ids = make([]int32, rows)
	}
	*ids = (*ids)[:rows]
	rep := g.groups.Assign(states, rows, w, *ids)
	*out = (*out)[:0]
	for _, r := range rep {
		*out = append(*out, states[int(r)*w:int(r+1)*w]...)
	}
	return len(rep)
}

// stepGAFN trains the Student with the GAFN objective on t.batch. Every
// network pass runs once per distinct state (trajectories share states);
// gradients of duplicates are summed, which is exact.
func (t *Trainer) stepGAFN(it *Iteration) {
	cfg, g, env, tr := t.cfg, t.gafn, t.Env, &t.batch
	n, T, w := tr.Len(), tr.NumTransitions(), env.StateLen()
	it.MeanLength = float64(T) / float64(n)

	// Intrinsic rewards of each transition's child, from the current
	// predictor (the reference computes them while sampling).
	g.next = g.next[:0]
	for b := range n {
		for k := tr.Off[b] + 1; k < tr.Off[b+1]; k++ {
			g.next = append(g.next, tr.State(k)...)
		}
		g.next = append(g.next, tr.FinalState(b)...)
	}
	un := g.uniqueRows(g.next, T, w, &g.ids, &g.ustates)
	var tgt nn.Matrix
	dist := g.rndDistance(env, g.ustates, un, &tgt)
	g.ri = grow(g.ri, T)
	for k := range T {
		g.ri[k] = cfg.GAFNScale * dist[g.ids[k]]
	}

	nn.ZeroGrad(t.Student.Params())
	loss := t.gafnLoss(true)
	t.Student.update(cfg.Student.Clip) // the reference clips policy and log Z, not the RND
	it.StudentLoss = loss + t.gafnRND()
}

// gafnLoss is the augmented TB loss of the batch with the intrinsic
// rewards g.ri; with grad it accumulates the policy's and log Z's
// gradients.
func (t *Trainer) gafnLoss(grad bool) float64 {
	g, env, tr := t.gafn, t.Env, &t.batch
	n, T, w, na := tr.Len(), tr.NumTransitions(), env.StateLen(), env.NumActions()
	// Policy and flow forward on the distinct source states.
	us := g.uniqueRows(tr.States, T, w, &g.src, &g.ustates)
	out := t.Student.Model.Forward(g.ustates, us)
	if cap(g.mask) < us*na {
		g.mask = make([]bool, us*na)
	}
	g.mask = g.mask[:us*na]
	for u := range us {
		env.ForwardMask(g.ustates[u*w:(u+1)*w], g.mask[u*na:(u+1)*na])
	}
	nn.LogSoftmax(&g.logp, discrete.Narrow(&g.narrow, out, na), g.mask)
	row := func(k int) int { return int(g.src[k]) }
	logZ := float64(t.Student.LogZ.Value[0])
	g.delta = grow(g.delta, n)
	var loss float64
	for b := range n {
		d := logZ
		for k := tr.Off[b]; k < tr.Off[b+1]; k++ {
			d += float64(g.logp.Data[row(k)*na+int(tr.Actions[k])])
			pb := 1 / float64(env.BackwardCount(tr.States[k*w:(k+1)*w], int(tr.Actions[k])))
			if k+1 < tr.Off[b+1] {
				f := math.Exp(float64(out.Data[row(k+1)*out.Cols+na]))
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
	if !grad {
		return loss
	}

	// Gradients of mean δ² (δ here is forward minus backward flow).
	g.grad.Reset(us, na, out.Cols)
	var dz float64
	for b := range n {
		c := 2 * g.delta[b] / float64(n)
		dz += c
		for k := tr.Off[b]; k < tr.Off[b+1]; k++ {
			g.grad.AddLogP(row(k), int(tr.Actions[k]), float32(c))
			if k+1 < tr.Off[b+1] {
				pb := 1 / float64(env.BackwardCount(tr.States[k*w:(k+1)*w], int(tr.Actions[k])))
				u := float64(out.Data[row(k+1)*out.Cols+na])
				q := g.ri[k] * math.Exp(-u)
				// d/du of −log(pb + ri·e^{−u}) = q/(pb + q)
				g.grad.AddFlow(row(k+1), float32(c*q/(pb+q)))
			}
		}
	}
	t.Student.LogZ.Grad[0] += float32(dz)
	g.grad.Backward(t.Student.Model, &g.logp)
	return loss
}

// gafnRND takes one predictor step on the batch's states and returns the
// RND loss: the mean over trajectories of the mean distance over their
// states (s0 … x), duplicates merged with their weights summed.
func (t *Trainer) gafnRND() float64 {
	g, env, tr := t.gafn, t.Env, &t.batch
	n, w := tr.Len(), env.StateLen()
	var tgt nn.Matrix
	g.all = g.all[:0]
	g.weight = g.weight[:0]
	for b := range n {
		m := tr.Off[b+1] - tr.Off[b] + 1
		g.all = append(g.all, tr.States[tr.Off[b]*w:tr.Off[b+1]*w]...)
		g.all = append(g.all, tr.FinalState(b)...)
		for range m {
			g.weight = append(g.weight, 1/float64(m*n))
		}
	}
	ua := g.uniqueRows(g.all, len(g.weight), w, &g.ids, &g.ustates)
	g.uweight = grow(g.uweight, ua)
	clear(g.uweight)
	for r, id := range g.ids {
		g.uweight[id] += g.weight[r]
	}
	dist := g.rndDistance(env, g.ustates, ua, &tgt)
	p := g.predOut
	g.dpred.Resize(ua, p.Cols)
	var rndLoss float64
	for r := range ua {
		rndLoss += g.uweight[r] * dist[r]
		if dist[r] == 0 {
			clear(g.dpred.Row(r))
			continue
		}
		scale := g.uweight[r] / dist[r]
		pr, trow, dr := p.Row(r), tgt.Row(r), g.dpred.Row(r)
		for j := range dr {
			dr[j] = float32(scale * float64(pr[j]-trow[j]))
		}
	}
	nn.ZeroGrad(g.pred.Params())
	g.pred.Backward(&g.dpred)
	g.opt.Step()
	return rndLoss
}
