package ggns

import (
	"math"
	"slices"
)

// knnClusters partitions the n rows of x (n×d) as the reference's
// get_knn_clusters does (the k-nearest-neighbour clustering of PolyChord,
// Handley et al. 2015): for k = 0, 1, …, maxK−1 it links every point to
// its k nearest neighbours (Euclidean, in float32 as the reference's
// distances; ties by index) and takes as clusters, in turn from the
// lowest-indexed point not yet assigned, the points reachable from it
// along those links through points not yet assigned. It stops at the
// first k whose list of cluster sizes, in order of discovery, equals that
// of k−1 and whose smallest cluster has more than 2d points, and returns
// that partition (the last one, k = maxK−1, if none qualifies): the number
// of clusters and each point's cluster. maxK < 2 returns one cluster.
func knnClusters(x []float32, d, maxK int) (int, []int) {
	n := len(x) / d
	labels := make([]int, n)
	if maxK < 2 || n < 2 {
		return 1, labels
	}
	kMax := min(maxK-1, n-1) // the largest k used
	var nb neighbours
	seen := make([]bool, n)
	queue := make([]int, 0, n)
	var sizes, prev []int
	var count int
	for k := range maxK {
		k = min(k, kMax)
		if k > nb.k {
			// 32 neighbours first (most passes stop below), then all
			// that may be needed.
			want := kMax
			if nb.k == 0 {
				want = min(kMax, 32)
			}
			nb.build(x, d, want)
		}
		clear(seen)
		sizes = sizes[:0]
		for s := range n {
			if seen[s] {
				continue
			}
			c := len(sizes)
			seen[s] = true
			labels[s] = c
			queue = append(queue[:0], s)
			for h := 0; h < len(queue); h++ {
				for _, v := range nb.of(queue[h])[:k] {
					if !seen[v] {
						seen[v] = true
						labels[v] = c
						queue = append(queue, int(v))
					}
				}
			}
			sizes = append(sizes, len(queue))
		}
		count = len(sizes)
		if slices.Equal(sizes, prev) && slices.Min(sizes) > 2*d {
			break
		}
		prev = append(prev[:0], sizes...)
	}
	return count, labels
}

// neighbours holds the k nearest neighbours of every row, nearest first,
// and the squared distances between rows rounded to float32 (the
// reference's precision) when there are at most maxMatrix rows.
type neighbours struct {
	k    int
	idx  []int32
	dist []float32 // n×n, or nil
}

const maxMatrix = 4096

func (nb *neighbours) of(i int) []int32 { return nb.idx[i*nb.k : (i+1)*nb.k] }

func sqDist(a, b []float32) float32 {
	var q float64
	for c, v := range a {
		r := float64(v) - float64(b[c])
		q += r * r
	}
	return float32(q)
}

// build finds the k nearest neighbours of the rows of x (n×d, k < n): for
// each row, the k smallest keys of the squared distance (non-negative
// float32, so its bits order as the values) above the index, kept in a
// bounded max-heap and sorted (all keys sorted when k ≥ n/4).
func (nb *neighbours) build(x []float32, d, k int) {
	n := len(x) / d
	if nb.dist == nil && n <= maxMatrix {
		nb.dist = make([]float32, n*n)
		for i := range n {
			for j := range i {
				q := sqDist(x[i*d:(i+1)*d], x[j*d:(j+1)*d])
				nb.dist[i*n+j], nb.dist[j*n+i] = q, q
			}
		}
	}
	nb.k = k
	nb.idx = slices.Grow(nb.idx[:0], n*k)[:n*k]
	all := 4*k >= n
	heap := make([]uint64, 0, k)
	if all {
		heap = make([]uint64, 0, n)
	}
	for i := range n {
		heap = heap[:0]
		for j := range n {
			if j == i {
				continue
			}
			var q float32
			if nb.dist != nil {
				q = nb.dist[i*n+j]
			} else {
				q = sqDist(x[i*d:(i+1)*d], x[j*d:(j+1)*d])
			}
			key := uint64(math.Float32bits(q))<<32 | uint64(j)
			switch {
			case all:
				heap = append(heap, key)
			case len(heap) < k:
				heap = append(heap, key)
				for c := len(heap) - 1; c > 0; {
					p := (c - 1) / 2
					if heap[p] >= heap[c] {
						break
					}
					heap[p], heap[c] = heap[c], heap[p]
					c = p
				}
			case key < heap[0]:
				heap[0] = key
				for p := 0; ; {
					c := 2*p + 1
					if c >= k {
						break
					}
					if c+1 < k && heap[c+1] > heap[c] {
						c++
					}
					if heap[p] >= heap[c] {
						break
					}
					heap[p], heap[c] = heap[c], heap[p]
					p = c
				}
			}
		}
		slices.Sort(heap)
		for a, key := range heap[:k] {
			nb.idx[i*k+a] = int32(uint32(key))
		}
	}
}
