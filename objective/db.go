package objective

import (
	"fmt"
	"math"
)

// DB is detailed balance with learned state flows: d_t = log F(s_t) +
// log P_F(s_{t+1}|s_t) − log F(s_{t+1}) − log P_B(s_t|s_{t+1}) with
// log F(x) = log R(x), ℓ = Σ_t d_t².
type DB struct{}

// Name is "db".
func (*DB) Name() string { return "db" }

// Needs is the state flows.
func (*DB) Needs() Needs { return Needs{LogF: true} }

// Eval computes DB on b.
func (*DB) Eval(b *Batch, g *Grad, r *Result) error {
	n, T, S, err := check(b, Needs{LogF: true})
	if err != nil {
		return err
	}
	start(g, r, n, T)
	if g != nil {
		g.LogF = grow(g.LogF, S)
	}
	for k := range n {
		last := b.Off[k+1] - 1
		var sum, sq float64
		for t := b.Off[k]; t <= last; t++ {
			s := t + k // the state the transition leaves
			next := b.LogR[k]
			if t < last {
				next = b.LogF[s+1]
			}
			d := b.LogF[s] + b.LogPF[t] - next - b.LogPB[t]
			sum += d
			sq += d * d
			if g != nil {
				gd := 2 * d / float64(n)
				g.LogF[s] += gd
				if t < last {
					g.LogF[s+1] -= gd
				}
				g.LogPF[t], g.LogPB[t] = gd, -gd
			}
		}
		r.PerObject[k], r.Delta[k] = sq, -sum
	}
	finish(r)
	r.LogZ = meanFlow(b, n)
	return nil
}

// meanFlow is the mean of log F(s_0) over the trajectories.
func meanFlow(b *Batch, n int) float64 {
	var s float64
	for k := range n {
		s += b.LogF[b.Off[k]+k]
	}
	return s / float64(n)
}

// SubTB is sub-trajectory balance (Madan et al. 2023): every
// sub-trajectory s_i → … → s_j (i < j) has the residual r_ij = log F(s_i)
// + Σ_{t=i}^{j−1}(log P_F − log P_B) − log F(s_j), log F(x) = log R(x),
// and ℓ = Σ_{i<j} λ^{j−i} r_ij² / Σ_{i<j} λ^{j−i}. The zero value is not
// usable: set Lambda (> 0; DefaultLambda is the paper's 0.9).
//
// With u_i = log F(s_i) − Σ_{t<i}(log P_F − log P_B), r_ij = u_i − u_j, so
// a trajectory of n transitions costs O(n²) pairs of subtractions.
type SubTB struct {
	Lambda float64
	pow    []float64 // λ^m
	u, gu  []float64
}

// Name is "subtb".
func (*SubTB) Name() string { return "subtb" }

// Needs is the state flows.
func (*SubTB) Needs() Needs { return Needs{LogF: true} }

// Eval computes SubTB on b.
func (o *SubTB) Eval(b *Batch, g *Grad, r *Result) error {
	if !(o.Lambda > 0) || math.IsInf(o.Lambda, 0) {
		return fmt.Errorf("objective: SubTB lambda %v must be finite and > 0", o.Lambda)
	}
	n, T, S, err := check(b, Needs{LogF: true})
	if err != nil {
		return err
	}
	start(g, r, n, T)
	if g != nil {
		g.LogF = grow(g.LogF, S)
	}
	for k := range n {
		off, m := b.Off[k], b.Off[k+1]-b.Off[k]
		for len(o.pow) <= m {
			if len(o.pow) == 0 {
				o.pow = append(o.pow, 1)
				continue
			}
			o.pow = append(o.pow, o.pow[len(o.pow)-1]*o.Lambda)
		}
		o.u, o.gu = grow(o.u, m+1), grow(o.gu, m+1)
		var q float64
		for i := 0; i <= m; i++ {
			f := b.LogR[k]
			if i < m {
				f = b.LogF[off+k+i]
			}
			o.u[i] = f - q
			if i < m {
				q += b.LogPF[off+i] - b.LogPB[off+i]
			}
		}
		var w, l float64
		for i := 0; i < m; i++ {
			for j := i + 1; j <= m; j++ {
				p, d := o.pow[j-i], o.u[i]-o.u[j]
				w += p
				l += p * d * d
				o.gu[i] += 2 * p * d
				o.gu[j] -= 2 * p * d
			}
		}
		r.PerObject[k], r.Delta[k] = l/w, o.u[m]-o.u[0]
		if g == nil {
			continue
		}
		// u_i reads log F(s_i) (i < m) and, with sign −1, every
		// log P_F − log P_B before it.
		var after float64 // Σ_{i>t} ∂/∂u_i
		for i := m; i >= 1; i-- {
			gi := o.gu[i] / w / float64(n)
			if i < m {
				g.LogF[off+k+i] = gi
			}
			after += gi
			g.LogPF[off+i-1], g.LogPB[off+i-1] = -after, after
		}
		g.LogF[off+k] = o.gu[0] / w / float64(n)
	}
	finish(r)
	r.LogZ = meanFlow(b, n)
	return nil
}

// ModifiedDB is the detailed balance of Deleu et al. (2022) for
// environments where every state can stop: for each move s → s',
// d = log R(s') + log P_B(s|s') + log P_F(⊤|s) − log R(s) − log P_F(s'|s)
// − log P_F(⊤|s'), ℓ = Σ d². The trajectories' transitions are the moves
// only (no stop transition): s_n = x is where the trajectory stopped, and
// LogR is not read (StateLogR holds log R of every state, x's included).
type ModifiedDB struct{}

// Name is "mdb".
func (*ModifiedDB) Name() string { return "mdb" }

// Needs is every state's log R and stop log-probability.
func (*ModifiedDB) Needs() Needs { return Needs{StateLogR: true, LogPStop: true} }

// Eval computes modified DB on b.
func (*ModifiedDB) Eval(b *Batch, g *Grad, r *Result) error {
	n, T, S, err := check(b, Needs{StateLogR: true, LogPStop: true})
	if err != nil {
		return err
	}
	start(g, r, n, T)
	if g != nil {
		g.StateLogR, g.LogPStop = grow(g.StateLogR, S), grow(g.LogPStop, S)
	}
	for k := range n {
		var sum, sq float64
		for t := b.Off[k]; t < b.Off[k+1]; t++ {
			s := t + k
			d := b.StateLogR[s+1] + b.LogPB[t] + b.LogPStop[s] - b.StateLogR[s] - b.LogPF[t] - b.LogPStop[s+1]
			sum += d
			sq += d * d
			if g != nil {
				gd := 2 * d / float64(n)
				g.StateLogR[s+1] += gd
				g.StateLogR[s] -= gd
				g.LogPStop[s] += gd
				g.LogPStop[s+1] -= gd
				g.LogPB[t], g.LogPF[t] = gd, -gd
			}
		}
		r.PerObject[k], r.Delta[k] = sq, sum
		r.LogZ += (b.StateLogR[b.Off[k]+k] - b.LogPStop[b.Off[k]+k]) / float64(n)
	}
	finish(r)
	return nil
}

// ForwardLooking is DB or SubTB (Inner) on forward-looking flows
// (Pan et al. 2023): log F(s_i) = c_i·log R(s_i) + log F̃(s_i), where
// Batch.LogF holds the learned log F̃ and Batch.Scale the c_i (nil:
// i/n_b). The gradient with respect to LogF is Inner's, and with respect
// to StateLogR c_i times it.
type ForwardLooking struct {
	Inner Objective
	in    Batch
	logF  []float64
}

// Name is "fl-" and the inner objective's name.
func (o *ForwardLooking) Name() string { return "fl-" + o.Inner.Name() }

// Needs is the state flows and every state's log R.
func (o *ForwardLooking) Needs() Needs { return Needs{LogF: true, StateLogR: true} }

// Eval computes the inner objective on the forward-looking flows.
func (o *ForwardLooking) Eval(b *Batch, g *Grad, r *Result) error {
	n, _, S, err := check(b, o.Needs())
	if err != nil {
		return err
	}
	if b.Scale != nil && len(b.Scale) != S {
		return fmt.Errorf("objective: len(Scale) = %d, want %d states", len(b.Scale), S)
	}
	o.in = *b
	o.logF = append(o.logF[:0], b.LogF...)
	o.in.LogF = o.logF
	for k := range n {
		m := b.Off[k+1] - b.Off[k]
		for i := 0; i <= m; i++ {
			s := b.Off[k] + k + i
			o.in.LogF[s] += o.scale(b, s, i, m) * b.StateLogR[s]
		}
	}
	if err := o.Inner.Eval(&o.in, g, r); err != nil {
		return err
	}
	if g != nil {
		g.StateLogR = grow(g.StateLogR, S)
		for k := range n {
			m := b.Off[k+1] - b.Off[k]
			for i := 0; i < m; i++ { // x's flow is log R(x): no learned part
				s := b.Off[k] + k + i
				g.StateLogR[s] = o.scale(b, s, i, m) * g.LogF[s]
			}
		}
	}
	return nil
}

// scale is c_i of state s, the i-th of a trajectory of m transitions.
func (o *ForwardLooking) scale(b *Batch, s, i, m int) float64 {
	if b.Scale != nil {
		return b.Scale[s]
	}
	return float64(i) / float64(m)
}
