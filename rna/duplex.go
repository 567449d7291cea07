package rna

import (
	"errors"
	"fmt"
	"math"
)

// pairType[a][b] is ViennaRNA's type of the pair of bases a and b (codes
// A=1, C=2, G=3, U=4), 0 if they cannot pair.
var pairType = [nBases][nBases]uint8{
	1: {4: 5},       // AU
	2: {3: 1},       // CG
	3: {2: 2, 4: 3}, // GC, GU
	4: {1: 6, 3: 4}, // UA, UG
}

// rtype is the type of a pair read from its other side (CG <-> GC, ...).
var rtype = [nPairs]uint8{0, 2, 1, 4, 3, 6, 5, 7}

// Duplex is the minimum free energy duplex of two strands.
type Duplex struct {
	// Energy is the free energy in kcal/mol. It is +Inf when the strands
	// cannot form a single base pair (ViennaRNA reports 100000 then).
	Energy float64
	// Structure is the duplex in RNAduplex's notation: the paired stretch of
	// the first strand with one flanking base on each side where there is
	// one, '(' for a paired base and '.' for an unpaired one, then '&', then
	// the second strand's stretch with ')'. Empty when there is no pair.
	Structure string
	// Start1, End1 and Start2, End2 are the 1-based inclusive ranges of the
	// strands shown in Structure, as RNAduplex prints them ("i,j : k,l").
	Start1, End1, Start2, End2 int
}

// Duplex returns the minimum free energy duplex of strands a and b with
// intermolecular base pairs only, as ViennaRNA's duplexfold(a, b) computes
// it: same energy, same structure and ranges, ties broken the same way.
func (p *Params) Duplex(a, b string) (Duplex, error) {
	s1, err := encode(a, nil)
	if err != nil {
		return Duplex{}, err
	}
	s2, err := encode(b, nil)
	if err != nil {
		return Duplex{}, err
	}
	var s scratch
	e, i, j := p.fill(s1, s2, &s)
	if i == 0 {
		return Duplex{Energy: math.Inf(1)}, nil
	}
	return p.backtrack(s1, s2, s.c, e, i, j), nil
}

// encode writes the base codes of s to dst[1:] (dst[0] unused, so that
// indices are ViennaRNA's 1-based positions), reusing dst's storage.
func encode(s string, dst []uint8) ([]uint8, error) {
	if len(s) == 0 {
		return nil, errors.New("rna: empty sequence")
	}
	if cap(dst) < len(s)+1 {
		dst = make([]uint8, len(s)+1)
	}
	dst = dst[:len(s)+1]
	for i := 0; i < len(s); i++ {
		var code uint8
		switch s[i] {
		case 'A':
			code = 1
		case 'C':
			code = 2
		case 'G':
			code = 3
		case 'U', 'T':
			code = 4
		default:
			return nil, fmt.Errorf("rna: invalid base %q at position %d of %q (want A, C, G, U or T)", s[i], i+1, s)
		}
		dst[i+1] = code
	}
	return dst, nil
}

// scratch is the working memory of fill, reused between calls.
type scratch struct {
	c   []int // c[i*(n2+2)+j], see fill
	sm  []int // sm[k*(n2+2)+l]: least c[k*(n2+2)+l'] over l' >= l; inf past n2
	pos []int32
	// pos[b*n2:][:cnt[b]] are the positions of s2, ascending, whose base
	// pairs with base b; first[b*(n2+2)+j] is the index in that list of the
	// first position >= j.
	cnt   [nBases]int
	first []int32
}

// grow sizes the scratch for strands of n1 and n2 bases.
func (s *scratch) grow(n1, n2 int) {
	size := (n1 + 1) * (n2 + 2)
	if cap(s.c) < size {
		s.c = make([]int, size)
		s.sm = make([]int, size)
	}
	s.c, s.sm = s.c[:size], s.sm[:size]
	if cap(s.pos) < nBases*n2 {
		s.pos = make([]int32, nBases*n2)
		s.first = make([]int32, nBases*(n2+2))
	}
	s.pos, s.first = s.pos[:nBases*n2], s.first[:nBases*(n2+2)]
}

// fill computes c[i*(n2+2)+j], the least energy of a duplex of s1 and s2
// (1-based base codes) whose last pair, towards the 3' end of s1, is (i,j),
// including the initiation and the exterior term of its first pair but not
// that of (i,j). It returns the least total energy with its last pair, or
// (inf, 0, 0) when no pair is possible. The scan order and the strict
// comparison are ViennaRNA's, so ties resolve alike.
//
// Loops are skipped when a lower bound of their energy (lb, lbRow) shows
// they cannot lower the entry being computed, which leaves every entry
// exact.
func (p *Params) fill(s1, s2 []uint8, s *scratch) (emin, imin, jmin int) {
	n1, n2 := len(s1)-1, len(s2)-1
	s.grow(n1, n2)
	w := n2 + 2
	c, sm := s.c, s.sm
	for b := 1; b < nBases; b++ {
		list := s.pos[b*n2 : (b+1)*n2]
		n := 0
		for l := 1; l <= n2; l++ {
			if pairType[b][s2[l]] != 0 {
				list[n] = int32(l)
				n++
			}
		}
		s.cnt[b] = n
		first := s.first[b*w : (b+1)*w]
		for j := n2 + 1; j > 0; j-- {
			for n > 0 && int(list[n-1]) >= j {
				n--
			}
			first[j] = int32(n)
		}
	}
	emin = inf
	init := int(p.duplexInit)
	for i := 1; i <= n1; i++ {
		// Neighbours of s1[i] as ext indices: 0 for none, code+1 otherwise.
		var left, right int
		if i > 1 {
			left = int(s1[i-1]) + 1
		}
		if i < n1 {
			right = int(s1[i+1]) + 1
		}
		row, rowMin := c[i*w:(i+1)*w], sm[i*w:(i+1)*w]
		rowMin[n2+1] = inf
		for j := n2; j > 0; j-- {
			t := pairType[s1[i]][s2[j]]
			if t == 0 {
				row[j] = inf
				rowMin[j] = rowMin[j+1]
				continue
			}
			var up, down int // neighbours of s2[j] on its 3' and 5' side
			if j < n2 {
				up = int(s2[j+1]) + 1
			}
			if j > 1 {
				down = int(s2[j-1]) + 1
			}
			e := init + int(p.ext[t][left][up])
			rt := int(rtype[t])
			if i > 1 && j < n2 {
				sp, sq := int(s1[i-1]), int(s2[j+1])
				for k := i - 1; k > 0 && k > i-maxLoop-2; k-- {
					u1 := i - k - 1
					// Skip row k when its best entry beyond j with the
					// cheapest loop of this u1 cannot lower e.
					if sm[k*w+j+1]+p.lbRow[u1] >= e {
						continue
					}
					ck := c[k*w : (k+1)*w]
					lb := &p.lb[u1]
					bk := int(s1[k])
					list := s.pos[bk*n2 : bk*n2+s.cnt[bk]]
					lmax := j + 1 + maxLoop - u1
					for _, l32 := range list[s.first[bk*w+j+1]:] {
						l := int(l32)
						if l > lmax {
							break
						}
						u2 := l - j - 1
						ekl := ck[l]
						if ekl+lb[u2] >= e {
							continue
						}
						ekl += p.intLoop(u1, u2, int(pairType[bk][s2[l]]), rt, int(s1[k+1]), int(s2[l-1]), sp, sq)
						if ekl < e {
							e = ekl
						}
					}
				}
			}
			row[j] = e
			rowMin[j] = min(e, rowMin[j+1])
			if tot := e + int(p.ext[rt][down][right]); tot < emin {
				emin, imin, jmin = tot, i, j
			}
		}
	}
	return emin, imin, jmin
}

// backtrack rebuilds the structure of the duplex whose last pair is (i,j)
// and whose energy is e, taking the first matching loop in ViennaRNA's scan
// order.
func (p *Params) backtrack(s1, s2 []uint8, c []int, e, i, j int) Duplex {
	n1, n2 := len(s1)-1, len(s2)-1
	w := n2 + 2
	st1 := make([]byte, n1)
	st2 := make([]byte, n2)
	i0, j0 := min(i+1, n1), max(j-1, 1)
	for {
		eij := c[i*w+j]
		st1[i-1], st2[j-1] = '(', ')'
		t := pairType[s1[i]][s2[j]]
		rt := int(rtype[t])
		traced := false
	search:
		for k := i - 1; k > 0 && k > i-maxLoop-2; k-- {
			for l := j + 1; l <= n2; l++ {
				u1, u2 := i-k-1, l-j-1
				if u1+u2 > maxLoop {
					break
				}
				t2 := pairType[s1[k]][s2[l]]
				if t2 == 0 {
					continue
				}
				if eij == c[k*w+l]+p.intLoop(u1, u2, int(t2), rt, int(s1[k+1]), int(s2[l-1]), int(s1[i-1]), int(s2[j+1])) {
					i, j, traced = k, l, true
					break search
				}
			}
		}
		if !traced {
			var left, up int
			if i > 1 {
				left = int(s1[i-1]) + 1
			}
			if j < n2 {
				up = int(s2[j+1]) + 1
			}
			if eij-int(p.ext[t][left][up]) != int(p.duplexInit) {
				panic("rna: duplex backtrack found no matching decomposition")
			}
			break
		}
	}
	if i > 1 {
		i--
	}
	if j < n2 {
		j++
	}
	for k := i; k <= i0; k++ {
		if st1[k-1] == 0 {
			st1[k-1] = '.'
		}
	}
	for k := j0; k <= j; k++ {
		if st2[k-1] == 0 {
			st2[k-1] = '.'
		}
	}
	part1, part2 := st1[i-1:i0], st2[j0-1:j]
	return Duplex{
		Energy:    float64(e) / 100,
		Structure: string(part1) + "&" + string(part2),
		Start1:    i0 + 1 - len(part1),
		End1:      i0,
		Start2:    j0,
		End2:      j0 + len(part2) - 1,
	}
}

// intLoop is the energy of the loop closed by the pair of type t1 and
// enclosing the pair of type t2 (read from inside, i.e. reversed), with n1
// and n2 unpaired bases on the two sides; si and sj are the closing pair's
// 5' and 3' mismatching bases, sp and sq the enclosed pair's 3' and 5'
// mismatching bases. It is ViennaRNA's vrna_E_internal at the default model
// (no salt correction, GU closure allowed). Loop sizes never exceed maxLoop
// here, so no extrapolation is needed.
func (p *Params) intLoop(n1, n2, t1, t2, si, sj, sp, sq int) int {
	nl, ns := n1, n2
	if n1 < n2 {
		nl, ns = n2, n1
	}
	if nl == 0 {
		return int(p.stack[t1*nPairs+t2])
	}
	e := 0
	switch ns {
	case 0: // bulge
		e = int(p.bulge[nl])
		if nl == 1 {
			e += int(p.stack[t1*nPairs+t2])
		} else {
			if t1 > 2 {
				e += int(p.terminalAU)
			}
			if t2 > 2 {
				e += int(p.terminalAU)
			}
		}
		return e
	case 1:
		switch nl {
		case 1:
			return int(p.int11[((t1*nPairs+t2)*nBases+si)*nBases+sj])
		case 2:
			if n1 == 1 {
				return int(p.int21[(((t1*nPairs+t2)*nBases+si)*nBases+sq)*nBases+sj])
			}
			return int(p.int21[(((t2*nPairs+t1)*nBases+sq)*nBases+si)*nBases+sp])
		}
		e = int(p.internal[nl+1]) + min(int(p.maxNinio), (nl-ns)*int(p.ninio))
		return e + int(p.mismatch1nI[(t1*nBases+si)*nBases+sj]) + int(p.mismatch1nI[(t2*nBases+sq)*nBases+sp])
	case 2:
		switch nl {
		case 2:
			return int(p.int22[((((t1*nPairs+t2)*nBases+si)*nBases+sp)*nBases+sq)*nBases+sj])
		case 3:
			e = int(p.internal[5]) + int(p.ninio)
			return e + int(p.mismatch23I[(t1*nBases+si)*nBases+sj]) + int(p.mismatch23I[(t2*nBases+sq)*nBases+sp])
		}
	}
	e = int(p.internal[nl+ns]) + min(int(p.maxNinio), (nl-ns)*int(p.ninio))
	return e + int(p.mismatchI[(t1*nBases+si)*nBases+sj]) + int(p.mismatchI[(t2*nBases+sq)*nBases+sp])
}
