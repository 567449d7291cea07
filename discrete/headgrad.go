package discrete

import "github.com/gfngo/gfn/nn"

// HeadGrad assembles the output gradient of a model whose first
// NumActions() outputs are logits and whose next output is a state flow
// (DB, GAFN): gradients with respect to the log-probabilities go through
// the masked log-softmax, flow gradients are added as they are.
type HeadGrad struct {
	na      int
	dlogp   nn.Matrix
	dlogits nn.Matrix
	dfull   nn.Matrix
}

// Reset prepares a zero gradient for rows outputs of width cols, the first
// na of them logits.
func (h *HeadGrad) Reset(rows, na, cols int) {
	h.na = na
	h.dlogp.Resize(rows, na)
	h.dlogp.Zero()
	h.dfull.Resize(rows, cols)
	h.dfull.Zero()
}

// AddLogP adds g to d loss / d log π(a | row).
func (h *HeadGrad) AddLogP(row, a int, g float32) { h.dlogp.Data[row*h.na+a] += g }

// AddFlow adds g to d loss / d log F(row).
func (h *HeadGrad) AddFlow(row int, g float32) { h.dfull.Data[row*h.dfull.Cols+h.na] += g }

// Backward runs m's backward pass with the assembled gradient; logp is the
// log-softmax output of the forward pass.
func (h *HeadGrad) Backward(m Model, logp *nn.Matrix) {
	nn.LogSoftmaxBackward(&h.dlogits, logp, &h.dlogp)
	for r := range h.dfull.Rows {
		copy(h.dfull.Row(r)[:h.na], h.dlogits.Row(r))
	}
	m.Backward(&h.dfull)
}
