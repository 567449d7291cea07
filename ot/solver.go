package ot

import (
	"math"
	"slices"
)

// solver finds a minimum-cost perfect matching between the rows of x and
// of y (n points each in R^d, cost c_ij = |x_i − y_j|²). Its exact part
// is successive shortest augmenting paths with dual potentials, the
// method of LAPJV's augmentation phase, on the complete bipartite graph
// but without ever storing it.
//
// Invariant of that part: for every pair, matched or not, cached or not,
// c_ij − u_i − v_j ≥ 0, with equality on matched pairs. A perfect
// matching with this invariant is optimal by LP duality.
//
// Each row keeps a cache of candidate columns (its edges), and a bound
// base_i ≤ c_ij − v_j for every column j not in the cache. Column
// potentials only ever decrease, so a bound once true stays true, and the
// reduced cost of any uncached pair of row i is at least base_i − u_i. The
// Dijkstra search therefore treats the uncached columns of a row as one
// more heap entry keyed by that bound; only if it pops before a free
// column is found is the row expanded (its costs to all n columns
// computed and more of the cheapest cached). The search is thus exactly
// Dijkstra on the complete graph, while touching only a few edges per row
// on typical data.
type solver struct {
	n, d   int
	x, y   []float64
	u, v   []float64
	rowCol []int32 // column matched to each row, -1 if free
	colRow []int32 // row matched to each column, -1 if free

	adj   [][]edge   // cached edges per row
	base  []float64  // per row: lower bound on c_ij − v_j for uncached j
	grow  []int32    // per row: how many columns the next expansion caches
	sel   candidates // expansion scratch
	stack []bound    // k-d tree search scratch

	// Dijkstra scratch, reused across searches; dist is +Inf and state
	// unseen outside a search.
	dist  []float64
	pred  []int32   // row from which a column was reached
	rdist []float64 // distance of each row reached in the current search
	pos   []int32   // next cached edge of each row reached to relax
	state []uint8
	seen  []int32 // columns whose dist was set in the current search
	final []int32 // matched columns finalized in the current search
	heap  minHeap

	tree *kdtree // over y with weights v if d ≤ treeMaxDim, else nil
}

// edge is a cached column j of a row, with its cost c and its key
// c − v_j when cached. As v_j only decreases, key − u_i is a lower bound
// on the edge's current reduced cost; a row's cache is sorted by key.
type edge struct {
	j   int32
	c   float64
	key float64
}

const (
	unseen uint8 = iota
	queued
	finalized
)

func newSolver(x, y []float64, d int) *solver {
	n := len(x) / d
	s := &solver{
		n: n, d: d, x: x, y: y,
		u:      make([]float64, n),
		v:      make([]float64, n),
		rowCol: make([]int32, n),
		colRow: make([]int32, n),
		adj:    make([][]edge, n),
		base:   make([]float64, n),
		grow:   make([]int32, n),
		dist:   make([]float64, n),
		pred:   make([]int32, n),
		rdist:  make([]float64, n),
		pos:    make([]int32, n),
		state:  make([]uint8, n),
	}
	for i := range n {
		s.rowCol[i] = -1
		s.colRow[i] = -1
		s.dist[i] = math.Inf(1)
	}
	return s
}

// augment runs a Dijkstra search on reduced costs from the free row r,
// stopping at the first free column popped, then updates the potentials
// and flips the path. A free column is always reachable (the graph is
// complete).
func (s *solver) augment(r int32) {
	s.seen = s.seen[:0]
	s.final = s.final[:0]
	s.heap.items = s.heap.items[:0]
	s.scan(r, 0)
	var end int32
	var delta float64
	for {
		it := s.heap.pop()
		if it.rank == rankRow {
			// The bound on row i's uncached columns is the smallest key
			// left: cache more of its columns and relax them.
			i := it.j
			if int(s.pos[i]) == len(s.adj[i]) {
				s.expand(i)
				s.pos[i] = 0
			}
			s.more(i)
			continue
		}
		j := it.j
		if s.state[j] == finalized || it.d != s.dist[j] {
			continue // stale entry
		}
		s.state[j] = finalized
		if s.colRow[j] < 0 {
			end, delta = j, it.d
			break
		}
		s.final = append(s.final, j)
		s.scan(s.colRow[j], it.d)
	}
	// Potentials: a finalized column j (distance d_j ≤ δ) and its row
	// move by δ − d_j, which keeps every reduced cost non-negative
	// (cached or not: u_i rises by δ − d_i only where every column
	// left unfinalized is at least δ away) and makes the path tight.
	s.u[r] += delta
	for _, j := range s.final {
		t := delta - s.dist[j]
		s.v[j] -= t
		s.u[s.colRow[j]] += t
	}
	if s.tree != nil {
		for _, j := range s.final {
			s.tree.lowered(j)
		}
		s.tree.refresh()
	}
	for j := end; ; {
		i := s.pred[j]
		next := s.rowCol[i]
		s.rowCol[i], s.colRow[j] = j, i
		if i == r {
			break
		}
		j = next
	}
	for _, j := range s.seen {
		s.dist[j] = math.Inf(1)
		s.state[j] = unseen
	}
}

// scan starts row i, reached at distance d: it relaxes the row's first
// cached edges and queues a bound for the rest (see more).
func (s *solver) scan(i int32, d float64) {
	s.rdist[i] = d
	s.pos[i] = 0
	s.more(i)
}

// more relaxes row i's cached edges from pos[i] on, in key order, while
// their lower bound d_i + key − u_i is no larger than the heap's least
// entry, then queues one entry for the rest: the next cached key, or
// base_i once the cache is used up. Popping that entry resumes here (or
// expands the row), so a row costs only the edges a search can use.
func (s *solver) more(i int32) {
	d, ui := s.rdist[i], s.u[i]
	a := s.adj[i]
	k := int(s.pos[i])
	for k < len(a) {
		e := a[k]
		lb := d + max(e.key-ui, 0)
		if k > int(s.pos[i]) && len(s.heap.items) > 0 && lb > s.heap.items[0].d {
			break
		}
		k++
		j := e.j
		if s.state[j] == finalized {
			continue
		}
		rc := e.c - ui - s.v[j]
		if rc < 0 {
			rc = 0 // rounding; the invariant says rc ≥ 0
		}
		nd := d + rc
		if nd < s.dist[j] {
			if s.state[j] == unseen {
				s.state[j] = queued
				s.seen = append(s.seen, j)
			}
			s.dist[j] = nd
			s.pred[j] = i
			rank := rankFree
			if s.colRow[j] >= 0 {
				rank = rankBusy
			}
			s.heap.push(heapItem{d: nd, j: j, rank: rank})
		}
	}
	s.pos[i] = int32(k)
	b := s.base[i]
	if k < len(a) {
		// Normally a[k].key ≤ base_i; min keeps the bound exact where a
		// cache came from rounded keys (see scanner.margin).
		b = min(b, a[k].key)
	}
	if !math.IsInf(b, 1) {
		s.heap.push(heapItem{d: d + max(b-ui, 0), j: i, rank: rankRow})
	}
}

// expand replaces row i's cache by its grow[i] columns of least
// c_ij − v_j under the current v (the least reduced costs, as u_i is
// common to the row) and sets base_i to the largest of those keys, a lower
// bound on the keys of the columns left out. Replacing rather than adding
// keeps caches short: as potentials move, a row's useful columns change.
// If the bound did not rise (a row whose best columns did not change),
// grow[i] doubles, so repeated expansions make progress and a row caches
// every column after at most log₂ n of them.
func (s *solver) expand(i int32) {
	old := s.base[i]
	for {
		m := min(int(s.grow[i]), s.n)
		s.recache(i, m)
		if math.IsInf(s.base[i], 1) || s.base[i] > old {
			return
		}
		s.grow[i] = int32(min(2*m, s.n))
	}
}

// recache makes row i's cache its m columns of least current key.
func (s *solver) recache(i int32, m int) {
	d := s.d
	xi := s.x[int(i)*d : (int(i)+1)*d]
	sel := &s.sel
	sel.reset(m)
	if s.tree != nil {
		s.stack = s.tree.query(xi, sel, s.stack)
	} else {
		for j := range s.n {
			c := sqdist(xi, s.y[j*d:(j+1)*d])
			if key := c - s.v[j]; key < sel.th {
				sel.insert(key, int32(j), c)
			}
		}
	}
	s.setCache(int(i), sel)
}

// candidates keeps the m smallest keys seen (ties: the first seen) in a
// max-heap; th is the key a newcomer must beat.
type candidates struct {
	keys []float64
	cols []int32
	cost []float64
	m    int
	size int
	th   float64
}

func (h *candidates) reset(m int) {
	if cap(h.keys) < m {
		h.keys = make([]float64, m)
		h.cols = make([]int32, m)
		h.cost = make([]float64, m)
	}
	h.keys, h.cols, h.cost = h.keys[:m], h.cols[:m], h.cost[:m]
	h.m, h.size, h.th = m, 0, math.Inf(1)
}

// insert adds a candidate whose key is below th.
func (h *candidates) insert(key float64, j int32, c float64) {
	keys, cols, cost := h.keys, h.cols, h.cost
	n := h.size
	if n < h.m {
		k := n
		for k > 0 {
			p := (k - 1) / 2
			if keys[p] >= key {
				break
			}
			keys[k], cols[k], cost[k] = keys[p], cols[p], cost[p]
			k = p
		}
		keys[k], cols[k], cost[k] = key, j, c
		h.size++
		if h.size == h.m {
			h.th = keys[0]
		}
		return
	}
	k := 0
	for {
		ch := 2*k + 1
		if ch >= n {
			break
		}
		if ch+1 < n && keys[ch+1] > keys[ch] {
			ch++
		}
		if keys[ch] <= key {
			break
		}
		keys[k], cols[k], cost[k] = keys[ch], cols[ch], cost[ch]
		k = ch
	}
	keys[k], cols[k], cost[k] = key, j, c
	h.th = keys[0]
}

// sorted appends the candidates to a in increasing key order, emptying
// the heap (heapsort: the max-heap is already built).
func (h *candidates) sorted(a []edge) []edge {
	keys, cols, cost := h.keys, h.cols, h.cost
	n := h.size
	k0 := len(a)
	a = slices.Grow(a, n)[:k0+n]
	for n > 0 {
		n--
		a[k0+n] = edge{cols[0], cost[0], keys[0]}
		key, j, c := keys[n], cols[n], cost[n]
		k := 0
		for {
			ch := 2*k + 1
			if ch >= n {
				break
			}
			if ch+1 < n && keys[ch+1] > keys[ch] {
				ch++
			}
			if keys[ch] <= key {
				break
			}
			keys[k], cols[k], cost[k] = keys[ch], cols[ch], cost[ch]
			k = ch
		}
		if n > 0 {
			keys[k], cols[k], cost[k] = key, j, c
		}
	}
	h.size = 0
	return a
}

// Heap ranks break ties between equal distances: a free column first, so
// that a search ends as soon as it can (on clustered data many reduced
// costs are exactly 0), and a row's uncached bound last, because
// expanding a row costs n distance evaluations.
const (
	rankFree uint8 = iota
	rankBusy
	rankRow
)

// heapItem is a column j (or, with rankRow, the uncached columns of row j)
// reached at distance d.
type heapItem struct {
	d    float64
	j    int32
	rank uint8
}

func (a heapItem) less(b heapItem) bool {
	if a.d != b.d {
		return a.d < b.d
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.j < b.j
}

// minHeap is a binary heap of heapItems with lazy deletion (stale entries
// are skipped when popped), which is cheaper than decrease-key here.
type minHeap struct{ items []heapItem }

func (h *minHeap) push(it heapItem) {
	h.items = append(h.items, it)
	a := h.items
	k := len(a) - 1
	for k > 0 {
		p := (k - 1) / 2
		if !it.less(a[p]) {
			break
		}
		a[k] = a[p]
		k = p
	}
	a[k] = it
}

func (h *minHeap) pop() heapItem {
	a := h.items
	top := a[0]
	last := a[len(a)-1]
	a = a[:len(a)-1]
	h.items = a
	n := len(a)
	if n == 0 {
		return top
	}
	k := 0
	for {
		c := 2*k + 1
		if c >= n {
			break
		}
		if c+1 < n && a[c+1].less(a[c]) {
			c++
		}
		if !a[c].less(last) {
			break
		}
		a[k] = a[c]
		k = c
	}
	a[k] = last
	return top
}
