package diffusion

import "testing"

// TestMilestonesFromTheEnd: negative milestones count from the end, as
// the authors' epochs−6000 and epochs−2000 (4000 and 8000 of their 10,001
// iterations; 19,000 and 23,000 of 25,001).
func TestMilestonesFromTheEnd(t *testing.T) {
	for _, c := range []struct {
		iters, it int
		passed    int // milestones passed
	}{
		{10001, 3999, 0}, {10001, 4000, 1}, {10001, 7999, 1}, {10001, 8000, 2},
		{25001, 18999, 0}, {25001, 19000, 1}, {25001, 23000, 2},
	} {
		gamma := 0.1
		cfg := Config{Iterations: c.iters, Milestones: []int{-6000, -2000}, Gamma: gamma}
		want := 1.0
		for range c.passed {
			want *= gamma
		}
		if got := cfg.lrScale(c.it); got != want {
			t.Errorf("%d iterations, iteration %d: scale %v, want %v", c.iters, c.it, got, want)
		}
	}
	abs := Config{Iterations: 10001, Milestones: []int{4000, 8000}, Gamma: 0.1}
	rel := Config{Iterations: 10001, Milestones: []int{-6000, -2000}, Gamma: 0.1}
	for it := range 10001 {
		if abs.lrScale(it) != rel.lrScale(it) {
			t.Fatalf("iteration %d: absolute and relative milestones differ", it)
		}
	}
	// In a run shorter than 6,000 iterations the milestones are never
	// reached, as torch's MultiStepLR with negative milestones.
	short := Config{Iterations: 400, Milestones: []int{-6000, -2000}, Gamma: 0.1}
	for it := range 400 {
		if short.lrScale(it) != 1 {
			t.Fatalf("400 iterations, iteration %d: scale %v, want 1", it, short.lrScale(it))
		}
	}
	bad := DefaultConfig()
	bad.Milestones = []int{-2000, -6000}
	if err := bad.Validate(); err == nil {
		t.Error("decreasing milestones must be an error")
	}
}

// TestExploreAll: exploration reaches the other methods' Student batches
// only with ExploreAll, decayed the same way.
func TestExploreAll(t *testing.T) {
	c := Config{Method: MethodPRT, Explore: 0.2, ExploreDecay: 5000}
	if c.explore(0) != 0 {
		t.Errorf("prt explores without ExploreAll")
	}
	c.ExploreAll = true
	if c.explore(0) != 0.2 || c.explore(2500) != 0.1 || c.explore(6000) != 0 {
		t.Errorf("prt with ExploreAll: %v %v %v, want 0.2 0.1 0", c.explore(0), c.explore(2500), c.explore(6000))
	}
}
