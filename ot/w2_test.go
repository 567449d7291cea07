package ot

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// pointSets are the data W2 is tested on: the evaluation targets (two
// dimensions with a k-d tree, 32 with brute force), their hard case (a
// sampler missing modes), and ties (a lattice with repeated points).
func pointSets(rng *rand.Rand, n int) []struct {
	name string
	d    int
	x, y []float32
} {
	return []struct {
		name string
		d    int
		x, y []float32
	}{
		{"gmm25", 2, gmm25(rng, n, nil), gmm25(rng, n, nil)},
		{"gmm25-missing5", 2, gmm25(rng, n, first20), gmm25(rng, n, nil)},
		{"manywell", 32, manywell(rng, n), manywell(rng, n)},
		{"uniform-d1", 1, uniform(rng, n, 1), uniform(rng, n, 1)},
		{"uniform-d3", 3, uniform(rng, n, 3), uniform(rng, n, 3)},
		{"uniform-d5", 5, uniform(rng, n, 5), uniform(rng, n, 5)},
		{"lattice-d2", 2, lattice(rng, n, 2), lattice(rng, n, 2)},
		{"lattice-d6", 6, lattice(rng, n, 6), lattice(rng, n, 6)},
	}
}

func TestMatchAgainstAssign(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10, 60, 200, 500} {
		for _, ps := range pointSets(rng, n) {
			c := costMatrix(ps.x, ps.y, ps.d)
			_, total, err := Assign(n, c)
			if err != nil {
				t.Fatal(err)
			}
			want := total / float64(n)
			perm, w2sq, err := Match(ps.x, ps.y, ps.d)
			if err != nil {
				t.Fatal(err)
			}
			checkPerm(t, n, c, perm, sum(n, c, perm))
			if got := mean(n, c, perm); math.Abs(got-w2sq) > 1e-13*max(1, w2sq) {
				t.Errorf("%s n=%d: Match reports %v, its pairing costs %v", ps.name, n, w2sq, got)
			}
			if math.Abs(w2sq-want) > 1e-12*max(1e-3, want) {
				t.Errorf("%s n=%d: W2² %v, dense assignment %v", ps.name, n, w2sq, want)
			}
			if n >= 200 {
				// The exact solve alone, without the auction's potentials:
				// long augmenting paths and many re-cachings.
				s := solve(widen(ps.x), widen(ps.y), ps.d, n, false)
				p := make([]int, n)
				for i, j := range s.rowCol {
					p[i] = int(j)
				}
				checkPerm(t, n, c, p, sum(n, c, p))
				if got := mean(n, c, p); math.Abs(got-want) > 1e-12*max(1e-3, want) {
					t.Errorf("%s n=%d without auction: W2² %v, dense assignment %v", ps.name, n, got, want)
				}
			}
		}
	}
}

func mean(n int, c []float64, perm []int) float64 {
	var s float64
	for i, j := range perm {
		s += c[i*n+j]
	}
	return s / float64(n)
}

// sum is the cost of a pairing.
func sum(n int, c []float64, perm []int) float64 {
	var s float64
	for i, j := range perm {
		s += c[i*n+j]
	}
	return s
}

// TestCertificate checks optimality at sizes the dense solver is too slow
// for: the final potentials must satisfy c_ij − u_i − v_j ≥ 0 for all n²
// pairs (up to rounding) with equality on the matching, which proves the
// matching optimal by LP duality.
func TestCertificate(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 500
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for k, ps := range pointSets(rng, n)[:3] {
		x, y := widen(ps.x), widen(ps.y)
		d := ps.d
		// Half the time without the auction, so that the exact solve
		// does all the work (long augmenting paths, many re-cachings).
		s := solve(x, y, d, n, k%2 == 0)
		var worst, worstMatched float64
		for i := range n {
			for j := range n {
				c := sqdist(x[i*d:(i+1)*d], y[j*d:(j+1)*d])
				rc := (c - s.u[i] - s.v[j]) / (1 + math.Abs(c) + math.Abs(s.u[i]) + math.Abs(s.v[j]))
				worst = min(worst, rc)
				if s.rowCol[i] == int32(j) {
					worstMatched = max(worstMatched, math.Abs(rc))
				}
			}
		}
		if worst < -1e-13 || worstMatched > 1e-13 {
			t.Errorf("%s n=%d: least relative reduced cost %.3g, largest on the matching %.3g", ps.name, n, worst, worstMatched)
		}
	}
}

func TestW2Invariances(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, ps := range pointSets(rng, 300)[:3] {
		d := ps.d
		n := len(ps.x) / d
		x := widen(ps.x)
		if w, err := W2(x, x, d); err != nil || w != 0 {
			t.Errorf("%s: W2(x, x) = %v, %v", ps.name, w, err)
		}
		p := make([]float64, len(x))
		for i, k := range rng.Perm(n) {
			copy(p[i*d:(i+1)*d], x[k*d:(k+1)*d])
		}
		if w, err := W2(x, p, d); err != nil || w != 0 {
			t.Errorf("%s: W2(x, permuted x) = %v, %v", ps.name, w, err)
		}
		// Translating one set by a moves W2 to exactly |a|: the cross term
		// of any pairing sums to 0, so the identity stays optimal.
		shift := make([]float64, len(x))
		var a2 float64
		for k := range d {
			a := 0.25 * float64(k+1)
			a2 += a * a
			for i := range n {
				shift[i*d+k] = x[i*d+k] + a
			}
		}
		if w, err := W2(x, shift, d); err != nil || math.Abs(w-math.Sqrt(a2)) > 1e-12*math.Sqrt(a2) {
			t.Errorf("%s: W2(x, x + a) = %v, %v, want |a| = %v", ps.name, w, err, math.Sqrt(a2))
		}
		wxy, err1 := W2(ps.x, ps.y, d)
		wyx, err2 := W2(ps.y, ps.x, d)
		if err1 != nil || err2 != nil || math.Abs(wxy-wyx) > 1e-13*wxy {
			t.Errorf("%s: W2(x, y) = %v, W2(y, x) = %v (%v, %v)", ps.name, wxy, wyx, err1, err2)
		}
	}
}

// TestDeterministic: the same input gives the same pairing whatever the
// number of goroutines.
func TestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, ps := range pointSets(rng, 700)[:3] {
		var perms [][]int
		for _, procs := range []int{1, 2, 3} {
			runtime.GOMAXPROCS(procs)
			perm, _, err := Match(ps.x, ps.y, ps.d)
			if err != nil {
				t.Fatal(err)
			}
			perms = append(perms, perm)
		}
		if !slices.Equal(perms[0], perms[1]) || !slices.Equal(perms[0], perms[2]) {
			t.Errorf("%s: pairing depends on GOMAXPROCS", ps.name)
		}
	}
}

func TestW2Errors(t *testing.T) {
	nan32 := float32(math.NaN())
	inf32 := float32(math.Inf(1))
	for _, tc := range []struct {
		x, y []float32
		d    int
		want string
	}{
		{[]float32{1, 2}, []float32{1, 2}, 0, "d = 0"},
		{[]float32{1, 2}, []float32{1, 2}, -3, "d = -3"},
		{[]float32{1, 2}, []float32{1, 2, 3, 4}, 2, "x has 2 values and y has 4"},
		{nil, nil, 2, "empty"},
		{[]float32{}, []float32{}, 1, "empty"},
		{[]float32{1, 2, 3}, []float32{1, 2, 3}, 2, "3 values is not a multiple of d = 2"},
		{[]float32{1, 2, 3, nan32}, []float32{1, 2, 3, 4}, 2, "x[3] (point 1, coordinate 1) is NaN"},
		{[]float32{1, 2, 3, 4}, []float32{inf32, 2, 3, 4}, 2, "y[0] (point 0, coordinate 0) is +Inf"},
	} {
		if _, err := W2(tc.x, tc.y, tc.d); err == nil || !strings.HasPrefix(err.Error(), "ot: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("W2(%v, %v, %d): error %v, want one naming %q", tc.x, tc.y, tc.d, err, tc.want)
		}
	}
	if _, err := W2([]float64{0, math.Inf(-1)}, []float64{0, 0}, 1); err == nil || !strings.Contains(err.Error(), "x[1] (point 1, coordinate 0) is -Inf") {
		t.Errorf("W2 float64 with -Inf: error %v", err)
	}
}
