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
	case n.Edges || n.StateLogR || n.LogPStop:
		return fmt.Errorf("discrete: objective %s needs inputs these trajectories do not offer (edges, every state's reward or stop probability)", o.Obj.Name())
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
