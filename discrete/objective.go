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
	mdb   mdbScratch
	b     objective.Batch
	g     objective.Grad
	r     objective.Result
	dflow []float32 // gradient of each logits row's flow column
}

// Check reports whether the objective can run with a model of extra
// heads beyond the actions: state flows need one. Every state's reward
// (the forward-looking objectives, modified DB) needs an environment
// where every state can stop, which Eval checks.
func (o *Objective) Check(extra int) error {
	n := o.Obj.Needs()
	switch {
	case n.Edges: // FM: parents come from BackwardMask and BackStep
	case n.LogPStop: // modified DB: Eval checks the environment is a Stopper
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
	if o.Obj.Needs().LogPStop {
		return o.evalMDB(env, m, tr, logR, delta, perObject)
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
	o.mdb.calls = 0
	if needs.StateLogR {
		if err := o.stateRewards(env, tr, logR); err != nil {
			return 0, err
		}
	}
	return o.eval(delta, perObject)
}

// stateRewards sets o.b.StateLogR to log R of every state of tr, each
// scored as if it stopped there (one reward call per non-terminal state;
// the terminal's is logR's), and o.b.Scale to 1: the forward-looking
// flows log F(s) = log R(s) + log F̃(s) of Pan et al. on environments
// where every state can stop (discrete.Stopper).
func (o *Objective) stateRewards(env Env, tr *Trajectories, logR []float64) error {
	st, ok := env.(Stopper)
	if !ok {
		return fmt.Errorf("discrete: objective %s scores every visited state, which needs an environment where every state can stop (discrete.Stopper); %v is not one", o.Obj.Name(), env)
	}
	f, b := &o.mdb, &o.b
	n, w, stop := tr.Len(), tr.StateLen, st.StopAction()
	S := tr.NumTransitions() + n
	b.StateLogR, b.Scale = growF64(b.StateLogR, S), growF64(b.Scale, S)
	f.xs, f.which = f.xs[:0], f.which[:0]
	for k := range n {
		for t := tr.Off[k]; t < tr.Off[k+1]; t++ {
			f.which = append(f.which, t+k)
			f.xs = append(f.xs, tr.States[t*w:(t+1)*w]...)
			env.Step(f.xs[len(f.xs)-w:], stop)
		}
		b.StateLogR[tr.Off[k+1]+k] = logR[k]
	}
	for i := range b.Scale {
		b.Scale[i] = 1
	}
	return f.score(env, b.StateLogR)
}

// RewardCalls is the number of rewards the last Eval asked of the
// environment (modified DB and the forward-looking objectives score every
// visited state as if it stopped there; the others ask none).
func (o *Objective) RewardCalls() int { return o.mdb.calls }

// LogZ is the last Eval's estimate of log Z (objective.Result.LogZ).
func (o *Objective) LogZ() float64 { return o.r.LogZ }

// Grad accumulates the gradient of the last Eval's loss into m's
// parameters and logZ.Grad. Nothing may run m between Eval and Grad.
func (o *Objective) Grad(env Env, m Model, logZ *nn.Param, tr *Trajectories) {
	if o.Obj.Needs().Edges {
		o.gradFM(env, m)
		return
	}
	if o.Obj.Needs().LogPStop {
		o.gradMDB(env, m, tr)
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
	return o.eval(delta, perObject)
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

// mdbScratch is modified DB's view of a batch: the trajectories with at
// least one move, and where their states' stop rows are.
type mdbScratch struct {
	keep  []int // trajectories with a move, in order
	stop  []int32
	xs    []int32 // the stopped versions of visited states, to score
	which []int   // their state index in the batch
	logR  []float64
	row   []int32 // per state: its logits row (-1: a terminal reached by a move)
	calls int
}

// score asks env for the rewards of the stopped states f.xs, counts
// them in f.calls and writes each into stateLogR at its index in f.which.
func (f *mdbScratch) score(env Env, stateLogR []float64) error {
	f.calls = len(f.which)
	if f.calls == 0 {
		return nil
	}
	f.logR = growF64(f.logR, f.calls)
	if err := env.LogReward(f.xs, f.calls, f.logR); err != nil {
		return err
	}
	for i, s := range f.which {
		stateLogR[s] = f.logR[i]
	}
	return nil
}

// evalMDB runs modified DB: the moves of each trajectory (its stop
// action excluded), every visited state's log R as if stopped there (a
// reward call each, but the trajectory's own end) and its stop
// log-probability from the model; a state reached as terminal by a move
// stops with probability 1.
func (o *Objective) evalMDB(env Env, m Model, tr *Trajectories, logR, delta, perObject []float64) (float64, error) {
	st, ok := env.(Stopper)
	if !ok {
		return 0, fmt.Errorf("discrete: objective %s needs an environment where every state can stop (discrete.Stopper); %v is not one", o.Obj.Name(), env)
	}
	f, b := &o.mdb, &o.b
	n, w, na := tr.Len(), tr.StateLen, env.NumActions()
	stop := st.StopAction()
	o.tb.logPF = growF64(o.tb.logPF, n)
	o.tb.LogPF(env, m, tr, o.tb.logPF) // the forward pass, its rows and log-probabilities
	f.keep, f.xs, f.which, f.row = f.keep[:0], f.xs[:0], f.which[:0], f.row[:0]
	b.Off, b.LogPF, b.LogPB, b.LogR = b.Off[:0], b.LogPF[:0], b.LogPB[:0], b.LogR[:0]
	b.StateLogR, b.LogPStop = b.StateLogR[:0], b.LogPStop[:0]
	b.Off = append(b.Off, 0)
	for k := range n {
		lo, hi := tr.Off[k], tr.Off[k+1]
		stopped := int(tr.Actions[hi-1]) == stop
		moves := hi - lo
		if stopped {
			moves--
		}
		if moves == 0 {
			continue // stopped at s_0: no move to balance
		}
		f.keep = append(f.keep, k)
		for t := lo; t < lo+moves; t++ {
			row := int(o.tb.row[t])
			b.LogPF = append(b.LogPF, float64(o.tb.logp.Data[row*na+int(tr.Actions[t])]))
			b.LogPB = append(b.LogPB, -math.Log(float64(env.BackwardCount(tr.States[t*w:(t+1)*w], int(tr.Actions[t])))))
		}
		b.Off = append(b.Off, len(b.LogPF))
		b.LogR = append(b.LogR, logR[k])
		// States s_0..s_moves: the sources of the moves, then where it ended.
		for i := 0; i <= moves; i++ {
			t := lo + i
			if i == moves && !stopped { // reached a terminal state by a move
				f.row = append(f.row, -1)
				b.StateLogR = append(b.StateLogR, logR[k])
				b.LogPStop = append(b.LogPStop, 0)
				continue
			}
			row := o.tb.row[t]
			f.row = append(f.row, row)
			b.LogPStop = append(b.LogPStop, float64(o.tb.logp.Data[int(row)*na+stop]))
			if i == moves { // the state it stopped at: its reward is the trajectory's
				b.StateLogR = append(b.StateLogR, logR[k])
				continue
			}
			b.StateLogR = append(b.StateLogR, 0)
			f.which = append(f.which, len(b.StateLogR)-1)
			f.xs = append(f.xs, tr.States[t*w:(t+1)*w]...)
			env.Step(f.xs[len(f.xs)-w:], stop)
		}
	}
	f.calls = len(f.which)
	if len(f.keep) == 0 {
		return 0, fmt.Errorf("discrete: objective %s: every trajectory of the batch stopped at s_0, leaving no move to balance", o.Obj.Name())
	}
	if err := f.score(env, b.StateLogR); err != nil {
		return 0, err
	}
	if err := o.Obj.Eval(b, &o.g, &o.r); err != nil {
		return 0, err
	}
	// Trajectories without a move have no loss and no residual.
	if delta != nil {
		clear(delta[:n])
	}
	if perObject != nil {
		clear(perObject[:n])
	}
	var loss float64
	for i, k := range f.keep {
		if delta != nil {
			delta[k] = o.r.Delta[i]
		}
		if perObject != nil {
			perObject[k] = o.r.PerObject[i]
		}
		loss += o.r.PerObject[i]
	}
	return loss / float64(n), nil
}

// gradMDB backpropagates modified DB's gradients (of the loss averaged
// over the whole batch) through the log-softmax into the model.
func (o *Objective) gradMDB(env Env, m Model, tr *Trajectories) {
	tb, f, na := &o.tb, &o.mdb, env.NumActions()
	stop := env.(Stopper).StopAction()
	tb.dlogp.Resize(tb.logp.Rows, na)
	tb.dlogp.Zero()
	// The objective averaged over the trajectories it kept; the batch's
	// loss averages over all of them.
	scale := float32(float64(len(f.keep)) / float64(tr.Len()))
	s := 0
	for i, k := range f.keep {
		lo := tr.Off[k]
		moves := o.b.Off[i+1] - o.b.Off[i]
		for j := range moves {
			t := lo + j
			tb.dlogp.Data[int(tb.row[t])*na+int(tr.Actions[t])] += scale * float32(o.g.LogPF[o.b.Off[i]+j])
		}
		for j := 0; j <= moves; j++ {
			if r := f.row[s+j]; r >= 0 {
				tb.dlogp.Data[int(r)*na+stop] += scale * float32(o.g.LogPStop[s+j])
			}
		}
		s += moves + 1
	}
	nn.LogSoftmaxBackward(&tb.dlogits, &tb.logp, &tb.dlogp)
	m.Backward(widen(&tb.dwide, &tb.dlogits, tb.width))
}

// eval runs the objective on o.b and copies its per-object values out.
func (o *Objective) eval(delta, perObject []float64) (float64, error) {
	if err := o.Obj.Eval(&o.b, &o.g, &o.r); err != nil {
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
