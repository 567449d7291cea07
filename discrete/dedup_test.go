package discrete

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestGroupsMatchMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var g Groups
	for trial := range 20 {
		n, w := 1+rng.IntN(500), 1+rng.IntN(4)
		states := make([]int32, n*w)
		for i := range states {
			states[i] = int32(rng.IntN(3))
		}
		ids := make([]int32, n)
		rep := g.Assign(states, n, w, ids)
		first := map[string]int{}
		for i := range n {
			k := fmt.Sprint(states[i*w : (i+1)*w])
			if _, ok := first[k]; !ok {
				first[k] = len(first)
			}
			if int(ids[i]) != first[k] {
				t.Fatalf("trial %d row %d: id %d, want %d", trial, i, ids[i], first[k])
			}
			if r := int(rep[ids[i]]); fmt.Sprint(states[r*w:(r+1)*w]) != k {
				t.Fatalf("trial %d: representative of row %d differs", trial, i)
			}
		}
		if len(rep) != len(first) {
			t.Fatalf("trial %d: %d groups, want %d", trial, len(rep), len(first))
		}
	}
}
