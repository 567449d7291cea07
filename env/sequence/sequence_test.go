package sequence_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/sequence"
)

// sumReward is log R = Σ tokens / 4, a simple positive reward.
func sumReward(xs []int32, n int, out []float64) error {
	l := len(xs) / n
	for i := range n {
		var s float64
		for _, c := range xs[i*l : (i+1)*l] {
			s += float64(c)
		}
		out[i] = s / 4
	}
	return nil
}

type kind struct {
	name string
	make func(a, n int, r sequence.LogReward) (*sequence.Env, error)
	pa   bool
}

var kinds = []kind{
	{"prepend-append", sequence.NewPrependAppend, true},
	{"append", sequence.NewAppend, false},
}

func mustEnv(t testing.TB, k kind, a, n int) *sequence.Env {
	t.Helper()
	e, err := k.make(a, n, sumReward)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// node is a state written as a string, independent of the Env's layout:
// the tokens as letters, and "|" for a leaf.
type node struct {
	str  string
	leaf bool
}

func (v node) String() string {
	if v.leaf {
		return v.str + "|"
	}
	return v.str
}

func nodeOf(e *sequence.Env, s []int32) node {
	var b strings.Builder
	for _, c := range e.Tokens(s) {
		b.WriteByte(byte('a' + c))
	}
	return node{b.String(), e.IsTerminal(s)}
}

// build writes node v in the documented layout [length, leaf, tokens, -1…].
func build(e *sequence.Env, v node) []int32 {
	s := make([]int32, e.StateLen())
	s[0] = int32(len(v.str))
	if v.leaf {
		s[1] = 1
	}
	for i := range e.Length() {
		s[2+i] = -1
		if i < len(v.str) {
			s[2+i] = int32(v.str[i] - 'a')
		}
	}
	return s
}

// bruteChildren lists the distinct children of non-leaf v from string
// operations alone.
func bruteChildren(a, n int, pa bool, v node) []node {
	if len(v.str) == n {
		return []node{{v.str, true}}
	}
	var out []node
	add := func(w node) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	for c := range a {
		t := string(rune('a' + c))
		if pa {
			add(node{t + v.str, false})
		}
		add(node{v.str + t, false})
	}
	return out
}

// bruteParents lists the distinct parents of non-root v.
func bruteParents(pa bool, v node) []node {
	if v.leaf {
		return []node{{v.str, false}}
	}
	last := node{v.str[:len(v.str)-1], false}
	if !pa {
		return []node{last}
	}
	first := node{v.str[1:], false}
	if first == last {
		return []node{first}
	}
	return []node{first, last}
}

// bruteTrajectories counts the distinct state sequences from the root to
// v by recursion on bruteParents.
func bruteTrajectories(pa bool, v node, memo map[node]float64) float64 {
	if v.str == "" && !v.leaf {
		return 1
	}
	if c, ok := memo[v]; ok {
		return c
	}
	var c float64
	for _, p := range bruteParents(pa, v) {
		c += bruteTrajectories(pa, p, memo)
	}
	memo[v] = c
	return c
}

func sameSet(a, b []node) bool {
	if len(a) != len(b) {
		return false
	}
	for _, v := range a {
		if !slices.Contains(b, v) {
			return false
		}
	}
	return true
}

// TestEnumerationMatchesBruteForce walks the whole DAG through the Env's
// masks and steps for small alphabets and lengths and checks it against
// string operations: children, parents, P_B, the inverse of every step,
// the number of states and of trajectories to every terminal.
func TestEnumerationMatchesBruteForce(t *testing.T) {
	for _, k := range kinds {
		for a := 1; a <= 3; a++ {
			for n := 1; n <= 4; n++ {
				t.Run(fmt.Sprintf("%s/A%d/n%d", k.name, a, n), func(t *testing.T) {
					checkDAG(t, k, a, n)
				})
			}
		}
	}
}

func checkDAG(t *testing.T, k kind, a, n int) {
	e := mustEnv(t, k, a, n)
	w := e.StateLen()
	fmask := make([]bool, e.NumActions())
	bmask := make([]bool, e.NumBackActions())
	root := make([]int32, w)
	e.Init(root)
	if !e.IsInitial(root) || e.IsTerminal(root) || !slices.Equal(root, build(e, node{})) {
		t.Fatalf("root %v", root)
	}
	e.ForwardMask(root, fmask)
	if c := count(fmask); c != a {
		t.Errorf("root has %d valid actions, want %d", c, a)
	}
	// Breadth-first over the DAG; states are generated in order of length,
	// so every parent is done before its children.
	paths := map[node]float64{{}: 1}
	pbSum := map[node]float64{}
	queue := []node{{}}
	terminals := 0
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		s := build(e, v)
		if v.leaf {
			terminals++
			continue
		}
		e.ForwardMask(s, fmask)
		var kids []node
		for act, ok := range fmask {
			if !ok {
				continue
			}
			c := slices.Clone(s)
			term := e.Step(c, act)
			cv := nodeOf(e, c)
			if term != cv.leaf || e.IsTerminal(c) != cv.leaf || e.IsInitial(c) {
				t.Fatalf("%v -%d-> %v: terminal %v", v, act, cv, term)
			}
			if !slices.Equal(c, build(e, cv)) {
				t.Fatalf("%v -%d-> %v, not in the canonical layout", v, act, c)
			}
			if slices.Contains(kids, cv) {
				t.Fatalf("%v: action %d repeats child %v", v, act, cv)
			}
			kids = append(kids, cv)
			// Uniform P_B: BackwardCount is the child's parent count, and
			// the edges into a child carry P_B summing to 1.
			nb := e.BackwardMask(c, bmask)
			if bc := e.BackwardCount(s, act); bc != nb || nb != count(bmask) {
				t.Fatalf("%v -%d-> %v: BackwardCount %d, BackwardMask %d (%v)", v, act, cv, bc, nb, bmask)
			}
			pbSum[cv] += 1 / float64(nb)
			if _, seen := paths[cv]; !seen {
				queue = append(queue, cv)
			}
			paths[cv] += paths[v]
			// Some valid backward action undoes the step.
			undone := false
			for b, ok := range bmask {
				if ok {
					p := slices.Clone(c)
					if f := e.BackStep(p, b); f == act && slices.Equal(p, s) {
						undone = true
					}
				}
			}
			if !undone {
				t.Fatalf("no backward action of %v undoes %v -%d->", cv, v, act)
			}
		}
		if want := bruteChildren(a, n, k.pa, v); !sameSet(kids, want) {
			t.Fatalf("%v: children %v, want %v", v, kids, want)
		}
	}
	// Every non-root state: its valid backward actions lead to its distinct
	// parents by forward actions that are valid there and lead back.
	nonleaf := 0
	for v := range paths {
		if !v.leaf {
			nonleaf++
		}
		if v.str == "" && !v.leaf {
			continue
		}
		c := build(e, v)
		e.BackwardMask(c, bmask)
		var parents []node
		for b, ok := range bmask {
			if !ok {
				continue
			}
			p := slices.Clone(c)
			f := e.BackStep(p, b)
			pv := nodeOf(e, p)
			if !slices.Equal(p, build(e, pv)) {
				t.Fatalf("BackStep(%v, %d) = %v, not in the canonical layout", v, b, p)
			}
			e.ForwardMask(p, fmask)
			if !fmask[f] {
				t.Fatalf("BackStep(%v, %d) returns action %d, masked at the parent %v", v, b, f, pv)
			}
			q := slices.Clone(p)
			e.Step(q, f)
			if !slices.Equal(q, c) {
				t.Fatalf("BackStep(%v, %d): parent %v by %d gives %v", v, b, pv, f, nodeOf(e, q))
			}
			if slices.Contains(parents, pv) {
				t.Fatalf("%v: parent %v twice", v, pv)
			}
			parents = append(parents, pv)
		}
		if want := bruteParents(k.pa, v); !sameSet(parents, want) {
			t.Fatalf("%v: parents %v, want %v", v, parents, want)
		}
		if math.Abs(pbSum[v]-1) > 1e-12 {
			t.Fatalf("%v: P_B of its incoming edges sums to %v", v, pbSum[v])
		}
	}
	an := math.Pow(float64(a), float64(n))
	var wantNonleaf float64
	for l := 0; l <= n; l++ {
		wantNonleaf += math.Pow(float64(a), float64(l))
	}
	if float64(terminals) != an || float64(nonleaf) != wantNonleaf {
		t.Errorf("%d terminals and %d non-leaf states, want %v and %v", terminals, nonleaf, an, wantNonleaf)
	}
	memo := map[node]float64{}
	for v, p := range paths {
		if v.leaf {
			if want := bruteTrajectories(k.pa, v, memo); p != want {
				t.Errorf("%d trajectories to %v, want %v", int(p), v, want)
			}
		}
	}
}

func count(m []bool) int {
	c := 0
	for _, ok := range m {
		if ok {
			c++
		}
	}
	return c
}

func TestTrajectoryCountsKnownValues(t *testing.T) {
	// Prepend-append: 2^(n-1) orders when no parent ever coincides; a
	// repeated token has one; "aab": parents "ab" (2) and "aa" (1).
	memo := map[node]float64{}
	for _, c := range []struct {
		s    string
		want float64
	}{{"abcd", 8}, {"aaaa", 1}, {"aab", 3}, {"abab", 8}} {
		if got := bruteTrajectories(true, node{c.s, true}, memo); got != c.want {
			t.Errorf("%s: %v trajectories, want %v", c.s, got, c.want)
		}
	}
}

func TestFeatures(t *testing.T) {
	for _, k := range kinds {
		e := mustEnv(t, k, 3, 4)
		idx := make([]int32, e.FeaturesPerState())
		if e.FeatureLen() != 12 || e.FeaturesPerState() != 4 {
			t.Fatalf("FeatureLen %d, FeaturesPerState %d", e.FeatureLen(), e.FeaturesPerState())
		}
		e.Features(build(e, node{"cab", false}), idx)
		if want := []int32{2, 3, 7, -1}; !slices.Equal(idx, want) {
			t.Errorf("features of cab: %v, want %v", idx, want)
		}
		e.Features(build(e, node{}), idx)
		if want := []int32{-1, -1, -1, -1}; !slices.Equal(idx, want) {
			t.Errorf("features of the root: %v", idx)
		}
		// A leaf has the features of its non-leaf copy.
		leaf := make([]int32, e.FeaturesPerState())
		e.Features(build(e, node{"bcaa", true}), leaf)
		e.Features(build(e, node{"bcaa", false}), idx)
		if !slices.Equal(idx, leaf) {
			t.Errorf("leaf features %v, non-leaf %v", leaf, idx)
		}
	}
}

func TestTerminalKeys(t *testing.T) {
	e := mustEnv(t, kinds[0], 3, 4)
	s := make([]int32, e.StateLen())
	for key := range uint64(81) {
		e.TerminalOf(key, s)
		if !e.IsTerminal(s) || e.TerminalKey(s) != key {
			t.Fatalf("TerminalOf(%d) = %v, key %d", key, s, e.TerminalKey(s))
		}
		if key > 0 {
			prev := make([]int32, e.StateLen())
			e.TerminalOf(key-1, prev)
			if slices.Compare(e.Tokens(prev), e.Tokens(s)) >= 0 {
				t.Fatalf("keys %d and %d not in lexicographic order", key-1, key)
			}
		}
	}
	e.SetTerminal(s, []int32{1, 0, 2, 2})
	if got := e.TerminalKey(s); got != 27+0+6+2 {
		t.Errorf("key of 1022 = %d, want 35", got)
	}
	var _ discrete.TerminalKeyer = e
	var _ discrete.Env = e

	for _, c := range []struct {
		a, n int
		fits bool
	}{{2, 64, true}, {2, 65, false}, {4, 32, true}, {4, 33, false}, {3, 40, true}, {3, 41, false}, {1, 1000, true}, {20, 14, true}, {20, 15, false}} {
		e := mustEnv(t, kinds[0], c.a, c.n)
		if e.KeyFits() != c.fits {
			t.Errorf("A=%d n=%d: KeyFits %v", c.a, c.n, e.KeyFits())
		}
	}
	big := mustEnv(t, kinds[0], 2, 64)
	x := make([]int32, 64)
	for i := range x {
		x[i] = 1
	}
	s = make([]int32, big.StateLen())
	big.SetTerminal(s, x)
	if got := big.TerminalKey(s); got != math.MaxUint64 {
		t.Errorf("key of 1^64 = %d", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("TerminalKey did not panic without 64-bit keys")
		}
	}()
	tooBig := mustEnv(t, kinds[0], 2, 65)
	s = make([]int32, tooBig.StateLen())
	tooBig.SetTerminal(s, make([]int32, 65))
	tooBig.TerminalKey(s)
}

func TestLogReward(t *testing.T) {
	var seen []int32
	bad := errors.New("oracle down")
	fail := false
	r := func(xs []int32, n int, out []float64) error {
		seen = append(seen[:0], xs...)
		if fail {
			return bad
		}
		for i := range n {
			out[i] = float64(xs[i*3])
		}
		out[n-1] = math.Log(float64(xs[3*(n-1)+1])) // log 0 = -Inf when the second token is 0
		return nil
	}
	e, err := sequence.NewPrependAppend(4, 3, r)
	if err != nil {
		t.Fatal(err)
	}
	w := e.StateLen()
	xs := make([]int32, 2*w)
	e.SetTerminal(xs[:w], []int32{3, 1, 2})
	e.SetTerminal(xs[w:], []int32{0, 2, 1})
	out := make([]float64, 2)
	if err := e.LogReward(xs, 2, out); err != nil {
		t.Fatal(err)
	}
	if want := []int32{3, 1, 2, 0, 2, 1}; !slices.Equal(seen, want) {
		t.Errorf("the log-reward saw %v, want %v", seen, want)
	}
	if out[0] != 3 || out[1] != math.Log(2) {
		t.Errorf("log R = %v", out)
	}
	e.SetTerminal(xs[w:], []int32{0, 0, 1})
	err = e.LogReward(xs, 2, out)
	if err == nil || !strings.Contains(err.Error(), "row 1") || !strings.Contains(err.Error(), "[0 0 1]") {
		t.Errorf("-Inf log-reward: error %v", err)
	}
	fail = true
	if err := e.LogReward(xs, 2, out); !errors.Is(err, bad) || !strings.HasPrefix(err.Error(), "sequence: ") {
		t.Errorf("failing log-reward: error %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("LogReward of a non-terminal state did not panic")
		}
	}()
	e.Init(xs[:w])
	e.LogReward(xs, 2, out)
}

func TestNewRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		a, n int
		r    sequence.LogReward
		want string
	}{
		{0, 3, sumReward, "alphabet size 0"},
		{4, 0, sumReward, "length 0"},
		{4, 3, nil, "nil"},
		{1 << 20, 1 << 12, sumReward, "overflow"},
	} {
		for _, k := range kinds {
			_, err := k.make(c.a, c.n, c.r)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "sequence: ") {
				t.Errorf("%s(%d, %d): error %v, want %q", k.name, c.a, c.n, err, c.want)
			}
		}
	}
}

func TestActionNumbers(t *testing.T) {
	pa := mustEnv(t, kinds[0], 4, 3)
	ap := mustEnv(t, kinds[1], 4, 3)
	if pa.PrependAction(2) != 3 || pa.AppendAction(2) != 7 || ap.AppendAction(2) != 3 {
		t.Errorf("action numbers %d %d %d", pa.PrependAction(2), pa.AppendAction(2), ap.AppendAction(2))
	}
	if pa.NumActions() != 9 || ap.NumActions() != 5 || pa.NumBackActions() != 3 || ap.NumBackActions() != 2 {
		t.Errorf("action counts")
	}
	if !pa.PrependAppend() || ap.PrependAppend() || pa.Alphabet() != 4 || pa.Length() != 3 {
		t.Errorf("accessors")
	}
	s := make([]int32, pa.StateLen())
	pa.Init(s)
	pa.Step(s, pa.AppendAction(1)) // not valid at the root, but defined: "b"
	pa.Step(s, pa.PrependAction(0))
	pa.Step(s, pa.AppendAction(3))
	if got := pa.Tokens(s); !slices.Equal(got, []int32{0, 1, 3}) {
		t.Errorf("tokens %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("PrependAction of the append-only MDP did not panic")
		}
	}()
	ap.PrependAction(0)
}

// TestDiscreteSampling runs the discrete package's forward and backward
// samplers on both MDPs: every trajectory replays, has n+1 transitions, and
// the log P_B of backward trajectories equals the brute-force uniform P_B.
func TestDiscreteSampling(t *testing.T) {
	for _, k := range kinds {
		e := mustEnv(t, k, 3, 5)
		rng := rand.New(rand.NewPCG(3, 4))
		m := discrete.NewMLPModel(e, e, "m", []int{16}, rng)
		smp := discrete.NewSampler(e)
		var fw, bw discrete.Trajectories
		smp.Forward(m, 20, discrete.SampleOptions{Eps: 0.3}, rng, &fw)
		smp.Backward(fw.Final, fw.Len(), rng, &bw)
		for _, tr := range []*discrete.Trajectories{&fw, &bw} {
			w := e.StateLen()
			s := make([]int32, w)
			for b := range tr.Len() {
				if l := tr.Off[b+1] - tr.Off[b]; l != e.Length()+1 {
					t.Fatalf("%s: trajectory of %d transitions", k.name, l)
				}
				e.Init(s)
				lpb := 0.0
				for i := tr.Off[b]; i < tr.Off[b+1]; i++ {
					if !slices.Equal(s, tr.State(i)) {
						t.Fatalf("%s: trajectory %d does not replay", k.name, b)
					}
					e.Step(s, int(tr.Actions[i]))
					lpb -= math.Log(float64(len(bruteParents(k.pa, nodeOf(e, s)))))
				}
				if !slices.Equal(s, tr.FinalState(b)) || math.Abs(lpb-tr.LogPB[b]) > 1e-12 {
					t.Fatalf("%s: trajectory %d ends at %v (recorded %v), log P_B %v, want %v", k.name, b, s, tr.FinalState(b), tr.LogPB[b], lpb)
				}
			}
		}
		logR := make([]float64, fw.Len())
		if err := e.LogReward(fw.Final, fw.Len(), logR); err != nil {
			t.Fatal(err)
		}
	}
}
