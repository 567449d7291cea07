// Command gendata rebuilds the data files that package biochem embeds from
// the project's shared task data (shared/data, see its PROVENANCE.md).
//
// Run it from the biochem directory with
//
//	go generate
//
// or explicitly as
//
//	go run ./internal/gendata -src ../../shared/data -out data
//
// Score tables become gzip'd little-endian float32 arrays in the order of the
// string's base-A number (first token most significant), byte-shuffled (the
// first bytes of all values, then the second bytes, ...), which gzip
// compresses better; every value is checked to survive the float32 round
// trip and every string to appear once. TFbind8 scores both strands alike,
// so only strings whose number is at most that of their reverse complement
// are stored (32,896 of 65,536), after checking the symmetry. The tree proxy
// and the string lists are gzip'd byte-for-byte copies.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	src := flag.String("src", "../../shared/data", "the shared task data directory")
	out := flag.String("out", "data", "the output directory (biochem/data)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("gendata: ")

	table(*src, *out, "tfbind8/tfbind8_all.tsv", "tfbind8_y.f32s.gz", "0123", 8, 0, 2, revComp8)
	table(*src, *out, "qm9str/qm9str_x_to_r.tsv", "qm9str_r.f32s.gz", "0123456789a", 5, 0, 1, nil)
	for _, c := range [][2]string{
		{"tfbind8/modes_tfbind8.txt", "tfbind8_modes.txt.gz"},
		{"qm9str/modes_percentile_0.005.txt", "qm9str_modes.txt.gz"},
		{"sehstr/sehstr_gbtr_trees.json", "sehstr_gbtr_trees.json.gz"},
		{"sehstr/modes_tanimoto_div0.4_percentile_0.0001.txt", "sehstr_modes.txt.gz"},
		{"sehstr/true_samples_beta6_true_samples.txt", "sehstr_true_samples.txt.gz"},
		{"rna/L14_RNA1_modes_hammingball_dist1_percentile_0.0001.txt", "rna1_modes.txt.gz"},
		{"rna/L14_RNA1_true_samples_beta40_true_samples.txt", "rna1_true_samples.txt.gz"},
	} {
		b, err := os.ReadFile(filepath.Join(*src, c[0]))
		if err != nil {
			log.Fatal(err)
		}
		write(*out, c[1], b, c[0])
	}
}

// revComp8 is the number of the reverse complement of the DNA 8-mer numbered
// i (tokens A=0, C=1, G=2, T=3, so the complement of t is 3-t).
func revComp8(i int) int {
	r := 0
	for range 8 {
		r = r*4 + 3 - i%4
		i /= 4
	}
	return r
}

// table converts a tab-separated table with a header, string column keyCol
// over alphabet and value column valCol, to float32s indexed by the string.
// With twin non-nil, value i must equal value twin(i), and only values with
// i <= twin(i) are written.
func table(src, out, in, name, alphabet string, n, keyCol, valCol int, twin func(int) int) {
	f, err := os.Open(filepath.Join(src, in))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	size := 1
	for range n {
		size *= len(alphabet)
	}
	vals := make([]float32, size)
	seen := make([]bool, size)
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		key := cols[keyCol]
		if len(key) != n {
			log.Fatalf("%s:%d: key %q has length %d, want %d", in, line, key, len(key), n)
		}
		idx := 0
		for _, c := range key {
			k := strings.IndexRune(alphabet, c)
			if k < 0 {
				log.Fatalf("%s:%d: symbol %q not in %q", in, line, c, alphabet)
			}
			idx = idx*len(alphabet) + k
		}
		// The tables hold float32s, printed either as the shortest float32
		// (tfbind8) or the exact float64 (qm9str) form; both must parse back.
		v, err := strconv.ParseFloat(cols[valCol], 32)
		if err != nil {
			log.Fatalf("%s:%d: %v", in, line, err)
		}
		v64, _ := strconv.ParseFloat(cols[valCol], 64)
		if v64 != v && strconv.FormatFloat(v, 'g', -1, 32) != cols[valCol] {
			log.Fatalf("%s:%d: %s is not a float32", in, line, cols[valCol])
		}
		if seen[idx] {
			log.Fatalf("%s:%d: %q seen twice", in, line, key)
		}
		seen[idx] = true
		vals[idx] = float32(v)
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	for i, ok := range seen {
		if !ok {
			log.Fatalf("%s: string number %d missing", in, i)
		}
	}
	var keep []float32
	for i, v := range vals {
		if twin == nil {
			keep = append(keep, v)
			continue
		}
		j := twin(i)
		if vals[j] != v {
			log.Fatalf("%s: strings number %d and %d differ: %v, %v", in, i, j, v, vals[j])
		}
		if i <= j {
			keep = append(keep, v)
		}
	}
	m := len(keep)
	b := make([]byte, 4*m)
	for i, v := range keep {
		u := math.Float32bits(v)
		for k := range 4 {
			b[k*m+i] = byte(u >> (8 * k))
		}
	}
	write(out, name, b, in)
}

// write gzips b into out/name and logs the sizes and the source's digest.
func write(out, name string, b []byte, from string) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := zw.Write(b); err != nil {
		log.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, name), buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%-28s %8d bytes (%8d raw, sha256 %x) from %s\n", name, buf.Len(), len(b), sha256.Sum256(b), from)
}
