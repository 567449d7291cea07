package ot

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// W2 returns the 2-Wasserstein distance between the uniform empirical
// measures on the rows of x and of y: n points each in R^d, stored
// row-major, with squared Euclidean ground cost. It is exact (see the
// package documentation); Match also returns the optimal pairing.
//
// The error, prefixed "ot: ", names the bad argument: d < 1, sets of
// different sizes, empty sets, a length that is not a multiple of d, or
// the first NaN or infinite coordinate.
func W2[F float32 | float64](x, y []F, d int) (float64, error) {
	_, c, err := Match(x, y, d)
	if err != nil {
		return 0, err
	}
	return math.Sqrt(c), nil
}

// Match returns an optimal pairing of the rows of x with the rows of y,
// row i of x going to row perm[i] of y, and its mean squared distance
// W2² = (1/n) Σ_i |x_i − y_perm[i]|², the minimum over all permutations.
// The result is deterministic: it depends neither on GOMAXPROCS nor on
// the run.
func Match[F float32 | float64](x, y []F, d int) (perm []int, w2sq float64, err error) {
	if err := check(x, y, d); err != nil {
		return nil, 0, err
	}
	xs, ys := widen(x), widen(y)
	n := len(x) / d
	s := solve(xs, ys, d, n, true)
	perm = make([]int, n)
	var sum float64
	for i, j := range s.rowCol {
		perm[i] = int(j)
		sum += sqdist(xs[i*d:(i+1)*d], ys[int(j)*d:(int(j)+1)*d])
	}
	return perm, sum / float64(n), nil
}

func check[F float32 | float64](x, y []F, d int) error {
	switch {
	case d < 1:
		return fmt.Errorf("ot: dimension d = %d, want d ≥ 1", d)
	case len(x) != len(y):
		return fmt.Errorf("ot: x has %d values and y has %d, want equal sizes", len(x), len(y))
	case len(x) == 0:
		return errors.New("ot: empty point sets")
	case len(x)%d != 0:
		return fmt.Errorf("ot: %d values is not a multiple of d = %d", len(x), d)
	}
	for _, s := range []struct {
		name string
		v    []F
	}{{"x", x}, {"y", y}} {
		for k, a := range s.v {
			if f := float64(a); math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("ot: %s[%d] (point %d, coordinate %d) is %v", s.name, k, k/d, k%d, f)
			}
		}
	}
	return nil
}

func widen[F float32 | float64](a []F) []float64 {
	b := make([]float64, len(a))
	for k, v := range a {
		b[k] = float64(v)
	}
	return b
}

const (
	// treeMaxDim is the largest dimension for which columns are searched
	// with a k-d tree; above it boxes prune too little and brute force
	// (n·d per row) is faster.
	treeMaxDim = 4

	// With the tree, a query is cheap and exact: rows cache few columns
	// (nearK once the auction is over, expandK when a search re-caches
	// one).
	nearK   = 8
	expandK = 16

	// Without it, a row's cache is all its bids and searches usually see:
	// scanK columns, taken from a full pass (and re-taken from a row's n
	// costs when it runs out).
	scanK = 128
)

// solve returns an optimal assignment of the n rows of x to the n rows of
// y, in three steps. Candidates: a k-d tree over y in low dimension, else
// each row's scanK columns of least c_ij − v_j from a full pass after
// column reduction (v_j = min_i c_ij). Preconditioning: an ε-scaling
// auction moves v close to optimal potentials. Exact solve: every row
// takes its column of least c_ij − v_j if free, and shortest augmenting
// paths assign the rest; the auction only decides where they start (tests
// turn it off to exercise the exact solve alone).
func solve(x, y []float64, d, n int, precondition bool) *solver {
	s := newSolver(x, y, d)
	scale := costScale(x, y, d)
	if !(scale > 0) {
		scale = 1 // all points coincide: every pairing is optimal
	}
	eps0 := scale / 8
	if d <= treeMaxDim {
		s.tree = newKDTree(y, d, s.v)
		for i := range n {
			s.grow[i] = int32(min(expandK, n))
		}
	} else {
		// Column reduction first: in high dimension a few columns are the
		// nearest neighbours of many rows ("hubs"), and starting from
		// v = 0 the auction's price war over them costs many re-cachings.
		// The prices then need only fine moves, so ε starts small.
		eps0 = scale / 4096
		cols := newScanner(y, x, d, 1)
		cols.run(nil)
		for j := range n {
			// Less the error margin, so v_j ≤ min_i c_ij for sure.
			s.v[j] = cols.cost[j] - 2*cols.margin(j)
		}
		m := min(scanK, n)
		rows := newScanner(x, y, d, m)
		rows.run(s.v)
		var sel candidates
		for i := range n {
			s.grow[i] = int32(m)
			sel.reset(m)
			for t := range int(rows.cnt[i]) {
				j, c := rows.col[i*m+t], rows.cost[i*m+t]
				sel.insert(c-s.v[j], j, c)
			}
			s.setCache(i, &sel)
			if !math.IsInf(s.base[i], 1) {
				s.base[i] -= 2 * rows.margin(i)
			}
		}
	}

	if precondition {
		s.auction(eps0, scale*epsMin)
	}

	if s.tree != nil {
		// Each row caches its nearK columns of least c_ij − v_j.
		m := min(nearK, n)
		forChunks(n, func(lo, hi int) {
			var sel candidates
			var st []bound
			for i := lo; i < hi; i++ {
				sel.reset(m)
				st = s.tree.query(x[i*d:(i+1)*d], &sel, st)
				s.setCache(i, &sel)
			}
		})
	}

	// Each row takes its column of least key if still free: the edge is
	// tight with u_i = that key, and u is feasible.
	var free []int32
	for i := range n {
		j, k, _ := s.best2(int32(i))
		s.u[i] = k
		if s.colRow[j] < 0 {
			s.rowCol[i], s.colRow[j] = j, int32(i)
		} else {
			free = append(free, int32(i))
		}
	}
	for _, r := range free {
		s.augment(r)
	}
	return s
}

// setCache makes row i's cache the candidates in sel (emptying it) and
// base_i the largest of their keys, or +Inf if they are all n columns.
func (s *solver) setCache(i int, sel *candidates) {
	full := sel.m >= s.n
	th := sel.th
	s.adj[i] = sel.sorted(s.adj[i][:0])
	if full {
		s.base[i] = math.Inf(1)
	} else {
		s.base[i] = th
	}
}

// costScale is a typical cost, E|x − y|² for x and y drawn independently
// from the two sets: the spread of each set about its mean plus the
// squared distance between the means. It is 0 only when all points
// coincide.
func costScale(x, y []float64, d int) float64 {
	n := len(x) / d
	var s float64
	for k := range d {
		var mx, my float64
		for i := range n {
			mx += x[i*d+k]
			my += y[i*d+k]
		}
		mx /= float64(n)
		my /= float64(n)
		var vx, vy float64
		for i := range n {
			a, b := x[i*d+k]-mx, y[i*d+k]-my
			vx += a * a
			vy += b * b
		}
		s += (vx+vy)/float64(n) + (mx-my)*(mx-my)
	}
	return s
}

// forChunks calls body on consecutive ranges covering [0, n), from
// GOMAXPROCS goroutines. Results must depend only on the range, never on
// which goroutine ran it.
func forChunks(n int, body func(lo, hi int)) {
	const chunk = 64
	nchunk := (n + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), nchunk)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				c := int(next.Add(1) - 1)
				if c >= nchunk {
					return
				}
				body(c*chunk, min((c+1)*chunk, n))
			}
		})
	}
	wg.Wait()
}
