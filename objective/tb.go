package objective

// TB is trajectory balance with a learned log Z: δ = log R(x) + Σ log P_B
// − log Z − Σ log P_F, ℓ = δ².
type TB struct{}

// Name is "tb".
func (*TB) Name() string { return "tb" }

// Needs is log Z.
func (*TB) Needs() Needs { return Needs{LogZ: true} }

// Eval computes TB on b.
func (*TB) Eval(b *Batch, g *Grad, r *Result) error {
	n, T, _, err := check(b, Needs{LogZ: true})
	if err != nil {
		return err
	}
	start(g, r, n, T)
	for k := range n {
		d := b.LogR[k] - b.LogZ
		for t := b.Off[k]; t < b.Off[k+1]; t++ {
			d += b.LogPB[t] - b.LogPF[t]
		}
		r.Delta[k], r.PerObject[k] = d, d*d
		if g != nil {
			// dℓ/dδ = 2δ; the batch mean divides by n.
			gd := 2 * d / float64(n)
			g.LogZ -= gd
			for t := b.Off[k]; t < b.Off[k+1]; t++ {
				g.LogPF[t], g.LogPB[t] = -gd, gd
			}
		}
	}
	finish(r)
	r.LogZ = b.LogZ
	return nil
}

// VarGrad is the log-partition variance: ζ = log R(x) + Σ log P_B −
// Σ log P_F, ℓ = (ζ − ζ̄)² with ζ̄ the batch mean, so the batch loss is the
// variance of ζ over the batch and no log Z is learned. (The mean's own
// dependence on the inputs contributes nothing to the gradient: the
// deviations sum to zero.)
type VarGrad struct{}

// Name is "vargrad".
func (*VarGrad) Name() string { return "vargrad" }

// Needs is nothing beyond the trajectories.
func (*VarGrad) Needs() Needs { return Needs{} }

// Eval computes VarGrad on b; a batch of one trajectory has loss 0.
func (*VarGrad) Eval(b *Batch, g *Grad, r *Result) error {
	n, T, _, err := check(b, Needs{})
	if err != nil {
		return err
	}
	start(g, r, n, T)
	var mean float64
	for k := range n {
		z := b.LogR[k]
		for t := b.Off[k]; t < b.Off[k+1]; t++ {
			z += b.LogPB[t] - b.LogPF[t]
		}
		r.Delta[k] = z
		mean += z
	}
	mean /= float64(n)
	r.LogZ = mean
	for k := range n {
		d := r.Delta[k] - mean
		r.Delta[k], r.PerObject[k] = d, d*d
		if g != nil {
			gd := 2 * d / float64(n)
			for t := b.Off[k]; t < b.Off[k+1]; t++ {
				g.LogPF[t], g.LogPB[t] = -gd, gd
			}
		}
	}
	finish(r)
	return nil
}
