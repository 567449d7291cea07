package sequence

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
)

// LogReward writes log R(x) into out[i] for the n sequences x given as rows
// of Length tokens in [0, Alphabet) (xs holds n·Length tokens and is only
// valid during the call). A non-nil error stops the caller; the Env also
// rejects any log R that is NaN or ±Inf.
type LogReward func(xs []int32, n int, out []float64) error

// Env is a sequence MDP, prepend-append or append-only. It implements
// discrete.Env and discrete.TerminalKeyer. Its methods are safe for
// concurrent use.
type Env struct {
	a, n   int
	append bool // the append-only MDP
	r      LogReward
	keyOK  bool      // A^n ≤ 2^64
	tokens sync.Pool // *[]int32 scratch of LogReward
}

// Stop is the forward action that turns a full-length string into its leaf,
// in both MDPs.
const Stop = 0

// NewPrependAppend returns the prepend-append MDP over alphabet tokens of
// sequences of the given length, with log-reward r. It returns an error for
// alphabet < 1, length < 1, a nil r, or sizes whose features overflow int32.
func NewPrependAppend(alphabet, length int, r LogReward) (*Env, error) {
	return newEnv(alphabet, length, r, false)
}

// NewAppend returns the append-only (autoregressive) MDP, with the same
// checks as NewPrependAppend.
func NewAppend(alphabet, length int, r LogReward) (*Env, error) {
	return newEnv(alphabet, length, r, true)
}

func newEnv(alphabet, length int, r LogReward, appendOnly bool) (*Env, error) {
	switch {
	case alphabet < 1:
		return nil, fmt.Errorf("sequence: alphabet size %d is invalid: it must be at least 1", alphabet)
	case length < 1:
		return nil, fmt.Errorf("sequence: length %d is invalid: it must be at least 1", length)
	case r == nil:
		return nil, fmt.Errorf("sequence: the log-reward function is nil")
	case int64(alphabet)*int64(length) > math.MaxInt32-2:
		return nil, fmt.Errorf("sequence: alphabet %d × length %d features overflow int32", alphabet, length)
	}
	e := &Env{a: alphabet, n: length, append: appendOnly, r: r, keyOK: length <= MaxKeyLength(alphabet)}
	e.tokens.New = func() any { return new([]int32) }
	return e, nil
}

// Alphabet is the number of tokens A.
func (e *Env) Alphabet() int { return e.a }

// Length is the length n of the finished sequences.
func (e *Env) Length() int { return e.n }

// PrependAppend reports whether e is the prepend-append MDP (false: the
// append-only one).
func (e *Env) PrependAppend() bool { return !e.append }

// String names the MDP: "sequence(prepend-append, A=4, n=8)".
func (e *Env) String() string {
	kind := "prepend-append"
	if e.append {
		kind = "append"
	}
	return fmt.Sprintf("sequence(%s, A=%d, n=%d)", kind, e.a, e.n)
}

// PrependAction is the forward action Prepend c of the prepend-append MDP.
// It panics for the append-only MDP or c outside the alphabet.
func (e *Env) PrependAction(c int) int {
	if e.append || c < 0 || c >= e.a {
		panic(fmt.Sprintf("sequence: no prepend action for token %d in %v", c, e))
	}
	return 1 + c
}

// AppendAction is the forward action Append c. It panics for c outside the
// alphabet.
func (e *Env) AppendAction(c int) int {
	if c < 0 || c >= e.a {
		panic(fmt.Sprintf("sequence: no append action for token %d in %v", c, e))
	}
	if e.append {
		return 1 + c
	}
	return 1 + e.a + c
}

// Tokens returns the tokens of state s (a subslice of s, not a copy).
func (e *Env) Tokens(s []int32) []int32 { return s[2 : 2+s[0]] }

// SetTerminal writes into s the terminal (leaf) state of the sequence x,
// for instance to rebuild trajectories from stored sequences. It panics if
// x does not have Length tokens in [0, Alphabet).
func (e *Env) SetTerminal(s []int32, x []int32) {
	if len(x) != e.n {
		panic(fmt.Sprintf("sequence: SetTerminal of %d tokens in %v", len(x), e))
	}
	for _, c := range x {
		if c < 0 || int(c) >= e.a {
			panic(fmt.Sprintf("sequence: SetTerminal: token %d outside the alphabet of %v", c, e))
		}
	}
	s[0], s[1] = int32(e.n), 1
	copy(s[2:2+e.n], x)
}

// StateLen implements discrete.Env: n+2 words.
func (e *Env) StateLen() int { return e.n + 2 }

// NumActions implements discrete.Env: 1+2A (prepend-append) or 1+A.
func (e *Env) NumActions() int {
	if e.append {
		return 1 + e.a
	}
	return 1 + 2*e.a
}

// NumBackActions implements discrete.Env: 3 (UnStop, DelFirst, DelLast) or
// 2 (UnStop, DelLast).
func (e *Env) NumBackActions() int {
	if e.append {
		return 2
	}
	return 3
}

// FeatureLen implements discrete.Featurizer: n·A.
func (e *Env) FeatureLen() int { return e.n * e.a }

// FeaturesPerState implements discrete.Featurizer: n.
func (e *Env) FeaturesPerState() int { return e.n }

// Init implements discrete.Env: the empty non-leaf string.
func (e *Env) Init(s []int32) {
	s[0], s[1] = 0, 0
	for i := range e.n {
		s[2+i] = -1
	}
}

// Features implements discrete.Featurizer: token c at position i is index i·A+c.
func (e *Env) Features(s []int32, idx []int32) {
	l := int(s[0])
	for i := range e.n {
		idx[i] = -1
		if i < l {
			idx[i] = int32(i*e.a) + s[2+i]
		}
	}
}

// repeated reports whether the non-empty token slice t is one token
// repeated (then s[1:] = s[:-1], and appending that token equals
// prepending it).
func repeated(t []int32) bool {
	for _, c := range t[1:] {
		if c != t[0] {
			return false
		}
	}
	return true
}

// ForwardMask implements discrete.Env. A leaf has no valid action.
func (e *Env) ForwardMask(s []int32, mask []bool) {
	na := e.NumActions()
	clear(mask[:na])
	l := int(s[0])
	switch {
	case s[1] != 0:
	case l == e.n:
		mask[Stop] = true
	case e.append:
		for c := range e.a {
			mask[1+c] = true
		}
	default:
		for c := range e.a {
			mask[1+c] = true
		}
		if l == 0 {
			return // Append c = Prepend c at the root
		}
		for c := range e.a {
			mask[1+e.a+c] = true
		}
		if t := s[2 : 2+l]; repeated(t) {
			mask[1+e.a+int(t[0])] = false
		}
	}
}

// Step implements discrete.Env. An invalid action is a programmer error;
// it is not checked beyond what indexing catches.
func (e *Env) Step(s []int32, a int) bool {
	if a == Stop {
		s[1] = 1
		return true
	}
	l := int(s[0])
	c := int32(a - 1)
	switch {
	case e.append:
		s[2+l] = c
	case c < int32(e.a): // prepend
		copy(s[3:3+l], s[2:2+l])
		s[2] = c
	default:
		s[2+l] = c - int32(e.a)
	}
	s[0]++
	return false
}

// IsTerminal implements discrete.Env: the leaves are the terminal states.
func (e *Env) IsTerminal(s []int32) bool { return s[1] != 0 }

// IsInitial implements discrete.Env.
func (e *Env) IsInitial(s []int32) bool { return s[0] == 0 && s[1] == 0 }

// BackwardMask implements discrete.Env.
func (e *Env) BackwardMask(s []int32, mask []bool) int {
	clear(mask[:e.NumBackActions()])
	l := int(s[0])
	switch {
	case s[1] != 0:
		mask[0] = true // UnStop
		return 1
	case e.append:
		mask[1] = true // DelLast
		return 1
	case l == 1 || repeated(s[2:2+l]):
		mask[1] = true // DelFirst; DelLast gives the same parent
		return 1
	}
	mask[1], mask[2] = true, true
	return 2
}

// BackStep implements discrete.Env. The returned forward action is the
// valid one of the parent: Prepend s[0] for DelFirst, Append s[-1] for
// DelLast (valid whenever DelLast is), Stop for UnStop.
func (e *Env) BackStep(s []int32, b int) int {
	l := int(s[0])
	switch {
	case b == 0:
		s[1] = 0
		return Stop
	case e.append:
		c := s[1+l]
		s[1+l] = -1
		s[0]--
		return 1 + int(c)
	case b == 1:
		c := s[2]
		copy(s[2:1+l], s[3:2+l])
		s[1+l] = -1
		s[0]--
		return 1 + int(c)
	default:
		c := s[1+l]
		s[1+l] = -1
		s[0]--
		return 1 + e.a + int(c)
	}
}

// BackwardCount implements discrete.Env without building the child.
func (e *Env) BackwardCount(s []int32, a int) int {
	l := int(s[0])
	if a == Stop || e.append || l == 0 {
		return 1
	}
	// The child has length l+1 ≥ 2 and one parent iff it is one token
	// repeated: s is that token repeated and the action adds it again.
	c := int32((a - 1) % e.a)
	for _, t := range s[2 : 2+l] {
		if t != c {
			return 2
		}
	}
	return 1
}

// LogReward implements discrete.Env: it calls the user's log-reward on
// the sequences of the n terminal states in xs and returns an error naming
// the row for a log R that is NaN or ±Inf. A row that is not a terminal
// state is a programmer error and panics.
func (e *Env) LogReward(xs []int32, n int, out []float64) error {
	w := e.StateLen()
	p := e.tokens.Get().(*[]int32)
	defer e.tokens.Put(p)
	if cap(*p) < n*e.n {
		*p = make([]int32, n*e.n)
	}
	buf := (*p)[:n*e.n]
	for i := range n {
		x := xs[i*w : (i+1)*w]
		if x[1] == 0 || int(x[0]) != e.n {
			panic(fmt.Sprintf("sequence: LogReward of row %d, %v, which is not a terminal state", i, x))
		}
		copy(buf[i*e.n:(i+1)*e.n], x[2:])
	}
	if err := e.r(buf, n, out[:n]); err != nil {
		return fmt.Errorf("sequence: log-reward: %w", err)
	}
	for i, v := range out[:n] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("sequence: log-reward %v of row %d (sequence %v) is invalid: it must be finite", v, i, xs[i*w+2:(i+1)*w])
		}
	}
	return nil
}

// MaxKeyLength is the largest length n whose A^n sequences of an
// alphabet of A tokens all have a TerminalKey (A^n ≤ 2^64; any length for
// A = 1).
func MaxKeyLength(alphabet int) int {
	if alphabet <= 1 {
		return math.MaxInt
	}
	n := 0
	for k := uint64(1); ; n++ {
		hi, lo := bits.Mul64(k, uint64(alphabet))
		if hi != 0 {
			if hi == 1 && lo == 0 { // A^(n+1) = 2^64 still fits: keys go up to 2^64-1
				n++
			}
			return n
		}
		k = lo
	}
}

// KeyFits reports whether every sequence has a TerminalKey: A^n ≤ 2^64.
func (e *Env) KeyFits() bool { return e.keyOK }

// TerminalKey implements discrete.TerminalKeyer: the tokens of terminal x
// as a base-A number, the first token most significant. It panics when
// KeyFits is false.
func (e *Env) TerminalKey(x []int32) uint64 {
	if !e.keyOK {
		panic(fmt.Sprintf("sequence: %v has %d^%d sequences, more than 64-bit keys", e, e.a, e.n))
	}
	var k uint64
	for _, c := range x[2 : 2+e.n] {
		k = k*uint64(e.a) + uint64(c)
	}
	return k
}

// TerminalOf writes into s the terminal state whose key is k (the inverse
// of TerminalKey). It panics when KeyFits is false.
func (e *Env) TerminalOf(k uint64, s []int32) {
	if !e.keyOK {
		panic(fmt.Sprintf("sequence: %v has %d^%d sequences, more than 64-bit keys", e, e.a, e.n))
	}
	s[0], s[1] = int32(e.n), 1
	for i := e.n - 1; i >= 0; i-- {
		s[2+i] = int32(k % uint64(e.a))
		k /= uint64(e.a)
	}
}
