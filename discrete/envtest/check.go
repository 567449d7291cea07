package envtest

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gfngo/gfn/discrete"
)

// checker holds the state of one Run.
type checker struct {
	env   discrete.Env
	opt   Options
	keyer discrete.TerminalKeyer
	feat  discrete.Featurizer // nil: the environment has no features to check

	w, na, nb, nf, fl int
	maxSteps          int

	failures []Failure
	msgs     map[string]bool
	nfail    int  // failures found, repeated messages included
	stopped  bool // MaxFailures reached

	// The env call in progress, to name a panic.
	prop Property
	what string
	on   []int32
	arg  int

	// Scratch.
	s0, cur, orig, par, par2, buf []int32
	fmask, fmask2, bmask, bmask2  []bool
	emask, pmask                  []bool
	idx, idx2                     []int32
	keyb                          []byte
	kidSet, parSet                map[string]int

	// The children of the state last checked, and whether it is terminal.
	kids    []int32
	kidActs []int
	isTerm  bool

	// Terminal states: keys met, and the batch of log-rewards to compare.
	keys       map[uint64][]int32
	rxs, rsave []int32
	rlr, rout  []float64
	nbatch     int

	// A walk reached MaxSteps: the others would repeat the failure.
	tooLong bool

	// The exhaustive search: the states reached (nil outside the search)
	// and the parents found before the search reached them.
	visited map[string]int32
	pending []pendingParent
}

// pendingParent is a parent found by BackStep during an exhaustive search
// before the search reached it.
type pendingParent struct {
	parent, child []int32
	b             int
}

func newChecker(env discrete.Env, opt Options) *checker {
	if opt.MaxStates == 0 {
		opt.MaxStates = DefaultMaxStates
	}
	if opt.Walks == 0 {
		opt.Walks = DefaultWalks
	}
	if opt.PBTol == 0 {
		opt.PBTol = DefaultPBTol
	}
	if opt.RewardTol == 0 {
		opt.RewardTol = DefaultRewardTol
	}
	if opt.RewardBatch <= 0 {
		opt.RewardBatch = DefaultRewardBatch
	}
	if opt.MaxFailures <= 0 {
		opt.MaxFailures = DefaultMaxFailures
	}
	c := &checker{env: env, opt: opt, msgs: map[string]bool{}, maxSteps: opt.MaxSteps}
	if c.maxSteps <= 0 {
		c.maxSteps = DefaultMaxSteps
	}
	c.keyer, _ = env.(discrete.TerminalKeyer)
	return c
}

// fmtState prints s with the user's printer or as its words.
func (c *checker) fmtState(s []int32) string {
	if s == nil {
		return "<none>"
	}
	if c.opt.Format != nil {
		return c.opt.Format(s)
	}
	return fmt.Sprint(s)
}

// fail records a failure of p at state s (nil: none); the message is
// "envtest: p: " followed by the formatted text, which names the state.
func (c *checker) fail(p Property, s []int32, format string, args ...any) {
	c.nfail++
	if c.stopped {
		return
	}
	msg := "envtest: " + p.String() + ": " + fmt.Sprintf(format, args...)
	if c.msgs[msg] {
		return
	}
	c.msgs[msg] = true
	c.failures = append(c.failures, Failure{Property: p, State: slices.Clone(s), Msg: msg})
	if len(c.failures) >= c.opt.MaxFailures {
		c.stopped = true
	}
}

// enter records the env call about to be made, for naming a panic: method
// what with argument arg (-1: none) on state on, for property p.
func (c *checker) enter(p Property, what string, on []int32, arg int) {
	c.prop, c.what, c.on, c.arg = p, what, on, arg
}

func (c *checker) call() string {
	if c.arg < 0 {
		return c.what
	}
	return fmt.Sprintf("%s(·, %d)", c.what, c.arg)
}

// guard runs f and reports a panic of it as a failure of the call in
// progress. It reports whether f returned normally.
func (c *checker) guard(f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if c.on == nil {
				c.fail(c.prop, nil, "%s panics: %v", c.call(), r)
			} else {
				c.fail(c.prop, c.on, "%s: %s panics: %v", c.fmtState(c.on), c.call(), r)
			}
			ok = false
		}
	}()
	f()
	return true
}

// intact reports a call that modified the state s it was given, a copy of
// c.orig, and restores it.
func (c *checker) intact(s []int32) {
	if !slices.Equal(s, c.orig) {
		c.fail(c.prop, c.orig, "%s: %s modifies the state it is given (into %s)", c.fmtState(c.orig), c.call(), c.fmtState(s))
		copy(s, c.orig)
	}
}

// key returns the bytes of s as a map key, valid until the next call.
func (c *checker) key(s []int32) []byte {
	c.keyb = c.keyb[:0]
	for _, v := range s {
		c.keyb = binary.LittleEndian.AppendUint32(c.keyb, uint32(v))
	}
	return c.keyb
}

func (c *checker) run() {
	if !c.dimensions() {
		return
	}
	if !c.initState() {
		return
	}
	complete := false
	if c.opt.MaxStates > 0 {
		complete = c.search()
	}
	if !complete {
		switch {
		case c.opt.Terminals <= 0:
		case c.opt.MaxStates < 0:
			c.fail(Terminals, nil, "the terminal states are not counted (Options.Terminals %d): the exhaustive search is off (MaxStates < 0)", c.opt.Terminals)
		default:
			c.fail(Terminals, nil, "the terminal states are not counted (Options.Terminals %d): more than MaxStates %d states are reachable from Init, so the search is not exhaustive", c.opt.Terminals, c.opt.MaxStates)
		}
		c.walks()
	}
	c.guard(c.flushRewards)
}

func (c *checker) dimensions() bool {
	e := c.env
	ok := c.guard(func() {
		c.enter(Dimensions, "StateLen", nil, -1)
		c.w = e.StateLen()
		c.enter(Dimensions, "NumActions", nil, -1)
		c.na = e.NumActions()
		c.enter(Dimensions, "NumBackActions", nil, -1)
		c.nb = e.NumBackActions()
		if f, ok := e.(discrete.Featurizer); ok {
			c.feat = f
			c.enter(Dimensions, "FeatureLen", nil, -1)
			c.fl = f.FeatureLen()
			c.enter(Dimensions, "FeaturesPerState", nil, -1)
			c.nf = f.FeaturesPerState()
		}
	})
	if !ok {
		return false
	}
	before := c.nfail
	for _, d := range []struct {
		name string
		v    int
		min  int
	}{{"StateLen", c.w, 1}, {"NumActions", c.na, 1}, {"NumBackActions", c.nb, 1}, {"FeatureLen", c.fl, 0}, {"FeaturesPerState", c.nf, 0}} {
		if d.v < d.min {
			c.fail(Dimensions, nil, "%s is %d; it must be at least %d", d.name, d.v, d.min)
		}
	}
	if c.nfail != before {
		return false
	}
	w := c.w
	c.s0, c.cur, c.orig = make([]int32, w), make([]int32, w), make([]int32, w)
	c.par, c.par2, c.buf = make([]int32, w), make([]int32, w), make([]int32, w)
	c.fmask, c.fmask2, c.emask = make([]bool, c.na), make([]bool, c.na), make([]bool, c.na)
	c.pmask = make([]bool, c.na)
	c.bmask, c.bmask2 = make([]bool, c.nb), make([]bool, c.nb)
	c.idx, c.idx2 = make([]int32, c.nf), make([]int32, c.nf)
	c.kidSet, c.parSet = map[string]int{}, map[string]int{}
	c.keys = map[uint64][]int32{}
	c.rxs, c.rsave = make([]int32, c.opt.RewardBatch*w), make([]int32, c.opt.RewardBatch*w)
	c.rlr, c.rout = make([]float64, c.opt.RewardBatch), make([]float64, c.opt.RewardBatch)
	return true
}

// initState checks Init, IsInitial and IsTerminal of s0 and keeps s0.
func (c *checker) initState() bool {
	e, w := c.env, c.w
	a, b := make([]int32, w), make([]int32, w)
	for i := range w {
		a[i], b[i] = 0x5eed5eed, -7
	}
	return c.guard(func() {
		c.enter(InitState, "Init", nil, -1)
		e.Init(a[:w:w])
		e.Init(b[:w:w])
		if !slices.Equal(a, b) {
			c.fail(InitState, a, "%s: Init writes this state into a buffer filled with %d but %s into one filled with -7: it must write all %d words, the same each time", c.fmtState(a), 0x5eed5eed, c.fmtState(b), w)
		}
		copy(c.s0, a)
		copy(c.orig, a)
		c.enter(InitState, "IsInitial", a, -1)
		if !e.IsInitial(a[:w:w]) {
			c.fail(InitState, a, "%s: IsInitial of the state Init writes is false", c.fmtState(a))
		}
		c.intact(a)
		c.enter(InitState, "IsTerminal", a, -1)
		if e.IsTerminal(a[:w:w]) {
			c.fail(InitState, a, "%s: the state Init writes is terminal", c.fmtState(a))
		}
		c.intact(a)
	})
}

// checkState runs every local check at s (which it may modify and
// restore) and leaves its children in c.kids and c.kidActs. It reports
// whether the checks ran to the end (no panic) and whether they found no
// failure.
func (c *checker) checkState(s []int32) (done, clean bool) {
	before := c.nfail
	c.kids, c.kidActs, c.isTerm = c.kids[:0], c.kidActs[:0], false
	copy(c.orig, s)
	done = c.guard(func() { c.stateChecks(s) })
	return done, done && c.nfail == before
}

func (c *checker) stateChecks(s []int32) {
	e, w := c.env, c.w
	c.features(s)
	c.enter(Steps, "IsInitial", s, -1)
	initial := e.IsInitial(s[:w:w])
	c.intact(s)
	c.enter(Steps, "IsTerminal", s, -1)
	c.isTerm = e.IsTerminal(s[:w:w])
	c.intact(s)
	if !initial {
		c.backward(s)
	}
	if c.isTerm {
		c.terminal(s)
	} else {
		c.forward(s)
	}
}

func (c *checker) features(s []int32) {
	if c.nf == 0 {
		return
	}
	e, w := c.feat, c.w
	for i := range c.idx {
		c.idx[i], c.idx2[i] = -2, -3
	}
	c.enter(FeatureIndices, "Features", s, -1)
	e.Features(s[:w:w], c.idx)
	c.intact(s)
	copy(c.buf, s)
	e.Features(c.buf[:w:w], c.idx2)
	for i, v := range c.idx {
		if v != -1 && (v < 0 || int(v) >= c.fl) {
			c.fail(FeatureIndices, s, "%s: Features writes %d into slot %d, which is neither -1 nor in [0, FeatureLen %d) (it must write all %d slots)", c.fmtState(s), v, i, c.fl, c.nf)
			return
		}
	}
	if !slices.Equal(c.idx, c.idx2) {
		c.fail(FeatureIndices, s, "%s: Features gives %v and %v for two equal copies of the state", c.fmtState(s), c.idx, c.idx2)
	}
}

// forward checks the forward mask at the non-terminal s, the children of
// its valid actions and their backward steps to s.
func (c *checker) forward(s []int32) {
	e, w := c.env, c.w
	m1, m2 := c.fmask, c.fmask2
	for a := range m1 {
		m1[a], m2[a] = true, false
	}
	c.enter(ForwardMasks, "ForwardMask", s, -1)
	e.ForwardMask(s[:w:w], m1)
	c.intact(s)
	e.ForwardMask(s[:w:w], m2)
	c.intact(s)
	for a := range m1 {
		if m1[a] != m2[a] {
			c.fail(ForwardMasks, s, "%s: ForwardMask leaves the entry of action %d as it was; the samplers reuse mask buffers, so it must write all %d entries", c.fmtState(s), a, c.na)
			break
		}
	}
	clear(c.kidSet)
	for a, ok := range m2 {
		if !ok {
			continue
		}
		n := len(c.kids)
		c.kids = append(c.kids, s...)
		kid := c.kids[n : n+w : n+w]
		c.enter(Steps, "Step", s, a)
		term := e.Step(kid, a)
		c.intact(s)
		c.enter(Steps, "IsInitial", kid, -1)
		if e.IsInitial(kid) {
			c.fail(Steps, s, "%s: action %d leads to %s, for which IsInitial is true", c.fmtState(s), a, c.fmtState(kid))
			c.kids = c.kids[:n]
			continue
		}
		c.enter(Steps, "IsTerminal", kid, -1)
		if t := e.IsTerminal(kid); t != term {
			c.fail(Steps, s, "%s: Step(·, %d) reports terminal %v, but IsTerminal of the child %s is %v", c.fmtState(s), a, term, c.fmtState(kid), t)
		}
		k := string(c.key(kid))
		if b, dup := c.kidSet[k]; dup {
			c.fail(DistinctChildren, s, "%s: actions %d and %d lead to the same child %s; all but one of them must be masked", c.fmtState(s), b, a, c.fmtState(kid))
			c.kids = c.kids[:n]
			continue
		}
		c.kidSet[k] = a
		c.kidActs = append(c.kidActs, a)
		c.edge(s, a, kid)
	}
	if !slices.Contains(m2, true) {
		c.fail(ForwardMasks, s, "%s: the state is not terminal but has no valid forward action", c.fmtState(s))
	}
}

// edge checks BackwardCount(s, a) against the child kid's backward mask
// and that a backward action of kid leads back to s, returning a.
func (c *checker) edge(s []int32, a int, kid []int32) {
	e, w := c.env, c.w
	c.enter(BackwardMasks, "BackwardCount", s, a)
	n := e.BackwardCount(s[:w:w], a)
	c.intact(s)
	c.enter(BackwardMasks, "BackwardMask", kid, -1)
	copy(c.buf, kid)
	clear(c.emask)
	cnt := e.BackwardMask(c.buf[:w:w], c.emask)
	if n != cnt {
		c.fail(BackwardMasks, s, "%s: BackwardCount(·, %d) is %d, but BackwardMask of the child %s returns %d", c.fmtState(s), a, n, c.fmtState(kid), cnt)
	}
	found, wrongB, wrongF := false, -1, -1
	for b, ok := range c.emask {
		if !ok {
			continue
		}
		copy(c.par, kid)
		c.enter(Inverse, "BackStep", kid, b)
		f := e.BackStep(c.par[:w:w], b)
		if slices.Equal(c.par, s) {
			if f == a {
				found = true
				break
			}
			wrongB, wrongF = b, f
		}
	}
	switch {
	case found:
	case wrongB >= 0:
		c.fail(Inverse, s, "%s: action %d leads to %s, whose backward action %d leads back here but returns forward action %d instead of %d", c.fmtState(s), a, c.fmtState(kid), wrongB, wrongF, a)
	default:
		c.fail(Inverse, s, "%s: action %d leads to %s, but none of its backward actions leads back here", c.fmtState(s), a, c.fmtState(kid))
	}
}

// backward checks the backward mask of the non-initial s, its parents, and
// that the uniform P_B over them sums to one.
func (c *checker) backward(s []int32) {
	e, w := c.env, c.w
	m1, m2 := c.bmask, c.bmask2
	for b := range m1 {
		m1[b], m2[b] = true, false
	}
	c.enter(BackwardMasks, "BackwardMask", s, -1)
	e.BackwardMask(s[:w:w], m1)
	c.intact(s)
	cnt := e.BackwardMask(s[:w:w], m2)
	c.intact(s)
	for b := range m1 {
		if m1[b] != m2[b] {
			c.fail(BackwardMasks, s, "%s: BackwardMask leaves the entry of backward action %d as it was; the samplers reuse mask buffers, so it must write all %d entries", c.fmtState(s), b, c.nb)
			break
		}
	}
	marked := 0
	for _, ok := range m2 {
		if ok {
			marked++
		}
	}
	if marked != cnt {
		c.fail(BackwardMasks, s, "%s: BackwardMask returns %d but marks %d backward actions", c.fmtState(s), cnt, marked)
	}
	if marked == 0 {
		c.fail(BackwardMasks, s, "%s: the state is not initial but has no backward action", c.fmtState(s))
		return
	}
	clear(c.parSet)
	var sum float64
	var parents []string
	bad := false
	for b, ok := range m2 {
		if !ok {
			continue
		}
		copy(c.par, s)
		c.enter(Inverse, "BackStep", s, b)
		f := e.BackStep(c.par[:w:w], b)
		c.intact(s)
		p := c.par
		if f < 0 || f >= c.na {
			c.fail(Inverse, s, "%s: BackStep(·, %d) returns forward action %d, outside [0, NumActions %d)", c.fmtState(s), b, f, c.na)
			bad = true
			continue
		}
		k := string(c.key(p))
		b0, dup := c.parSet[k]
		if dup {
			c.fail(PBSum, s, "%s: backward actions %d and %d lead to the same parent %s, which the uniform P_B weighs twice; backward actions must be one per distinct parent", c.fmtState(s), b0, b, c.fmtState(p))
			bad = true
		} else {
			c.parSet[k] = b
		}
		c.enter(Inverse, "IsTerminal", p, -1)
		if e.IsTerminal(p[:w:w]) {
			c.fail(Inverse, s, "%s: backward action %d leads to %s, which is terminal", c.fmtState(s), b, c.fmtState(p))
			bad = true
			continue
		}
		c.enter(Inverse, "ForwardMask", p, -1)
		clear(c.pmask)
		e.ForwardMask(p[:w:w], c.pmask)
		if !c.pmask[f] {
			c.fail(Inverse, s, "%s: backward action %d leads to %s and returns forward action %d, which is not valid there", c.fmtState(s), b, c.fmtState(p), f)
			bad = true
			continue
		}
		copy(c.par2, p)
		c.enter(Inverse, "Step", p, f)
		e.Step(c.par2[:w:w], f)
		if !slices.Equal(c.par2, s) {
			c.fail(Inverse, s, "%s: backward action %d leads to %s and returns forward action %d, which leads from there to %s", c.fmtState(s), b, c.fmtState(p), f, c.fmtState(c.par2))
			bad = true
			continue
		}
		if dup {
			continue
		}
		c.enter(PBSum, "BackwardCount", p, f)
		n := e.BackwardCount(p[:w:w], f)
		sum += 1 / float64(n)
		parents = append(parents, fmt.Sprintf("%s 1/%d", c.fmtState(p), n))
		if c.visited != nil {
			if _, ok := c.visited[k]; !ok {
				c.pending = append(c.pending, pendingParent{parent: slices.Clone(p), child: slices.Clone(s), b: b})
			}
		}
	}
	if !bad && !(math.Abs(sum-1) <= c.opt.PBTol) {
		c.fail(PBSum, s, "%s: P_B = 1/BackwardCount sums to %v over the parents, not 1: %s", c.fmtState(s), sum, strings.Join(parents, ", "))
	}
}

// terminal checks the log-reward and the key of the terminal x.
func (c *checker) terminal(x []int32) {
	e, w := c.env, c.w
	var lr [1]float64
	c.enter(Rewards, "LogReward", x, -1)
	err := e.LogReward(x[:w:w], 1, lr[:])
	c.intact(x)
	switch {
	case err != nil:
		c.fail(Rewards, x, "%s: LogReward returns an error: %v", c.fmtState(x), err)
	case math.IsNaN(lr[0]) || math.IsInf(lr[0], 0):
		c.fail(Rewards, x, "%s: the log-reward is %v; it must be finite", c.fmtState(x), lr[0])
	default:
		copy(c.rxs[c.nbatch*w:], x)
		c.rlr[c.nbatch] = lr[0]
		c.nbatch++
		if c.nbatch == c.opt.RewardBatch {
			c.flushRewards()
		}
	}
	if c.keyer == nil {
		return
	}
	c.enter(Terminals, "TerminalKey", x, -1)
	k := c.keyer.TerminalKey(x[:w:w])
	c.intact(x)
	copy(c.buf, x)
	if k2 := c.keyer.TerminalKey(c.buf[:w:w]); k2 != k {
		c.fail(Terminals, x, "%s: TerminalKey gives %d and %d for two equal copies of the state", c.fmtState(x), k, k2)
		return
	}
	if y, ok := c.keys[k]; !ok {
		c.keys[k] = slices.Clone(x)
	} else if !slices.Equal(x, y) {
		c.fail(Terminals, x, "%s: TerminalKey %d is also the key of the terminal state %s", c.fmtState(x), k, c.fmtState(y))
	}
}

// flushRewards compares the log-rewards of the pending terminal states in
// one batch with those they had one by one.
func (c *checker) flushRewards() {
	n, w := c.nbatch, c.w
	if n == 0 {
		return
	}
	c.nbatch = 0
	xs, out := c.rxs[:n*w:n*w], c.rout[:n]
	copy(c.rsave, xs)
	c.enter(Rewards, fmt.Sprintf("LogReward of a batch of %d states starting at this one", n), c.rsave[:w], -1)
	err := c.env.LogReward(xs, n, out)
	if !slices.Equal(xs, c.rsave[:n*w]) {
		c.fail(Rewards, c.rsave[:w], "%s: LogReward of a batch of %d states starting at this one modifies them", c.fmtState(c.rsave[:w]), n)
	}
	if err != nil {
		c.fail(Rewards, c.rsave[:w], "%s: LogReward of a batch of %d states starting at this one returns an error, though each alone succeeds: %v", c.fmtState(c.rsave[:w]), n, err)
		return
	}
	for i, b := range out {
		a := c.rlr[i]
		if d := math.Abs(a - b); a == b || c.opt.RewardTol >= 0 && d <= c.opt.RewardTol*max(1, math.Abs(a)) {
			continue
		}
		x := c.rsave[i*w : (i+1)*w]
		c.fail(Rewards, x, "%s: the log-reward is %v alone but %v in row %d of a batch of %d", c.fmtState(x), a, b, i, n)
	}
}
