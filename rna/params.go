package rna

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Constants of ViennaRNA's energy model.
const (
	inf     = 10000000 // "infinite" energy of ViennaRNA (INF, dcal/mol)
	defE    = -50      // the DEF token: default terminal mismatch
	nstE    = 0        // the NST token: energy for non-standard pairs
	maxLoop = 30       // largest internal loop (unpaired bases on both sides)
	nPairs  = 8        // pair types 0 (none), CG, GC, GU, UG, AU, UA, NS
	nBases  = 5        // bases N, A, C, G, U
	lxc37   = 107.856  // extrapolation coefficient of loop energies at 37 °C
)

// header is the first line of a ViennaRNA 2.x parameter file.
const header = "## RNAfold parameter file v2.0"

// turner2004Gz is rna_turner2004.par, gzipped (38 KB instead of 382 KB in
// the binary); turner2004File decompresses it.
//
//go:embed rna_turner2004.par.gz
var turner2004Gz []byte

// turner2004SHA256 is the SHA-256 of the decompressed file: ViennaRNA's
// misc/rna_turner2004.par with the one correction rna's documentation
// states (shared/data/rna/rna_turner2004.par).
const turner2004SHA256 = "8bc7689b4b0c46e6e049516baeac7159c95a85f9f0b427e0ed0bd3c35ecd2cf6"

// turner2004File returns the embedded parameter file's text.
func turner2004File() ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(turner2004Gz))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// Params holds an energy parameter set: the free energies at 37 °C, in
// dcal/mol, of the sections of a ViennaRNA 2.x parameter file that duplex
// folding uses. A Params does not change once made, so it is safe for
// concurrent use.
type Params struct {
	// Tables are row-major with ViennaRNA's indices: pair types 0 (none),
	// CG=1, GC=2, GU=3, UG=4, AU=5, UA=6, NS=7; bases N=0, A=1, C=2, G=3,
	// U=4.
	stack       [nPairs * nPairs]int32
	bulge       [maxLoop + 1]int32
	internal    [maxLoop + 1]int32
	mismatchI   [nPairs * nBases * nBases]int32
	mismatch1nI [nPairs * nBases * nBases]int32
	mismatch23I [nPairs * nBases * nBases]int32
	mismatchExt [nPairs * nBases * nBases]int32
	dangle5     [nPairs * nBases]int32
	dangle3     [nPairs * nBases]int32
	int11       [nPairs * nPairs * nBases * nBases]int32
	int21       [nPairs * nPairs * nBases * nBases * nBases]int32
	int22       [nPairs * nPairs * nBases * nBases * nBases * nBases]int32
	ninio       int32 // asymmetry penalty per unpaired base of difference
	maxNinio    int32 // largest asymmetry penalty
	duplexInit  int32
	terminalAU  int32 // penalty of an AU or GU pair closing a helix

	// ext[t][a][b] is the exterior contribution of a helix end with pair type
	// t and neighbours a (5' side) and b (3' side), each 0 for none or the
	// base code + 1: mismatch, dangle or nothing, plus the terminal penalty.
	ext [nPairs][nBases + 1][nBases + 1]int32
	// lb[u1][u2] is a lower bound of every internal loop energy with u1 and
	// u2 unpaired bases, used to skip loops that cannot improve a minimum.
	// It is an int: sums of a file's int32 entries can leave the int32
	// range, and a wrapped bound skipped loops that were minimal.
	lb [maxLoop + 1][maxLoop + 1]int
	// lbRow[u1] is the least lb[u1][u2] over u2.
	lbRow [maxLoop + 1]int
}

var (
	defaultOnce   sync.Once
	defaultParams *Params
)

// DefaultParams returns the Turner 2004 parameters of the embedded
// rna_turner2004.par (gzipped), ViennaRNA's default set. The file is parsed on the
// first call; every call returns the same value.
func DefaultParams() *Params {
	defaultOnce.Do(func() {
		text, err := turner2004File()
		if err != nil {
			panic("rna: embedded parameter file: " + err.Error())
		}
		p, err := parse(bytes.NewReader(text), &Params{})
		if err != nil {
			panic("rna: embedded parameter file: " + err.Error())
		}
		defaultParams = p
	})
	return defaultParams
}

// ParseParams reads a parameter file in ViennaRNA 2.x format. The file is
// applied on top of [DefaultParams], as ViennaRNA applies a file to its
// built-in Turner 2004 set: entries that the file skips with '*' and
// sections it lacks keep their default values.
//
// The reader follows ViennaRNA's: the first line must be the header
// "## RNAfold parameter file v2.0" (ViennaRNA only warns); a line starting
// with "# name" opens a section; a table is read as whitespace-separated
// tokens from the lines that follow, with one C-style comment per line
// removed. Tables leave out pair type 0, int22 also the N base and pair
// type NS, as ViennaRNA's layout does; a row ending where entries are left
// out ends its line (tokens left on it are dropped), while rows without
// such gaps run on as one stream. A token is an integer (only
// its leading signed digits count, as C's %d reads them, so "-1i40" is -1),
// INF (10000000), DEF (-50), NST (0), '*' (keep the current value) or 'x'
// (extrapolate a loop energy from the last number read with
// 107.856·ln(i/last)). The sections read are stack, bulge, internal,
// mismatch_internal, mismatch_internal_1n, mismatch_internal_23,
// mismatch_exterior, dangle5, dangle3, int11, int21, int22, NINIO and Misc
// (with ViennaRNA's deprecated "interior" names); others, including the
// enthalpies, are not needed at 37 °C and are skipped. As in ViennaRNA,
// positive exterior mismatch and dangle energies are used as 0. The int22
// entries with an N base or an NS pair, which ViennaRNA derives after
// reading, are not derived, since sequences here have no N.
func ParseParams(r io.Reader) (*Params, error) {
	base := *DefaultParams()
	return parse(r, &base)
}

// parse reads a parameter file into p and completes the derived tables.
func parse(r io.Reader, p *Params) (*Params, error) {
	lines, err := readLines(r)
	if err != nil {
		return nil, fmt.Errorf("rna: reading parameter file: %w", err)
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], header) {
		return nil, errors.New("rna: parameter file lacks the header line " + strconv.Quote(header))
	}
	rd := &tableReader{lines: lines, next: 1}
	for rd.next < len(rd.lines) {
		line := rd.lines[rd.next]
		rd.next++
		if !strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line[1:])
		if len(f) == 0 {
			continue
		}
		name := f[0]
		rd.section = name
		if err := p.readSection(rd, name); err != nil {
			return nil, err
		}
	}
	p.derive()
	return p, nil
}

// readLines splits the input into lines without their line ends.
func readLines(r io.Reader) ([]string, error) {
	var lines []string
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if len(line) > 0 {
			lines = append(lines, strings.TrimRight(line, "\r\n"))
		}
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Table shapes of ViennaRNA's reader: dimensions, leading entries left out
// of the file (shift) and trailing ones left out (post) per dimension.
var (
	dimsStack    = []int{nPairs, nPairs}
	shiftStack   = []int{1, 1}
	dimsMismatch = []int{nPairs, nBases, nBases}
	shiftMis     = []int{1, 0, 0}
	dimsDangle   = []int{nPairs, nBases}
	shiftDangle  = []int{1, 0}
	dimsInt11    = []int{nPairs, nPairs, nBases, nBases}
	shiftInt11   = []int{1, 1, 0, 0}
	dimsInt21    = []int{nPairs, nPairs, nBases, nBases, nBases}
	shiftInt21   = []int{1, 1, 0, 0, 0}
	dimsInt22    = []int{nPairs, nPairs, nBases, nBases, nBases, nBases}
	shiftInt22   = []int{1, 1, 1, 1, 1, 1}
	postInt22    = []int{1, 1, 0, 0, 0, 0}
	dimsLoop     = []int{maxLoop + 1}
	zeros        = []int{0, 0, 0, 0, 0, 0}
)

// readSection reads the section name if duplex folding needs it.
func (p *Params) readSection(rd *tableReader, name string) error {
	switch name {
	case "stack":
		return rd.table(p.stack[:], dimsStack, shiftStack, zeros)
	case "bulge":
		return rd.table(p.bulge[:], dimsLoop, zeros, zeros)
	case "internal", "interior":
		return rd.table(p.internal[:], dimsLoop, zeros, zeros)
	case "mismatch_internal", "mismatch_interior":
		return rd.table(p.mismatchI[:], dimsMismatch, shiftMis, zeros)
	case "mismatch_internal_1n", "mismatch_interior_1n":
		return rd.table(p.mismatch1nI[:], dimsMismatch, shiftMis, zeros)
	case "mismatch_internal_23", "mismatch_interior_23":
		return rd.table(p.mismatch23I[:], dimsMismatch, shiftMis, zeros)
	case "mismatch_exterior":
		return rd.table(p.mismatchExt[:], dimsMismatch, shiftMis, zeros)
	case "dangle5":
		return rd.table(p.dangle5[:], dimsDangle, shiftDangle, zeros)
	case "dangle3":
		return rd.table(p.dangle3[:], dimsDangle, shiftDangle, zeros)
	case "int11":
		return rd.table(p.int11[:], dimsInt11, shiftInt11, zeros)
	case "int21":
		return rd.table(p.int21[:], dimsInt21, shiftInt21, zeros)
	case "int22":
		return rd.table(p.int22[:], dimsInt22, shiftInt22, postInt22)
	case "NINIO":
		// dG per base, its enthalpy, the maximum.
		v := []int32{p.ninio, 0, p.maxNinio}
		if err := rd.values(v); err != nil {
			return err
		}
		p.ninio, p.maxNinio = v[0], v[2]
	case "Misc":
		// Duplex initiation and terminal AU, each dG then enthalpy.
		v := []int32{p.duplexInit, 0, p.terminalAU, 0}
		if err := rd.values(v); err != nil {
			return err
		}
		p.duplexInit, p.terminalAU = v[0], v[2]
	}
	return nil
}

// tableReader reads tables from the lines of a parameter file.
type tableReader struct {
	lines   []string
	next    int    // index of the next unread line
	section string // name of the section being read, for errors
}

// errorf is an error naming the package and the section being read.
func (rd *tableReader) errorf(format string, args ...any) error {
	return fmt.Errorf("rna: section %q: "+format, append([]any{rd.section}, args...)...)
}

// table reads a table of the given shape into dst (row-major), skipping the
// leading shift and trailing post entries of each dimension, as ViennaRNA's
// rd_*dim_slice functions do: when nothing is skipped below a dimension its
// entries are one stream of values, otherwise every row starts a new line.
func (rd *tableReader) table(dst []int32, dims, shift, post []int) error {
	if len(dims) == 1 {
		return rd.values(dst[shift[0] : dims[0]-post[0]])
	}
	skipped := false
	for d := range dims {
		skipped = skipped || shift[d] != 0 || post[d] != 0
	}
	stride := 1
	for _, n := range dims[1:] {
		stride *= n
	}
	if !skipped {
		return rd.values(dst[:dims[0]*stride])
	}
	for i := shift[0]; i < dims[0]-post[0]; i++ {
		if err := rd.table(dst[i*stride:(i+1)*stride], dims[1:], shift[1:], post[1:]); err != nil {
			return err
		}
	}
	return nil
}

// values reads len(dst) values starting on the next line; tokens left on
// the last line read are dropped, as in ViennaRNA's get_array1.
func (rd *tableReader) values(dst []int32) error {
	i, last := 0, 0
	for i < len(dst) {
		if rd.next >= len(rd.lines) {
			return rd.errorf("unexpected end of file after %d of %d values", i, len(dst))
		}
		line, ok := stripComment(rd.lines[rd.next])
		rd.next++
		if !ok {
			return rd.errorf("line %d: unclosed comment", rd.next)
		}
		for _, tok := range strings.Fields(line) {
			if i == len(dst) {
				break
			}
			switch {
			case tok[0] == '*':
				i++
				continue
			case tok[0] == 'x':
				if last == 0 {
					return rd.errorf("line %d: cannot extrapolate value %d ('x') without an earlier value after the first", rd.next, i)
				}
				dst[i] = dst[last] + int32(0.5+lxc37*math.Log(float64(i)/float64(last)))
			case tok == "DEF":
				dst[i] = defE
			case tok == "INF":
				dst[i] = inf
			case tok == "NST":
				dst[i] = nstE
			default:
				v, ok := leadingInt(tok)
				if !ok {
					return rd.errorf("line %d: cannot read %q as a number", rd.next, tok)
				}
				dst[i] = v
				last = i
			}
			i++
		}
	}
	return nil
}

// stripComment removes the first /* ... */ comment of a line; ok is false
// for a comment that is not closed on the line.
func stripComment(line string) (_ string, ok bool) {
	a := strings.Index(line, "/*")
	if a < 0 {
		return line, true
	}
	b := strings.Index(line[a:], "*/")
	if b < 0 {
		return "", false
	}
	return line[:a] + line[a+b+2:], true
}

// leadingInt reads an optionally signed decimal integer at the start of tok
// and ignores what follows, as C's sscanf("%d") does.
func leadingInt(tok string) (int32, bool) {
	n := 0
	if n < len(tok) && (tok[n] == '-' || tok[n] == '+') {
		n++
	}
	d := n
	for n < len(tok) && tok[n] >= '0' && tok[n] <= '9' {
		n++
	}
	if n == d {
		return 0, false
	}
	v, err := strconv.ParseInt(tok[:n], 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(v), true
}

// derive computes the tables built from the parsed values.
func (p *Params) derive() {
	// ViennaRNA uses positive exterior mismatches and dangles as 0.
	for i, v := range p.mismatchExt {
		p.mismatchExt[i] = min(v, 0)
	}
	for i := range p.dangle5 {
		p.dangle5[i] = min(p.dangle5[i], 0)
		p.dangle3[i] = min(p.dangle3[i], 0)
	}
	for t := 1; t < nPairs; t++ {
		for a := 0; a <= nBases; a++ {
			for b := 0; b <= nBases; b++ {
				var e int32
				switch {
				case a > 0 && b > 0:
					e = p.mismatchExt[(t*nBases+a-1)*nBases+b-1]
				case a > 0:
					e = p.dangle5[t*nBases+a-1]
				case b > 0:
					e = p.dangle3[t*nBases+b-1]
				}
				if t > 2 {
					e += p.terminalAU
				}
				p.ext[t][a][b] = e
			}
		}
	}
	p.deriveBounds()
}

// deriveBounds fills lb with the least internal loop energy of each size
// over all pair types 1..6 and bases A, C, G, U (the only ones sequences
// here have), evaluated with intLoop itself.
func (p *Params) deriveBounds() {
	for u1 := 0; u1 <= maxLoop; u1++ {
		for u2 := 0; u1+u2 <= maxLoop; u2++ {
			best := math.MaxInt
			if u1 <= 2 && u2 <= 2 || u1+u2 <= 3 {
				// Special tables: enumerate everything.
				for t1 := 1; t1 <= 6; t1++ {
					for t2 := 1; t2 <= 6; t2++ {
						for si := 1; si < nBases; si++ {
							for sj := 1; sj < nBases; sj++ {
								for sp := 1; sp < nBases; sp++ {
									for sq := 1; sq < nBases; sq++ {
										best = min(best, p.intLoop(u1, u2, t1, t2, si, sj, sp, sq))
									}
								}
							}
						}
					}
				}
			} else {
				// Generic loops and bulges: the two closing pairs contribute
				// separately, so minimise each pair's term on its own by
				// evaluating with all mismatches but one pair held fixed.
				best = p.boundGeneric(u1, u2)
			}
			p.lb[u1][u2] = best
		}
		p.lbRow[u1] = slices.Min(p.lb[u1][:maxLoop-u1+1])
	}
}

// boundGeneric is the least energy of a loop with u1, u2 unpaired bases when
// the loop is not one of the special tables: a size term plus independent
// terms of the closing pair (t1, si, sj) and the enclosed pair (t2, sq, sp).
func (p *Params) boundGeneric(u1, u2 int) int {
	// Energy = f(t1, si, sj) + g(t2, sq, sp) + size term; intLoop with the
	// enclosed pair's arguments fixed varies only f, and vice versa.
	best1 := math.MaxInt
	for t1 := 1; t1 <= 6; t1++ {
		for si := 1; si < nBases; si++ {
			for sj := 1; sj < nBases; sj++ {
				best1 = min(best1, p.intLoop(u1, u2, t1, 1, si, sj, 1, 1))
			}
		}
	}
	best2 := math.MaxInt
	for t2 := 1; t2 <= 6; t2++ {
		for sp := 1; sp < nBases; sp++ {
			for sq := 1; sq < nBases; sq++ {
				best2 = min(best2, p.intLoop(u1, u2, 1, t2, 1, 1, sp, sq))
			}
		}
	}
	fixed := p.intLoop(u1, u2, 1, 1, 1, 1, 1, 1)
	return best1 + best2 - fixed
}
