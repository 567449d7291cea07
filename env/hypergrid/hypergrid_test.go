package hypergrid

import (
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
		if g.NumModes() != float64(c.modes) {
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
