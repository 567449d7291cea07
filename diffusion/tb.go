package diffusion

import (
	"math"

	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/timenet"
)

// balance evaluates and differentiates trajectory balance for a policy on a
// batch. It keeps scratch space (not safe for concurrent use; give each
// agent its own).
type balance struct {
	// MaxRows bounds the rows of one network pass. 0 runs every step of
	// the batch in one pass, whose activations Grad then reuses (the
	// cheapest, T·n rows of activations in memory); otherwise whole steps
	// are processed in chunks, and Grad recomputes each chunk's forward
	// pass.
	MaxRows int

	// StepLogPF, if not nil (T·n values), receives each transition's
	// log P_F(x_{i+1} | x_i) at [i·n + r] (step-major) from Eval and
	// EvalRecorded: the per-step inputs of the flow objectives.
	StepLogPF []float64

	x, dy nn.Matrix
	ts    []float32
	// out is the output of Eval's single pass (nil after a chunked Eval).
	out *nn.Matrix
}

// chunk is the number of steps per network pass.
func (tb *balance) chunk(p Process, n int) int {
	if tb.MaxRows <= 0 || tb.MaxRows >= p.Steps*n {
		return p.Steps
	}
	return max(tb.MaxRows/n, 1)
}

// forward runs the policy on steps [i0, i0+k) of b.
func (tb *balance) forward(p Process, net Policy, b *batch, i0, k int) *nn.Matrix {
	d := p.Dim
	tb.x.Rows, tb.x.Cols, tb.x.Data = k*b.N, d, b.X[i0*b.N*d:(i0+k)*b.N*d]
	if cap(tb.ts) < k {
		tb.ts = make([]float32, p.Steps)
	}
	tb.ts = tb.ts[:k]
	for j := range k {
		tb.ts[j] = float32(float64(i0+j) * p.dt())
	}
	return net.Forward(&tb.x, tb.ts)
}

// Eval sets b.LogPF to each trajectory's Σ log P_F under net, writes
// δ_b = logR_b + LogPB_b − LogPF_b − logZ into delta and returns the loss,
// the mean of ½·δ².
func (tb *balance) Eval(p Process, net Policy, logZ float64, b *batch, logR, delta []float64) float64 {
	n := b.N
	clear(b.LogPF[:n])
	k := tb.chunk(p, n)
	tb.out = nil
	for i0 := 0; i0 < p.Steps; i0 += k {
		kk := min(k, p.Steps-i0)
		out := tb.forward(p, net, b, i0, kk)
		scoreRows(p, out, b, i0, kk, b.LogPF, tb.StepLogPF)
		if kk == p.Steps {
			tb.out = out
		}
	}
	return residuals(b, logZ, logR, delta)
}

// EvalRecorded is Eval on the output of a recorded sampling pass of the
// same policy over b (sampler.Recorded): the same numbers without running
// the network again. The policy must not run another Forward before Grad.
func (tb *balance) EvalRecorded(p Process, out *nn.Matrix, logZ float64, b *batch, logR, delta []float64) float64 {
	n := b.N
	if out.Rows != p.Steps*n {
		panic("diffusion: a recorded pass of the wrong size")
	}
	clear(b.LogPF[:n])
	scoreRows(p, out, b, 0, p.Steps, b.LogPF, tb.StepLogPF)
	tb.out = out
	return residuals(b, logZ, logR, delta)
}

// residuals writes δ_b = logR_b + LogPB_b − LogPF_b − logZ into delta and
// returns the mean of ½·δ².
func residuals(b *batch, logZ float64, logR, delta []float64) float64 {
	var loss float64
	for r := range b.N {
		delta[r] = logR[r] + b.LogPB[r] - b.LogPF[r] - logZ
		loss += delta[r] * delta[r] / 2
	}
	return loss / float64(b.N)
}

// Grad accumulates into the parameters' gradients (and logZ.Grad, if logZ
// is not nil) the gradient of Eval's loss, given its δ. When Eval ran one
// pass over the whole batch, net must not have run another Forward since:
// Grad reuses that pass's activations.
func (tb *balance) Grad(p Process, net Policy, logZ *nn.Param, b *batch, delta []float64) {
	n := b.N
	// ∂loss/∂Σlog P_F = −δ/n, ∂loss/∂log Z = −mean δ.
	var sum float64
	for _, v := range delta[:n] {
		sum += v
	}
	if logZ != nil {
		logZ.Grad[0] += float32(-sum / float64(n))
	}
	tb.grad(p, net, b, delta, -1/float64(n), nil)
}

// GradSteps accumulates into the parameters' gradients the gradient of a
// loss whose derivative with respect to each transition's log P_F(x_{i+1}
// | x_i) is w[i·n + r] (step-major, T·n values), after Eval on b. As with
// Grad, net must not have run another Forward since a one-pass Eval.
func (tb *balance) GradSteps(p Process, net Policy, b *batch, w []float64) {
	tb.grad(p, net, b, nil, 0, w)
}

// grad backpropagates the weights scale·delta[r] of every step of row r,
// or stepW per step if not nil.
func (tb *balance) grad(p Process, net Policy, b *batch, delta []float64, scale float64, stepW []float64) {
	n := b.N
	if tb.out != nil {
		gradRows(p, tb.out, b, 0, p.Steps, delta, scale, stepW, !driftOnly(net, p.Dim), &tb.dy)
		net.Backward(&tb.dy)
		tb.out = nil
		return
	}
	k := tb.chunk(p, n)
	for i0 := 0; i0 < p.Steps; i0 += k {
		kk := min(k, p.Steps-i0)
		out := tb.forward(p, net, b, i0, kk)
		gradRows(p, out, b, i0, kk, delta, scale, stepW, !driftOnly(net, p.Dim), &tb.dy)
		net.Backward(&tb.dy)
	}
}

// scoreRows adds each trajectory's log P_F of steps [i0, i0+k), from the
// policy outputs out (k·n rows), into logPF, and writes each step's into
// steps[i·n + r] if steps is not nil.
func scoreRows(p Process, out *nn.Matrix, b *batch, i0, k int, logPF, steps []float64) {
	n, d, dt := b.N, p.Dim, p.dt()
	ldt := math.Log(dt)
	// A fixed variance needs no log or exp per value (same bits).
	lv0 := math.Log(p.Sigma2)
	dtv0 := dt * math.Exp(lv0)
	// Rows in parallel, each row's steps in order (the serial loop's sums).
	if !rowsParallel(n, k*d) {
		scoreRowsOf(p, out, b, i0, k, logPF, steps, ldt, lv0, dtv0, 0, n)
		return
	}
	forRows(n, k*d, func(lo, hi int) { scoreRowsOf(p, out, b, i0, k, logPF, steps, ldt, lv0, dtv0, lo, hi) })
}

// scoreRowsOf is scoreRows for the batch rows [lo, hi).
func scoreRowsOf(p Process, out *nn.Matrix, b *batch, i0, k int, logPF, steps []float64, ldt, lv0, dtv0 float64, lo, hi int) {
	n, d, dt := b.N, p.Dim, p.dt()
	if !p.LearnedVariance {
		g := kernel.Gauss{Dt: dt, Clip: p.Clip, Var: dtv0, Add: [3]float64{log2Pi, ldt, lv0}}
		for j := range k {
			xi, xn := b.Step(i0+j), b.Step(i0+j+1)
			for r := lo; r < hi; r++ {
				lp := g.Score(xn[r*d:(r+1)*d], xi[r*d:(r+1)*d], out.Row(j*n + r)[:d], 0)
				logPF[r] -= lp / 2
				if steps != nil {
					steps[(i0+j)*n+r] = -lp / 2
				}
			}
		}
		return
	}
	// A learned variance, per coordinate.
	h, th, ev := rowVar(d)
	defer varPool.Put(h)
	for j := range k {
		xi, xn := b.Step(i0+j), b.Step(i0+j+1)
		for r := lo; r < hi; r++ {
			o := out.Row(j*n + r)
			kernel.TanhExp(th, ev, o[d:2*d], lv0, p.VarianceRange)
			var lp float64
			for c := range d {
				lv, dtv := p.logVarOfTanh(lv0, th[c]), dt*ev[c]
				res := float64(xn[r*d+c]) - float64(xi[r*d+c]) - dt*p.drift(o[c])
				lp += res*res/dtv + log2Pi + ldt + lv
			}
			logPF[r] -= lp / 2
			if steps != nil {
				steps[(i0+j)*n+r] = -lp / 2
			}
		}
	}
}

// driftOnly reports whether net computes only the d drift columns of its
// output, and so reads nothing else of an output gradient
// (timenet.OutputSetter): then a fixed variance's zero gradients need not
// be written (at d = 1,600, 192 MB an iteration).
func driftOnly(net Policy, d int) bool {
	s, ok := net.(timenet.OutputSetter)
	return ok && s.Outputs() == d
}

// gradRows sets dy (k·n × 2d) to the gradient of Σ_r scale·δ_r·Σ_i log
// P_F(r, i) (or, if stepW is not nil, Σ_{r,i} stepW[i·n + r]·log P_F(r,
// i)) with respect to the outputs of steps [i0, i0+k):
//
//	∂log P_F/∂u_c = res_c/e^λ_c,  ∂log P_F/∂λ_c = ½(res_c²/(dt·e^λ_c) − 1),
//
// with res = x_{i+1} − x_i − dt·u and, for a learned variance,
// ∂λ/∂v = ρ·(1 − tanh² v). A fixed variance's columns of dy are zeroed
// if zeroVar, and left as they are otherwise (for a net that does not
// read them: driftOnly).
func gradRows(p Process, out *nn.Matrix, b *batch, i0, k int, delta []float64, scale float64, stepW []float64, zeroVar bool, dy *nn.Matrix) {
	n, d := b.N, p.Dim
	dy.Resize(k*n, 2*d)
	lv0 := math.Log(p.Sigma2)
	ev0 := math.Exp(lv0)
	if !rowsParallel(n, k*d) {
		gradRowsOf(p, out, b, i0, k, delta, scale, stepW, zeroVar, dy, lv0, ev0, 0, n)
		return
	}
	forRows(n, k*d, func(lo, hi int) { gradRowsOf(p, out, b, i0, k, delta, scale, stepW, zeroVar, dy, lv0, ev0, lo, hi) })
}

// gradRowsOf is gradRows for the batch rows [lo, hi).
func gradRowsOf(p Process, out *nn.Matrix, b *batch, i0, k int, delta []float64, scale float64, stepW []float64, zeroVar bool, dy *nn.Matrix, lv0, ev0 float64, lo, hi int) {
	n, d, dt := b.N, p.Dim, p.dt()
	if !p.LearnedVariance {
		g := kernel.Gauss{Dt: dt, Clip: p.Clip}
		for j := range k {
			xi, xn := b.Step(i0+j), b.Step(i0+j+1)
			for r := lo; r < hi; r++ {
				var w float64
				if stepW != nil {
					w = stepW[(i0+j)*n+r]
				} else {
					w = scale * delta[r]
				}
				gr := dy.Row(j*n + r)
				g.Grad(gr[:d], xn[r*d:(r+1)*d], xi[r*d:(r+1)*d], out.Row(j*n + r)[:d], w, ev0)
				if zeroVar {
					clear(gr[d : 2*d])
				}
			}
		}
		return
	}
	// A learned variance, per coordinate.
	h, ths, evs := rowVar(d)
	defer varPool.Put(h)
	for j := range k {
		xi, xn := b.Step(i0+j), b.Step(i0+j+1)
		for r := lo; r < hi; r++ {
			o, g := out.Row(j*n+r), dy.Row(j*n+r)
			var w float64
			if stepW != nil {
				w = stepW[(i0+j)*n+r]
			} else {
				w = scale * delta[r]
			}
			kernel.TanhExp(ths, evs, o[d:2*d], lv0, p.VarianceRange)
			for c := range d {
				th, ev := ths[c], evs[c]
				res := float64(xn[r*d+c]) - float64(xi[r*d+c]) - dt*p.drift(o[c])
				g[c] = float32(w * res / ev)
				if p.clipped(o[c]) {
					g[c] = 0
				}
				g[d+c] = float32(w * (res*res/(dt*ev) - 1) / 2 * p.VarianceRange * (1 - th*th))
			}
		}
	}
}
