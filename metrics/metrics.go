package metrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/nn"
)

// MaxExactStates bounds the number of non-terminal states the exact
// dynamic programme will visit (d=4, H=32 has 923,521).
const MaxExactStates = 4_000_000

// ErrTooLarge is returned when a state space is too large to enumerate.
var ErrTooLarge = errors.New("metrics: state space too large to enumerate")

// Enumerable is an environment whose states and terminal states can be
// listed. Non-terminal states must be numbered in a topological order
// (every action leads to a larger index).
type Enumerable interface {
	discrete.Env
	NumStates() int // -1 if it does not fit an int
	State(i int, s []int32)
	StateIndex(s []int32) int
	NumTerminals() float64
	Terminal(i int, x []int32)
	TerminalIndex(x []int32) int
}

func checkSize(env Enumerable) (states, terminals int, err error) {
	n := env.NumStates()
	if n < 0 || n > MaxExactStates || env.NumTerminals() > 2*MaxExactStates {
		return 0, 0, fmt.Errorf("%w: %v terminal states (limit %d states)", ErrTooLarge, env.NumTerminals(), MaxExactStates)
	}
	return n, int(env.NumTerminals()), nil
}

// Target returns R(x)/Z for every terminal state (by TerminalIndex) and
// log Z, normalising in log space.
func Target(env Enumerable) (p []float64, logZ float64, err error) {
	_, nt, err := checkSize(env)
	if err != nil {
		return nil, 0, err
	}
	w := env.StateLen()
	const block = 4096
	xs := make([]int32, block*w)
	p = make([]float64, nt)
	for lo := 0; lo < nt; lo += block {
		hi := min(lo+block, nt)
		for i := lo; i < hi; i++ {
			env.Terminal(i, xs[(i-lo)*w:(i-lo+1)*w])
		}
		if err := env.LogReward(xs, hi-lo, p[lo:hi]); err != nil {
			return nil, 0, err
		}
	}
	logZ = logSumExp(p)
	for i, lr := range p {
		p[i] = math.Exp(lr - logZ)
	}
	return p, logZ, nil
}

func logSumExp(v []float64) float64 {
	mx := math.Inf(-1)
	for _, x := range v {
		mx = max(mx, x)
	}
	if math.IsInf(mx, -1) {
		return mx
	}
	var s float64
	for _, x := range v {
		s += math.Exp(x - mx)
	}
	return mx + math.Log(s)
}

// Terminating returns the exact terminating distribution P_F^T of model m
// (no exploration, temperature 1) over the terminal states, by pushing
// probability mass through the DAG in topological order. Policies are
// evaluated in blocks of states, which is exact because a state's policy
// does not depend on the mass reaching it.
func Terminating(env Enumerable, m discrete.Model) ([]float64, error) {
	ns, nt, err := checkSize(env)
	if err != nil {
		return nil, err
	}
	w, na := env.StateLen(), env.NumActions()
	const block = 4096
	states := make([]int32, block*w)
	mask := make([]bool, block*na)
	child := make([]int32, w)
	reach := make([]float64, ns)
	term := make([]float64, nt)
	var logp, narrow nn.Matrix
	s0 := make([]int32, w)
	env.Init(s0)
	reach[env.StateIndex(s0)] = 1
	for lo := 0; lo < ns; lo += block {
		hi := min(lo+block, ns)
		rows := hi - lo
		for i := lo; i < hi; i++ {
			r := i - lo
			env.State(i, states[r*w:(r+1)*w])
			env.ForwardMask(states[r*w:(r+1)*w], mask[r*na:(r+1)*na])
		}
		nn.LogSoftmax(&logp, discrete.Narrow(&narrow, m.Forward(states[:rows*w], rows), na), mask[:rows*na])
		for r := range rows {
			p := reach[lo+r]
			if p == 0 {
				continue
			}
			st := states[r*w : (r+1)*w]
			for a, lp := range logp.Row(r) {
				if !mask[r*na+a] {
					continue
				}
				q := p * math.Exp(float64(lp))
				copy(child, st)
				if env.Step(child, a) {
					term[env.TerminalIndex(child)] += q
				} else {
					reach[env.StateIndex(child)] += q
				}
			}
		}
	}
	return term, nil
}

// Empirical returns the normalised histogram of n terminal states xs over
// the terminal indices of env.
func Empirical(env Enumerable, xs []int32, n int) ([]float64, error) {
	_, nt, err := checkSize(env)
	if err != nil {
		return nil, err
	}
	w := env.StateLen()
	p := make([]float64, nt)
	for i := range n {
		p[env.TerminalIndex(xs[i*w:(i+1)*w])]++
	}
	for i := range p {
		p[i] /= float64(n)
	}
	return p, nil
}

// Distances between a model distribution p and the target q.
type Distances struct {
	// L1 is the paper's metric: mean over terminal states of |p - q|.
	L1 float64 `json:"l1"`
	// TV is the total variation, ½·Σ|p - q|.
	TV float64 `json:"tv"`
	// KL is KL(q‖p) = Σ q·log(q/p); +Inf when p misses mass of q.
	KL float64 `json:"kl"`
}

// Compare computes the distances of p from the target q.
func Compare(p, q []float64) Distances {
	if len(p) != len(q) {
		panic(fmt.Sprintf("metrics: comparing distributions of %d and %d states", len(p), len(q)))
	}
	var l1, kl float64
	for i := range p {
		l1 += math.Abs(p[i] - q[i])
		if q[i] > 0 {
			kl += q[i] * (math.Log(q[i]) - math.Log(p[i]))
		}
	}
	return Distances{L1: l1 / float64(len(p)), TV: l1 / 2, KL: kl}
}

// MarshalJSON writes non-finite values (a KL of +Inf) as null, which JSON
// can represent and encoding/json otherwise refuses.
func (d Distances) MarshalJSON() ([]byte, error) {
	f := func(v float64) any {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return v
	}
	return json.Marshal(map[string]any{"l1": f(d.L1), "tv": f(d.TV), "kl": f(d.KL)})
}
