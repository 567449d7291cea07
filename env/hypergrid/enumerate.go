package hypergrid

import "math"

// Enumeration of the DAG for exact metrics. Non-terminal states (all
// coordinates ≤ H-2) are numbered in mixed radix H-1, which is a topological
// order because every action increases the index. Terminal states are the
// stop-terminals (same numbering) followed by, for each axis j, the states
// with x_j = H-1.

func ipow(b, e int) int {
	r := 1
	for range e {
		r *= b
	}
	return r
}

// NumStates is the number of non-terminal states, (H-1)^d, or -1 if it
// overflows an int.
func (g *Grid) NumStates() int {
	if float64(g.D)*math.Log2(float64(g.H-1)) > 62 {
		return -1
	}
	return ipow(g.H-1, g.D)
}

// NumTerminals is (H-1)^d + d·(H-1)^(d-1) as a float64 (it can exceed an int
// for large grids).
func (g *Grid) NumTerminals() float64 {
	m := float64(g.H - 1)
	return math.Pow(m, float64(g.D)) + float64(g.D)*math.Pow(m, float64(g.D-1))
}

// State writes non-terminal state i into s.
func (g *Grid) State(i int, s []int32) {
	for j := range g.D {
		s[j] = int32(i % (g.H - 1))
		i /= g.H - 1
	}
	s[g.D] = 0
}

// StateIndex is the index of non-terminal s.
func (g *Grid) StateIndex(s []int32) int {
	k := 0
	for j := g.D - 1; j >= 0; j-- {
		k = k*(g.H-1) + int(s[j])
	}
	return k
}

// Terminal writes terminal state i into x.
func (g *Grid) Terminal(i int, x []int32) {
	n := g.NumStates()
	if i < n {
		g.State(i, x)
		x[g.D] = 1
		return
	}
	i -= n
	per := n / (g.H - 1)
	axis, rest := i/per, i%per
	for j := range g.D {
		if j == axis {
			x[j] = int32(g.H - 1)
			continue
		}
		x[j] = int32(rest % (g.H - 1))
		rest /= g.H - 1
	}
	x[g.D] = 0
}

// TerminalIndex is the index of terminal x.
func (g *Grid) TerminalIndex(x []int32) int {
	if x[g.D] != 0 {
		return g.StateIndex(x)
	}
	n := g.NumStates()
	axis := -1
	for j, v := range x[:g.D] {
		if int(v) == g.H-1 {
			axis = j
		}
	}
	k := 0
	for j := g.D - 1; j >= 0; j-- {
		if j != axis {
			k = k*(g.H-1) + int(x[j])
		}
	}
	return n + axis*(n/(g.H-1)) + k
}

// Cells spreads a distribution over terminal indices onto the H^d grid
// cells (by TerminalKey), for plotting.
func (g *Grid) Cells(p []float64) []float64 {
	v := make([]float64, ipow(g.H, g.D))
	x := make([]int32, g.D+1)
	for i, m := range p {
		g.Terminal(i, x)
		v[g.TerminalKey(x)] += m
	}
	return v
}
