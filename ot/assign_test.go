package ot

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// bruteForce is the least Σ_i c[i*n+π(i)] over all permutations π.
func bruteForce(n int, c []float64) float64 {
	perm := make([]int, n)
	used := make([]bool, n)
	best := math.Inf(1)
	var rec func(i int, sum float64)
	rec = func(i int, sum float64) {
		if i == n {
			best = min(best, sum)
			return
		}
		for j := range n {
			if !used[j] {
				used[j], perm[i] = true, j
				rec(i+1, sum+c[i*n+j])
				used[j] = false
			}
		}
	}
	rec(0, 0)
	return best
}

// hungarian is an independent O(n³) solver (Kuhn–Munkres with
// potentials, columns added one row at a time), returning the minimum.
func hungarian(n int, c []float64) float64 {
	u := make([]float64, n+1)
	v := make([]float64, n+1)
	p := make([]int, n+1) // p[j]: row (1-based) matched to column j
	way := make([]int, n+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		minv := make([]float64, n+1)
		used := make([]bool, n+1)
		for j := range minv {
			minv[j] = math.Inf(1)
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], math.Inf(1), 0
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				if cur := c[(i0-1)*n+j-1] - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= n; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	var total float64
	for j := 1; j <= n; j++ {
		total += c[(p[j]-1)*n+j-1]
	}
	return total
}

// checkPerm fails unless perm is a permutation of 0..n-1 whose cost is
// total.
func checkPerm(t *testing.T, n int, c []float64, perm []int, total float64) {
	t.Helper()
	if len(perm) != n {
		t.Fatalf("perm has %d entries, want %d", len(perm), n)
	}
	seen := make([]bool, n)
	var sum float64
	for i, j := range perm {
		if j < 0 || j >= n || seen[j] {
			t.Fatalf("perm %v is not a permutation", perm)
		}
		seen[j] = true
		sum += c[i*n+j]
	}
	if sum != total {
		t.Fatalf("perm costs %v, Assign reported %v", sum, total)
	}
}

func TestAssignBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gens := []struct {
		name string
		gen  func() float64
	}{
		{"float", func() float64 { return rng.Float64() }},
		{"signed", func() float64 { return 100 * rng.NormFloat64() }},
		{"int0-3", func() float64 { return float64(rng.IntN(4)) }},
		{"binary", func() float64 { return float64(rng.IntN(2)) }},
		{"constant", func() float64 { return 7 }},
		{"huge", func() float64 { return 1e12 * float64(rng.IntN(5)) }},
	}
	for _, g := range gens {
		for n := 0; n <= 8; n++ {
			for rep := range 6 {
				c := make([]float64, n*n)
				for k := range c {
					c[k] = g.gen()
				}
				perm, total, err := Assign(n, c)
				if err != nil {
					t.Fatal(err)
				}
				checkPerm(t, n, c, perm, total)
				if want := bruteForce(n, c); math.Abs(total-want) > 1e-12*max(1, math.Abs(want)) {
					t.Errorf("%s n=%d rep %d: Assign %v, brute force %v", g.name, n, rep, total, want)
				}
			}
		}
	}
}

func TestAssignHungarian(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{50, 120, 200} {
		for _, kind := range []string{"float", "int", "points"} {
			c := make([]float64, n*n)
			switch kind {
			case "float":
				for k := range c {
					c[k] = rng.Float64()
				}
			case "int":
				for k := range c {
					c[k] = float64(rng.IntN(10))
				}
			case "points":
				c = costMatrix(gmm25(rng, n, first20), gmm25(rng, n, nil), 2)
			}
			perm, total, err := Assign(n, c)
			if err != nil {
				t.Fatal(err)
			}
			checkPerm(t, n, c, perm, total)
			if want := hungarian(n, c); math.Abs(total-want) > 1e-11*max(1, math.Abs(want)) {
				t.Errorf("%s n=%d: Assign %v, Hungarian %v", kind, n, total, want)
			}
		}
	}
}

func TestAssignErrors(t *testing.T) {
	for _, tc := range []struct {
		n    int
		c    []float64
		want string
	}{
		{-1, nil, "n = -1"},
		{2, []float64{1, 2, 3}, "3 entries"},
		{2, []float64{1, math.NaN(), 3, 4}, "c[1] (row 0, column 1) is NaN"},
		{2, []float64{1, 2, math.Inf(-1), 4}, "c[2] (row 1, column 0) is -Inf"},
	} {
		_, _, err := Assign(tc.n, tc.c)
		if err == nil || !strings.HasPrefix(err.Error(), "ot: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Assign(%d, %v): error %v, want one naming %q", tc.n, tc.c, err, tc.want)
		}
	}
}
