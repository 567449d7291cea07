package diffusion

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
)

// Policy is a time-conditioned network: for rows x (n×d) in consecutive
// blocks of n/len(t) rows sharing the time t[k], it returns n×2d outputs,
// the drift u then the raw log-variance v (timenet.Net implements it).
// Backward takes the gradient with respect to the most recent Forward's
// output (and may overwrite it) and accumulates the parameter gradients.
type Policy interface {
	Dim() int
	Forward(x *nn.Matrix, t []float32) *nn.Matrix
	Backward(dy *nn.Matrix)
	Params() []*nn.Param
}

// Process is the discretised diffusion: Steps steps of dt = 1/Steps from
// x_0 = 0 with diffusion coefficient σ² = Sigma2.
type Process struct {
	Dim    int
	Steps  int     // T (100 in the paper)
	Sigma2 float64 // σ² (the reference code's t_scale)
	// LearnedVariance makes the network's last Dim outputs set the
	// log-variance λ = log σ² + VarianceRange·tanh(v); otherwise λ = log σ².
	LearnedVariance bool
	VarianceRange   float64 // ρ (4 in the reference code)
	// Clip > 0 bounds the drift to u = clamp(out, −Clip, Clip), with zero
	// gradient outside (gfn-diffusion's --clipping, gfn_clip = 10⁴, which
	// its PIS commands set); 0 leaves the drift unbounded.
	Clip float64
}

// Validate reports an invalid process, naming the value.
func (p Process) Validate() error {
	switch {
	case p.Dim < 1:
		return fmt.Errorf("diffusion: dimension %d must be at least 1", p.Dim)
	case p.Steps < 1:
		return fmt.Errorf("diffusion: steps %d must be at least 1", p.Steps)
	case !(p.Sigma2 > 0) || math.IsInf(p.Sigma2, 0):
		return fmt.Errorf("diffusion: sigma^2 %v must be finite and > 0", p.Sigma2)
	case !(p.Clip >= 0) || math.IsInf(p.Clip, 0):
		return fmt.Errorf("diffusion: drift clip %v must be finite and >= 0 (0: none)", p.Clip)
	case p.LearnedVariance && !(p.VarianceRange > 0):
		return fmt.Errorf("diffusion: variance range %v must be > 0 with a learned variance", p.VarianceRange)
	}
	return nil
}

// dt is the step size 1/T.
func (p Process) dt() float64 { return 1 / float64(p.Steps) }

// Times returns t_i = i·dt for i = 0..T-1, the times of the forward steps.
func (p Process) Times() []float32 {
	ts := make([]float32, p.Steps)
	for i := range ts {
		ts[i] = float32(float64(i) * p.dt())
	}
	return ts
}

// drift is the drift u for a raw output v (clamped to ±Clip if set).
func (p Process) drift(v float32) float64 {
	u := float64(v)
	if p.Clip > 0 {
		u = max(-p.Clip, min(p.Clip, u))
	}
	return u
}

// clipped reports whether the raw drift output v lies outside ±Clip,
// where the drift's gradient is zero.
func (p Process) clipped(v float32) bool {
	return p.Clip > 0 && math.Abs(float64(v)) > p.Clip
}

// scaleDrift sets dst[k] = float32(c·g[k]), a drift output's gradient
// from its coordinate's adjoint g, and 0 where the output o[k] is clipped.
func (p Process) scaleDrift(dst []float32, g []float64, o []float32, c float64) {
	g, o = g[:len(dst)], o[:len(dst)]
	if p.Clip > 0 {
		for k := range dst {
			v := float32(c * g[k])
			if math.Abs(float64(o[k])) > p.Clip {
				v = 0
			}
			dst[k] = v
		}
		return
	}
	for k := range dst {
		dst[k] = float32(c * g[k])
	}
}

// logVar is λ for a raw output v.
func (p Process) logVar(v float32) float64 {
	if !p.LearnedVariance {
		return math.Log(p.Sigma2)
	}
	return p.learnedLogVar(math.Log(p.Sigma2), v)
}

// learnedLogVar is logVar of a learned variance given lv0 = log σ²,
// which the hot loops compute once rather than per coordinate (the same
// bits: at d = 1,600 the per-coordinate log was a tenth of a sampling
// pass). Its tanh is kernel.Tanh, and the variance e^λ is kernel.Exp
// wherever it is taken, so that the loops that take a row's at once
// (kernel.TanhExp, rowVar) give the same bits as one value at a time.
func (p Process) learnedLogVar(lv0 float64, v float32) float64 {
	return p.logVarOfTanh(lv0, kernel.Tanh(float64(v)))
}

// logVarOfTanh is λ = log σ² + ρ·tanh v from th = tanh v, the product
// rounded before the sum as kernel.TanhExp takes it.
func (p Process) logVarOfTanh(lv0, th float64) float64 {
	return lv0 + float64(p.VarianceRange*th)
}

// varPool holds the rows' scratch of tanh v and e^λ (rowVar).
var varPool = sync.Pool{New: func() any { return new([]float64) }}

// rowVar returns scratch for d values of tanh v and of e^λ, and the
// pool's handle to put back.
func rowVar(d int) (h *[]float64, th, ev []float64) {
	h = varPool.Get().(*[]float64)
	if cap(*h) < 2*d {
		*h = make([]float64, 2*d)
	}
	s := (*h)[:2*d]
	return h, s[:d], s[d:]
}

// batch holds n trajectories, step-major: the states of step i are the
// rows X[i·n·d : (i+1)·n·d] (n×d), i = 0..T, so that one step is one block
// of network rows.
type batch struct {
	N, Dim, Steps int
	X             []float32
	// LogPF and LogPB are each trajectory's Σ log P_F (set by sampler.Forward
	// with the policy that sampled it, or by balance.Eval) and Σ log P_B.
	LogPF, LogPB []float64
}

// Reset shapes b for n trajectories of p, reusing its storage.
func (b *batch) Reset(p Process, n int) {
	b.N, b.Dim, b.Steps = n, p.Dim, p.Steps
	m := (p.Steps + 1) * n * p.Dim
	if cap(b.X) < m {
		b.X = make([]float32, m)
	}
	b.X = b.X[:m]
	b.LogPF = growF(b.LogPF, n)
	b.LogPB = growF(b.LogPB, n)
}

// Step returns the states of step i (n×d rows, aliasing X).
func (b *batch) Step(i int) []float32 { return b.X[i*b.N*b.Dim : (i+1)*b.N*b.Dim] }

// Final returns the terminal states x_T (n×d rows, aliasing X).
func (b *batch) Final() []float32 { return b.Step(b.Steps) }

// Keep reduces the batch to the trajectories rows (in that order).
func (b *batch) Keep(rows []int) {
	d := b.Dim
	for i := 0; i <= b.Steps; i++ {
		src := b.X[i*b.N*d : (i+1)*b.N*d]
		dst := b.X[i*len(rows)*d : (i+1)*len(rows)*d]
		for k, r := range rows {
			copy(dst[k*d:(k+1)*d], src[r*d:(r+1)*d]) // r ≥ k: never overwrites a row still to be read
		}
	}
	for k, r := range rows {
		b.LogPF[k], b.LogPB[k] = b.LogPF[r], b.LogPB[r]
	}
	b.N = len(rows)
	b.X = b.X[:(b.Steps+1)*b.N*d]
	b.LogPF, b.LogPB = b.LogPF[:b.N], b.LogPB[:b.N]
}

var log2Pi = math.Log(2 * math.Pi)

// sampleOptions control forward sampling.
type sampleOptions struct {
	// Explore is f: the per-step noise variance is dt·e^λ + f² (0: none).
	Explore float64
	// Record keeps the policy's activations of every step when it is a
	// Recorder, so that training on the batch needs no second forward
	// pass (sampler.Recorded, balance.EvalRecorded).
	Record bool
}

// Recorder is a Policy that can record a sequence of forward passes and
// then treat them as one (timenet's networks are): Record(rows) starts,
// with a hint of the rows to come; EndRecord makes the recorded rows the
// most recent pass and returns its output.
type Recorder interface {
	Policy
	Record(rows int)
	EndRecord() *nn.Matrix
}

// sampler draws trajectories; it keeps scratch space between calls (not
// safe for concurrent use).
type sampler struct {
	x  nn.Matrix
	ts [1]float32
	// Recorded is the output of the last recorded Forward (T·n rows,
	// step-major), or nil.
	Recorded *nn.Matrix
	// z holds one step's noise, drawn serially in row order so that the
	// rows can then be stepped in parallel with the serial loop's bits;
	// zNext the next step's, drawn meanwhile (large batches).
	z, zNext []float64
}

// normals fills z with standard normal draws of rng, in order.
func normals(rng *rand.Rand, z []float64) {
	for j := range z {
		z[j] = rng.NormFloat64()
	}
}

// Forward draws n trajectories from the policy, filling dst's states,
// LogPF (scored with the policy's own variance, without exploration) and
// LogPB.
func (s *sampler) Forward(p Process, net Policy, n int, opt sampleOptions, rng *rand.Rand, dst *batch) {
	if net.Dim() != p.Dim {
		panic(fmt.Sprintf("diffusion: policy of dimension %d for a process of dimension %d", net.Dim(), p.Dim))
	}
	dst.Reset(p, n)
	d, dt := p.Dim, p.dt()
	clear(dst.Step(0))
	clear(dst.LogPF)
	f2 := opt.Explore * opt.Explore
	s.Recorded = nil
	rec, record := net.(Recorder)
	record = record && opt.Record
	if record {
		rec.Record(n * p.Steps)
	}
	// A fixed variance needs no log, exp or sqrt per value (same bits).
	ldt := math.Log(dt)
	lv0 := math.Log(p.Sigma2)
	v0 := dt * math.Exp(lv0)
	sd0 := math.Sqrt(v0 + f2)
	if rowsParallel(n, d) {
		// Large batches: the next step's noise is drawn, in the same
		// order from the same stream, while the rows of this one are
		// stepped on the other cores (the draws are serial; at d = 1,600
		// they left a core idle for a sixth of a sampling pass).
		s.z, s.zNext = growF(s.z, n*d), growF(s.zNext, n*d)
		normals(rng, s.z)
		for i := range p.Steps {
			s.x.Rows, s.x.Cols, s.x.Data = n, d, dst.Step(i)
			s.ts[0] = float32(float64(i) * dt)
			out := net.Forward(&s.x, s.ts[:])
			st := stepRows{p: p, out: out, xi: dst.Step(i), xn: dst.Step(i + 1), z: s.z, logPF: dst.LogPF, ldt: ldt, lv0: lv0, v0: v0, sd0: sd0, f2: f2}
			var wg sync.WaitGroup
			if i+1 < p.Steps {
				next := s.zNext
				wg.Go(func() { normals(rng, next) })
			}
			forRows(n, d, st.rows)
			wg.Wait()
			s.z, s.zNext = s.zNext, s.z
		}
	} else {
		for i := range p.Steps {
			s.x.Rows, s.x.Cols, s.x.Data = n, d, dst.Step(i)
			s.ts[0] = float32(float64(i) * dt)
			out := net.Forward(&s.x, s.ts[:])
			s.z = growF(s.z, n*d)
			normals(rng, s.z)
			st := stepRows{p: p, out: out, xi: dst.Step(i), xn: dst.Step(i + 1), z: s.z, logPF: dst.LogPF, ldt: ldt, lv0: lv0, v0: v0, sd0: sd0, f2: f2}
			st.rows(0, n)
		}
	}
	if record {
		s.Recorded = rec.EndRecord()
	}
	p.scoreBackward(dst)
}

// Backward draws n trajectories ending at the rows of x (n×d) from the
// Brownian bridge P_B, filling dst's states and LogPB (LogPF is zeroed:
// score it with balance.Eval).
func (s *sampler) Backward(p Process, x []float32, n int, rng *rand.Rand, dst *batch) {
	if len(x) < n*p.Dim {
		panic(fmt.Sprintf("diffusion: %d values are fewer than %d points of dimension %d", len(x), n, p.Dim))
	}
	dst.Reset(p, n)
	d, dt := p.Dim, p.dt()
	copy(dst.Final(), x[:n*d])
	clear(dst.Step(0))
	clear(dst.LogPF)
	clear(dst.LogPB)
	for i := p.Steps - 1; i >= 1; i-- {
		// x_i | x_{i+1} ~ N(x_{i+1}·i/(i+1), σ²·dt·i/(i+1)).
		a := float64(i) / float64(i+1)
		sd := math.Sqrt(p.Sigma2 * dt * a)
		cur, prev := dst.Step(i+1), dst.Step(i)
		for j := range prev {
			prev[j] = float32(float64(cur[j])*a + sd*rng.NormFloat64())
		}
	}
	p.scoreBackward(dst)
}

// scoreBackward sets b.LogPB to each trajectory's Σ_{i≥1} log P_B(x_i |
// x_{i+1}) under the Brownian bridge.
func (p Process) scoreBackward(b *batch) { p.scoreBackwardSteps(b, nil) }

// scoreBackwardSteps is scoreBackward that also writes, if steps is not
// nil, each transition's log P_B(x_i | x_{i+1}) into steps[i·n + r]
// (step-major, T·n values; 0 for i = 0, where x_0 = 0 is certain).
func (p Process) scoreBackwardSteps(b *batch, steps []float64) {
	d := p.Dim
	clear(b.LogPB)
	if steps != nil {
		clear(steps[:b.N])
	}
	// Rows in parallel, each row's steps in order (the serial loop's sums).
	if !rowsParallel(b.N, p.Steps*d) {
		p.scoreBackwardRows(b, steps, 0, b.N)
		return
	}
	forRows(b.N, p.Steps*d, func(lo, hi int) { p.scoreBackwardRows(b, steps, lo, hi) })
}

// scoreBackwardRows is scoreBackwardSteps for the batch rows [lo, hi).
func (p Process) scoreBackwardRows(b *batch, steps []float64, lo, hi int) {
	d, dt := p.Dim, p.dt()
	for i := 1; i < p.Steps; i++ {
		a := float64(i) / float64(i+1)
		v := p.Sigma2 * dt * a
		c := float64(d) * (log2Pi + math.Log(v))
		cur, prev := b.Step(i+1), b.Step(i)
		for r := lo; r < hi; r++ {
			q := kernel.BridgeSq(prev[r*d:(r+1)*d], cur[r*d:(r+1)*d], a, 0)
			lp := (q/v + c) / 2
			b.LogPB[r] -= lp
			if steps != nil {
				steps[i*b.N+r] = -lp
			}
		}
	}
}

func growF(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n, n+n/4)
	}
	return s[:n]
}

// stepRows is one step of Forward for a share of the rows: the new states
// from the step's noise and their log P_F.
type stepRows struct {
	p                     Process
	out                   *nn.Matrix
	xi, xn                []float32
	z, logPF              []float64
	ldt, lv0, v0, sd0, f2 float64
}

// rows steps the rows [lo, hi): a fixed variance through kernel.Gauss
// (vectorised, the same bits as this loop), a learned one coordinate by
// coordinate.
func (st *stepRows) rows(lo, hi int) {
	p, out, d, dt := st.p, st.out, st.p.Dim, st.p.dt()
	if !p.LearnedVariance {
		g := kernel.Gauss{Dt: dt, Clip: p.Clip, Sd: st.sd0, Var: st.v0, Add: [3]float64{log2Pi, st.ldt, st.lv0}}
		for b := lo; b < hi; b++ {
			row := b * d
			lp := g.Step(st.xn[row:row+d], st.xi[row:row+d], out.Row(b)[:d], st.z[row:row+d], 0)
			st.logPF[b] -= lp / 2
		}
		return
	}
	// A learned variance, per coordinate.
	h, th, ev := rowVar(d)
	defer varPool.Put(h)
	for b := lo; b < hi; b++ {
		o := out.Row(b)
		kernel.TanhExp(th, ev, o[d:2*d], st.lv0, p.VarianceRange)
		var lp float64
		for k := range d {
			lv := p.logVarOfTanh(st.lv0, th[k])
			v := dt * ev[k]
			sd := math.Sqrt(v + st.f2)
			mean := float64(st.xi[b*d+k]) + dt*p.drift(o[k])
			x := float32(mean + sd*st.z[b*d+k])
			st.xn[b*d+k] = x
			r := float64(x) - mean
			lp += r*r/v + log2Pi + st.ldt + lv
		}
		st.logPF[b] -= lp / 2
	}
}
