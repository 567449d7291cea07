package replay

import (
	"fmt"
	"math/rand/v2"
)

// Keyed is the sequence reference code's buffer: at most Cap unique
// objects in insertion order, like a Python OrderedDict of bounded size.
// Setting a present key updates its values where it stands (it does not
// become the newest, unlike Buffer.Add); a new key at capacity evicts the
// oldest. SamplePortions draws from it portion-wise by priority. Not safe
// for concurrent use.
type Keyed[S Elem] struct {
	Cap      int
	stateLen int

	slot  map[uint64]int // key -> slot
	order []int          // slots, oldest first, from head
	head  int
	keys  []uint64
	xs    []S
	logR  []float64
	prio  []float64
	free  []int

	// Sampling scratch.
	ps       []float64
	top, bot []int
}

// NewKeyed returns an empty Keyed buffer for objects of stateLen words.
func NewKeyed[S Elem](capacity, stateLen int) (*Keyed[S], error) {
	if capacity < 1 {
		return nil, fmt.Errorf("replay: capacity %d must be at least 1", capacity)
	}
	return &Keyed[S]{Cap: capacity, stateLen: stateLen, slot: make(map[uint64]int)}, nil
}

// Len is the number of stored objects.
func (b *Keyed[S]) Len() int { return len(b.slot) }

// Has reports whether key is stored.
func (b *Keyed[S]) Has(key uint64) bool { _, ok := b.slot[key]; return ok }

// Set stores x under key with its log-reward and priority. A present key
// keeps its place and takes the new values; a new one is the newest, and
// evicts the oldest when the buffer is full.
func (b *Keyed[S]) Set(key uint64, x []S, logR, priority float64) {
	s, ok := b.slot[key]
	if !ok {
		if len(b.slot) >= b.Cap {
			old := b.order[b.head]
			b.head++
			delete(b.slot, b.keys[old])
			b.free = append(b.free, old)
			if b.head > len(b.order)/2 {
				b.order = append(b.order[:0], b.order[b.head:]...)
				b.head = 0
			}
		}
		if n := len(b.free); n > 0 {
			s, b.free = b.free[n-1], b.free[:n-1]
		} else {
			s = len(b.keys)
			b.keys = append(b.keys, 0)
			b.xs = append(b.xs, make([]S, b.stateLen)...)
			b.logR, b.prio = append(b.logR, 0), append(b.prio, 0)
		}
		b.slot[key] = s
		b.keys[s] = key
		b.order = append(b.order, s)
	}
	copy(b.xs[s*b.stateLen:(s+1)*b.stateLen], x)
	b.logR[s], b.prio[s] = logR, priority
}

// SetPriority updates the priority of a stored key and reports whether it
// was stored.
func (b *Keyed[S]) SetPriority(key uint64, priority float64) bool {
	s, ok := b.slot[key]
	if ok {
		b.prio[s] = priority
	}
	return ok
}

// Each calls fn for every object, oldest first, with its key, words (valid
// only during the call), log-reward and priority. Setting the objects in
// this order into an empty buffer of the same capacity rebuilds it.
func (b *Keyed[S]) Each(fn func(key uint64, x []S, logR, priority float64)) {
	for _, s := range b.order[b.head:] {
		fn(b.keys[s], b.xs[s*b.stateLen:(s+1)*b.stateLen], b.logR[s], b.prio[s])
	}
}

// SamplePortions draws n objects with replacement: n/2 uniformly among
// those whose priority is at least the q-th percentile of the priorities
// (linear interpolation, as numpy.percentile) and n/2 uniformly among those
// at most it — the sequence reference code's "50% from the top 10%" with
// q = 90. An object at the threshold belongs to both portions. It appends
// the objects' words to xs, log-rewards to logR and keys to keys.
func (b *Keyed[S]) SamplePortions(n int, q float64, rng *rand.Rand, xs []S, logR []float64, keys []uint64) ([]S, []float64, []uint64) {
	if len(b.slot) == 0 {
		panic("replay: SamplePortions on an empty buffer")
	}
	live := b.order[b.head:]
	b.ps = b.ps[:0]
	for _, s := range live {
		b.ps = append(b.ps, b.prio[s])
	}
	thr, err := Percentile(b.ps, q)
	if err != nil {
		panic(err) // q was checked by the caller; priorities are finite
	}
	b.top, b.bot = b.top[:0], b.bot[:0]
	for _, s := range live {
		if b.prio[s] >= thr {
			b.top = append(b.top, s)
		}
		if b.prio[s] <= thr {
			b.bot = append(b.bot, s)
		}
	}
	for i := range n {
		part := b.top
		if i >= n/2 {
			part = b.bot
		}
		s := part[rng.IntN(len(part))]
		xs = append(xs, b.xs[s*b.stateLen:(s+1)*b.stateLen]...)
		logR = append(logR, b.logR[s])
		keys = append(keys, b.keys[s])
	}
	return xs, logR, keys
}
