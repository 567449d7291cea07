package ssr

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestEncodesEachDistinctStateOnce: a batch's encoder rows, embeddings and
// the scorer's two first-layer halves are computed once per distinct node,
// not once per (row, child) pair: the parent half for every distinct
// state of the batch, the child half and the encoder for every distinct
// state among the batch's states and their children. The counts are made
// here from the states' features alone, and a batch of every row twice
// gives the same counts. (The value tests compare with a naive
// computation, which de-duplication does not change.)
func TestEncodesEachDistinctStateOnce(t *testing.T) {
	for _, wd := range [][2]int{{72, 40}, {100, 36}} { // folded, not
		env := seqEnv(t, 4, 5, false, nil)
		w, na, k := env.StateLen(), env.NumActions(), env.FeaturesPerState()
		m := New(env, env, "", wd[0], wd[1], rand.New(rand.NewPCG(3, 4)))
		all := nonTerminal(env, 60)
		feat := make([]int32, k)
		key := func(s []int32) string {
			env.Features(s, feat)
			return fmt.Sprint(feat)
		}
		// Independent counts: distinct parents, and distinct nodes among
		// parents and every child of a valid action.
		parents, nodes := map[string]bool{}, map[string]bool{}
		mask := make([]bool, na)
		rows := len(all) / w
		edges := 0
		for r := range rows {
			s := all[r*w : (r+1)*w]
			parents[key(s)], nodes[key(s)] = true, true
			env.ForwardMask(s, mask)
			for a, ok := range mask {
				if ok {
					c := append([]int32(nil), s...)
					env.Step(c, a)
					nodes[key(c)] = true
					edges++
				}
			}
		}
		if len(nodes) >= rows+edges || len(parents) != rows {
			t.Fatalf("test batch: %d rows, %d edges, %d distinct nodes: it must share children", rows, edges, len(nodes))
		}
		for _, batch := range [][]int32{all, append(append([]int32(nil), all...), all...)} {
			m.Forward(batch, len(batch)/w)
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
					t.Errorf("width %v, %d rows: %d %s, want %d (distinct states; %d edges)", wd, len(batch)/w, c.got, c.what, c.want, edges)
				}
			}
		}
	}
}
