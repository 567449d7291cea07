package replay

import (
	"fmt"
	"math/rand/v2"
	"sort"
)

// passState is the state of a Buffer with Passes set: the FIFO positions
// drawn at the start of the current pass and how many are served.
type passState struct {
	pos   []int
	next  int
	live  []int // scratch: the live slots, oldest first
	posOf []int // scratch: each slot's FIFO position at the pass's start
}

// liveSlots lists the live slots oldest first (FIFO positions 0, 1, …).
func (b *Buffer[S]) liveSlots() []int {
	b.pass.live = b.pass.live[:0]
	for _, e := range b.fifo[b.head:] {
		if b.seq[e.slot] == e.seq {
			b.pass.live = append(b.pass.live, e.slot)
		}
	}
	return b.pass.live
}

// samplePass serves the next n draws of the current pass, starting a new
// pass when fewer than n are left (see Buffer.Passes).
func (b *Buffer[S]) samplePass(n int, rng *rand.Rand, xs []S, logR []float64) ([]S, []float64) {
	live := b.liveSlots()
	if b.pass.next+n > len(b.pass.pos) {
		b.newPass(live, n, rng)
	}
	for _, p := range b.pass.pos[b.pass.next : b.pass.next+n] {
		// Positions index the buffer as it stands now: after FIFO
		// evictions they name newer entries than the ones drawn.
		s := live[min(p, len(live)-1)]
		xs = append(xs, b.xs[s*b.stateLen:(s+1)*b.stateLen]...)
		logR = append(logR, b.logR[s])
	}
	b.pass.next += n
	return xs, logR
}

// newPass draws the positions of a pass of ⌊N/n⌋ batches of n (at least
// one batch) with the rank weights of the current entries.
func (b *Buffer[S]) newPass(live []int, n int, rng *rand.Rand) {
	N := len(live)
	b.rank()
	if cap(b.pass.posOf) < b.used {
		b.pass.posOf = make([]int, b.used)
	}
	b.pass.posOf = b.pass.posOf[:b.used]
	for i, s := range live {
		b.pass.posOf[s] = i
	}
	b.pass.pos, b.pass.next = b.pass.pos[:0], 0
	for range max(N/n, 1) * n {
		var s int
		if b.Priority == Uniform {
			s = live[rng.IntN(N)]
		} else {
			u := rng.Float64() * b.cdf[len(b.cdf)-1]
			r := sort.SearchFloat64s(b.cdf, u)
			s = b.byRank[min(r, len(b.byRank)-1)].slot
		}
		b.pass.pos = append(b.pass.pos, b.pass.posOf[s])
	}
}

// Pass returns the current pass of a Buffer with Passes set: the FIFO
// positions drawn at its start and how many of them are served. With
// SetPass they let a checkpoint resume mid-pass.
func (b *Buffer[S]) Pass() (positions []int, served int) {
	return b.pass.pos, b.pass.next
}

// SetPass restores a pass that Pass returned, after the buffer's entries
// were re-added oldest first.
func (b *Buffer[S]) SetPass(positions []int, served int) error {
	if served < 0 || served > len(positions) {
		return fmt.Errorf("replay: pass of %d positions with %d served", len(positions), served)
	}
	for _, p := range positions {
		if p < 0 || p >= b.Len() {
			return fmt.Errorf("replay: pass position %d outside the buffer's %d entries", p, b.Len())
		}
	}
	b.pass.pos, b.pass.next = append(b.pass.pos[:0], positions...), served
	return nil
}
