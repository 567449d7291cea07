package ot

import "math"

// best2 returns row i's column of least key c_ij − v_j, that key, and the
// second least key (+Inf if n = 1), exactly: from the k-d tree, or from
// the row's cache when that provably holds both.
func (s *solver) best2(i int32) (j1 int32, k1, k2 float64) {
	if s.tree == nil {
		return s.best2Cached(i, 0)
	}
	sel := &s.sel
	sel.reset(min(2, s.n))
	d := s.d
	s.stack = s.tree.query(s.x[int(i)*d:(int(i)+1)*d], sel, s.stack)
	if sel.size == 1 {
		return sel.cols[0], sel.keys[0], math.Inf(1)
	}
	// A max-heap of two: the root is the larger.
	return sel.cols[1], sel.keys[1], sel.keys[0]
}

const (
	// theta is the factor by which ε falls from one auction phase to the
	// next.
	theta = 4
	// epsMin, times the cost scale, is the last phase's ε. The exact
	// solve that follows needs only short augmenting paths from there.
	epsMin = 1e-6
	// maxBidsPerRow caps a phase's bids at that many per row. Auction
	// phases end in theory; the cap guards against float64 rounding
	// swallowing a bid increment. Stopping early costs time, not
	// exactness.
	maxBidsPerRow = 200
)

// auction lowers the column potentials v towards optimal ones by a
// forward auction with ε-scaling (Bertsekas, 1988): a free row bids for
// its best column (least c_ij − v_j), lowering v_j by the margin over its
// second best plus ε, and evicts the column's owner. A phase ends with
// every row assigned, within nε of optimal; ε then falls by theta and all
// rows start free again, keeping v. Only v is kept in the end: the
// auction is a preconditioner for the exact solve, whose augmenting paths
// are short once v is nearly optimal.
//
// v only decreases, which keeps the k-d tree's and the caches' bounds
// valid. Without the tree, bids come from the caches within ε (a bid at
// most ε off is still an auction bid, with 2ε for ε), so rows re-cache
// only when their cache has gone stale by more than ε.
func (s *solver) auction(eps, epsMin float64) {
	n := s.n
	owner := make([]int32, n)
	queue := make([]int32, 0, n)
	for ; eps >= epsMin; eps /= theta {
		for j := range owner {
			owner[j] = -1
		}
		queue = queue[:0]
		for i := range n {
			queue = append(queue, int32(i))
		}
		bids := 0
		for h := 0; h < len(queue); h++ {
			if bids++; bids > maxBidsPerRow*n {
				return
			}
			if h > n && h*2 > len(queue) {
				// Drop the consumed front of the queue.
				queue = append(queue[:0], queue[h:]...)
				h = 0
			}
			i := queue[h]
			var j1 int32
			var k1, k2 float64
			if s.tree != nil {
				j1, k1, k2 = s.best2(i)
			} else {
				j1, k1, k2 = s.best2Cached(i, eps) // within ε is enough here
			}
			inc := eps
			if !math.IsInf(k2, 1) {
				inc += max(k2-k1, 0)
			}
			s.v[j1] -= inc
			if s.tree != nil {
				s.tree.lowered(j1)
				s.tree.refresh()
			}
			if o := owner[j1]; o >= 0 {
				queue = append(queue, o)
			}
			owner[j1] = i
		}
	}
}

// best2Cached is best2 from row i's cache, within slack: the cached
// column of least current key is returned if that key is within slack of
// base_i, the bound on every uncached key (so no column is better by more
// than slack); otherwise the row is re-cached first. The second key
// returned is at most the true second least (base_i stands in for the
// uncached columns).
func (s *solver) best2Cached(i int32, slack float64) (j1 int32, k1, k2 float64) {
	for {
		k1, k2, j1 = math.Inf(1), math.Inf(1), -1
		for _, e := range s.adj[i] {
			key := e.c - s.v[e.j]
			if key < k2 {
				if key < k1 || (key == k1 && e.j < j1) {
					k2 = k1
					k1, j1 = key, e.j
				} else {
					k2 = key
				}
			}
		}
		b := s.base[i]
		if j1 >= 0 && k1 <= b+slack {
			return j1, k1, min(k2, b)
		}
		s.recache(i, min(int(s.grow[i]), s.n))
	}
}
