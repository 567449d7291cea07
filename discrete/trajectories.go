package discrete

import (
	"math"

	"github.com/gfngo/gfn/nn"
)

// Trajectories is a batch of complete trajectories stored flat: trajectory
// b has transitions Off[b] ≤ t < Off[b+1], each a source state (StateLen
// words of States) and the action taken (Actions[t]); Final holds its
// terminal state.
type Trajectories struct {
	StateLen int
	Off      []int
	States   []int32
	Actions  []int32
	Final    []int32
	// LogPB is Σ log P_B(s_t | s_{t+1}) of each trajectory (uniform P_B).
	LogPB []float64
	// LogPFBehaviour is the log-probability under the policy that sampled
	// the trajectory (0 for backward-sampled ones); for diagnostics.
	LogPFBehaviour []float64
	// Finished lists the trajectories of a forward-sampled batch in the
	// order they reached their terminal state (ties by index).
	Finished []int32

	// Set when the sampling model recorded its forward passes
	// (SampleOptions.Record): Rec[t] is the row of RecLogits holding
	// transition t's logits, valid for RecBy while its generation is
	// still RecGen.
	Rec       []int32
	RecBy     Recorder
	RecGen    uint64
	RecLogits *nn.Matrix
	// CompanionBy and CompanionGen are set when SampleOptions.Companion
	// recorded its passes too: the same rows (Rec), valid while its
	// generation is still CompanionGen.
	CompanionBy  Recorder
	CompanionGen uint64

	scratchS, scratchA []int32
}

// recorded reports whether TB may reuse m's recorded pass for this batch.
func (t *Trajectories) recorded(m Model) bool {
	r, ok := m.(Recorder)
	if !ok || len(t.Rec) != len(t.Actions) {
		return false
	}
	return t.RecBy == r && r.Generation() == t.RecGen ||
		t.CompanionBy == r && r.Generation() == t.CompanionGen
}

// Len is the number of trajectories.
func (t *Trajectories) Len() int { return len(t.LogPB) }

// NumTransitions is the total number of transitions.
func (t *Trajectories) NumTransitions() int { return len(t.Actions) }

// FinalState returns terminal state b (aliasing the batch).
func (t *Trajectories) FinalState(b int) []int32 {
	return t.Final[b*t.StateLen : (b+1)*t.StateLen]
}

// State returns the source state of transition i (aliasing the batch).
func (t *Trajectories) State(i int) []int32 {
	return t.States[i*t.StateLen : (i+1)*t.StateLen]
}

// Reset empties the batch, keeping its storage.
func (t *Trajectories) Reset(stateLen int) {
	t.StateLen = stateLen
	t.Off = append(t.Off[:0], 0)
	t.States, t.Actions, t.Final = t.States[:0], t.Actions[:0], t.Final[:0]
	t.LogPB, t.LogPFBehaviour = t.LogPB[:0], t.LogPFBehaviour[:0]
	t.Rec, t.RecBy, t.RecLogits = t.Rec[:0], nil, nil
	t.CompanionBy = nil
	t.Finished = t.Finished[:0]
}

// add appends one trajectory and computes its log P_B.
func (t *Trajectories) add(env Env, states, actions []int32, final []int32, logPF float64) {
	t.States = append(t.States, states...)
	t.Actions = append(t.Actions, actions...)
	t.Final = append(t.Final, final...)
	t.Off = append(t.Off, len(t.Actions))
	var lpb float64
	w := t.StateLen
	for i, a := range actions {
		lpb -= math.Log(float64(env.BackwardCount(states[i*w:(i+1)*w], int(a))))
	}
	t.LogPB = append(t.LogPB, lpb)
	t.LogPFBehaviour = append(t.LogPFBehaviour, logPF)
}

// Append adds every trajectory of o to t (t loses any recording).
func (t *Trajectories) Append(o *Trajectories) {
	t.Rec, t.RecBy, t.RecLogits = t.Rec[:0], nil, nil
	t.CompanionBy = nil
	base := len(t.Actions)
	t.States = append(t.States, o.States...)
	t.Actions = append(t.Actions, o.Actions...)
	t.Final = append(t.Final, o.Final...)
	for _, off := range o.Off[1:] {
		t.Off = append(t.Off, base+off)
	}
	t.LogPB = append(t.LogPB, o.LogPB...)
	t.LogPFBehaviour = append(t.LogPFBehaviour, o.LogPFBehaviour...)
}

// AddJoined appends the trajectory made of the first cut transitions of
// trajectory pb of p followed by all of trajectory qb of q (which must
// start where the cut leaves off), recomputing log P_B.
func (t *Trajectories) AddJoined(env Env, p *Trajectories, pb, cut int, q *Trajectories, qb int) {
	w := t.StateLen
	p0, q0, q1 := p.Off[pb], q.Off[qb], q.Off[qb+1]
	t.scratchS = append(append(t.scratchS[:0], p.States[p0*w:(p0+cut)*w]...), q.States[q0*w:q1*w]...)
	t.scratchA = append(append(t.scratchA[:0], p.Actions[p0:p0+cut]...), q.Actions[q0:q1]...)
	t.add(env, t.scratchS, t.scratchA, q.FinalState(qb), 0)
}

// AddFrom appends a copy of trajectory b of o.
func (t *Trajectories) AddFrom(env Env, o *Trajectories, b int) {
	w := t.StateLen
	o0, o1 := o.Off[b], o.Off[b+1]
	t.add(env, o.States[o0*w:o1*w], o.Actions[o0:o1], o.FinalState(b), o.LogPFBehaviour[b])
}
