package replay

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestFIFOEvictionAndRefresh(t *testing.T) {
	b, _ := New[int32](3, 1, Reward)
	for k := range 3 {
		b.Add(uint64(k), []int32{int32(k)}, 0, 1)
	}
	b.Add(0, []int32{0}, 0, 1) // refresh: 0 becomes the newest
	b.Add(3, []int32{3}, 0, 1) // evicts the oldest, which is now 1
	if b.Len() != 3 {
		t.Fatalf("len %d", b.Len())
	}
	for _, k := range []uint64{0, 2, 3} {
		if _, ok := b.slot[k]; !ok {
			t.Errorf("key %d missing", k)
		}
	}
	if _, ok := b.slot[1]; ok {
		t.Error("key 1 should have been evicted")
	}
	b.Add(4, []int32{4}, 0, 1) // evicts 2
	if _, ok := b.slot[2]; ok {
		t.Error("key 2 should have been evicted")
	}
}

func TestRankWeightsAndSamplingDistribution(t *testing.T) {
	b, _ := New[int32](100, 1, Reward)
	const n = 5
	for k := range n {
		// priority k: rank of key k is n-1-k
		b.Add(uint64(k), []int32{int32(k)}, float64(-k), float64(k))
	}
	w := b.Weights()
	var z float64
	for r := range n {
		z += 1 / (0.01*n + float64(r))
	}
	for r := range n {
		if want := 1 / (0.01*n + float64(r)) / z; math.Abs(w[r]-want) > 1e-12 {
			t.Errorf("rank %d weight %v, want %v", r, w[r], want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	counts := make([]int, n)
	const draws = 200000
	xs, lr := b.Sample(draws, rng, nil, nil)
	for i, x := range xs {
		counts[x]++
		if lr[i] != float64(-x) {
			t.Fatalf("log-reward %v for x %d", lr[i], x)
		}
	}
	for k := range n {
		want := w[n-1-k]
		if got := float64(counts[k]) / draws; math.Abs(got-want) > 0.005 {
			t.Errorf("key %d (rank %d): frequency %.4f, weight %.4f", k, n-1-k, got, want)
		}
	}
}

func TestUniform(t *testing.T) {
	b, _ := New[int32](10, 2, Uniform)
	for k := range 4 {
		b.Add(uint64(k), []int32{int32(k), 7}, 0, float64(k*k))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	counts := make([]int, 4)
	xs, _ := b.Sample(40000, rng, nil, nil)
	for i := 0; i < len(xs); i += 2 {
		counts[xs[i]]++
		if xs[i+1] != 7 {
			t.Fatal("state words mixed up")
		}
	}
	for k, c := range counts {
		if math.Abs(float64(c)/40000-0.25) > 0.01 {
			t.Errorf("key %d frequency %v", k, float64(c)/40000)
		}
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := New[int32](0, 1, Reward); err == nil {
		t.Error("capacity 0 accepted")
	}
	if _, err := New[int32](5, 1, "lifo"); err == nil {
		t.Error("unknown priority accepted")
	}
}

// Against a plain ordered list with the reference's OrderedDict semantics.
func TestMatchesOrderedDict(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	b, _ := New[int32](7, 1, Reward)
	var order []uint64 // oldest first
	for step := 0; step < 5000; step++ {
		k := uint64(rng.IntN(20))
		idx := -1
		for i, o := range order {
			if o == k {
				idx = i
			}
		}
		if idx >= 0 {
			order = append(order[:idx], order[idx+1:]...)
		} else if len(order) >= 7 {
			order = order[1:]
		}
		order = append(order, k)
		b.Add(k, []int32{int32(k)}, 0, rng.Float64())
		if b.Len() != len(order) {
			t.Fatalf("step %d: len %d, want %d", step, b.Len(), len(order))
		}
		for _, o := range order {
			if _, ok := b.slot[o]; !ok {
				t.Fatalf("step %d: key %d missing", step, o)
			}
		}
	}
}

// The incrementally merged order equals a full sort by (priority desc,
// insertion asc, or hashed key asc with HashTies) after any mix of adds, refreshes and evictions, with
// priority ties.
func TestIncrementalRankMatchesFullSort(t *testing.T) {
	for _, hash := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(3, 9))
		b, _ := New[int32](50, 1, Reward)
		b.HashTies = hash
		for round := range 200 {
			for range rng.IntN(40) {
				k := uint64(rng.IntN(120))
				// Few distinct priorities, so ties are common.
				b.Add(k, []int32{int32(k)}, 0, float64(rng.IntN(6)))
			}
			if b.Len() == 0 {
				continue
			}
			b.Sample(1, rng, nil, nil) // orders the buffer
			var want []int
			for _, s := range b.slot {
				want = append(want, s)
			}
			tie := slices.Clone(b.seq)
			if hash {
				for i := range tie {
					tie[i] = mix64(b.keys[i])
				}
			}
			sortSlots(want, b.prio, tie)
			if len(b.byRank) != len(want) {
				t.Fatalf("hash %v, round %d: %d ranked entries, %d stored", hash, round, len(b.byRank), len(want))
			}
			for i, e := range b.byRank {
				if e.slot != want[i] || b.seq[e.slot] != e.seq {
					t.Fatalf("hash %v, round %d: rank %d holds slot %d, full sort has %d", hash, round, i, e.slot, want[i])
				}
			}
		}
	}
}

// TestHashTiesSpreadAges: among entries of one priority, oldest-first
// ranks them by age (rank correlation 1), HashTies in an order unrelated
// to age (|correlation| small), so the rank weights no longer favour the
// first stored.
func TestHashTiesSpreadAges(t *testing.T) {
	const n = 2000
	for _, c := range []struct {
		hash     bool
		min, max float64
	}{{false, 0.999, 1.0001}, {true, -0.1, 0.1}} {
		b, _ := New[int32](n, 1, Reward)
		b.HashTies = c.hash
		for k := range uint64(n) {
			b.Add(k, []int32{int32(k)}, 0, 1) // one priority class
		}
		b.Sample(1, rand.New(rand.NewPCG(1, 2)), nil, nil)
		// Spearman's rho between age rank (seq order) and priority rank.
		var d2 float64
		for r, e := range b.byRank {
			d := float64(r) - float64(e.seq) // seqs are 0..n-1 in insertion order
			d2 += d * d
		}
		rho := 1 - 6*d2/(n*(n*n-1))
		if rho < c.min || rho > c.max {
			t.Errorf("HashTies %v: rank-age correlation %.3f, want in [%v, %v]", c.hash, rho, c.min, c.max)
		}
	}
}

func sortSlots(s []int, prio []float64, tie []uint64) {
	for i := 1; i < len(s); i++ { // insertion sort: obviously right
		for j := i; j > 0; j-- {
			a, c := s[j-1], s[j]
			if prio[c] > prio[a] || (prio[c] == prio[a] && tie[c] < tie[a]) {
				s[j-1], s[j] = c, a
				continue
			}
			break
		}
	}
}

// BenchmarkAddSample is one replay cycle on a full 100,000-entry buffer:
// 16 new states, then a batch of 16 drawn by rank.
func BenchmarkAddSample(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	buf, _ := New[int32](100000, 4, Teacher)
	x := make([]int32, 4)
	k := uint64(0)
	for range 100000 {
		buf.Add(k, x, 0, rng.Float64())
		k++
	}
	var xs []int32
	var logR []float64
	for b.Loop() {
		for range 16 {
			buf.Add(k, x, 0, rng.Float64())
			k++
		}
		xs, logR = buf.Sample(16, rng, xs[:0], logR[:0])
	}
}

// TestAppendKeepsDistinctFloatPoints: points of R^d appended are distinct
// entries even when equal, evicted FIFO, and come back bit for bit.
func TestAppendKeepsDistinctFloatPoints(t *testing.T) {
	b, err := New[float32](3, 2, Reward)
	if err != nil {
		t.Fatal(err)
	}
	pts := [][]float32{{1, 2}, {1, 2}, {-0.5, 3.25}, {7, -7}}
	for i, x := range pts {
		b.Append(x, float64(i), float64(i))
	}
	if b.Len() != 3 {
		t.Fatalf("Len %d after 4 appends at capacity 3, want 3", b.Len())
	}
	rng := rand.New(rand.NewPCG(1, 1))
	xs, logR := b.Sample(200, rng, nil, nil)
	seen := map[float64]bool{}
	for k, lr := range logR {
		seen[lr] = true
		want := pts[int(lr)]
		if xs[2*k] != want[0] || xs[2*k+1] != want[1] {
			t.Fatalf("draw %d: point %v with log R %v, want %v", k, xs[2*k:2*k+2], lr, want)
		}
	}
	if seen[0] || !seen[1] || !seen[2] || !seen[3] {
		t.Errorf("entries drawn %v: the oldest (0) must be evicted and the rest kept", seen)
	}
}

// TestEachRebuildsIdenticalBuffer: a buffer rebuilt from Each's entries,
// oldest first, draws the same sequence as the original for the same
// random stream (after refreshes and evictions).
func TestEachRebuildsIdenticalBuffer(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	orig, _ := New[int32](50, 2, Teacher)
	for i := range 300 {
		k := uint64(rng.IntN(80))
		orig.Add(k, []int32{int32(k), int32(i)}, float64(i), float64(rng.IntN(10)))
	}
	re, _ := New[int32](50, 2, Teacher)
	orig.Each(func(key uint64, x []int32, logR, p float64) { re.Add(key, x, logR, p) })
	if re.Len() != orig.Len() {
		t.Fatalf("rebuilt %d entries, original %d", re.Len(), orig.Len())
	}
	a, la := orig.Sample(500, rand.New(rand.NewPCG(9, 9)), nil, nil)
	b, lb := re.Sample(500, rand.New(rand.NewPCG(9, 9)), nil, nil)
	if !slices.Equal(a, b) || !slices.Equal(la, lb) {
		t.Error("the rebuilt buffer draws a different sequence")
	}
}

// TestRebuiltBufferContinuesIdentically: for every priority and tie order, a buffer
// rebuilt from Each mid-use (its rank order partly merged, entries
// refreshed and evicted, priorities tied) goes on exactly as the original
// under further adds, refreshes, evictions and draws: what a resumed
// training run needs.
func TestRebuiltBufferContinuesIdentically(t *testing.T) {
	type variant struct {
		p    Priority
		hash bool
	}
	var vs []variant
	for _, p := range Priorities {
		vs = append(vs, variant{p, false}, variant{p, true})
	}
	for _, c := range vs {
		p := c.p
		rng := rand.New(rand.NewPCG(5, 5))
		add := func(b *Buffer[int32], r *rand.Rand, i int) {
			k := uint64(r.IntN(60))
			b.Add(k, []int32{int32(k), int32(i)}, float64(i), float64(r.IntN(4)))
		}
		orig, _ := New[int32](40, 2, p)
		orig.HashTies = c.hash
		for i := range 200 {
			add(orig, rng, i)
			if i%25 == 0 {
				orig.Sample(8, rng, nil, nil)
			}
		}
		re, _ := New[int32](40, 2, p)
		re.HashTies = c.hash
		orig.Each(func(key uint64, x []int32, logR, prio float64) { re.Add(key, x, logR, prio) })
		ra, rb := rand.New(rand.NewPCG(6, 6)), rand.New(rand.NewPCG(6, 6))
		for i := 200; i < 400; i++ {
			add(orig, ra, i)
			add(re, rb, i)
			if i%10 == 0 {
				a, la := orig.Sample(16, ra, nil, nil)
				b, lb := re.Sample(16, rb, nil, nil)
				if !slices.Equal(a, b) || !slices.Equal(la, lb) {
					t.Fatalf("%s, hash ties %v: draws differ after %d adds", p, c.hash, i)
				}
			}
		}
		var ka, kb []uint64
		orig.Each(func(key uint64, _ []int32, _, _ float64) { ka = append(ka, key) })
		re.Each(func(key uint64, _ []int32, _, _ float64) { kb = append(kb, key) })
		if !slices.Equal(ka, kb) {
			t.Errorf("%s, hash ties %v: entries differ: %v vs %v", p, c.hash, ka, kb)
		}
	}
}
