package replay

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Within a pass, positions drawn at its start index the buffer as it stands
// at each call: after k evictions a position p serves the entry then p-th
// oldest, the one drawn having moved to p-k.
func TestPassPositionsShiftWithEvictions(t *testing.T) {
	b, _ := New[float32](10, 1, Reward)
	b.Passes = true
	for i := range 10 {
		b.Append([]float32{float32(i)}, float64(i), float64(i)) // value i: i-th appended
	}
	rng := rand.New(rand.NewPCG(3, 4))
	xs, _ := b.Sample(5, rng, nil, nil)
	pos, served := b.Pass()
	if len(pos) != 10 || served != 5 {
		t.Fatalf("pass of %d positions, %d served; want ⌊10/5⌋·5 = 10 and 5", len(pos), served)
	}
	for j, x := range xs {
		if x != float32(pos[j]) {
			t.Fatalf("draw %d: x %v at position %d before any eviction", j, x, pos[j])
		}
	}
	for i := 10; i < 13; i++ { // evict the 3 oldest
		b.Append([]float32{float32(i)}, float64(i), float64(i))
	}
	xs, lr := b.Sample(5, rng, nil, nil)
	for j, x := range xs {
		if want := float32(pos[5+j] + 3); x != want || lr[j] != float64(want) {
			t.Errorf("draw %d after 3 evictions: x %v (log R %v), want the entry now at position %d: %v", j, x, lr[j], pos[5+j], want)
		}
	}
	// The pass is used up: the next call starts another.
	b.Sample(5, rng, nil, nil)
	if _, served := b.Pass(); served != 5 {
		t.Errorf("after the pass: %d served of the new one, want 5", served)
	}
}

// A pass's draws follow the rank weights of its start.
func TestPassDrawsFollowRankWeights(t *testing.T) {
	b, _ := New[int32](100, 1, Reward)
	b.Passes = true
	const n = 5
	for k := range n {
		b.Add(uint64(k), []int32{int32(k)}, float64(-k), float64(k))
	}
	w := b.Weights() // by rank: key k has rank n-1-k
	rng := rand.New(rand.NewPCG(1, 2))
	counts := make([]int, n)
	const calls = 40000
	for range calls {
		xs, _ := b.Sample(n, rng, nil, nil)
		for _, x := range xs {
			counts[x]++
		}
	}
	for k := range n {
		p := w[n-1-k]
		got := float64(counts[k]) / (calls * n)
		if se := math.Sqrt(p * (1 - p) / (calls * n)); math.Abs(got-p) > 5*se {
			t.Errorf("key %d: frequency %.4f, weight %.4f (±%.4f)", k, got, p, se)
		}
	}
}

// At the paper's sizes (capacity 5,000, batches of 300, a batch added every
// other draw), passes replay the current top 1% of priorities barely more
// often than uniform sampling would (1%), while fresh draws do about 15
// times that: the audit's simulation of the reference code.
func TestPassesLoseThePriorities(t *testing.T) {
	share := func(passes bool) float64 {
		b, _ := New[float32](5000, 1, Teacher)
		b.Passes = passes
		rng := rand.New(rand.NewPCG(5, 6))
		add := func() {
			for range 300 {
				p := rng.NormFloat64()
				b.Append([]float32{float32(p)}, 0, p) // x carries its priority
			}
		}
		for range 17 {
			add()
		}
		var top, all int
		for it := range 400 {
			if it%2 == 0 {
				add()
			}
			var ps []float64
			b.Each(func(_ uint64, _ []float32, _, p float64) { ps = append(ps, p) })
			slices.Sort(ps)
			cut := ps[len(ps)-len(ps)/100]
			xs, _ := b.Sample(300, rng, nil, nil)
			for _, x := range xs {
				all++
				if float64(x) >= float64(float32(cut)) {
					top++
				}
			}
		}
		return float64(top) / float64(all)
	}
	fresh, passes := share(false), share(true)
	if fresh < 0.10 || passes > 0.05 {
		t.Errorf("share of draws in the current top 1%%: fresh %.3f (want > 0.10), passes %.3f (want < 0.05)", fresh, passes)
	}
	t.Logf("top-1%% share: fresh %.3f, passes %.3f", fresh, passes)
}

// A buffer rebuilt from Each with SetPass continues the pass exactly.
func TestSetPassResumes(t *testing.T) {
	b, _ := New[float32](50, 1, Loss)
	b.Passes = true
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range 70 {
		b.Append([]float32{float32(i)}, float64(i), rng.Float64())
	}
	b.Sample(8, rng, nil, nil)
	b.Append([]float32{70}, 70, 0.5)
	c, _ := New[float32](50, 1, Loss)
	c.Passes = true
	b.Each(func(_ uint64, x []float32, logR, p float64) { c.Append(x, logR, p) })
	pos, served := b.Pass()
	if err := c.SetPass(pos, served); err != nil {
		t.Fatal(err)
	}
	r1, r2 := rand.New(rand.NewPCG(1, 1)), rand.New(rand.NewPCG(1, 1))
	for range 12 { // beyond the pass: the next one draws identically too
		x1, _ := b.Sample(8, r1, nil, nil)
		x2, _ := c.Sample(8, r2, nil, nil)
		if !slices.Equal(x1, x2) {
			t.Fatalf("rebuilt buffer draws %v, original %v", x2, x1)
		}
	}
	if err := c.SetPass([]int{3, 50}, 0); err == nil {
		t.Error("SetPass accepted position 50 in a buffer of 50")
	}
	if err := c.SetPass([]int{3}, 2); err == nil {
		t.Error("SetPass accepted 2 served of 1")
	}
}
