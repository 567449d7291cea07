package fuzzckpt

import (
	"bytes"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gfngo/gfn/safetensors"
)

// Dir writes b as the file name of a new temporary directory of t and
// returns the directory. It stops the test if the file cannot be written.
func Dir(t testing.TB, name string, b []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatalf("fuzzckpt: %v", err)
	}
	return dir
}

// File returns the bytes of the file name of directory dir, a checkpoint
// written by a short run for a seed. It stops the test if the file cannot
// be read.
func File(t testing.TB, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("fuzzckpt: %v", err)
	}
	return b
}

// Loaded reports whether Load accepted a fuzzed checkpoint (loadErr is
// nil), and stops the test if it did where the package's state reader,
// named reader, failed (readErr is not nil): a checkpoint Load accepts must
// be one the reader can describe, for the caller to compare what both say.
func Loaded(t testing.TB, reader string, readErr, loadErr error) bool {
	t.Helper()
	if loadErr != nil {
		return false
	}
	if readErr != nil {
		t.Fatalf("fuzzckpt: Load succeeded where %s failed: %v", reader, readErr)
	}
	return true
}

// FuzzFile fuzzes whole checkpoint files: the corpus holds the files seeds,
// and the fuzz function is load, given a file's bytes.
func FuzzFile(f *testing.F, seeds [][]byte, load func(t *testing.T, file []byte)) {
	f.Helper()
	for _, b := range seeds {
		f.Add(b)
	}
	f.Fuzz(load)
}

// A Replacement derives an extra seed state from the first seed
// checkpoint's: New replaces the first occurrence of Old, which must occur.
type Replacement struct {
	Old, New string
}

// FuzzState fuzzes the run state of checkpoints: the metadata entry key of
// the safetensors files seeds, a JSON document. The corpus holds
// (i, state) for each seed i and its state, then (0, state) for the first
// seed's state edited by each of extra. The fuzz function skips a state
// that is not valid JSON (a target fuzzing whole files covers malformed
// JSON) or that safetensors.Write rejects (invalid UTF-8); it writes the
// tensors of seed which modulo len(seeds) with the metadata
// {"format": "pt", key: state, key+"_crc32c": its CRC-32C in hex (the
// checksum of package run's format-2 header)}, and passes the file's
// bytes to load.
//
// FuzzState stops the test if a seed cannot be read or lacks key, or if the
// Old of a Replacement does not occur in the first seed's state.
func FuzzState(f *testing.F, seeds [][]byte, key string, extra []Replacement, load func(t *testing.T, file []byte)) {
	f.Helper()
	if len(seeds) == 0 {
		f.Fatal("fuzzckpt: no seed checkpoints")
	}
	tensors := make([][]safetensors.Tensor, len(seeds))
	var first string
	for i, b := range seeds {
		ts, meta, err := safetensors.Read(bytes.NewReader(b))
		if err != nil {
			f.Fatalf("fuzzckpt: seed %d: %v", i, err)
		}
		state, ok := meta[key]
		if !ok {
			f.Fatalf("fuzzckpt: seed %d has no metadata %q", i, key)
		}
		if i == 0 {
			first = state
		}
		tensors[i] = ts
		f.Add(uint8(i), state)
	}
	for _, r := range extra {
		if !strings.Contains(first, r.Old) {
			f.Fatalf("fuzzckpt: no %s in %s", r.Old, first)
		}
		f.Add(uint8(0), strings.Replace(first, r.Old, r.New, 1))
	}
	f.Fuzz(func(t *testing.T, which uint8, state string) {
		if !json.Valid([]byte(state)) {
			return // the file-level target covers malformed JSON
		}
		var buf bytes.Buffer
		ts := tensors[int(which)%len(tensors)]
		// Signed as package run signs its header, so that the fuzzed
		// content gets past the checksum to the readers' validation.
		crc := strconv.FormatUint(uint64(crc32.Checksum([]byte(state), crc32.MakeTable(crc32.Castagnoli))), 16)
		if err := safetensors.Write(&buf, ts, map[string]string{"format": "pt", key: state, key + "_crc32c": crc}); err != nil {
			return // invalid UTF-8
		}
		load(t, buf.Bytes())
	})
}
