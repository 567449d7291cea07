package hypergrid

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func mustNew(t testing.TB, d, h int, r Reward) *Grid {
	t.Helper()
	g, err := New(d, h, r)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestTerminalAndModeCounts(t *testing.T) {
	cases := []struct {
		d, h      int
		terminals int
		modes     int
	}{
		{2, 128, 16383, 676},
		{2, 256, 65535, 2601},
		{4, 16, 64125, 81},
		{4, 32, 1042685, 1296},
	}
	for _, c := range cases {
		if testing.Short() && c.terminals > 100000 {
			continue
		}
		g := mustNew(t, c.d, c.h, Deceptive)
		if got := g.NumTerminals(); got != float64(c.terminals) {
			t.Errorf("d%d H%d: NumTerminals = %v, want %d", c.d, c.h, got, c.terminals)
		}
		// Enumerate: every index is a distinct valid terminal, and the
		// number of maximal-reward ones is the mode count.
		x := make([]int32, c.d+1)
		maxR, modes, seen := math.Inf(-1), 0, make(map[uint64]bool, c.terminals)
		n := int(g.NumTerminals())
		for i := range n {
			g.Terminal(i, x)
			if !g.IsTerminal(x) {
				t.Fatalf("terminal %d = %v is not terminal", i, x)
			}
			if j := g.TerminalIndex(x); j != i {
				t.Fatalf("TerminalIndex(Terminal(%d)) = %d", i, j)
			}
			k := g.TerminalKey(x)
			if seen[k] {
				t.Fatalf("cell %v enumerated twice", x)
			}
			seen[k] = true
			r := g.RewardOf(x)
			switch {
			case r > maxR:
				maxR, modes = r, 1
			case r == maxR:
				modes++
			}
			if g.IsMode(x) != (r == 2+1e-5) {
				t.Fatalf("IsMode(%v) = %v but R = %v", x, g.IsMode(x), r)
			}
		}
		if modes != c.modes {
			t.Errorf("d%d H%d: %d modes (R = %v), want %d", c.d, c.h, modes, maxR, c.modes)
		}
		if g.NumModes() != c.modes {
			t.Errorf("d%d H%d: NumModes = %v, want %d", c.d, c.h, g.NumModes(), c.modes)
		}
	}
}

func TestRewardValues(t *testing.T) {
	g := mustNew(t, 2, 128, Deceptive)
	for _, c := range []struct {
		x    []int32
		want float64
	}{
		{[]int32{0, 0}, 1e-5},        // corner: outside the cross
		{[]int32{63, 0}, 0.1 + 1e-5}, // on the cross arm
		{[]int32{63, 63}, 0.1 + 1e-5},
		{[]int32{20, 20}, 2 + 1e-5}, // ring: |u| ≈ 0.685
		{[]int32{20, 63}, 0.1 + 1e-5},
	} {
		if got := g.RewardOf(c.x); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("deceptive R(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	p := mustNew(t, 2, 128, DeceptivePaper)
	if got := p.RewardOf([]int32{63, 0}); math.Abs(got-1e-5) > 1e-12 {
		t.Errorf("paper R on the arm = %v, want 1e-5 (box, not cross)", got)
	}
	if got := p.RewardOf([]int32{63, 63}); math.Abs(got-(0.1+1e-5)) > 1e-12 {
		t.Errorf("paper R at the centre = %v", got)
	}
	o := mustNew(t, 2, 8, Original)
	if got := o.RewardOf([]int32{0, 0}); math.Abs(got-0.6) > 1e-12 {
		t.Errorf("original R(0,0) = %v, want 0.6", got)
	}
}

func TestBackwardPolicy(t *testing.T) {
	g := mustNew(t, 3, 5, Deceptive)
	mask := make([]bool, g.NumBackActions())
	s := make([]int32, 4)
	child := make([]int32, 4)
	// For every non-terminal state and action, BackwardCount must equal the
	// child's number of valid backward actions, and BackStep must undo Step.
	for i := range g.NumStates() {
		g.State(i, s)
		fmask := make([]bool, g.NumActions())
		g.ForwardMask(s, fmask)
		for a, ok := range fmask {
			if !ok {
				t.Fatalf("action %d invalid at non-terminal %v", a, s)
			}
			copy(child, s)
			g.Step(child, a)
			n := g.BackwardMask(child, mask)
			if c := g.BackwardCount(s, a); c != n {
				t.Fatalf("BackwardCount(%v, %d) = %d, child %v has %d parents", s, a, c, child, n)
			}
			// The forward action's inverse must be among the valid ones.
			b := a
			if !mask[b] {
				t.Fatalf("inverse of %d not valid at %v", a, child)
			}
			if f := g.BackStep(child, b); f != a || g.StateIndex(child) != i || child[3] != 0 {
				t.Fatalf("BackStep did not undo Step: %v", child)
			}
		}
	}
	// Edge terminal: the only parent is through the H-1 coordinate.
	x := []int32{4, 2, 0, 0}
	if n := g.BackwardMask(x, mask); n != 1 || !mask[0] {
		t.Errorf("edge terminal mask %v (n=%d)", mask, n)
	}
	// Stopped terminal: only the stop.
	x = []int32{1, 2, 0, 1}
	if n := g.BackwardMask(x, mask); n != 1 || !mask[3] {
		t.Errorf("stopped terminal mask %v (n=%d)", mask, n)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		d, h int
		r    Reward
		want string
	}{
		{0, 8, Deceptive, "dimension 0"},
		{2, 1, Deceptive, "side 1"},
		{2, 8, "box", `unknown reward "box"`},
		{40, 1000, Deceptive, "do not fit"},
		{1, 1 << 62, Deceptive, "one-hot features"}, // a make() panic before the bound
	} {
		_, err := New(c.d, c.h, c.r)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%d, %d, %q) error %v, want %q", c.d, c.h, c.r, err, c.want)
		}
	}
}

func TestLargeGridCounts(t *testing.T) {
	// Closed forms, without enumeration, for the scaling grids.
	for _, c := range []struct {
		d, h  int
		terms float64
	}{{4, 64, 1.68e7}, {4, 128, 2.68e8}, {6, 32, 1.06e9}, {6, 64, 6.85e10}} {
		g := mustNew(t, c.d, c.h, Deceptive)
		if math.Abs(g.NumTerminals()-c.terms)/c.terms > 0.005 {
			t.Errorf("d%d H%d: %v terminals, want ≈%v", c.d, c.h, g.NumTerminals(), c.terms)
		}
	}
}

// TestCustom checks a grid with a user's log-reward: the function sees the
// states as discrete.Env passes them, its values and errors come back, a
// non-finite value is refused naming the state, and the grid has no modes.
func TestCustom(t *testing.T) {
	ref := mustNew(t, 2, 6, Deceptive)
	calls := 0
	g, err := NewCustom(2, 6, func(xs []int32, n int, out []float64) error {
		calls++
		if len(xs) != 3*n {
			t.Fatalf("%d words for %d states", len(xs), n)
		}
		for i := range n {
			if xs[3*i] == 9 {
				return errors.New("program failed")
			}
			out[i] = math.Log(ref.RewardOf(xs[3*i : 3*i+2]))
			if xs[3*i] == 4 && xs[3*i+1] == 4 {
				out[i] = math.NaN()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	xs := []int32{1, 2, 1, 5, 0, 0, 3, 1, 1}
	got, want := make([]float64, 3), make([]float64, 3)
	if err := g.LogReward(xs, 3, got); err != nil {
		t.Fatal(err)
	}
	ref.LogReward(xs, 3, want)
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("state %d: log R %v, want %v", i, got[i], want[i])
		}
	}
	if calls != 1 || g.String() != "hypergrid(d=2, H=6, custom)" || g.NumModes() != 0 || g.IsMode([]int32{1, 1, 1}) {
		t.Errorf("calls %d, %v, %v modes", calls, g, g.NumModes())
	}
	if r := g.RewardOf([]int32{1, 2}); math.Abs(r-ref.RewardOf([]int32{1, 2})) > 1e-15 {
		t.Errorf("RewardOf %v", r)
	}
	if err := g.LogReward([]int32{9, 0, 1}, 1, got); err == nil || err.Error() != "program failed" {
		t.Errorf("the function's error: %v", err)
	}
	if err := g.LogReward([]int32{4, 4, 1}, 1, got); err == nil || !strings.Contains(err.Error(), "log-reward NaN at [4 4] is invalid") {
		t.Errorf("NaN: %v", err)
	}
	if !math.IsNaN(g.RewardOf([]int32{9, 0})) {
		t.Error("RewardOf of a failing function is not NaN")
	}
	if _, err := NewCustom(2, 1, nil); err == nil || !strings.Contains(err.Error(), "side 1") {
		t.Errorf("bad side: %v", err)
	}
	if _, err := NewCustom(2, 4, nil); err == nil {
		t.Error("nil function accepted")
	}
	if _, err := New(2, 4, Custom); err == nil {
		t.Error("New with the custom reward and no function accepted")
	}
}
