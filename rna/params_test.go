package rna

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// turner2004 is the embedded parameter file's text.
var turner2004 = func() []byte {
	b, err := turner2004File()
	if err != nil {
		panic(err)
	}
	return b
}()

// Index names of the parameter file's row labels.
var (
	pairIndex = map[string]int{"CG": 1, "GC": 2, "GU": 3, "UG": 4, "AU": 5, "UA": 6, "NS": 7, "NN": 7}
	baseIndex = map[string]int{"N": 0, "E": 0, "A": 1, "C": 2, "G": 3, "U": 4}
)

// TestDefaultParamsMatchFileLabels checks every labelled row of the tables
// duplex folding uses against the parsed values. The rows' comments (e.g.
// "/* CG,GC,A */") name their indices, so this locates each value
// independently of the reader's streaming order.
func TestDefaultParamsMatchFileLabels(t *testing.T) {
	data := turner2004
	if sum := fmt.Sprintf("%x", sha256.Sum256(data)); sum != turner2004SHA256 {
		t.Fatalf("embedded parameter file SHA-256 %s, want %s", sum, turner2004SHA256)
	}
	lines := strings.Split(string(data), "\n")
	p := DefaultParams()
	clamp := func(v int32) int32 { return min(v, 0) }
	keep := func(v int32) int32 { return v }
	tests := []struct {
		section string
		table   []int32
		dims    []int // dimensions of the table, the last one being the columns
		pairs   int   // how many leading label parts are pair types
		col0    int   // index of the first column
		colPair bool  // columns are pair types (stack)
		adjust  func(int32) int32
		rows    int // labelled rows expected
	}{
		{"stack", p.stack[:], []int{nPairs, nPairs}, 1, 1, true, keep, 7},
		{"mismatch_internal", p.mismatchI[:], []int{nPairs, nBases, nBases}, 1, 0, false, keep, 35},
		{"mismatch_internal_1n", p.mismatch1nI[:], []int{nPairs, nBases, nBases}, 1, 0, false, keep, 35},
		{"mismatch_internal_23", p.mismatch23I[:], []int{nPairs, nBases, nBases}, 1, 0, false, keep, 35},
		{"mismatch_exterior", p.mismatchExt[:], []int{nPairs, nBases, nBases}, 1, 0, false, clamp, 35},
		{"dangle5", p.dangle5[:], []int{nPairs, nBases}, 1, 0, false, clamp, 7},
		{"dangle3", p.dangle3[:], []int{nPairs, nBases}, 1, 0, false, clamp, 7},
		{"int11", p.int11[:], []int{nPairs, nPairs, nBases, nBases}, 2, 0, false, keep, 245},
		{"int21", p.int21[:], []int{nPairs, nPairs, nBases, nBases, nBases}, 2, 0, false, keep, 1225},
		{"int22", p.int22[:], []int{nPairs, nPairs, nBases, nBases, nBases, nBases}, 2, 1, false, keep, 2304},
	}
	for _, tc := range tests {
		start := -1
		for n, line := range lines {
			if strings.TrimSpace(line) == "# "+tc.section {
				start = n + 1
			}
		}
		if start < 0 {
			t.Fatalf("section %s not in file", tc.section)
		}
		rows := 0
		for _, line := range lines[start:] {
			if strings.HasPrefix(line, "#") {
				break
			}
			a, b := strings.Index(line, "/*"), strings.Index(line, "*/")
			if a < 0 {
				continue
			}
			fields := strings.Fields(line[:a])
			if len(fields) == 0 {
				continue // column header
			}
			label := strings.Split(strings.TrimSpace(line[a+2:b]), ",")
			if len(label) != len(tc.dims)-1 {
				t.Fatalf("%s: label %q has %d parts", tc.section, label, len(label))
			}
			off := 0
			for d, name := range label {
				idx, ok := baseIndex[name]
				if d < tc.pairs {
					idx, ok = pairIndex[name]
				}
				if !ok {
					t.Fatalf("%s: unknown label part %q", tc.section, name)
				}
				off = off*tc.dims[d] + idx
			}
			off *= tc.dims[len(tc.dims)-1]
			for col, f := range fields {
				want, err := strconv.Atoi(f)
				if f == "INF" {
					want, err = inf, nil
				}
				if err != nil {
					t.Fatalf("%s %q: %v", tc.section, label, err)
				}
				if got := tc.table[off+tc.col0+col]; got != tc.adjust(int32(want)) {
					t.Errorf("%s %v column %d: got %d, want %d", tc.section, label, col, got, tc.adjust(int32(want)))
				}
			}
			rows++
		}
		if rows != tc.rows {
			t.Errorf("%s: checked %d labelled rows, want %d", tc.section, rows, tc.rows)
		}
	}
}

// TestDefaultParamsScalars checks the unlabelled values against the file as
// read by eye.
func TestDefaultParamsScalars(t *testing.T) {
	p := DefaultParams()
	tests := []struct {
		name      string
		got, want int32
	}{
		// The corrected typo: row GU, column AU, and its mirror.
		{"stack GU AU", p.stack[3*nPairs+5], -140},
		{"stack AU GU", p.stack[5*nPairs+3], -140},
		{"stack GC GC", p.stack[2*nPairs+2], -340},
		{"bulge 0", p.bulge[0], inf},
		{"bulge 1", p.bulge[1], 380},
		{"bulge 30", p.bulge[30], 610},
		{"internal 1", p.internal[1], inf},
		{"internal 2", p.internal[2], 100},
		{"internal 4", p.internal[4], 110},
		{"internal 16", p.internal[16], 300},
		{"internal 30", p.internal[30], 370},
		{"ninio", p.ninio, 60},
		{"max ninio", p.maxNinio, 300},
		{"duplex init", p.duplexInit, 410},
		{"terminal AU", p.terminalAU, 50},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

func TestParseParamsEmbeddedIsDefault(t *testing.T) {
	p, err := ParseParams(bytes.NewReader(turner2004))
	if err != nil {
		t.Fatal(err)
	}
	if *p != *DefaultParams() {
		t.Error("parsing the embedded file again gives other parameters")
	}
}

// TestParseParamsTokens checks the reader's token rules on small files.
func TestParseParamsTokens(t *testing.T) {
	def := DefaultParams()
	// 31 bulge values exercising every token kind; x at index 2
	// extrapolates from index 1: 380 + int(0.5 + 107.856 ln 2) = 380 + 75.
	bulge := "# bulge\n INF 380 x * DEF NST -1i40 +7 /* comment */ 9\n" +
		strings.Repeat(" 1", 20) + " 99 98 97\n"
	p, err := ParseParams(strings.NewReader(header + "\n" + bulge))
	if err != nil {
		t.Fatal(err)
	}
	wantBulge := []int32{inf, 380, 455, def.bulge[3], -50, 0, -1, 7, 9}
	for i, w := range wantBulge {
		if p.bulge[i] != w {
			t.Errorf("bulge[%d] = %d, want %d", i, p.bulge[i], w)
		}
	}
	if p.bulge[30] != 98 {
		t.Errorf("bulge[30] = %d, want 98 (the 31st value; the extra 97 is dropped)", p.bulge[30])
	}
	if p.stack != def.stack || p.int22 != def.int22 {
		t.Error("sections absent from the file changed")
	}

	// Each stack row starts a new line: the extra value ending each line
	// is dropped, and the comment line before the rows is read as empty.
	var stack strings.Builder
	stack.WriteString("# stack\n/* CG GC GU UG AU UA NS */\n")
	for r := 1; r < nPairs; r++ {
		for c := 1; c < nPairs; c++ {
			stack.WriteString(" " + strconv.Itoa(r*10+c))
		}
		stack.WriteString(" 5555\n")
	}
	p, err = ParseParams(strings.NewReader(header + "\n" + stack.String() + "# Misc\n 1 2 3 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	for r := 1; r < nPairs; r++ {
		for c := 1; c < nPairs; c++ {
			if got := p.stack[r*nPairs+c]; got != int32(r*10+c) {
				t.Errorf("stack[%d][%d] = %d, want %d", r, c, got, r*10+c)
			}
		}
	}
	if p.duplexInit != 1 || p.terminalAU != 3 {
		t.Errorf("Misc gave duplex init %d and terminal AU %d, want 1 and 3", p.duplexInit, p.terminalAU)
	}
	if p.ext[5][0][0] != 3 || p.ext[1][0][0] != 0 {
		t.Error("the exterior table does not follow the new terminal AU penalty")
	}

	// The upstream file's typo reads as -1, as in ViennaRNA.
	typo := bytes.Replace(turner2004, []byte("  -210  -250   130   -50   -140"), []byte("  -210  -250   130   -50   -1i40"), 1)
	if bytes.Equal(typo, turner2004) {
		t.Fatal("stack row GU not found in the embedded file")
	}
	p, err = ParseParams(bytes.NewReader(typo))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.stack[3*nPairs+5]; got != -1 {
		t.Errorf("stack GU AU with the upstream typo = %d, want -1", got)
	}
}

func TestParseParamsErrors(t *testing.T) {
	tests := []struct {
		name, file string
	}{
		{"no header", "# stack\n"},
		{"empty", ""},
		{"bad token", header + "\n# bulge\n INF abc\n"},
		{"unclosed comment", header + "\n# bulge\n INF /* 3 4\n"},
		{"short table", header + "\n# bulge\n 1 2 3\n"},
		{"extrapolate first", header + "\n# bulge\n x 1 2\n"},
		{"too large", header + "\n# NINIO\n 99999999999 1 2\n"},
	}
	for _, tc := range tests {
		_, err := ParseParams(strings.NewReader(tc.file))
		if err == nil {
			t.Errorf("%s: no error", tc.name)
		} else if !strings.HasPrefix(err.Error(), "rna: ") {
			t.Errorf("%s: error %q lacks the package prefix", tc.name, err)
		}
	}
}
