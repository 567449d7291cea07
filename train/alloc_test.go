package train_test

import (
	"runtime"
	"testing"

	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/train"
)

// TestSteadyStateIterationDoesNotAllocate: once its buffers have grown to
// their high-water marks, a training iteration (sampling with the
// companion pass, both TB steps side by side, Adam) allocates nothing.
func TestSteadyStateIterationDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	// One P: the runtime's caches of wait descriptors then stay put, and
	// only the trainer's own allocations are counted.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, m := range []train.Method{train.MethodTB, train.MethodTeacher} {
		g, _ := hypergrid.New(2, 16, hypergrid.Deceptive)
		cfg := train.DefaultConfig()
		cfg.Method = m
		cfg.Hidden = []int{32, 32}
		cfg.RewardCalls = 1 << 30
		tr, err := train.New(g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		iterate := func(n int) {
			for range n {
				if _, err := tr.Iterate(); err != nil {
					t.Fatal(err)
				}
			}
		}
		iterate(1000) // buffers reach their high-water marks
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const n = 300
		iterate(n)
		runtime.ReadMemStats(&after)
		// A batch longer than any before still grows a buffer now and then.
		if allocs := after.Mallocs - before.Mallocs; allocs > n/20 {
			t.Errorf("%s: %d allocations in %d iterations", m, allocs, n)
		}
	}
}
