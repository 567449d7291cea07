package discrete

import (
	"fmt"
	"math"

	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/objective"
)

// Objective evaluates an objective.Objective on trajectories under a
// model: log P_F of each transition from the model's policy columns, the
// learned log F of each state from its flow column NumActions() (for
// objectives that need state flows: build the model with one extra head),
// log P_B uniform over a state's parents, and log Z from the agent's
// parameter. The network runs once per distinct state, as TB's does. Its
// scratch space is reused between calls; the zero value with Obj set is
// ready.
type Objective struct {
	Obj objective.Objective

	fm    fmScratch
	tb    TB
	b     objective.Batch
	g     objective.Grad
	r     objective.Result
	dflow []float32 // gradient of each logits row's flow column
}

// Check reports whether the objective can run on env with a model of
// extra heads beyond the actions: state flows need one, edges and every
// state's reward are not offered here.
func (o *Objective) Check(extra int) error {
	n := o.Obj.Needs()
	switch {
	case n.Edges: // FM: parents come from BackwardMask and BackStep
	case n.StateLogR || n.LogPStop:
		return fmt.Errorf("discrete: objective %s needs every state's reward and stop probability, which these trajectories do not offer", o.Obj.Name())
	case n.LogF && extra < 1:
		return fmt.Errorf("discrete: objective %s needs a model with a state-flow head", o.Obj.Name())
	}
	return nil
}

// Eval computes the objective on tr with terminal log-rewards logR and
// writes each trajectory's signed residual into delta and its loss into
// perObject (either may be nil); it returns the batch loss and leaves the
// pass ready for Grad. logZ may be nil for objectives without log Z.
func (o *Objective) Eval(env Env, m Model, logZ *nn.Param, tr *Trajectories, logR, delta, perObject []float64) (float64, error) {
	if o.Obj.Needs().Edges {
		return o.evalFM(env, m, tr, logR, delta, perObject)
	}
	n, T, w, na := tr.Len(), tr.NumTransitions(), tr.StateLen, env.NumActions()
	o.tb.logPF = growF64(o.tb.logPF, n)
	o.tb.LogPF(env, m, tr, o.tb.logPF)
	needs := o.Obj.Needs()
	b := &o.b
	b.Off = b.Off[:0]
	for k := 0; k <= n; k++ {
		b.Off = append(b.Off, tr.Off[k])
	}
	b.LogPF, b.LogPB = growF64(b.LogPF, T), growF64(b.LogPB, T)
	b.LogR = append(b.LogR[:0], logR[:n]...)
	if needs.LogZ {
		if logZ == nil {
			return 0, fmt.Errorf("discrete: objective %s needs log Z", o.Obj.Name())
		}
		b.LogZ = float64(logZ.Value[0])
	}
	if needs.LogF {
		if o.tb.width <= na {
			return 0, fmt.Errorf("discrete: objective %s needs a model with a state-flow head", o.Obj.Name())
		}
		b.LogF = growF64(b.LogF, T+n)
	}
	for k := range n {
		for t := tr.Off[k]; t < tr.Off[k+1]; t++ {
			row := int(o.tb.row[t])
			b.LogPF[t] = float64(o.tb.logp.Data[row*na+int(tr.Actions[t])])
			b.LogPB[t] = -math.Log(float64(env.BackwardCount(tr.States[t*w:(t+1)*w], int(tr.Actions[t]))))
			if needs.LogF {
				b.LogF[t+k] = float64(o.tb.logits.Data[row*o.tb.width+na])
			}
		}
	}
	if err := o.Obj.Eval(b, &o.g, &o.r); err != nil {
		return 0, err
	}
	if delta != nil {
		copy(delta, o.r.Delta)
	}
	if perObject != nil {
		copy(perObject, o.r.PerObject)
	}
	return o.r.Loss, nil
}

// LogZ is the last Eval's estimate of log Z (objective.Result.LogZ).
func (o *Objective) LogZ() float64 { return o.r.LogZ }

// Grad accumulates the gradient of the last Eval's loss into m's
// parameters and logZ.Grad. Nothing may run m between Eval and Grad.
func (o *Objective) Grad(env Env, m Model, logZ *nn.Param, tr *Trajectories) {
	if o.Obj.Needs().Edges {
		o.gradFM(env, m)
		return
	}
	tb, na := &o.tb, env.NumActions()
	tb.dlogp.Resize(tb.logp.Rows, na)
	tb.dlogp.Zero()
	flow := o.b.LogF != nil && o.Obj.Needs().LogF
	if flow {
		o.dflow = o.dflow[:0]
		for range tb.logp.Rows {
			o.dflow = append(o.dflow, 0)
		}
	}
	for k := range tr.Len() {
		for t := tr.Off[k]; t < tr.Off[k+1]; t++ {
			row := int(tb.row[t])
			tb.dlogp.Data[row*na+int(tr.Actions[t])] += float32(o.g.LogPF[t])
			if flow {
				o.dflow[row] += float32(o.g.LogF[t+k])
			}
		}
	}
	if logZ != nil && o.Obj.Needs().LogZ {
		logZ.Grad[0] += float32(o.g.LogZ)
	}
	nn.LogSoftmaxBackward(&tb.dlogits, &tb.logp, &tb.dlogp)
	d := widen(&tb.dwide, &tb.dlogits, tb.width)
	if flow {
		for r, g := range o.dflow {
			d.Data[r*tb.width+na] = g
		}
	}
	m.Backward(d)
}

// fmScratch is flow matching's forward pass: the rows the model ran on
// and each edge's row and action.
type fmScratch struct {
	states  []int32
	rows    int
	edgeIn  []int32 // row*NumActions+action of each in-edge
	edgeOut []int32 // of each out-edge
	mask    []bool
	s       []int32
	out     *nn.Matrix
	dout    nn.Matrix
}

// evalFM runs flow matching with the model's raw outputs as the log edge
// flows log F(s → s') of its actions: each visited state's in-edges come
// from its parents (BackwardMask and BackStep), its out-edges from its
// valid actions, and a terminal state's outflow is R(x).
func (o *Objective) evalFM(env Env, m Model, tr *Trajectories, logR, delta, perObject []float64) (float64, error) {
	f, b := &o.fm, &o.b
	n, T, w, na, nb := tr.Len(), tr.NumTransitions(), tr.StateLen, env.NumActions(), env.NumBackActions()
	f.states, f.rows = f.states[:0], 0
	f.edgeIn, f.edgeOut = f.edgeIn[:0], f.edgeOut[:0]
	f.mask = growBool(f.mask, max(na, nb))
	f.s = growInt32(f.s, w)
	b.Off = b.Off[:0]
	for k := 0; k <= n; k++ {
		b.Off = append(b.Off, tr.Off[k])
	}
	b.LogPF, b.LogPB = growF64(b.LogPF, T), growF64(b.LogPB, T)
	b.LogR = append(b.LogR[:0], logR[:n]...)
	b.StateLogR = b.StateLogR[:0]
	b.InOff, b.OutOff = b.InOff[:0], b.OutOff[:0]
	addRow := func(s []int32) int {
		f.states = append(f.states, s...)
		f.rows++
		return f.rows - 1
	}
	for k := range n {
		for i := 0; i <= tr.Off[k+1]-tr.Off[k]; i++ {
			terminal := tr.Off[k]+i == tr.Off[k+1]
			s := tr.Final[k*w : (k+1)*w]
			if !terminal {
				s = tr.States[(tr.Off[k]+i)*w : (tr.Off[k]+i+1)*w]
			}
			b.InOff = append(b.InOff, len(f.edgeIn))
			b.OutOff = append(b.OutOff, len(f.edgeOut))
			if terminal {
				b.StateLogR = append(b.StateLogR, logR[k])
			} else {
				b.StateLogR = append(b.StateLogR, math.Inf(-1))
				r := addRow(s)
				env.ForwardMask(s, f.mask[:na])
				for a, ok := range f.mask[:na] {
					if ok {
						f.edgeOut = append(f.edgeOut, int32(r*na+a))
					}
				}
			}
			if i == 0 {
				continue // s_0 has no parents
			}
			env.BackwardMask(s, f.mask[:nb])
			for bk, ok := range f.mask[:nb] {
				if !ok {
					continue
				}
				copy(f.s, s)
				a := env.BackStep(f.s, bk)
				r := addRow(f.s)
				f.edgeIn = append(f.edgeIn, int32(r*na+a))
			}
		}
	}
	b.InOff = append(b.InOff, len(f.edgeIn))
	b.OutOff = append(b.OutOff, len(f.edgeOut))
	f.out = m.Forward(f.states, f.rows)
	cols := f.out.Cols
	edge := func(e int32) float64 { return float64(f.out.Data[int(e)/na*cols+int(e)%na]) }
	b.InLogF, b.OutLogF = growF64(b.InLogF, len(f.edgeIn)), growF64(b.OutLogF, len(f.edgeOut))
	for i, e := range f.edgeIn {
		b.InLogF[i] = edge(e)
	}
	for i, e := range f.edgeOut {
		b.OutLogF[i] = edge(e)
	}
	if err := o.Obj.Eval(b, &o.g, &o.r); err != nil {
		return 0, err
	}
	if delta != nil {
		copy(delta, o.r.Delta)
	}
	if perObject != nil {
		copy(perObject, o.r.PerObject)
	}
	return o.r.Loss, nil
}

// gradFM backpropagates flow matching's edge gradients into the model.
func (o *Objective) gradFM(env Env, m Model) {
	f, na := &o.fm, env.NumActions()
	cols := f.out.Cols
	f.dout.Resize(f.rows, cols)
	f.dout.Zero()
	for i, e := range f.edgeIn {
		f.dout.Data[int(e)/na*cols+int(e)%na] += float32(o.g.InLogF[i])
	}
	for i, e := range f.edgeOut {
		f.dout.Data[int(e)/na*cols+int(e)%na] += float32(o.g.OutLogF[i])
	}
	m.Backward(&f.dout)
}
