package envtest_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/discrete/envtest"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/env/sequence"
)

// Environments that break one promise each, wrapping a shipped one.

// extraStop is a hypergrid with a second stop action, NumActions-1 of the
// grid, which duplicates the first.
type extraStop struct{ *hypergrid.Grid }

func (g extraStop) NumActions() int { return g.Grid.NumActions() + 1 }
func (g extraStop) ForwardMask(s []int32, mask []bool) {
	g.Grid.ForwardMask(s, mask[:g.D+1])
	mask[g.D+1] = true
}
func (g extraStop) Step(s []int32, a int) bool { return g.Grid.Step(s, min(a, g.D)) }

// rootAppend is the prepend-append MDP whose mask also allows the appends
// at the root, where they give the same children as the prepends.
type rootAppend struct{ *sequence.Env }

func (e rootAppend) ForwardMask(s []int32, mask []bool) {
	e.Env.ForwardMask(s, mask)
	if e.IsInitial(s) {
		for c := range e.Alphabet() {
			mask[e.AppendAction(c)] = true
		}
	}
}

// earlyStop is the append-only MDP whose mask allows Stop below the full
// length: its leaves are short sequences, which its reward refuses.
type earlyStop struct{ *sequence.Env }

func (e earlyStop) ForwardMask(s []int32, mask []bool) {
	e.Env.ForwardMask(s, mask)
	mask[sequence.Stop] = s[1] == 0
}

// lazyMask is the append-only MDP whose ForwardMask only sets the valid
// entries, leaving the others as they were.
type lazyMask struct{ *sequence.Env }

func (e lazyMask) ForwardMask(s []int32, mask []bool) {
	m := make([]bool, len(mask))
	e.Env.ForwardMask(s, m)
	for a, ok := range m {
		if ok {
			mask[a] = true
		}
	}
}

// stopBack is a hypergrid whose BackStep returns the stop action where it
// should return the increment it undid.
type stopBack struct{ *hypergrid.Grid }

func (g stopBack) BackStep(s []int32, b int) int {
	g.Grid.BackStep(s, b)
	return g.D
}

// oneCount is a hypergrid whose BackwardCount is always 1.
type oneCount struct{ *hypergrid.Grid }

func (oneCount) BackwardCount(s []int32, a int) int { return 1 }

// bothDeletions is the prepend-append MDP whose BackwardMask allows both
// deletions of a repeated token, which lead to the same parent.
type bothDeletions struct{ *sequence.Env }

func (e bothDeletions) BackwardMask(s []int32, mask []bool) int {
	n := e.Env.BackwardMask(s, mask)
	if s[1] == 0 && s[0] >= 2 && !mask[2] {
		mask[2] = true
		n++
	}
	return n
}

// nanReward is a hypergrid whose log-reward is NaN at the cell (2, 1).
type nanReward struct{ *hypergrid.Grid }

func (g nanReward) LogReward(xs []int32, n int, out []float64) error {
	if err := g.Grid.LogReward(xs, n, out); err != nil {
		return err
	}
	w := g.StateLen()
	for i := range n {
		if xs[i*w] == 2 && xs[i*w+1] == 1 {
			out[i] = math.NaN()
		}
	}
	return nil
}

// batchReward is a hypergrid whose log-rewards move by 0.5 in a batch.
type batchReward struct{ *hypergrid.Grid }

func (g batchReward) LogReward(xs []int32, n int, out []float64) error {
	err := g.Grid.LogReward(xs, n, out)
	if n > 1 {
		for i := range out[:n] {
			out[i] += 0.5
		}
	}
	return err
}

// shiftedFeatures is a hypergrid whose feature indices are one too large,
// which overflows FeatureLen at x_{d-1} = H-1.
type shiftedFeatures struct{ *hypergrid.Grid }

func (g shiftedFeatures) Features(s []int32, idx []int32) {
	g.Grid.Features(s, idx)
	for i := range idx {
		idx[i]++
	}
}

// firstKey is a hypergrid whose terminal key is the first coordinate only.
type firstKey struct{ *hypergrid.Grid }

func (firstKey) TerminalKey(x []int32) uint64 { return uint64(x[0]) }

// panicky is a hypergrid whose BackStep panics at (2, 2).
type panicky struct{ *hypergrid.Grid }

func (g panicky) BackStep(s []int32, b int) int {
	if s[0] == 2 && s[1] == 2 {
		panic("no way back")
	}
	return g.Grid.BackStep(s, b)
}

// wrapAround is a hypergrid whose action 0 sends x_0 from 3 back to 0,
// making cycles (and making (0, 0) a child of (3, 0)).
type wrapAround struct{ *hypergrid.Grid }

func (g wrapAround) Step(s []int32, a int) bool {
	if a == 0 && s[0] == 3 {
		s[0] = 0
		return false
	}
	return g.Grid.Step(s, a)
}

// notInitial is a hypergrid whose IsInitial is always false.
type notInitial struct{ *hypergrid.Grid }

func (notInitial) IsInitial(s []int32) bool { return false }

// extraState is a hypergrid that claims one more non-terminal state than
// it has.
type extraState struct{ *hypergrid.Grid }

func (g extraState) NumStates() int { return g.Grid.NumStates() + 1 }

// dirtyFeatures is a hypergrid whose Features clears the stop flag of the
// state it is given.
type dirtyFeatures struct{ *hypergrid.Grid }

func (g dirtyFeatures) Features(s []int32, idx []int32) {
	g.Grid.Features(s, idx)
	s[g.D] = 0
}

// lazyBackMask is the prepend-append MDP whose BackwardMask only sets the
// valid entries.
type lazyBackMask struct{ *sequence.Env }

func (e lazyBackMask) BackwardMask(s []int32, mask []bool) int {
	m := make([]bool, len(mask))
	n := e.Env.BackwardMask(s, m)
	for b, ok := range m {
		if ok {
			mask[b] = true
		}
	}
	return n
}

// partialInit is a hypergrid whose Init leaves the stop flag as it was.
type partialInit struct{ *hypergrid.Grid }

func (g partialInit) Init(s []int32) { clear(s[:g.D]) }

// table is a small environment given by its transitions: state s (one
// word) has children next[s][a] by the forward actions a (-1: invalid);
// backward actions are the (parent, action) pairs leading to a state, in
// order, from every state of next, reachable or not.
type table struct {
	init     int32
	next     map[int32][]int32
	terminal map[int32]bool

	parents map[int32][][2]int32
	na, nb  int
}

func newTable(init int32, next map[int32][]int32, terminal ...int32) *table {
	t := &table{init: init, next: next, terminal: map[int32]bool{}, parents: map[int32][][2]int32{}}
	for _, x := range terminal {
		t.terminal[x] = true
	}
	keys := make([]int32, 0, len(next))
	for s := range next {
		keys = append(keys, s)
	}
	slices.Sort(keys)
	for _, s := range keys {
		t.na = max(t.na, len(next[s]))
		for a, c := range next[s] {
			if c >= 0 {
				t.parents[c] = append(t.parents[c], [2]int32{s, int32(a)})
				t.nb = max(t.nb, len(t.parents[c]))
			}
		}
	}
	return t
}

func (t *table) StateLen() int         { return 1 }
func (t *table) NumActions() int       { return t.na }
func (t *table) NumBackActions() int   { return t.nb }
func (t *table) FeatureLen() int       { return 100 }
func (t *table) FeaturesPerState() int { return 1 }
func (t *table) Init(s []int32)        { s[0] = t.init }
func (t *table) Features(s, idx []int32) {
	idx[0] = s[0]
}
func (t *table) ForwardMask(s []int32, mask []bool) {
	for a := range mask {
		mask[a] = a < len(t.next[s[0]]) && t.next[s[0]][a] >= 0
	}
}
func (t *table) Step(s []int32, a int) bool {
	s[0] = t.next[s[0]][a]
	return t.terminal[s[0]]
}
func (t *table) IsTerminal(s []int32) bool { return t.terminal[s[0]] }
func (t *table) IsInitial(s []int32) bool  { return s[0] == t.init }
func (t *table) BackwardMask(s []int32, mask []bool) int {
	n := len(t.parents[s[0]])
	for b := range mask {
		mask[b] = b < n
	}
	return n
}
func (t *table) BackStep(s []int32, b int) int {
	p := t.parents[s[0]][b]
	s[0] = p[0]
	return int(p[1])
}
func (t *table) BackwardCount(s []int32, a int) int { return len(t.parents[t.next[s[0]][a]]) }
func (t *table) LogReward(xs []int32, n int, out []float64) error {
	clear(out[:n])
	return nil
}

// counter counts up forever: it has no terminal state.
type counter struct{}

func (counter) StateLen() int                   { return 1 }
func (counter) NumActions() int                 { return 1 }
func (counter) NumBackActions() int             { return 1 }
func (counter) FeatureLen() int                 { return 0 }
func (counter) FeaturesPerState() int           { return 0 }
func (counter) Init(s []int32)                  { s[0] = 0 }
func (counter) Features(s, idx []int32)         {}
func (counter) ForwardMask(s []int32, m []bool) { m[0] = true }
func (counter) Step(s []int32, a int) bool      { s[0]++; return false }
func (counter) IsTerminal(s []int32) bool       { return false }
func (counter) IsInitial(s []int32) bool        { return s[0] == 0 }
func (counter) BackwardMask(s []int32, m []bool) int {
	m[0] = true
	return 1
}
func (counter) BackStep(s []int32, b int) int                    { s[0]--; return 0 }
func (counter) BackwardCount(s []int32, a int) int               { return 1 }
func (counter) LogReward(xs []int32, n int, out []float64) error { return nil }

// Each broken environment fails the check of the promise it breaks, with a
// message naming the state, in both the exhaustive and the random-walk
// modes where the walks can meet it.
func TestBroken(t *testing.T) {
	g2 := func(h int) *hypergrid.Grid { return grid(t, 2, h, hypergrid.Deceptive) }
	exhaustive := envtest.Options{}
	walks := envtest.Options{MaxStates: -1}
	for _, tc := range []struct {
		name string
		env  discrete.Env
		opt  envtest.Options
		want envtest.Property
		// state is the state the message names; text is a part of it.
		state, text string
	}{
		{"duplicate stop", extraStop{g2(5)}, exhaustive, envtest.DistinctChildren, "[0 0 0]", "actions 2 and 3 lead to the same child [0 0 1]"},
		{"duplicate stop/walks", extraStop{g2(5)}, walks, envtest.DistinctChildren, "[0 0 0]", "actions 2 and 3"},
		{"mask allows appends at the root", rootAppend{seq(t, true, 2, 3)}, exhaustive, envtest.DistinctChildren, "[0 0 -1 -1 -1]", "actions 1 and 3 lead to the same child [1 0 0 -1 -1]"},
		{"mask allows an early stop", earlyStop{seq(t, false, 2, 3)}, exhaustive, envtest.Rewards, "[1 1 0 -1 -1]", "LogReward panics"},
		{"mask leaves entries", lazyMask{seq(t, false, 2, 2)}, exhaustive, envtest.ForwardMasks, "[2 0 0 0]", "must write all 3 entries"},
		{"BackStep returns stop", stopBack{g2(5)}, exhaustive, envtest.Inverse, "[0 0 0]", "action 0 leads to [1 0 0], whose backward action 0 leads back here but returns forward action 2 instead of 0"},
		{"BackStep returns stop/child", stopBack{g2(5)}, exhaustive, envtest.Inverse, "[1 0 0]", "returns forward action 2, which leads from there to [0 0 1]"},
		{"BackStep returns stop/walks", stopBack{g2(5)}, walks, envtest.Inverse, "[0 0 0]", "returns forward action 2 instead of 0"},
		{"BackwardCount 1", oneCount{g2(5)}, exhaustive, envtest.BackwardMasks, "[1 0 0]", "BackwardCount(·, 1) is 1, but BackwardMask of the child [1 1 0] returns 2"},
		{"BackwardCount 1/P_B", oneCount{g2(5)}, exhaustive, envtest.PBSum, "[1 1 0]", "sums to 2 over the parents, not 1: [0 1 0] 1/1, [1 0 0] 1/1"},
		{"BackwardCount 1/walks", oneCount{g2(5)}, walks, envtest.BackwardMasks, "", "is 1, but BackwardMask of the child"},
		{"two deletions", bothDeletions{seq(t, true, 2, 3)}, exhaustive, envtest.PBSum, "[2 0 0 0 -1]", "backward actions 1 and 2 lead to the same parent [1 0 0 -1 -1]"},
		{"NaN reward", nanReward{g2(5)}, exhaustive, envtest.Rewards, "[2 1 1]", "the log-reward is NaN"},
		{"NaN reward/walks", nanReward{g2(5)}, walks, envtest.Rewards, "[2 1 1]", "the log-reward is NaN"},
		{"batch reward", batchReward{g2(4)}, exhaustive, envtest.Rewards, "", "alone but"},
		{"feature out of range", shiftedFeatures{g2(5)}, exhaustive, envtest.FeatureIndices, "[0 4 0]", "writes 10 into slot 1"},
		{"key collision", firstKey{g2(4)}, exhaustive, envtest.Terminals, "", "is also the key of the terminal state"},
		{"panic", panicky{g2(5)}, exhaustive, envtest.Inverse, "[2 2 0]", "BackStep(·, 0) panics: no way back"},
		{"cycle", wrapAround{g2(6)}, exhaustive, envtest.Termination, "", "the MDP has a cycle"},
		{"cycle/child initial", wrapAround{g2(6)}, exhaustive, envtest.Steps, "[3 0 0]", "action 0 leads to [0 0 0], for which IsInitial is true"},
		{"cycle/walks", wrapAround{g2(6)}, walks, envtest.Termination, "", "comes back to this state, so the MDP has a cycle"},
		{"NaN reward/truncated search", nanReward{g2(5)}, envtest.Options{MaxStates: 5}, envtest.Rewards, "[2 1 1]", "the log-reward is NaN"},
		{"Features modifies the state", dirtyFeatures{g2(4)}, exhaustive, envtest.FeatureIndices, "[0 0 1]", "Features modifies the state it is given (into [0 0 0])"},
		{"backward mask leaves entries", lazyBackMask{seq(t, true, 2, 3)}, exhaustive, envtest.BackwardMasks, "[1 0 0 -1 -1]", "must write all 3 entries"},
		{"Init leaves a word", partialInit{g2(4)}, exhaustive, envtest.InitState, "", "it must write all 3 words"},
		{"no actions", newTable(0, map[int32][]int32{}), exhaustive, envtest.Dimensions, "", "NumActions is 0; it must be at least 1"},
		{"not initial", notInitial{g2(4)}, exhaustive, envtest.InitState, "[0 0 0]", "IsInitial of the state Init writes is false"},
		{"NumStates", extraState{g2(4)}, exhaustive, envtest.Enumeration, "", "NumStates is 10, but 9 non-terminal states"},
		{"terminal count", g2(4), envtest.Options{Terminals: 10}, envtest.Terminals, "", "15 terminal states are reachable from Init, not Options.Terminals 10"},
		{"terminal count/not exhaustive", g2(4), envtest.Options{Terminals: 15, MaxStates: 10}, envtest.Terminals, "", "not counted"},
		{"longest trajectory", g2(5), envtest.Options{MaxSteps: 5}, envtest.Termination, "", "a trajectory of 7 steps from Init ends at this state, more than MaxSteps 5"},
		{"table cycle", newTable(0, map[int32][]int32{0: {1}, 1: {2}, 2: {1, 3}}, 3), exhaustive, envtest.Termination, "[1]", "the MDP has a cycle: [1] -0→ [2] -0→ [1]"},
		{"table cycle/walks", newTable(0, map[int32][]int32{0: {1}, 1: {2}, 2: {1, 3}}, 3), walks, envtest.Termination, "[1]", "comes back to this state"},
		{"unreachable parent", newTable(0, map[int32][]int32{0: {1}, 1: {2}, 9: {-1, 2}}, 2), exhaustive, envtest.Reachability, "[2]", "backward action 1 leads to [9], which is not reachable from Init"},
		{"no terminal", counter{}, envtest.Options{MaxStates: 50, MaxSteps: 100, Walks: 1}, envtest.Termination, "[100]", "taken MaxSteps 100 steps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := envtest.Run(tc.env, tc.opt)
			for _, f := range fs {
				if f.Property == tc.want && strings.Contains(f.Msg, tc.text) &&
					strings.HasPrefix(f.Msg, "envtest: "+tc.want.String()+": "+tc.state) {
					if tc.state != "" && fmt.Sprint(f.State) != tc.state {
						t.Errorf("Failure.State is %v, the message names %s", f.State, tc.state)
					}
					return
				}
			}
			t.Errorf("no %q failure at %s with %q among %d:", tc.want, tc.state, tc.text, len(fs))
			for _, f := range fs {
				t.Log(f.Msg)
			}
		})
	}
}
