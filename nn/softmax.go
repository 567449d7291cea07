package nn

import (
	"fmt"
	"math"
)

// LogSoftmax writes the row-wise log-softmax of logits into out, with
// masked-out entries (mask[i*cols+j] false) set to -Inf and excluded from the
// normaliser. A nil mask allows everything. Sums run in float64. A row with
// no allowed entry is a programmer error and panics.
func LogSoftmax(out, logits *Matrix, mask []bool) {
	if mask != nil && len(mask) != len(logits.Data) {
		panic(fmt.Sprintf("nn: LogSoftmax mask has %d entries for %d logits", len(mask), len(logits.Data)))
	}
	out.Resize(logits.Rows, logits.Cols)
	c := logits.Cols
	negInf := float32(math.Inf(-1))
	for i := range logits.Rows {
		row, o := logits.Row(i), out.Row(i)
		var mrow []bool
		if mask != nil {
			mrow = mask[i*c : (i+1)*c]
		}
		mx := math.Inf(-1)
		for j, v := range row {
			if (mrow == nil || mrow[j]) && float64(v) > mx {
				mx = float64(v)
			}
		}
		if math.IsInf(mx, -1) {
			panic(fmt.Sprintf("nn: LogSoftmax row %d has no allowed entry", i))
		}
		var s float64
		for j, v := range row {
			if mrow == nil || mrow[j] {
				s += math.Exp(float64(v) - mx)
			}
		}
		lse := mx + math.Log(s)
		for j, v := range row {
			if mrow == nil || mrow[j] {
				o[j] = float32(float64(v) - lse)
			} else {
				o[j] = negInf
			}
		}
	}
}

// LogSoftmaxBackward sets dlogits from the gradient dlogp with respect to
// the log-probabilities logp that LogSoftmax produced:
// dlogits_j = dlogp_j − p_j·Σ_k dlogp_k over allowed entries; masked entries
// get 0.
func LogSoftmaxBackward(dlogits, logp, dlogp *Matrix) {
	dlogits.Resize(logp.Rows, logp.Cols)
	for i := range logp.Rows {
		lp, g, d := logp.Row(i), dlogp.Row(i), dlogits.Row(i)
		var s float64
		for j, v := range lp {
			if !math.IsInf(float64(v), -1) {
				s += float64(g[j])
			}
		}
		for j, v := range lp {
			if math.IsInf(float64(v), -1) {
				d[j] = 0
				continue
			}
			d[j] = float32(float64(g[j]) - math.Exp(float64(v))*s)
		}
	}
}
