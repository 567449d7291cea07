package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"unicode/utf8"
)

// Tensor is one named array. Data holds the little-endian bytes.
type Tensor struct {
	Name  string
	DType string // "F32", "F64", "I64", "I32"
	Shape []int
	Data  []byte
}

var dtypeSize = map[string]int{"F32": 4, "F64": 8, "I64": 8, "I32": 4, "F16": 2, "BF16": 2, "U8": 1, "I8": 1, "BOOL": 1}

// maxHeader bounds the JSON header we accept, as the reference does, so a
// corrupt length cannot make us allocate gigabytes.
const maxHeader = 100 << 20

// F32 builds a float32 tensor.
func F32(name string, shape []int, v []float32) Tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return Tensor{Name: name, DType: "F32", Shape: append([]int(nil), shape...), Data: b}
}

// F64 builds a float64 tensor.
func F64(name string, shape []int, v []float64) Tensor {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return Tensor{Name: name, DType: "F64", Shape: append([]int(nil), shape...), Data: b}
}

// I64 builds an int64 tensor.
func I64(name string, shape []int, v []int64) Tensor {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return Tensor{Name: name, DType: "I64", Shape: append([]int(nil), shape...), Data: b}
}

// NumElements is the product of the shape (1 for a scalar).
func (t Tensor) NumElements() int {
	n := 1
	for _, s := range t.Shape {
		n *= s
	}
	return n
}

// Float32s decodes an F32 tensor.
func (t Tensor) Float32s() ([]float32, error) {
	if t.DType != "F32" {
		return nil, fmt.Errorf("safetensors: tensor %q has dtype %s, want F32", t.Name, t.DType)
	}
	v := make([]float32, len(t.Data)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v, nil
}

// Float64s decodes an F64 tensor.
func (t Tensor) Float64s() ([]float64, error) {
	if t.DType != "F64" {
		return nil, fmt.Errorf("safetensors: tensor %q has dtype %s, want F64", t.Name, t.DType)
	}
	v := make([]float64, len(t.Data)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(t.Data[8*i:]))
	}
	return v, nil
}

// Int64s decodes an I64 tensor.
func (t Tensor) Int64s() ([]int64, error) {
	if t.DType != "I64" {
		return nil, fmt.Errorf("safetensors: tensor %q has dtype %s, want I64", t.Name, t.DType)
	}
	v := make([]int64, len(t.Data)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(t.Data[8*i:]))
	}
	return v, nil
}

// byteSize is the number of bytes of a tensor of the given shape with
// elements of size bytes; ok is false for a negative dimension or a size
// beyond an int.
func byteSize(size int, shape []int) (n int, ok bool) {
	n = size
	for _, s := range shape {
		if s < 0 || s > 0 && n > math.MaxInt/s {
			return 0, false
		}
		n *= s
	}
	return n, true
}

type entry struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

// Write encodes tensors (in the order given) and metadata to w.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	header := map[string]any{}
	if len(metadata) > 0 {
		// JSON would silently replace invalid UTF-8 with U+FFFD.
		for k, v := range metadata {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return fmt.Errorf("safetensors: metadata %q: %q is not valid UTF-8", k, v)
			}
		}
		header["__metadata__"] = metadata
	}
	off := 0
	for _, t := range tensors {
		size, ok := dtypeSize[t.DType]
		if !ok {
			return fmt.Errorf("safetensors: tensor %q: unknown dtype %q", t.Name, t.DType)
		}
		if t.Name == "" || t.Name == "__metadata__" || !utf8.ValidString(t.Name) {
			return fmt.Errorf("safetensors: invalid tensor name %q", t.Name)
		}
		if _, dup := header[t.Name]; dup {
			return fmt.Errorf("safetensors: duplicate tensor name %q", t.Name)
		}
		if n, ok := byteSize(size, t.Shape); !ok || len(t.Data) != n {
			return fmt.Errorf("safetensors: tensor %q: %d bytes for shape %v of %s", t.Name, len(t.Data), t.Shape, t.DType)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[t.Name] = entry{DType: t.DType, Shape: shape, Offsets: [2]int{off, off + len(t.Data)}}
		off += len(t.Data)
	}
	hj, err := json.Marshal(header)
	if err != nil {
		return err
	}
	// Pad with spaces so the data starts 8-byte aligned, as the reference writer does.
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(hj)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(hj); err != nil {
		return err
	}
	for _, t := range tensors {
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
	}
	return nil
}

// Read decodes a whole safetensors stream. Tensors are returned sorted by
// their data offset (the order they were written in; empty tensors, which
// take no bytes, before the tensor at their offset, by name).
func Read(r io.Reader) ([]Tensor, map[string]string, error) {
	var n [8]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, nil, fmt.Errorf("safetensors: reading header length: %w", err)
	}
	hl := binary.LittleEndian.Uint64(n[:])
	if hl > maxHeader {
		return nil, nil, fmt.Errorf("safetensors: header of %d bytes is larger than the %d allowed", hl, maxHeader)
	}
	// Read what is there rather than allocate what the length claims.
	hj, err := io.ReadAll(io.LimitReader(r, int64(hl)))
	if err != nil {
		return nil, nil, fmt.Errorf("safetensors: reading header: %w", err)
	}
	if uint64(len(hj)) != hl {
		return nil, nil, fmt.Errorf("safetensors: reading header: %w", io.ErrUnexpectedEOF)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimRight(hj, " "), &raw); err != nil {
		return nil, nil, fmt.Errorf("safetensors: header is not valid JSON: %w", err)
	}
	var meta map[string]string
	var tensors []Tensor
	var offs [][2]int
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &meta); err != nil {
				return nil, nil, fmt.Errorf("safetensors: __metadata__ must map strings to strings: %w", err)
			}
			continue
		}
		var e entry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: %w", name, err)
		}
		size, ok := dtypeSize[e.DType]
		if !ok {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: unknown dtype %q", name, e.DType)
		}
		t := Tensor{Name: name, DType: e.DType, Shape: e.Shape}
		n, ok := byteSize(size, e.Shape)
		if !ok || e.Offsets[0] < 0 || e.Offsets[1] < e.Offsets[0] || e.Offsets[1]-e.Offsets[0] != n {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: offsets %v do not match shape %v of %s", name, e.Offsets, e.Shape, e.DType)
		}
		tensors = append(tensors, t)
		offs = append(offs, e.Offsets)
	}
	idx := make([]int, len(tensors))
	for i := range idx {
		idx[i] = i
	}
	// An empty tensor shares its offset with the tensor after it: sorting
	// by start alone could put it second and break the contiguity check.
	sort.Slice(idx, func(a, b int) bool {
		oa, ob := offs[idx[a]], offs[idx[b]]
		if oa != ob {
			return oa[0] < ob[0] || oa[0] == ob[0] && oa[1] < ob[1]
		}
		return tensors[idx[a]].Name < tensors[idx[b]].Name
	})
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("safetensors: reading data: %w", err)
	}
	out := make([]Tensor, len(tensors))
	pos := 0
	for k, i := range idx {
		o := offs[i]
		if o[0] != pos {
			return nil, nil, errors.New("safetensors: tensor data is not contiguous")
		}
		if o[1] > len(data) {
			return nil, nil, fmt.Errorf("safetensors: tensor %q runs past the end of the file", tensors[i].Name)
		}
		t := tensors[i]
		t.Data = data[o[0]:o[1]]
		out[k] = t
		pos = o[1]
	}
	if pos != len(data) {
		return nil, nil, fmt.Errorf("safetensors: %d trailing bytes after the last tensor", len(data)-pos)
	}
	return out, meta, nil
}
