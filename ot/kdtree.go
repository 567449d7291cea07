package ot

import (
	"math"
	"slices"
)

// kdtree indexes a point set for the query "the m points p minimising
// |q − p|² − w_p", where w is a per-point weight that may only decrease
// between queries (the column potentials v). Each node keeps its bounding
// box and an upper bound on w over its points, so |q − box|² − max w is a
// lower bound on every key below it, and a branch-and-bound search visits
// only the nodes that can beat the m-th best key found so far. In low
// dimension (d = 2 here) that is a few leaves per query instead of all n
// points.
type kdtree struct {
	d       int
	pts     []float64 // points in tree order, row-major
	idx     []int32   // original index of each point in tree order
	nodes   []kdnode
	box     []float64 // per node: d lower then d upper bounds
	maxW    []float64 // per node: upper bound on w over its points
	leaf    []int32   // per original point: its leaf node
	w       []float64 // weights by original index, shared with the caller
	dirty   []int32   // leaves whose maxW may be stale
	isDirty []bool
}

type kdnode struct {
	lo, hi      int32 // range of tree order
	left, right int32 // children, -1 for a leaf
	parent      int32
}

const leafSize = 16

func newKDTree(p []float64, d int, w []float64) *kdtree {
	n := len(p) / d
	t := &kdtree{d: d, idx: make([]int32, n), leaf: make([]int32, n), w: w}
	for i := range t.idx {
		t.idx[i] = int32(i)
	}
	t.build(p, 0, n, -1)
	t.pts = make([]float64, 0, len(p))
	for _, i := range t.idx {
		t.pts = append(t.pts, p[int(i)*d:(int(i)+1)*d]...)
	}
	t.maxW = make([]float64, len(t.nodes))
	t.isDirty = make([]bool, len(t.nodes))
	t.refreshAll()
	return t
}

// build makes the node for idx[lo:hi], splitting at the median of the
// widest coordinate, and returns its number.
func (t *kdtree) build(p []float64, lo, hi int, parent int32) int32 {
	d := t.d
	id := int32(len(t.nodes))
	t.nodes = append(t.nodes, kdnode{lo: int32(lo), hi: int32(hi), left: -1, right: -1, parent: parent})
	for range d {
		t.box = append(t.box, math.Inf(1))
	}
	for range d {
		t.box = append(t.box, math.Inf(-1))
	}
	b := t.box[len(t.box)-2*d:]
	for _, i := range t.idx[lo:hi] {
		for k := range d {
			c := p[int(i)*d+k]
			b[k], b[d+k] = min(b[k], c), max(b[d+k], c)
		}
	}
	if hi-lo <= leafSize {
		for _, i := range t.idx[lo:hi] {
			t.leaf[i] = id
		}
		return id
	}
	sk, wide := 0, -1.0
	for k := range d {
		if e := b[d+k] - b[k]; e > wide {
			sk, wide = k, e
		}
	}
	slices.SortFunc(t.idx[lo:hi], func(a, b int32) int {
		ca, cb := p[int(a)*d+sk], p[int(b)*d+sk]
		switch {
		case ca < cb:
			return -1
		case ca > cb:
			return 1
		}
		return int(a) - int(b)
	})
	mid := (lo + hi) / 2
	l := t.build(p, lo, mid, id)
	r := t.build(p, mid, hi, id)
	t.nodes[id].left, t.nodes[id].right = l, r
	return id
}

// refreshAll recomputes every node's maxW.
func (t *kdtree) refreshAll() {
	for id := len(t.nodes) - 1; id >= 0; id-- { // children come after parents
		nd := t.nodes[id]
		if nd.left < 0 {
			t.maxW[id] = t.leafMax(nd)
		} else {
			t.maxW[id] = max(t.maxW[nd.left], t.maxW[nd.right])
		}
	}
}

func (t *kdtree) leafMax(nd kdnode) float64 {
	m := math.Inf(-1)
	for _, i := range t.idx[nd.lo:nd.hi] {
		m = max(m, t.w[i])
	}
	return m
}

// lowered records that w of point j decreased. Until refresh the stale
// bounds are still valid upper bounds, only looser.
func (t *kdtree) lowered(j int32) {
	l := t.leaf[j]
	if !t.isDirty[l] {
		t.isDirty[l] = true
		t.dirty = append(t.dirty, l)
	}
}

// refresh recomputes maxW of the leaves marked by lowered and of their
// ancestors, stopping up a path where nothing changes.
func (t *kdtree) refresh() {
	for _, l := range t.dirty {
		t.isDirty[l] = false
		m := t.leafMax(t.nodes[l])
		if m == t.maxW[l] {
			continue
		}
		t.maxW[l] = m
		for id := t.nodes[l].parent; id >= 0; id = t.nodes[id].parent {
			nd := t.nodes[id]
			nm := max(t.maxW[nd.left], t.maxW[nd.right])
			if nm == t.maxW[id] {
				break
			}
			t.maxW[id] = nm
		}
	}
	t.dirty = t.dirty[:0]
}

// boxDist2 is the squared distance from q to node id's box, shrunk by a
// few ulps so that rounding cannot make it exceed a point's computed
// squared distance.
func (t *kdtree) boxDist2(q []float64, id int32) float64 {
	d := t.d
	b := t.box[int(id)*2*d : int(id+1)*2*d]
	var s float64
	if d == 2 {
		var e0, e1 float64
		if q0 := q[0]; q0 < b[0] {
			e0 = b[0] - q0
		} else if q0 > b[2] {
			e0 = q0 - b[2]
		}
		if q1 := q[1]; q1 < b[1] {
			e1 = b[1] - q1
		} else if q1 > b[3] {
			e1 = q1 - b[3]
		}
		s = float64(e0*e0) + float64(e1*e1)
	} else {
		for k, qk := range q {
			if lo := b[k]; qk < lo {
				e := lo - qk
				s += float64(e * e)
			} else if hi := b[d+k]; qk > hi {
				e := qk - hi
				s += float64(e * e)
			}
		}
	}
	return s * (1 - 1e-15)
}

// bound is a node to visit with the lower bound on its keys.
type bound struct {
	id int32
	lb float64
}

// query offers to sel every point whose key |q − p|² − w_p can be among
// the sel.m smallest, in the order a depth-first search nearer-child-first
// meets them. Points are offered with their original index and exact
// squared distance. The stack is scratch, returned for reuse (queries may
// run concurrently, each with its own stack and sel).
func (t *kdtree) query(q []float64, sel *candidates, stack []bound) []bound {
	d := t.d
	st := append(stack[:0], bound{0, math.Inf(-1)})
	for len(st) > 0 {
		b := st[len(st)-1]
		st = st[:len(st)-1]
		if b.lb >= sel.th {
			continue
		}
		nd := t.nodes[b.id]
		if nd.left < 0 {
			pts := t.pts[int(nd.lo)*d : int(nd.hi)*d]
			idx := t.idx[nd.lo:nd.hi]
			if d == 2 {
				q0, q1 := q[0], q[1]
				for k, j := range idx {
					e0, e1 := q0-pts[2*k], q1-pts[2*k+1]
					c := float64(e0*e0) + float64(e1*e1)
					if key := c - t.w[j]; key < sel.th {
						sel.insert(key, j, c)
					}
				}
				continue
			}
			for k, j := range idx {
				c := sqdist(q, pts[k*d:(k+1)*d])
				if key := c - t.w[j]; key < sel.th {
					sel.insert(key, j, c)
				}
			}
			continue
		}
		// Push the farther child first so the nearer one is searched first.
		l := bound{nd.left, t.boxDist2(q, nd.left) - t.maxW[nd.left]}
		r := bound{nd.right, t.boxDist2(q, nd.right) - t.maxW[nd.right]}
		if l.lb < r.lb {
			l, r = r, l
		}
		if l.lb < sel.th {
			st = append(st, l)
		}
		if r.lb < sel.th {
			st = append(st, r)
		}
	}
	return st
}
