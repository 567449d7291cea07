package rna

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestIntLoop checks each case of the loop energy against sums of table
// entries read off the parameter file by hand.
func TestIntLoop(t *testing.T) {
	const (
		CG, GC, AU, UA = 1, 2, 5, 6
		A, C, G        = 1, 2, 3
	)
	p := DefaultParams()
	tests := []struct {
		name           string
		n1, n2, t1, t2 int
		si, sj, sp, sq int
		want           int
	}{
		{"stack CG GC", 0, 0, CG, GC, 0, 0, 0, 0, -330},
		{"bulge 1", 1, 0, CG, CG, 0, 0, 0, 0, 380 - 240},
		{"bulge 1 other side", 0, 1, CG, GC, 0, 0, 0, 0, 380 - 330},
		{"bulge 3 AU UA", 0, 3, AU, UA, 0, 0, 0, 0, 320 + 50 + 50},
		{"bulge 3 CG", 3, 0, CG, GC, 0, 0, 0, 0, 320},
		{"1x1 CG CG G G", 1, 1, CG, CG, G, G, A, A, -140},
		{"1x2 int21[CG][CG][A][A][G]", 1, 2, CG, CG, A, G, C, A, 110},
		{"2x1 int21[CG][CG][A][A][G]", 2, 1, CG, CG, A, C, G, A, 110},
		{"2x1 int21[CG][CG][A][A][C]", 2, 1, CG, CG, A, C, C, A, 230},
		{"2x2 int22[CG][CG][A][A][A][G]", 2, 2, CG, CG, A, G, A, A, 20},
		{"2x2 int22[CG][CG][A][C][A][G]", 2, 2, CG, CG, A, G, C, A, 60},
		{"2x2 int22[CG][CG][A][A][C][G]", 2, 2, CG, CG, A, G, A, C, 20},
		{"1x3", 1, 3, AU, CG, A, G, A, A, 110 + 2*60 + 70 + 0},
		{"1x15 ninio capped", 15, 1, CG, CG, A, A, A, A, 300 + 300},
		{"2x3", 2, 3, CG, CG, A, G, A, G, 200 + 60 - 50 - 110},
		{"3x3", 3, 3, CG, CG, A, G, A, G, 200 - 80 - 100},
		{"2x6", 6, 2, AU, UA, A, G, A, G, 230 + 240 - 10 - 30},
	}
	for _, tc := range tests {
		if got := p.intLoop(tc.n1, tc.n2, tc.t1, tc.t2, tc.si, tc.sj, tc.sp, tc.sq); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestDuplexKnown(t *testing.T) {
	p := DefaultParams()
	tests := []struct {
		name, a, b string
		want       Duplex
	}{
		// ViennaRNA's own tests give the structure of duplexfold on these
		// strands (tests/python/test_RNA.py); the energy is this package's,
		// checked by TestDuplexBruteForce, kept here against regressions.
		{"ViennaRNA test suite", "CGCAGGGAUACCCGCG", "GCGCCCAUAGGGACGC",
			Duplex{Energy: -7.5, Structure: ".(((.....(((.&)))))).", Start1: 4, End1: 16, Start2: 1, End2: 7}},
		// init 410 + stack[GC][GC] -340, no neighbours; ViennaRNA's tests
		// give the same 0.70 for the dimer GC&GC (energy_of_struct).
		{"GC dimer", "GC", "GC", Duplex{Energy: 0.7, Structure: "((&))", Start1: 1, End1: 2, Start2: 1, End2: 2}},
		// G-C then U-A: init 410 + stack[GC][AU] -220 + terminal AU 50.
		// The lone pairs score 410 - 110 (mismatch CG,A,U) = 300 and
		// 410 + 50 - 60 (mismatch UA,G,C) + 50 = 440.
		{"T is U", "GT", "AC", Duplex{Energy: 2.4, Structure: "((&))", Start1: 1, End1: 2, Start2: 1, End2: 2}},
		// The lone G-C pair: init 410 + mismatch GC,A,A -150 + mismatch
		// CG,A,A -110, shown with one flanking base on each side.
		{"single pair with flanks", "AGA", "ACA", Duplex{Energy: 1.5, Structure: ".(.&.).", Start1: 1, End1: 3, Start2: 1, End2: 3}},
		{"no pair", "AAA", "CCC", Duplex{Energy: math.Inf(1)}},
	}
	for _, tc := range tests {
		got, err := p.Duplex(tc.a, tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestDuplexErrors(t *testing.T) {
	p := DefaultParams()
	for _, tc := range []struct{ a, b, bad string }{
		{"ACGN", "ACGU", "'N'"},
		{"ACGU", "acgu", "'a'"},
		{"", "ACGU", "empty"},
		{"ACGU", "AC GU", "' '"},
	} {
		_, err := p.Duplex(tc.a, tc.b)
		if err == nil || !strings.HasPrefix(err.Error(), "rna: ") || !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("Duplex(%q, %q): error %v, want one naming %s", tc.a, tc.b, err, tc.bad)
		}
	}
}

// extTerm is the exterior energy of a helix end of pair type t with 5' and
// 3' neighbours a and b (-1 for none), written from the model's definition.
func extTerm(p *Params, t, a, b int) int {
	e := 0
	switch {
	case a >= 0 && b >= 0:
		e = int(min(p.mismatchExt[(t*nBases+a)*nBases+b], 0))
	case a >= 0:
		e = int(min(p.dangle5[t*nBases+a], 0))
	case b >= 0:
		e = int(min(p.dangle3[t*nBases+b], 0))
	}
	if t > 2 {
		e += int(p.terminalAU)
	}
	return e
}

// chainEnergy is the energy of the duplex with pairs (i, j) in order of
// increasing i, positions 1-based, evaluated loop by loop, and the part of
// it that precedes the exterior term of the last pair.
func chainEnergy(p *Params, s1, s2 []uint8, pairs [][2]int) (total, open int) {
	n1, n2 := len(s1)-1, len(s2)-1
	at := func(s []uint8, i, n int) int {
		if i < 1 || i > n {
			return -1
		}
		return int(s[i])
	}
	typ := func(pr [2]int) int { return int(pairType[s1[pr[0]]][s2[pr[1]]]) }
	first, last := pairs[0], pairs[len(pairs)-1]
	e := int(p.duplexInit)
	e += extTerm(p, typ(first), at(s1, first[0]-1, n1), at(s2, first[1]+1, n2))
	for m := 1; m < len(pairs); m++ {
		k, l, i, j := pairs[m-1][0], pairs[m-1][1], pairs[m][0], pairs[m][1]
		e += p.intLoop(i-k-1, l-j-1, typ(pairs[m-1]), int(rtype[typ(pairs[m])]),
			int(s1[k+1]), int(s2[l-1]), int(s1[i-1]), int(s2[j+1]))
	}
	return e + extTerm(p, int(rtype[typ(last)]), at(s2, last[1]-1, n2), at(s1, last[0]+1, n1)), e
}

// bruteForce is the least energy over every chain of pairs, by exhaustive
// search, inf if no pair is possible, and for every last pair (i,j) the
// least energy before its exterior term, ends[i][j] (inf if unpairable).
func bruteForce(p *Params, s1, s2 []uint8) (best int, ends [][]int) {
	n1, n2 := len(s1)-1, len(s2)-1
	best = inf
	ends = make([][]int, n1+1)
	for i := range ends {
		ends[i] = make([]int, n2+1)
		for j := range ends[i] {
			ends[i][j] = inf
		}
	}
	var pairs [][2]int
	var extend func()
	extend = func() {
		k, l := pairs[len(pairs)-1][0], pairs[len(pairs)-1][1]
		total, open := chainEnergy(p, s1, s2, pairs)
		best = min(best, total)
		ends[k][l] = min(ends[k][l], open)
		for i := k + 1; i <= n1; i++ {
			for j := l - 1; j >= 1; j-- {
				if i-k-1+l-j-1 > maxLoop {
					break
				}
				if pairType[s1[i]][s2[j]] != 0 {
					pairs = append(pairs, [2]int{i, j})
					extend()
					pairs = pairs[:len(pairs)-1]
				}
			}
		}
	}
	for i := 1; i <= n1; i++ {
		for j := 1; j <= n2; j++ {
			if pairType[s1[i]][s2[j]] != 0 {
				pairs = append(pairs[:0], [2]int{i, j})
				extend()
			}
		}
	}
	return best, ends
}

// structurePairs reads the pairs of a Duplex back from its structure.
func structurePairs(t *testing.T, d Duplex) [][2]int {
	part1, part2, ok := strings.Cut(d.Structure, "&")
	if !ok || len(part1) != d.End1-d.Start1+1 || len(part2) != d.End2-d.Start2+1 {
		t.Fatalf("malformed duplex %+v", d)
	}
	var opens, closes []int
	for k, ch := range part1 {
		if ch == '(' {
			opens = append(opens, d.Start1+k)
		}
	}
	for k, ch := range part2 {
		if ch == ')' {
			closes = append(closes, d.Start2+k)
		}
	}
	if len(opens) != len(closes) || len(opens) == 0 {
		t.Fatalf("unbalanced duplex %+v", d)
	}
	pairs := make([][2]int, len(opens))
	for m := range opens {
		pairs[m] = [2]int{opens[m], closes[len(closes)-1-m]}
	}
	return pairs
}

// TestDuplexBruteForce compares the dynamic programme with an exhaustive
// search over all duplexes of random strands, short ones and long-by-short
// ones that reach the loop size limit, and evaluates the returned
// structure independently.
func TestDuplexBruteForce(t *testing.T) {
	p := DefaultParams()
	rng := rand.New(rand.NewPCG(7, 11))
	random := func(n int, bases string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = bases[rng.IntN(len(bases))]
		}
		return string(b)
	}
	const trials = 1500
	cases := 0
	for trial := 0; trial < trials; trial++ {
		var a, b string
		switch trial % 3 {
		case 0:
			a, b = random(1+rng.IntN(9), "ACGU"), random(1+rng.IntN(9), "ACGU")
		case 1:
			// G/C-rich strands give long helices and deep minima.
			a, b = random(4+rng.IntN(8), "GCGCAU"), random(4+rng.IntN(8), "GCGCAU")
		default:
			a, b = random(30+rng.IntN(12), "ACGU"), random(2+rng.IntN(4), "ACGU")
		}
		s1, _ := encode(a, nil)
		s2, _ := encode(b, nil)
		want, ends := bruteForce(p, s1, s2)
		// Every DP entry, not only the minimum, must be exact.
		var s scratch
		p.fill(s1, s2, &s)
		for i := 1; i < len(s1); i++ {
			for j := 1; j < len(s2); j++ {
				if got := s.c[i*(len(s2)+1)+j]; got != ends[i][j] {
					t.Fatalf("%s & %s: entry (%d,%d) = %d, want %d", a, b, i, j, got, ends[i][j])
				}
			}
		}
		d, err := p.Duplex(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if want == inf {
			if !math.IsInf(d.Energy, 1) || d.Structure != "" {
				t.Errorf("Duplex(%s, %s) = %+v, want no duplex", a, b, d)
			}
			continue
		}
		cases++
		if d.Energy != float64(want)/100 {
			t.Errorf("Duplex(%s, %s).Energy = %v, want %v", a, b, d.Energy, float64(want)/100)
		}
		if e, _ := chainEnergy(p, s1, s2, structurePairs(t, d)); e != want {
			t.Errorf("Duplex(%s, %s): structure %s evaluates to %d, want %d", a, b, d.Structure, e, want)
		}
	}
	if cases < trials*5/6 {
		t.Errorf("only %d of %d cases had a duplex", cases, trials)
	}
}
