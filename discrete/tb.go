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
	narrow  nn.Matrix
	dwide   nn.Matrix
	width   int // columns of the model's output
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

// LogPF writes log P_F(τ) under model m for every trajectory of tr into
// out, leaving the forward pass ready for Backward. When tr was sampled by
// m with recording and m has not run since, the recorded pass is used
// instead of a new one (it is the same computation).
func (tb *TB) LogPF(env Env, m Model, tr *Trajectories, out []float64) {
	T, na, w := tr.NumTransitions(), env.NumActions(), tr.StateLen
	var logits *nn.Matrix
	tb.row = growInt32(tb.row, T)
	if tr.recorded(m) {
		logits = tr.RecLogits
		copy(tb.row, tr.Rec)
	} else {
		logits = m.Forward(tr.States, T)
		for i := range tb.row {
			tb.row[i] = int32(i)
		}
	}
	tb.mask = growBool(tb.mask, T*na)
	for i := range T {
		r := int(tb.row[i])
		env.ForwardMask(tr.States[i*w:(i+1)*w], tb.mask[r*na:(r+1)*na])
	}
	tb.width = logits.Cols
	nn.LogSoftmax(&tb.logp, Narrow(&tb.narrow, logits, na), tb.mask)
	for b := range tr.Len() {
		var s float64
		for t := tr.Off[b]; t < tr.Off[b+1]; t++ {
			s += float64(tb.logp.Data[int(tb.row[t])*na+int(tr.Actions[t])])
		}
		out[b] = s
	}
}

// Loss computes mean δ² and writes δ into delta (one per trajectory) for
// targets logR. With grad set it also accumulates the gradients of the loss
// into m's parameters and logZ.Grad.
func (tb *TB) Loss(env Env, m Model, logZ *nn.Param, tr *Trajectories, logR, delta []float64, grad bool) float64 {
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
	loss /= float64(n)
	if !grad {
		return loss
	}
	// dL/dlogP_F(τ_b) = dL/dlogZ contribution = -2δ_b/n.
	na := env.NumActions()
	tb.dlogp.Resize(tb.logp.Rows, na)
	tb.dlogp.Zero()
	var dz float64
	for b := range n {
		g := -2 * delta[b] / float64(n)
		dz += g
		for t := tr.Off[b]; t < tr.Off[b+1]; t++ {
			tb.dlogp.Data[int(tb.row[t])*na+int(tr.Actions[t])] = float32(g)
		}
	}
	logZ.Grad[0] += float32(dz)
	nn.LogSoftmaxBackward(&tb.dlogits, &tb.logp, &tb.dlogp)
	m.Backward(widen(&tb.dwide, &tb.dlogits, tb.width))
	return loss
}
