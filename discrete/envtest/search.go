package envtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gfngo/gfn/metrics"
)

// dag is the reachable part of an environment found by search: states in
// breadth-first order (rows of w words), whether each is terminal, and the
// transitions in compressed rows (the children of state i are
// to[off[i]:off[i+1]], by the actions act[off[i]:off[i+1]]).
type dag struct {
	w       int
	states  []int32
	term    []bool
	off     []int32
	to, act []int32
}

func (g *dag) state(i int32) []int32 { return g.states[int(i)*g.w : int(i+1)*g.w] }

// search explores the states reachable from Init breadth-first, checking
// each, and then the DAG as a whole. It reports whether the search was
// exhaustive (false: more than MaxStates states are reachable).
func (c *checker) search() bool {
	w := c.w
	c.visited = map[string]int32{string(c.key(c.s0)): 0}
	defer func() { c.visited, c.pending = nil, nil }()
	g := &dag{w: w, states: slices.Clone(c.s0), off: []int32{0}}
	tainted := false
	for i := 0; i*w < len(g.states); i++ {
		if c.stopped {
			return true
		}
		copy(c.cur, g.states[i*w:(i+1)*w])
		done, _ := c.checkState(c.cur)
		tainted = tainted || !done
		g.term = append(g.term, c.isTerm)
		for j, a := range c.kidActs {
			kid := c.kids[j*w : (j+1)*w]
			id, ok := c.visited[string(c.key(kid))]
			if !ok {
				if len(c.visited) >= c.opt.MaxStates {
					return false
				}
				id = int32(len(c.visited))
				c.visited[string(c.key(kid))] = id
				g.states = append(g.states, kid...)
			}
			g.to = append(g.to, id)
			g.act = append(g.act, int32(a))
		}
		g.off = append(g.off, int32(len(g.to)))
	}
	if tainted {
		// A method panicked, so some transitions are missing: the failure
		// says why, and the checks of the whole DAG would mislead.
		return true
	}
	for _, p := range c.pending {
		if _, ok := c.visited[string(c.key(p.parent))]; !ok {
			c.fail(Reachability, p.child, "%s: backward action %d leads to %s, which is not reachable from Init", c.fmtState(p.child), p.b, c.fmtState(p.parent))
		}
	}
	if c.acyclic(g) {
		c.guard(func() { c.enumeration(g) })
	}
	if c.opt.Terminals > 0 {
		n := 0
		for _, t := range g.term {
			if t {
				n++
			}
		}
		if n != c.opt.Terminals {
			c.fail(Terminals, nil, "%d terminal states are reachable from Init, not Options.Terminals %d", n, c.opt.Terminals)
		}
	}
	return true
}

// acyclic looks for a cycle by depth-first search and, when MaxSteps is
// set, for a trajectory longer than MaxSteps. It reports whether the DAG
// has no cycle.
func (c *checker) acyclic(g *dag) bool {
	n := len(g.term)
	const (
		white = iota
		grey
		black
	)
	type frame struct{ u, e int32 }
	color := make([]uint8, n)
	post := make([]int32, 0, n)
	stack := []frame{{0, g.off[0]}}
	color[0] = grey
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.e == g.off[f.u+1] {
			color[f.u] = black
			post = append(post, f.u)
			stack = stack[:len(stack)-1]
			continue
		}
		v := g.to[f.e]
		f.e++
		switch color[v] {
		case white:
			color[v] = grey
			stack = append(stack, frame{v, g.off[v]})
		case grey:
			at := slices.IndexFunc(stack, func(f frame) bool { return f.u == v })
			var cyc []int32
			var acts []int
			for _, f := range stack[at:] {
				cyc = append(cyc, g.state(f.u)...)
				acts = append(acts, int(g.act[f.e-1]))
			}
			s := g.state(v)
			c.fail(Termination, s, "%s: the MDP has a cycle: %s", c.fmtState(s), c.chain(cyc, acts, s))
			return false
		}
	}
	if c.opt.MaxSteps <= 0 {
		return true
	}
	depth := make([]int32, n)
	for i := len(post) - 1; i >= 0; i-- {
		u := post[i]
		for e := g.off[u]; e < g.off[u+1]; e++ {
			depth[g.to[e]] = max(depth[g.to[e]], depth[u]+1)
		}
	}
	if i := slices.Index(depth, slices.Max(depth)); int(depth[i]) > c.opt.MaxSteps {
		s := g.state(int32(i))
		c.fail(Termination, s, "%s: a trajectory of %d steps from Init ends at this state, more than MaxSteps %d", c.fmtState(s), depth[i], c.opt.MaxSteps)
	}
	return true
}

// chain prints the path of states (rows of w words) taken by actions acts
// (nil: unknown) and ending at end, eliding the middle of a long one.
func (c *checker) chain(states []int32, acts []int, end []int32) string {
	w := c.w
	n := len(states) / w
	var b strings.Builder
	arrow := func(i int) {
		if acts != nil {
			fmt.Fprintf(&b, " -%d→ ", acts[i])
		} else {
			b.WriteString(" → ")
		}
	}
	for i := range n {
		if n > 8 && i == 4 {
			b.WriteString(" … ")
		}
		if n > 8 && i >= 4 && i < n-3 {
			continue
		}
		b.WriteString(c.fmtState(states[i*w : (i+1)*w]))
		arrow(i)
	}
	b.WriteString(c.fmtState(end))
	return b.String()
}

// enumeration checks the numbering of an environment that is a
// metrics.Enumerable against the states search found.
func (c *checker) enumeration(g *dag) {
	en, ok := c.env.(metrics.Enumerable)
	if !ok {
		return
	}
	nsReach, ntReach := 0, 0
	for _, t := range g.term {
		if t {
			ntReach++
		} else {
			nsReach++
		}
	}
	c.enter(Enumeration, "NumStates", nil, -1)
	ns := en.NumStates()
	c.enter(Enumeration, "NumTerminals", nil, -1)
	nt := en.NumTerminals()
	if ns != nsReach {
		c.fail(Enumeration, nil, "NumStates is %d, but %d non-terminal states are reachable from Init", ns, nsReach)
	}
	if nt != float64(ntReach) {
		c.fail(Enumeration, nil, "NumTerminals is %v, but %d terminal states are reachable from Init", nt, ntReach)
	}
	index := make([]int, len(g.term))
	seenS, seenT := map[int]int32{}, map[int]int32{}
	for i := range int32(len(g.term)) {
		s := g.state(i)
		copy(c.orig, s)
		copy(c.cur, s)
		index[i] = -1
		name, inverse, seen, limit := "StateIndex", "State", seenS, float64(ns)
		if g.term[i] {
			name, inverse, seen, limit = "TerminalIndex", "Terminal", seenT, nt
		}
		c.enter(Enumeration, name, s, -1)
		var j int
		if g.term[i] {
			j = en.TerminalIndex(c.cur)
		} else {
			j = en.StateIndex(c.cur)
		}
		c.intact(c.cur)
		if j < 0 || float64(j) >= limit {
			c.fail(Enumeration, s, "%s: %s is %d, outside [0, %v)", c.fmtState(s), name, j, limit)
			continue
		}
		if o, dup := seen[j]; dup {
			c.fail(Enumeration, s, "%s: %s %d is also that of %s", c.fmtState(s), name, j, c.fmtState(g.state(o)))
			continue
		}
		seen[j] = i
		for k := range c.buf {
			c.buf[k] = -9
		}
		c.enter(Enumeration, fmt.Sprintf("%s(%d, ·)", inverse, j), s, -1)
		if g.term[i] {
			en.Terminal(j, c.buf)
		} else {
			en.State(j, c.buf)
			index[i] = j
		}
		if !slices.Equal(c.buf, s) {
			c.fail(Enumeration, s, "%s: %s is %d, but %s(%d, ·) writes %s", c.fmtState(s), name, j, inverse, j, c.fmtState(c.buf))
		}
	}
	for u := range int32(len(g.term)) {
		if index[u] < 0 {
			continue
		}
		for e := g.off[u]; e < g.off[u+1]; e++ {
			if v := g.to[e]; index[v] >= 0 && index[v] <= index[u] {
				s := g.state(u)
				c.fail(Enumeration, s, "%s: action %d leads to %s, whose StateIndex %d is not larger than this state's %d; the numbering must be topological", c.fmtState(s), g.act[e], c.fmtState(g.state(v)), index[v], index[u])
			}
		}
	}
}

// walks runs the random forward-then-backward walks.
func (c *checker) walks() {
	rng := c.opt.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 2))
	}
	seen := map[string]int{}
	x := make([]int32, c.w)
	for range max(c.opt.Walks, 0) {
		if c.stopped || c.tooLong {
			return
		}
		if c.forwardWalk(rng, seen, x) {
			c.backwardWalk(rng, seen, x)
		}
	}
}

// forwardWalk walks from Init to a terminal state, which it leaves in x,
// checking every state on the way. It reports whether it got there.
func (c *checker) forwardWalk(rng *rand.Rand, seen map[string]int, x []int32) bool {
	w := c.w
	clear(seen)
	var path []int32
	copy(x, c.s0)
	for step := 0; ; step++ {
		k := c.key(x)
		if i, ok := seen[string(k)]; ok {
			c.fail(Termination, x, "%s: a forward walk from Init comes back to this state, so the MDP has a cycle: %s", c.fmtState(x), c.chain(path[i*w:], nil, x))
			return false
		}
		seen[string(k)] = step
		path = append(path, x...)
		copy(c.cur, x)
		if done, _ := c.checkState(c.cur); !done {
			return false
		}
		if c.isTerm {
			return true
		}
		if len(c.kidActs) == 0 {
			return false // reported
		}
		if step == c.maxSteps {
			c.fail(Termination, x, "%s: a forward walk from Init has taken MaxSteps %d steps to this state and not reached a terminal state", c.fmtState(x), step)
			c.tooLong = true
			return false
		}
		j := rng.IntN(len(c.kidActs))
		copy(x, c.kids[j*w:(j+1)*w])
	}
}

// backwardWalk walks from the terminal x back to the initial state with
// uniformly chosen backward actions, checking every state on the way.
func (c *checker) backwardWalk(rng *rand.Rand, seen map[string]int, x []int32) {
	e, w := c.env, c.w
	clear(seen)
	var path []int32
	y := slices.Clone(x)
	for step := 0; ; step++ {
		k := c.key(y)
		if i, ok := seen[string(k)]; ok {
			c.fail(Termination, y, "%s: a backward walk from the terminal state %s comes back to this state, so the MDP has a cycle: %s", c.fmtState(y), c.fmtState(x), c.chain(path[i*w:], nil, y))
			return
		}
		seen[string(k)] = step
		path = append(path, y...)
		initial, b := false, -1
		ok := c.guard(func() {
			c.enter(Termination, "IsInitial", y, -1)
			if initial = e.IsInitial(y[:w:w]); initial {
				return
			}
			c.enter(Termination, "BackwardMask", y, -1)
			clear(c.bmask)
			e.BackwardMask(slices.Clone(y), c.bmask)
			var marked []int
			for b, ok := range c.bmask {
				if ok {
					marked = append(marked, b)
				}
			}
			if len(marked) > 0 {
				b = marked[rng.IntN(len(marked))]
			}
		})
		if !ok || initial || b < 0 {
			return
		}
		if step == c.maxSteps {
			c.fail(Termination, y, "%s: a backward walk from the terminal state %s has taken MaxSteps %d steps to this state and not reached the initial state", c.fmtState(y), c.fmtState(x), step)
			c.tooLong = true
			return
		}
		copy(c.cur, y)
		ok = c.guard(func() {
			c.enter(Termination, "BackStep", c.cur, b)
			e.BackStep(y[:w:w], b)
		})
		if !ok {
			return
		}
		copy(c.cur, y)
		if done, _ := c.checkState(c.cur); !done {
			return
		}
	}
}
