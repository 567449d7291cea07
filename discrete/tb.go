package discrete

import (
	"fmt"

	"github.com/gfngo/gfn/nn"
)

// TB evaluates the trajectory-balance objective
//
//	δ(τ) = log R(x) + log P_B(τ|x) − log Z − log P_F(τ),  loss = mean δ²
//
// with log P_F recomputed under the model being trained. Its scratch space
// is reused between calls.
type TB struct {
	mask    []bool
	logp    nn.Matrix
	dlogp   nn.Matrix
	dlogits nn.Matrix
	logPF   []float64
	row     []int32 // logits row of each transition
	groups  Groups
	keep    []int32
	ustates []int32
	order   []int32 // transitions by step, then trajectory
	ordered []int32 // their states in that order
	ids     []int32 // distinct-state id of each, in that order
	narrow  nn.Matrix
	dwide   nn.Matrix
	width   int // columns of the model's output
	logits  *nn.Matrix
}

// LogPF writes log P_F(τ) under model m for every trajectory of tr into
// out, leaving the forward pass ready for Backward. The network runs once
// per distinct state, the states taken in the order a forward sampler
// meets them (by step, then by trajectory). When tr was sampled by m, or
// with m as companion, with recording and m has not run since, the
// recorded pass is used instead of a new one: it is the same computation,
// in the same row order whenever no state recurs at a later step, and then
// needs not even a copy.
func (tb *TB) LogPF(env Env, m Model, tr *Trajectories, out []float64) {
	T, na, w := tr.NumTransitions(), env.NumActions(), tr.StateLen
	// Trajectories share states (all start at s0 and often cross): run the
	// network once per distinct state. tb.row maps transitions to rows.
	tb.order = stepOrder(tr, tb.order)
	tb.ordered = growInt32(tb.ordered, T*w)
	for i, t := range tb.order {
		copy(tb.ordered[i*w:(i+1)*w], tr.States[int(t)*w:int(t+1)*w])
	}
	tb.ids = growInt32(tb.ids, T)
	rep := tb.groups.Assign(tb.ordered, T, w, tb.ids)
	tb.row = growInt32(tb.row, T)
	for i, t := range tb.order {
		tb.row[t] = tb.ids[i]
	}
	U := len(rep)
	var logits *nn.Matrix
	if tr.recorded(m) {
		// The recorded rows are the distinct states of each step in this
		// same order: exactly rep, a cheap identity for KeepRows, unless a
		// state recurs at a later step.
		tb.keep = tb.keep[:0]
		for _, i := range rep {
			tb.keep = append(tb.keep, tr.Rec[tb.order[i]])
		}
		logits = m.(Recorder).KeepRows(tb.keep)
	} else {
		tb.ustates = tb.ustates[:0]
		for _, i := range rep {
			tb.ustates = append(tb.ustates, tb.ordered[int(i)*w:int(i+1)*w]...)
		}
		logits = m.Forward(tb.ustates, U)
	}
	tb.mask = growBool(tb.mask, U*na)
	for u, i := range rep {
		env.ForwardMask(tb.ordered[int(i)*w:int(i+1)*w], tb.mask[u*na:(u+1)*na])
	}
	tb.width, tb.logits = logits.Cols, logits
	nn.LogSoftmax(&tb.logp, Narrow(&tb.narrow, logits, na), tb.mask)
	for b := range tr.Len() {
		var s float64
		for t := tr.Off[b]; t < tr.Off[b+1]; t++ {
			s += float64(tb.logp.Data[int(tb.row[t])*na+int(tr.Actions[t])])
		}
		out[b] = s
	}
}

// stepOrder lists tr's transitions by step index, then by trajectory: the
// order in which a forward sampler produces them.
func stepOrder(tr *Trajectories, order []int32) []int32 {
	order = order[:0]
	for step := 0; ; step++ {
		any := false
		for b := range tr.Len() {
			if t := tr.Off[b] + step; t < tr.Off[b+1] {
				order = append(order, int32(t))
				any = true
			}
		}
		if !any {
			return order
		}
	}
}

// Loss computes mean δ² and writes δ into delta (one per trajectory) for
// targets logR. With grad set it also accumulates the gradients of the loss
// into m's parameters and logZ.Grad.
func (tb *TB) Loss(env Env, m Model, logZ *nn.Param, tr *Trajectories, logR, delta []float64, grad bool) float64 {
	loss := tb.Eval(env, m, logZ, tr, logR, delta)
	if grad {
		tb.Grad(env, m, logZ, tr, delta)
	}
	return loss
}

// Eval is the forward half of Loss: it computes δ and mean δ², leaving the
// pass ready for Grad.
func (tb *TB) Eval(env Env, m Model, logZ *nn.Param, tr *Trajectories, logR, delta []float64) float64 {
	n := tr.Len()
	if len(logR) < n || len(delta) < n {
		panic(fmt.Sprintf("discrete: TB on %d trajectories with %d rewards and %d deltas", n, len(logR), len(delta)))
	}
	tb.logPF = growF64(tb.logPF, n)
	tb.LogPF(env, m, tr, tb.logPF)
	z := float64(logZ.Value[0])
	var loss float64
	for b := range n {
		d := logR[b] + tr.LogPB[b] - z - tb.logPF[b]
		delta[b] = d
		loss += d * d
	}
	return loss / float64(n)
}

// Grad is the backward half of Loss for the δ that Eval returned: it
// accumulates the gradients of mean δ² into m's parameters and logZ.Grad.
// Nothing may run m between Eval and Grad.
func (tb *TB) Grad(env Env, m Model, logZ *nn.Param, tr *Trajectories, delta []float64) {
	n := tr.Len()
	// dL/dlogP_F(τ_b) = dL/dlogZ contribution = -2δ_b/n.
	na := env.NumActions()
	tb.dlogp.Resize(tb.logp.Rows, na)
	tb.dlogp.Zero()
	var dz float64
	for b := range n {
		g := -2 * delta[b] / float64(n)
		dz += g
		for t := tr.Off[b]; t < tr.Off[b+1]; t++ {
			// += : duplicate states share a row.
			tb.dlogp.Data[int(tb.row[t])*na+int(tr.Actions[t])] += float32(g)
		}
	}
	logZ.Grad[0] += float32(dz)
	nn.LogSoftmaxBackward(&tb.dlogits, &tb.logp, &tb.dlogp)
	m.Backward(widen(&tb.dwide, &tb.dlogits, tb.width))
}

// widen returns src padded with zero columns to cols (src itself if it
// already has them).
func widen(dst, src *nn.Matrix, cols int) *nn.Matrix {
	if src.Cols == cols {
		return src
	}
	dst.Resize(src.Rows, cols)
	dst.Zero()
	for r := range src.Rows {
		copy(dst.Row(r), src.Row(r))
	}
	return dst
}
