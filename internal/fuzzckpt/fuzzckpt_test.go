package fuzzckpt_test

import (
	"bytes"
	"errors"
	"flag"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gfngo/gfn/internal/fuzzckpt"
	"github.com/gfngo/gfn/safetensors"
)

func TestDirFile(t *testing.T) {
	b := []byte("checkpoint bytes")
	dir := fuzzckpt.Dir(t, "x.safetensors", b)
	got, err := os.ReadFile(filepath.Join(dir, "x.safetensors"))
	if err != nil || !bytes.Equal(got, b) {
		t.Fatalf("Dir wrote %q, %v; want %q", got, err, b)
	}
	if got := fuzzckpt.File(t, dir, "x.safetensors"); !bytes.Equal(got, b) {
		t.Fatalf("File read %q; want %q", got, b)
	}
}

// seed is a checkpoint of one tensor whose run state, under "st", is state.
func seed(t testing.TB, v float32, state string) ([]safetensors.Tensor, []byte) {
	ts := []safetensors.Tensor{safetensors.F32("w", []int{1}, []float32{v})}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, ts, map[string]string{"format": "pt", "st": state, "other": "dropped"}); err != nil {
		t.Fatal(err)
	}
	return ts, buf.Bytes()
}

// FuzzState runs with its seed corpus only under go test: the two seeds,
// an edit of the first, and two edits that the target must skip (invalid
// JSON, invalid UTF-8), checking that load gets each seed's tensors with
// the fuzzed state, and that it gets all three valid states.
func FuzzState(f *testing.F) {
	t0, b0 := seed(f, 1, `{"n":1}`)
	t1, b1 := seed(f, 2, `{"n":2}`)
	want := map[string][]safetensors.Tensor{`{"n":1}`: t0, `{"n":2}`: t1, `{"n":3}`: t0}
	extra := []fuzzckpt.Replacement{
		{Old: "1", New: "3"},
		{Old: "}", New: ""},
		{Old: "1", New: "\"\xff\""},
	}
	loaded := map[string]bool{}
	f.Cleanup(func() {
		if !allSeeds() {
			return
		}
		for s := range want {
			if !loaded[s] {
				f.Errorf("load never got state %s", s)
			}
		}
	})
	fuzzckpt.FuzzState(f, [][]byte{b0, b1}, "st", extra, func(t *testing.T, file []byte) {
		ts, meta, err := safetensors.Read(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		crc := strconv.FormatUint(uint64(crc32.Checksum([]byte(meta["st"]), crc32.MakeTable(crc32.Castagnoli))), 16)
		if len(meta) != 3 || meta["format"] != "pt" || meta["st_crc32c"] != crc {
			t.Fatalf("metadata %v, want the state signed with CRC-32C %s", meta, crc)
		}
		w, ok := want[meta["st"]]
		if !ok {
			t.Fatalf("load got state %q, which the target should have skipped", meta["st"])
		}
		loaded[meta["st"]] = true
		if !reflect.DeepEqual(ts, w) {
			t.Fatalf("tensors %v for state %s, want %v", ts, meta["st"], w)
		}
	})
}

// allSeeds reports whether a fuzz test runs each seed of its corpus once:
// not when fuzzing (a worker runs what the coordinator sends it) nor when
// -run picks some seeds.
func allSeeds() bool {
	return flag.Lookup("test.fuzz").Value.String() == "" &&
		!strings.Contains(flag.Lookup("test.run").Value.String(), "/")
}

func TestLoaded(t *testing.T) {
	bad := errors.New("bad")
	for _, c := range []struct {
		readErr, loadErr error
		want             bool
	}{{nil, nil, true}, {bad, bad, false}, {nil, bad, false}} {
		if got := fuzzckpt.Loaded(t, "ReadState", c.readErr, c.loadErr); got != c.want {
			t.Errorf("Loaded(%v, %v) = %v, want %v", c.readErr, c.loadErr, got, c.want)
		}
	}
}

// FuzzFile runs with its seed corpus only under go test, checking that
// load gets each seed.
func FuzzFile(f *testing.F) {
	seeds := map[string]bool{"a": false, "bc": false}
	f.Cleanup(func() {
		if !allSeeds() {
			return
		}
		for s, got := range seeds {
			if !got {
				f.Errorf("load never got %q", s)
			}
		}
	})
	fuzzckpt.FuzzFile(f, [][]byte{[]byte("a"), []byte("bc")}, func(t *testing.T, file []byte) {
		if _, ok := seeds[string(file)]; !ok {
			t.Fatalf("load got %q", file)
		}
		seeds[string(file)] = true
	})
}
