package safetensors

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// fileOf is a safetensors file with the given JSON header and data bytes.
func fileOf(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

// FuzzRead feeds arbitrary bytes to Read. It must return an error or
// tensors whose data sizes agree with their shapes and dtypes, without
// panicking and without allocating for sizes the input only claims; what
// it accepts must survive Write and Read unchanged.
func FuzzRead(f *testing.F) {
	var good bytes.Buffer
	if err := Write(&good, []Tensor{
		F32("a.weight", []int{2, 3}, []float32{1, 2, 3, 4, 5, -6.5}),
		F64("logZ", nil, []float64{0.125}),
		I64("step", []int{1}, []int64{42}),
		{Name: "empty", DType: "I32", Shape: []int{0, 3}},
	}, map[string]string{"format": "pt", "gfn_state": `{"step":3}`}); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	f.Add(fileOf(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, []byte{0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0}))
	// A header claiming a 1 TB tensor, and a header length claiming 100 MB.
	f.Add(fileOf(`{"x":{"dtype":"F32","shape":[262144,1048576],"data_offsets":[0,1099511627776]}}`, make([]byte, 8)))
	f.Add(binary.LittleEndian.AppendUint64(nil, maxHeader))
	f.Add(fileOf(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)))
	// Negative and overflowing shapes, and an empty tensor before a full one
	// (found by reading the code, not by the fuzzer).
	f.Add(fileOf(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"y":{"dtype":"F32","shape":[-1],"data_offsets":[4,0]}}`, make([]byte, 4)))
	f.Add(fileOf(`{"x":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`, nil))
	f.Add(fileOf(`{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"y":{"dtype":"U8","shape":[9223372036854775807],"data_offsets":[1,-9223372036854775808]}}`, []byte{1, 2}))
	f.Add(fileOf(`{"__metadata__":{"a":"b"},"e":{"dtype":"BOOL","shape":[0],"data_offsets":[0,0]},"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, []byte{7}))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, meta, err := Read(bytes.NewReader(b))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "safetensors: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			return
		}
		total := 0
		for _, x := range ts {
			n := 1
			for _, s := range x.Shape {
				if s < 0 {
					t.Fatalf("tensor %q has shape %v", x.Name, x.Shape)
				}
				n *= s
			}
			if n != x.NumElements() || len(x.Data) != dtypeSize[x.DType]*n {
				t.Fatalf("tensor %q: %d bytes for shape %v of %s", x.Name, len(x.Data), x.Shape, x.DType)
			}
			total += len(x.Data)
		}
		if total > len(b) {
			t.Fatalf("%d bytes of tensors from a %d-byte file", total, len(b))
		}
		var buf bytes.Buffer
		if err := Write(&buf, ts, meta); err != nil {
			return // names Read accepts but Write refuses ("", invalid UTF-8)
		}
		ts2, meta2, err := Read(&buf)
		if err != nil {
			t.Fatalf("rewritten file: %v", err)
		}
		if err := sameTensors(ts2, ts); err != nil {
			t.Fatalf("rewritten file: %v", err)
		}
		if fmt.Sprint(meta2) != fmt.Sprint(meta) && len(meta)+len(meta2) > 0 {
			t.Fatalf("rewritten metadata %v, want %v", meta2, meta)
		}
	})
}

// sameTensors reports the first difference between got and want, in
// order; a nil and an empty shape are the same.
func sameTensors(got, want []Tensor) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d tensors, want %d", len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		if g.Name != w.Name || g.DType != w.DType || !slices.Equal(g.Shape, w.Shape) || !bytes.Equal(g.Data, w.Data) {
			return fmt.Errorf("tensor %d is %q %s %v (%d bytes), want %q %s %v (%d bytes)",
				i, g.Name, g.DType, g.Shape, len(g.Data), w.Name, w.DType, w.Shape, len(w.Data))
		}
	}
	return nil
}

// fuzzDTypes indexes the dtypes for FuzzRoundTrip.
var fuzzDTypes = []string{"F32", "F64", "I64", "I32", "F16", "BF16", "U8", "I8", "BOOL"}

// tensorsOf builds tensors from fuzz input: one per comma-separated name,
// each taking from spec a dtype byte, a rank byte (0 to 3) and a byte per
// dimension (0 to 4), with data bytes cycling through payload.
func tensorsOf(names string, spec, payload []byte) []Tensor {
	next := func() int {
		if len(spec) == 0 {
			return 0
		}
		v := int(spec[0])
		spec = spec[1:]
		return v
	}
	var ts []Tensor
	k := 0
	for _, name := range strings.Split(names, ",") {
		dt := fuzzDTypes[next()%len(fuzzDTypes)]
		shape := make([]int, next()%4)
		n := dtypeSize[dt]
		for i := range shape {
			shape[i] = next() % 5
			n *= shape[i]
		}
		data := make([]byte, n)
		for i := range data {
			if len(payload) > 0 {
				data[i] = payload[k%len(payload)]
				k++
			}
		}
		ts = append(ts, Tensor{Name: name, DType: dt, Shape: shape, Data: data})
	}
	return ts
}

// FuzzRoundTrip writes random tensors and metadata and reads them back:
// Write refuses only invalid names and metadata, and Read returns what was
// written, ordered by data offset (empty tensors, which occupy no bytes,
// before the tensor at their offset, by name).
func FuzzRoundTrip(f *testing.F) {
	f.Add("a.weight,logZ,step", []byte{0, 2, 2, 3, 1, 0, 2, 1, 1}, []byte{1, 2, 3, 4, 5, 6, 7}, "format", "pt")
	f.Add("x", []byte{6, 1, 4}, []byte("abcd"), "", "")
	f.Add("b,a,c", []byte{8, 1, 0, 3, 2, 2, 0, 1, 2}, []byte{9}, "gfn_state", `{"a":[1,2]}`)
	f.Add("m,m", []byte{0, 0, 0, 0}, []byte{1}, "k", "v")
	f.Fuzz(func(t *testing.T, names string, spec, payload []byte, key, value string) {
		ts := tensorsOf(names, spec, payload)
		var meta map[string]string
		if key != "" {
			meta = map[string]string{key: value}
		}
		var buf bytes.Buffer
		err := Write(&buf, ts, meta)
		seen := map[string]bool{}
		valid := key == "" || utf8.ValidString(key) && utf8.ValidString(value)
		for _, x := range ts {
			valid = valid && x.Name != "" && x.Name != "__metadata__" && !seen[x.Name] && utf8.ValidString(x.Name)
			seen[x.Name] = true
		}
		if err != nil {
			if valid {
				t.Fatalf("Write: %v", err)
			}
			return
		}
		if !valid {
			t.Fatalf("Write accepted names %q or metadata %q: %q", names, key, value)
		}
		if hl := binary.LittleEndian.Uint64(buf.Bytes()); hl%8 != 0 {
			t.Errorf("data starts at %d, not 8-byte aligned", 8+hl)
		}
		got, gotMeta, err := Read(&buf)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		// The expected order: by start offset, then end, then name.
		type placed struct {
			t          Tensor
			start, end int
		}
		want := make([]placed, len(ts))
		off := 0
		for i, x := range ts {
			want[i] = placed{x, off, off + len(x.Data)}
			off += len(x.Data)
		}
		slices.SortStableFunc(want, func(a, b placed) int {
			return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end), strings.Compare(a.t.Name, b.t.Name))
		})
		wantTs := make([]Tensor, len(want))
		for i, p := range want {
			wantTs[i] = p.t
		}
		if err := sameTensors(got, wantTs); err != nil {
			t.Fatal(err)
		}
		if len(gotMeta) != len(meta) || gotMeta[key] != meta[key] {
			t.Fatalf("metadata %v, want %v", gotMeta, meta)
		}
	})
}

// Sizes a file only claims cost no memory: a header length of 100 MB
// before 8 bytes, and a 1 TB tensor in a small file, are errors after
// allocating about what the file holds.
func TestReadAllocatesWhatIsThere(t *testing.T) {
	for name, b := range map[string][]byte{
		"header length": append(binary.LittleEndian.AppendUint64(nil, maxHeader), make([]byte, 8)...),
		"1 TB tensor":   fileOf(`{"x":{"dtype":"F32","shape":[262144,1048576],"data_offsets":[0,1099511627776]}}`, make([]byte, 64)),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, err := Read(bytes.NewReader(b))
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("%s: %d bytes allocated for a %d-byte file", name, got, len(b))
		}
	}
}
