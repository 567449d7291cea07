package objective

import "math"

// FM is flow matching (Bengio et al. 2021) on edge log-flows: for every
// visited state s but s_0, d_s = log Σ_{in} F − log(R(s) + Σ_{out} F),
// with R(s) = exp(StateLogR[s]) (−Inf: s cannot stop), and ℓ = Σ_s d_s²
// over the trajectory's states. The family enumerates each state's parents
// for its in-edges: FM needs a DAG whose parents can be listed.
type FM struct{}

// Name is "fm".
func (*FM) Name() string { return "fm" }

// Needs is the edges and the states' log R.
func (*FM) Needs() Needs { return Needs{Edges: true, StateLogR: true} }

// Eval computes FM on b; LogPF and LogPB are not read (their gradients
// are zero).
func (*FM) Eval(b *Batch, g *Grad, r *Result) error {
	n, T, _, err := check(b, (&FM{}).Needs())
	if err != nil {
		return err
	}
	start(g, r, n, T)
	if g != nil {
		g.InLogF, g.OutLogF = grow(g.InLogF, len(b.InLogF)), grow(g.OutLogF, len(b.OutLogF))
	}
	for k := range n {
		first, last := b.Off[k]+k, b.Off[k+1]+k
		var sq float64
		r.LogZ += logSumExp(b.OutLogF[b.OutOff[first]:b.OutOff[first+1]], b.StateLogR[first]) / float64(n)
		for s := first + 1; s <= last; s++ {
			in := b.InLogF[b.InOff[s]:b.InOff[s+1]]
			out := b.OutLogF[b.OutOff[s]:b.OutOff[s+1]]
			li, lo := logSumExp(in, math.Inf(-1)), logSumExp(out, b.StateLogR[s])
			d := li - lo
			sq += d * d
			if s == last {
				r.Delta[k] = b.StateLogR[s] - li
			}
			if g == nil {
				continue
			}
			gd := 2 * d / float64(n)
			// ∂ log Σ exp(v)/∂v_e is the softmax weight of edge e.
			for e, v := range in {
				g.InLogF[b.InOff[s]+e] += gd * math.Exp(v-li)
			}
			for e, v := range out {
				g.OutLogF[b.OutOff[s]+e] -= gd * math.Exp(v-lo)
			}
		}
		r.PerObject[k] = sq
	}
	finish(r)
	return nil
}

// logSumExp is log(exp(extra) + Σ exp(v)).
func logSumExp(v []float64, extra float64) float64 {
	m := extra
	for _, x := range v {
		m = math.Max(m, x)
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := math.Exp(extra - m)
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}
