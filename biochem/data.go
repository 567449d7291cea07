package biochem

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"math"
	"strings"
)

//go:generate go run ./internal/gendata -src ../../shared/data -out data

// files holds the task data; data/PROVENANCE.md says where each comes from.
//
//go:embed data/*.gz data/PROVENANCE.md
var files embed.FS

// readGz returns the decompressed content of data/name. The files are
// compiled in and checked by the tests, so a failure is a build error and
// panics.
func readGz(name string) []byte {
	f, err := files.Open("data/" + name)
	if err != nil {
		panic(fmt.Sprintf("biochem: embedded %s: %v", name, err))
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		panic(fmt.Sprintf("biochem: embedded %s: %v", name, err))
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		panic(fmt.Sprintf("biochem: embedded %s: %v", name, err))
	}
	return b
}

// readFloat32s decodes a byte-shuffled little-endian float32 array (the
// first bytes of all values, then the second bytes, ...) of want values.
func readFloat32s(name string, want int) []float32 {
	b := readGz(name)
	if len(b) != 4*want {
		panic(fmt.Sprintf("biochem: embedded %s has %d bytes, want %d", name, len(b), 4*want))
	}
	v := make([]float32, want)
	for i := range v {
		u := uint32(b[i]) | uint32(b[want+i])<<8 | uint32(b[2*want+i])<<16 | uint32(b[3*want+i])<<24
		v[i] = math.Float32frombits(u)
	}
	return v
}

// readRows decodes a list of strings, one a line, into rows of tokens with
// t.Encode. The lists are compiled in, so a bad line panics.
func (t *Task) readRows(name string) []int32 {
	var out []int32
	for line := range strings.SplitSeq(string(bytes.TrimSpace(readGz(name))), "\n") {
		x, err := t.Encode(strings.TrimSpace(line))
		if err != nil {
			panic(fmt.Sprintf("biochem: embedded %s: %v", name, err))
		}
		out = append(out, x...)
	}
	return out
}

// readModes decodes a mode list into the set of the modes' numbers.
func (t *Task) readModes(name string) map[uint64]struct{} {
	rows := t.readRows(name)
	m := make(map[uint64]struct{}, len(rows)/t.n)
	for r := 0; r < len(rows); r += t.n {
		m[index(rows[r:r+t.n], len(t.symbols))] = struct{}{}
	}
	return m
}
