package discrete

import (
	"fmt"
	"math"

	"github.com/gfngo/gfn/nn"
)

// DB evaluates the detailed-balance objective with a state-flow head: for
// a transition s → s' by action a,
//
//	δ = log F(s) + log P_F(a|s) − log F(s') − log P_B(s|s'),
//
// with log F read from the model's output column NumActions() and
// log F(x) = log R(x) at terminal states. The model must have that extra
// head (NewMLPModelHeads with extra = 1).
type DB struct {
	next   []int32   // scratch: the next row of each transition
	target []float64 // log F(s') where s' is terminal
	logPB  []float64
	states []int32
	mask   []bool
	narrow nn.Matrix
	logp   nn.Matrix
	grad   HeadGrad
}

// Loss computes Σ_τ Σ_t δ_t² / #trajectories over whole trajectories, with
// log F(x) = logR[b] at each trajectory's end, and writes every δ_t (in
// transition order) into delta. With grad set it accumulates gradients.
func (db *DB) Loss(env Env, m Model, tr *Trajectories, logR, delta []float64, grad bool) float64 {
	T := tr.NumTransitions()
	if len(delta) < T || len(logR) < tr.Len() {
		panic(fmt.Sprintf("discrete: DB on %d transitions with %d deltas and %d rewards", T, len(delta), len(logR)))
	}
	db.next = growInt32(db.next, T)
	db.target = growF64(db.target, T)
	db.logPB = growF64(db.logPB, T)
	w := tr.StateLen
	for b := range tr.Len() {
		for t := tr.Off[b]; t < tr.Off[b+1]; t++ {
			db.next[t] = int32(t + 1)
			db.logPB[t] = -math.Log(float64(env.BackwardCount(tr.States[t*w:(t+1)*w], int(tr.Actions[t]))))
		}
		last := tr.Off[b+1] - 1
		db.next[last], db.target[last] = -1, logR[b]
	}
	return db.loss(env, m, tr.States, T, tr.Actions, float64(tr.Len()), delta[:T], grad)
}

// Transitions is a batch of single transitions s → s' (for transition
// replay): States and Next hold N states each, Actions the actions, and
// LogR the log-reward where Next is terminal.
type Transitions struct {
	States, Next []int32
	Actions      []int32
	Terminal     []bool
	LogR         []float64
}

// Len is the number of transitions.
func (x *Transitions) Len() int { return len(x.Actions) }

// Reset empties the batch, keeping its storage.
func (x *Transitions) Reset() {
	x.States, x.Next, x.Actions, x.Terminal, x.LogR = x.States[:0], x.Next[:0], x.Actions[:0], x.Terminal[:0], x.LogR[:0]
}

// Add appends one transition.
func (x *Transitions) Add(s []int32, a int, next []int32, terminal bool, logR float64) {
	x.States = append(x.States, s...)
	x.Next = append(x.Next, next...)
	x.Actions = append(x.Actions, int32(a))
	x.Terminal = append(x.Terminal, terminal)
	x.LogR = append(x.LogR, logR)
}

// TransitionLoss computes Σ_i δ_i² / N over single transitions, writing δ
// into delta.
func (db *DB) TransitionLoss(env Env, m Model, x *Transitions, delta []float64, grad bool) float64 {
	n, w := x.Len(), env.StateLen()
	// Rows 0..n-1 are the sources, n..2n-1 the next states.
	db.states = append(append(db.states[:0], x.States[:n*w]...), x.Next[:n*w]...)
	db.next = growInt32(db.next, n)
	db.target = growF64(db.target, n)
	db.logPB = growF64(db.logPB, n)
	for i := range n {
		db.logPB[i] = -math.Log(float64(env.BackwardCount(x.States[i*w:(i+1)*w], int(x.Actions[i]))))
		if x.Terminal[i] {
			db.next[i], db.target[i] = -1, x.LogR[i]
		} else {
			db.next[i] = int32(n + i)
		}
	}
	return db.loss(env, m, db.states, 2*n, x.Actions, float64(n), delta[:n], grad)
}

// loss: transition i goes from row i by actions[i] to row next[i] (or to
// a terminal state with log F = target[i] when next[i] < 0).
func (db *DB) loss(env Env, m Model, states []int32, rows int, actions []int32, norm float64, delta []float64, grad bool) float64 {
	na, w := env.NumActions(), env.StateLen()
	out := m.Forward(states, rows)
	if out.Cols <= na {
		panic("discrete: DB needs a model with a state-flow head")
	}
	db.mask = growBool(db.mask, rows*na)
	for r := range rows {
		env.ForwardMask(states[r*w:(r+1)*w], db.mask[r*na:(r+1)*na])
	}
	nn.LogSoftmax(&db.logp, Narrow(&db.narrow, out, na), db.mask)
	logF := func(r int) float64 { return float64(out.Data[r*out.Cols+na]) }
	var loss float64
	for i, a := range actions[:len(delta)] {
		d := logF(i) + float64(db.logp.Data[i*na+int(a)]) - db.logPB[i]
		if nx := db.next[i]; nx >= 0 {
			d -= logF(int(nx))
		} else {
			d -= db.target[i]
		}
		delta[i] = d
		loss += d * d
	}
	loss /= norm
	if !grad {
		return loss
	}
	db.grad.Reset(rows, na, out.Cols)
	for i, a := range actions[:len(delta)] {
		g := float32(2 * delta[i] / norm)
		db.grad.AddLogP(i, int(a), g)
		db.grad.AddFlow(i, g)
		if nx := db.next[i]; nx >= 0 {
			db.grad.AddFlow(int(nx), -g)
		}
	}
	db.grad.Backward(m, &db.logp)
	return loss
}
