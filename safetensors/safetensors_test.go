package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	in := []Tensor{
		F32("a.weight", []int{2, 3}, []float32{1, 2, 3, 4, 5, -6.5}),
		F64("logZ", nil, []float64{0.125}),
		I64("step", []int{1}, []int64{42}),
	}
	var buf bytes.Buffer
	if err := Write(&buf, in, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	hl := binary.LittleEndian.Uint64(buf.Bytes()[:8])
	if (8+hl)%8 != 0 {
		t.Errorf("data starts at %d, not 8-byte aligned", 8+hl)
	}
	out, meta, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if meta["format"] != "pt" {
		t.Errorf("metadata = %v", meta)
	}
	if len(out) != 3 || out[0].Name != "a.weight" || out[1].Name != "logZ" || out[2].Name != "step" {
		t.Fatalf("names/order: %+v", out)
	}
	f, _ := out[0].Float32s()
	if !reflect.DeepEqual(f, []float32{1, 2, 3, 4, 5, -6.5}) || !reflect.DeepEqual(out[0].Shape, []int{2, 3}) {
		t.Errorf("a.weight = %v %v", f, out[0].Shape)
	}
	d, _ := out[1].Float64s()
	if d[0] != 0.125 || len(out[1].Shape) != 0 {
		t.Errorf("logZ = %v shape %v", d, out[1].Shape)
	}
	s, _ := out[2].Int64s()
	if s[0] != 42 {
		t.Errorf("step = %v", s)
	}
	if _, err := out[0].Float64s(); err == nil {
		t.Error("Float64s on F32 did not fail")
	}
}

// A file produced by Python: safetensors.numpy.save({"x": np.array([1.5, -2], dtype=np.float32)}).
func TestReadsPythonFile(t *testing.T) {
	header := `{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, uint64(len(header)))
	buf.WriteString(header)
	b, _ := hex.DecodeString("0000c03f000000c0")
	buf.Write(b)
	out, _, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := out[0].Float32s()
	if !reflect.DeepEqual(v, []float32{1.5, -2}) {
		t.Errorf("x = %v", v)
	}
}

func TestReadRejectsCorruptFiles(t *testing.T) {
	good := func() []byte {
		var buf bytes.Buffer
		Write(&buf, []Tensor{F32("x", []int{2}, []float32{1, 2})}, nil)
		return buf.Bytes()
	}
	cases := map[string]func([]byte) []byte{
		"truncated data": func(b []byte) []byte { return b[:len(b)-1] },
		"trailing bytes": func(b []byte) []byte { return append(b, 0) },
		"huge header":    func(b []byte) []byte { binary.LittleEndian.PutUint64(b, 1<<40); return b },
		"short header":   func(b []byte) []byte { return b[:4] },
		"not json":       func(b []byte) []byte { b[8] = 'x'; return b },
	}
	for name, corrupt := range cases {
		if _, _, err := Read(bytes.NewReader(corrupt(good()))); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.HasPrefix(err.Error(), "safetensors:") {
			t.Errorf("%s: error %q lacks the package prefix", name, err)
		}
	}
}

func TestWriteRejectsBadTensors(t *testing.T) {
	bad := [][]Tensor{
		{{Name: "x", DType: "F32", Shape: []int{3}, Data: make([]byte, 8)}},
		{{Name: "x", DType: "Q7", Shape: []int{1}, Data: make([]byte, 1)}},
		{F32("x", []int{1}, []float32{1}), F32("x", []int{1}, []float32{1})},
	}
	for i, ts := range bad {
		if err := Write(&bytes.Buffer{}, ts, nil); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}
