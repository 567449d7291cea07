package replay

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/gfngo/gfn/internal/choice"
)

// Priority names what orders the buffer.
type Priority string

// The orders a buffer can sample by.
const (
	Uniform Priority = "uniform" // no prioritisation
	Reward  Priority = "reward"  // R(x): PRT
	Loss    Priority = "loss"    // δ² of the Student
	Teacher Priority = "teacher" // the Teacher reward R_T: PER
	// Advantage is exp of the Teacher reward's term: the log-of-log
	// reference codes' PER (diffusion samplers and sequences).
	Advantage Priority = "advantage"
)

// Priorities lists the valid priorities.
var Priorities = []Priority{Uniform, Reward, Loss, Teacher, Advantage}

// Elem is the type of a stored object's words: int32 for discrete states,
// float32 for points of R^d.
type Elem interface{ ~int32 | ~float32 }

// Buffer holds up to Cap unique objects (terminal states, points), each a
// vector of stateLen words of type S. Not safe for concurrent use.
type Buffer[S Elem] struct {
	Cap        int
	Priority   Priority
	RankWeight float64
	stateLen   int

	slot map[uint64]int // key -> slot
	keys []uint64
	xs   []S // slot-major states
	logR []float64
	prio []float64
	seq  []uint64 // insertion sequence number of each slot (FIFO order)
	next uint64
	// fifo lists (seq, slot) in insertion order; entries whose seq no
	// longer matches their slot were refreshed or evicted and are skipped.
	fifo []rankEntry
	head int
	used int
	free []int
	// appended counts Append calls, which make the keys of their entries.
	appended uint64
	// byRank lists the entries ordered by priority, highest first (ties
	// oldest first). It is kept up to date incrementally: entries added
	// since the last ordering wait in pending and are merged in, and
	// entries whose slot was refreshed or evicted since are dropped then.
	byRank, pending, merged []rankEntry
	cdf                     []float64 // cumulative rank weights for len(cdf) entries
	cdfWeight               float64   // the RankWeight cdf was built with

	// Passes makes Sample draw as the diffusion reference code's buffer
	// (a PyTorch DataLoader over a WeightedRandomSampler whose iterator
	// outlives the buffer's changes): a pass draws ⌊N/n⌋·n FIFO positions
	// at once with the rank weights of its start, then serves them n at a
	// time over the following calls, each position indexing the buffer
	// as it stands at that call. Once the buffer is full, every eviction
	// shifts the positions onto newer entries, so the draws lose their
	// link to the priorities within a pass.
	Passes bool
	pass   passState

	// HashTies orders entries of equal priority by a fixed pseudo-random
	// permutation of their keys instead of oldest first. With
	// few distinct priorities (PRT's three reward levels on the grid) the
	// rank weights then spread over a class's entries of every age, as
	// the reference's unstable argsort does, instead of favouring the
	// first stored. Set it before the first Sample.
	HashTies bool
}

// rankEntry is a slot as it was when added; it is stale once the slot's
// sequence number changes.
type rankEntry struct {
	seq  uint64
	slot int
}

// New returns an empty buffer for states of stateLen words of type S.
func New[S Elem](capacity, stateLen int, p Priority) (*Buffer[S], error) {
	if capacity < 1 {
		return nil, fmt.Errorf("replay: capacity %d must be at least 1", capacity)
	}
	ok := false
	for _, q := range Priorities {
		ok = ok || q == p
	}
	if !ok {
		return nil, fmt.Errorf("replay: unknown priority %q (allowed: %s)", p, choice.List(Priorities))
	}
	// Storage grows with use: the reference formula gives capacities far
	// beyond what a run fills on the large grids.
	return &Buffer[S]{Cap: capacity, Priority: p, RankWeight: 0.01, stateLen: stateLen, slot: make(map[uint64]int)}, nil
}

// Len is the number of stored states.
func (b *Buffer[S]) Len() int { return len(b.slot) }

// Add stores x (under key) with its log-reward and priority. An x already
// present is refreshed: new values, and it becomes the newest. A new x in a
// full buffer evicts the oldest.
func (b *Buffer[S]) Add(key uint64, x []S, logR, priority float64) {
	s, ok := b.slot[key]
	if !ok {
		if len(b.slot) >= b.Cap {
			b.evictOldest()
		}
		if n := len(b.free); n > 0 {
			s, b.free = b.free[n-1], b.free[:n-1]
		} else {
			s = b.used
			b.used++
			b.keys = append(b.keys, 0)
			b.xs = append(b.xs, make([]S, b.stateLen)...)
			b.logR, b.prio, b.seq = append(b.logR, 0), append(b.prio, 0), append(b.seq, 0)
		}
		b.slot[key] = s
		b.keys[s] = key
	}
	copy(b.xs[s*b.stateLen:(s+1)*b.stateLen], x)
	b.logR[s], b.prio[s] = logR, priority
	b.seq[s] = b.next
	b.fifo = append(b.fifo, rankEntry{b.next, s})
	b.pending = append(b.pending, rankEntry{b.next, s})
	b.next++
}

// Append stores x as a new entry that no other entry equals, as for
// points of R^d, which never repeat: the buffer then keeps every added
// object until FIFO eviction. Do not mix Append with Add on one buffer.
func (b *Buffer[S]) Append(x []S, logR, priority float64) {
	b.appended++
	b.Add(1<<63|b.appended, x, logR, priority)
}

// Each calls fn for every live entry, oldest first (FIFO order), with its
// key, words (valid only during the call), log-reward and priority.
// Re-adding the entries in this order to an empty buffer of the same
// capacity, priority and HashTies rebuilds one that samples identically:
// ranks break ties oldest first (only the relative order matters) or by
// the hashed key, which the entries keep.
func (b *Buffer[S]) Each(fn func(key uint64, x []S, logR, priority float64)) {
	for _, e := range b.fifo[b.head:] {
		if b.seq[e.slot] != e.seq {
			continue // refreshed later or evicted
		}
		s := e.slot
		fn(b.keys[s], b.xs[s*b.stateLen:(s+1)*b.stateLen], b.logR[s], b.prio[s])
	}
}

func (b *Buffer[S]) evictOldest() {
	for {
		e := b.fifo[b.head]
		b.head++
		if b.seq[e.slot] != e.seq {
			continue // stale: refreshed later
		}
		delete(b.slot, b.keys[e.slot])
		b.free = append(b.free, e.slot)
		b.seq[e.slot] = ^uint64(0)
		break
	}
	if b.head > len(b.fifo)/2 { // compact the consumed prefix
		b.fifo = append(b.fifo[:0], b.fifo[b.head:]...)
		b.head = 0
	}
}

// Sample draws n entries with replacement and appends their states to xs
// and log-rewards to logR.
func (b *Buffer[S]) Sample(n int, rng *rand.Rand, xs []S, logR []float64) ([]S, []float64) {
	if len(b.slot) == 0 {
		panic("replay: Sample on an empty buffer")
	}
	if b.Passes {
		return b.samplePass(n, rng, xs, logR)
	}
	b.rank()
	for range n {
		var s int
		if b.Priority == Uniform {
			s = b.byRank[rng.IntN(len(b.byRank))].slot
		} else {
			u := rng.Float64() * b.cdf[len(b.cdf)-1]
			r := sort.SearchFloat64s(b.cdf, u)
			s = b.byRank[min(r, len(b.byRank)-1)].slot
		}
		xs = append(xs, b.xs[s*b.stateLen:(s+1)*b.stateLen]...)
		logR = append(logR, b.logR[s])
	}
	return xs, logR
}

// rank orders the entries by priority (highest first; ties oldest first,
// or by HashTies) and builds the cumulative rank weights. Sorting only the entries added
// since the last call and merging them in keeps this O(N) per call: the
// buffer changes by a batch between samples, and a full sort of a 10⁵
// entry buffer per replay batch dominated training.
func (b *Buffer[S]) rank() {
	if len(b.pending) > 0 || len(b.byRank) != len(b.slot) {
		before := func(x, y rankEntry) bool {
			if b.prio[x.slot] != b.prio[y.slot] {
				return b.prio[x.slot] > b.prio[y.slot]
			}
			if b.HashTies {
				// Keys are unique among live entries and mix64 is a
				// bijection: no new ties. The key, not the insertion
				// number, so that a buffer rebuilt from Each orders alike.
				return mix64(b.keys[x.slot]) < mix64(b.keys[y.slot])
			}
			return x.seq < y.seq
		}
		live := func(e rankEntry) bool { return b.seq[e.slot] == e.seq }
		p := b.pending[:0]
		for _, e := range b.pending {
			if live(e) {
				p = append(p, e)
			}
		}
		sort.Slice(p, func(i, j int) bool { return before(p[i], p[j]) })
		m := b.merged[:0]
		i := 0
		for _, e := range b.byRank {
			if !live(e) {
				continue
			}
			for i < len(p) && before(p[i], e) {
				m = append(m, p[i])
				i++
			}
			m = append(m, e)
		}
		m = append(m, p[i:]...)
		b.byRank, b.merged, b.pending = m, b.byRank, p[:0]
	}
	// The weights depend on the count only.
	n := len(b.byRank)
	if len(b.cdf) != n || b.cdfWeight != b.RankWeight {
		b.cdf, b.cdfWeight = b.cdf[:0], b.RankWeight
		var c float64
		for r := range n {
			c += 1 / (b.RankWeight*float64(n) + float64(r))
			b.cdf = append(b.cdf, c)
		}
	}
}

// Weights returns the sampling probability of each rank (for tests and
// inspection).
func (b *Buffer[S]) Weights() []float64 {
	b.rank()
	w := make([]float64, len(b.cdf))
	prev := 0.0
	for i, c := range b.cdf {
		w[i] = (c - prev) / b.cdf[len(b.cdf)-1]
		prev = c
	}
	return w
}

// mix64 is SplitMix64's finaliser, a bijection of uint64 that scatters
// consecutive values.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
