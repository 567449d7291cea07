package ot

import (
	"fmt"
	"math"
)

// Assign solves the linear assignment problem for the n×n cost matrix c,
// stored row-major (c[i*n+j] is the cost of giving column j to row i): it
// returns a permutation perm minimising Σ_i c[i*n+perm[i]], and that
// minimum. The solution is exact up to float64 rounding in the dual
// variables; ties are broken deterministically.
//
// The algorithm is Jonker and Volgenant's (LAPJV, Computing 38, 1987):
// column reduction, reduction transfer, two rounds of augmenting row
// reduction, then a shortest augmenting path (Dijkstra on reduced costs)
// from each row left free. It takes O(n²) memory for c and at most O(n³)
// time, typically far less. Every cost must be finite.
func Assign(n int, c []float64) (perm []int, total float64, err error) {
	if n < 0 {
		return nil, 0, fmt.Errorf("ot: Assign with n = %d < 0", n)
	}
	if len(c) != n*n {
		return nil, 0, fmt.Errorf("ot: Assign cost has %d entries, want n*n = %d", len(c), n*n)
	}
	for k, ck := range c {
		if math.IsNaN(ck) || math.IsInf(ck, 0) {
			return nil, 0, fmt.Errorf("ot: Assign cost c[%d] (row %d, column %d) is %v", k, k/n, k%n, ck)
		}
	}
	perm = make([]int, n)
	if n == 0 {
		return perm, 0, nil
	}
	x := make([]int, n) // column assigned to each row, -1 if none
	y := make([]int, n) // row assigned to each column, -1 if none
	jv(n, c, x, y)
	for i, j := range x {
		perm[i] = j
		total += c[i*n+j]
	}
	return perm, total, nil
}

// jv fills x (row → column) and y (column → row) with an optimal
// assignment. Column prices v are kept so that row i's reduced cost of
// column j is c_ij − v_j − u_i ≥ 0, with u_i = c_{i,x_i} − v_{x_i} implicit
// for assigned rows: an assigned row always holds a column of least
// reduced cost, which is the optimality condition once every row is
// assigned.
func jv(n int, c []float64, x, y []int) {
	v := make([]float64, n)
	matches := make([]int, n)
	for i := range x {
		x[i] = -1
	}
	// Column reduction: each column's price is its least cost; the row
	// achieving it takes the column if it has none yet. Going from the
	// last column down is JV's choice; it only fixes the tie-breaking.
	for j := n - 1; j >= 0; j-- {
		imin, m := 0, c[j]
		for i := 1; i < n; i++ {
			if c[i*n+j] < m {
				imin, m = i, c[i*n+j]
			}
		}
		v[j] = m
		matches[imin]++
		if matches[imin] == 1 {
			x[imin], y[j] = j, imin
		} else {
			y[j] = -1
		}
	}

	// Reduction transfer: a row that won exactly one column lowers that
	// column's price by its margin over its second-best column, so that the
	// row's dual variable becomes as large as feasibility allows.
	free := make([]int, 0, n)
	for i := range n {
		switch matches[i] {
		case 0:
			free = append(free, i)
		case 1:
			j1 := x[i]
			m := math.Inf(1)
			row := c[i*n : i*n+n]
			for j, cij := range row {
				if j != j1 && cij-v[j] < m {
					m = cij - v[j]
				}
			}
			if n > 1 {
				v[j1] -= m
			}
		}
	}

	// Augmenting row reduction: an auction without ε. Each free row bids
	// for its best column, lowering its price by the gap to the row's
	// second best, and evicts the previous owner. Prices only fall, so
	// assigned rows keep a least-reduced-cost column. With float64 a gap
	// can be lost to rounding and bidding wars can be long, so the bids
	// are capped; rows still free are left to the augmenting paths, which
	// are exact whatever state this phase stops in.
	bids := 0
	maxBids := 8 * n
	for range 2 {
		k := 0
		prev := len(free)
		nfree := 0
		for k < prev {
			i := free[k]
			k++
			row := c[i*n : i*n+n]
			u1, j1 := row[0]-v[0], 0
			u2, j2 := math.Inf(1), -1
			for j := 1; j < n; j++ {
				h := row[j] - v[j]
				if h < u2 {
					if h >= u1 {
						u2, j2 = h, j
					} else {
						u2, j2 = u1, j1
						u1, j1 = h, j
					}
				}
			}
			i0 := y[j1]
			lowered := false
			if nv := v[j1] - (u2 - u1); u1 < u2 && nv < v[j1] && j2 >= 0 {
				v[j1] = nv
				lowered = true
			} else if i0 >= 0 && j2 >= 0 {
				// Tie: take the second-best column instead, so that the
				// evicted row is not simply the one that just bid.
				j1 = j2
				i0 = y[j1]
			}
			x[i], y[j1] = j1, i
			if i0 >= 0 {
				x[i0] = -1
				bids++
				if lowered && bids < maxBids {
					k--
					free[k] = i0
				} else {
					free[nfree] = i0
					nfree++
				}
			}
		}
		// Rows evicted on ties were collected at the front of free; the
		// next round (or the augmentation) handles them.
		free = free[:nfree]
		if bids >= maxBids {
			break
		}
	}

	// Augmentation: Dijkstra on reduced costs from each free row until a
	// free column is reached. Columns are kept in collist as
	// [0, low) scanned, [low, up) at the current minimum distance,
	// [up, n) the rest.
	d := make([]float64, n)
	pred := make([]int, n)
	collist := make([]int, n)
	for _, f := range free {
		for j := range n {
			d[j] = c[f*n+j] - v[j]
			pred[j] = f
			collist[j] = j
		}
		low, up, last := 0, 0, 0
		end := -1
		var m float64
		for end < 0 {
			if up == low {
				last = low - 1
				m = d[collist[up]]
				up++
				for k := up; k < n; k++ {
					j := collist[k]
					h := d[j]
					if h <= m {
						if h < m {
							up = low
							m = h
						}
						collist[k] = collist[up]
						collist[up] = j
						up++
					}
				}
				for k := low; k < up; k++ {
					if y[collist[k]] < 0 {
						end = collist[k]
						break
					}
				}
				if end >= 0 {
					break
				}
			}
			j1 := collist[low]
			low++
			i := y[j1]
			row := c[i*n : i*n+n]
			u1 := row[j1] - v[j1] - m
			for k := up; k < n; k++ {
				j := collist[k]
				h := row[j] - v[j] - u1
				if h < d[j] {
					pred[j] = i
					d[j] = h
					if h == m {
						if y[j] < 0 {
							end = j
							break
						}
						collist[k] = collist[up]
						collist[up] = j
						up++
					}
				}
			}
		}
		// Update the prices of the scanned columns so reduced costs stay
		// non-negative and the new path is tight.
		for k := 0; k <= last; k++ {
			j := collist[k]
			v[j] += d[j] - m
		}
		for {
			i := pred[end]
			y[end] = i
			end, x[i] = x[i], end
			if i == f {
				break
			}
		}
	}
}
