package replay

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// keyedModel is a brute-force model of a bounded Python OrderedDict:
// a slice of keys in insertion order.
type keyedModel struct {
	cap  int
	keys []uint64
	prio map[uint64]float64
}

func (m *keyedModel) set(k uint64, p float64) {
	if _, ok := m.prio[k]; !ok {
		m.keys = append(m.keys, k)
		if len(m.keys) > m.cap {
			delete(m.prio, m.keys[0])
			m.keys = m.keys[1:]
		}
	}
	m.prio[k] = p
}

func TestKeyedMatchesBoundedOrderedDict(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b, err := NewKeyed[int32](7, 2)
	if err != nil {
		t.Fatal(err)
	}
	m := &keyedModel{cap: 7, prio: map[uint64]float64{}}
	for range 2000 {
		k := uint64(rng.IntN(15))
		p := rng.Float64()
		if rng.IntN(4) == 0 {
			if got, want := b.SetPriority(k, p), m.prio[k] != 0 || slices.Contains(m.keys, k); got != want {
				t.Fatalf("SetPriority(%d) = %v, want %v", k, got, want)
			}
			if _, ok := m.prio[k]; ok {
				m.prio[k] = p
			}
		} else {
			b.Set(k, []int32{int32(k), -int32(k)}, float64(k), p)
			m.set(k, p)
		}
		var keys []uint64
		b.Each(func(key uint64, x []int32, logR, pr float64) {
			keys = append(keys, key)
			if x[0] != int32(key) || x[1] != -int32(key) || logR != float64(key) || pr != m.prio[key] {
				t.Fatalf("entry %d: x %v log R %v priority %v, want priority %v", key, x, logR, pr, m.prio[key])
			}
		})
		if !slices.Equal(keys, m.keys) {
			t.Fatalf("order %v, want %v", keys, m.keys)
		}
		if b.Len() != len(m.keys) {
			t.Fatalf("len %d, want %d", b.Len(), len(m.keys))
		}
	}
}

// TestSamplePortionsDistribution compares draw frequencies with the
// probabilities computed by hand: half the draws uniform over the objects
// at or above the 90th percentile of priorities, half over those at or
// below it.
func TestSamplePortionsDistribution(t *testing.T) {
	b, _ := NewKeyed[int32](100, 1)
	const N = 20
	for k := range N {
		b.Set(uint64(k), []int32{int32(k)}, 0, float64(k%10)) // ties: two of each priority
	}
	// 90th percentile of {0,0,1,1,…,9,9}: position 0.9·19 = 17.1 between
	// sorted[17] = 8 and sorted[18] = 9.
	thr := 8.1
	var top, bot []int
	for k := range N {
		if float64(k%10) >= thr {
			top = append(top, k)
		}
		if float64(k%10) <= thr {
			bot = append(bot, k)
		}
	}
	want := make([]float64, N)
	for _, k := range top {
		want[k] += 0.5 / float64(len(top))
	}
	for _, k := range bot {
		want[k] += 0.5 / float64(len(bot))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	count := make([]float64, N)
	const draws = 200000
	var xs []int32
	var lr []float64
	var keys []uint64
	for range draws / 32 {
		xs, lr, keys = b.SamplePortions(32, 90, rng, xs[:0], lr[:0], keys[:0])
		for i, k := range keys {
			if uint64(xs[i]) != k {
				t.Fatalf("key %d with object %d", k, xs[i])
			}
			count[k]++
		}
	}
	for k := range N {
		p := count[k] / draws
		se := math.Sqrt(want[k] * (1 - want[k]) / draws)
		if math.Abs(p-want[k]) > 5*se+1e-9 {
			t.Errorf("object %d: frequency %.4f, want %.4f (±%.4f)", k, p, want[k], se)
		}
	}
}
