package ssr

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEncodesEachDistinctStateOnce checks that a batch's encoder rows,
// embeddings and the scorer's two first-layer halves are computed once per
// distinct state, not once per (row, child) pair: the parent half once for
// each distinct state of the batch, and the encoder and the child half once
// for each distinct state among the batch's states and their children. A
// state that is both a parent and a child is projected once in each half.
// The expected counts come from maps over the states in this test, never
// from the model. Duplicating every row of the batch must leave the counts
// unchanged. The value tests (TestForwardMatchesNaivePerEdge, …) compare
// against a naive computation, and de-duplication does not change values,
// so only a test like this one notices if it is switched off.
func TestEncodesEachDistinctStateOnce(t *testing.T) {
	for _, wd := range [][2]int{{72, 40}, {100, 36}} { // folded, not
		env := seqEnv(t, 4, 5, false, nil)
		w, na, k := env.StateLen(), env.NumActions(), env.FeaturesPerState()
		m := New(env, env, "", wd[0], wd[1], rand.New(rand.NewPCG(3, 4)))
		if m.fold != (wd[0] < 2*wd[1]) {
			t.Fatalf("fold %v for H=%d E=%d", m.fold, wd[0], wd[1])
		}
		// Breadth-first states (every row after the first is a child of
		// an earlier row), then a few of them again: row 0 three more
		// times and rows 1..9 reversed, so the batch itself repeats states.
		bfs := nonTerminal(env, 60)
		batch := slices.Clone(bfs)
		for range 3 {
			batch = append(batch, bfs[:w]...)
		}
		for r := 9; r >= 1; r-- {
			batch = append(batch, bfs[r*w:(r+1)*w]...)
		}
		rows := len(batch) / w

		// Independent counts. The model keys a node by its features;
		// the test counts by the state's words and checks that, in this
		// environment, the features give the same partition.
		feat := make([]int32, k)
		fkey := func(s []int32) string {
			env.Features(s, feat)
			return fmt.Sprint(feat)
		}
		parents, children, nodes := map[string]bool{}, map[string]bool{}, map[string]bool{}
		fnodes := map[string]bool{}
		mask := make([]bool, na)
		edges := 0
		for r := range rows {
			s := batch[r*w : (r+1)*w]
			parents[fmtInts(s)], nodes[fmtInts(s)], fnodes[fkey(s)] = true, true, true
			if env.IsTerminal(s) {
				continue
			}
			env.ForwardMask(s, mask)
			for a, ok := range mask {
				if ok {
					c := slices.Clone(s)
					env.Step(c, a)
					children[fmtInts(c)], nodes[fmtInts(c)], fnodes[fkey(c)] = true, true, true
					edges++
				}
			}
		}
		both := 0
		for s := range parents {
			if children[s] {
				both++
			}
		}
		// The batch must exercise every kind of sharing: repeated rows,
		// children shared between rows, states that are a parent of one
		// row and a child of another.
		switch {
		case len(parents) >= rows:
			t.Fatalf("test batch: %d rows, %d distinct: no repeated state", rows, len(parents))
		case len(children) >= edges:
			t.Fatalf("test batch: %d edges, %d distinct children: none shared", edges, len(children))
		case both == 0:
			t.Fatalf("test batch: no state is both a parent and a child")
		case len(fnodes) != len(nodes):
			t.Fatalf("test batch: %d distinct states, %d distinct feature rows", len(nodes), len(fnodes))
		}

		twice := append(slices.Clone(batch), batch...)
		for _, b := range [][]int32{batch, twice} {
			m.Forward(b, len(b)/w)
			z := len(nodes)
			if m.fold {
				z = len(parents) // only parents need an embedding when folded
			}
			for _, c := range []struct {
				what      string
				got, want int
			}{
				{"encoder rows", m.a.Rows, len(nodes)},
				{"embeddings", m.z.Rows, z},
				{"parent halves", m.ps.Rows, len(parents)},
				{"child halves", m.pc.Rows, len(nodes)},
			} {
				if c.got != c.want {
					t.Errorf("H%d E%d, %d rows (%d edges): %d %s, want %d (distinct states)",
						wd[0], wd[1], len(b)/w, edges*len(b)/len(batch), c.got, c.what, c.want)
				}
			}
		}
		t.Logf("H%d E%d: %d rows (%d distinct), %d edges (%d distinct children), %d both, %d distinct states",
			wd[0], wd[1], rows, len(parents), edges, len(children), both, len(nodes))
	}
}
