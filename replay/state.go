package replay

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gfngo/gfn/safetensors"
)

// Tensors encodes the buffer for a checkpoint as tensors named prefix +
// "key" (I64, the keys' bits), "x" (I32 or F32, one row per entry),
// "log_r" and "priority" (F64), every entry oldest first, and "count"
// (I64: the number of Append calls, then, with Passes, the pass's served
// count and positions). Restore on an empty buffer of the same settings
// rebuilds one that samples identically.
func (b *Buffer[S]) Tensors(prefix string) []safetensors.Tensor {
	keys, xs, logR, prio := b.entries(b.Each)
	count := []uint64{b.appended}
	if b.Passes {
		pos, served := b.Pass()
		count = append(count, uint64(served))
		for _, p := range pos {
			count = append(count, uint64(p))
		}
	}
	return append(entryTensors(prefix, b.stateLen, keys, xs, logR, prio), u64Tensor(prefix+"count", count))
}

// Restore refills an empty buffer from the tensors Tensors wrote.
func (b *Buffer[S]) Restore(prefix string, ts []safetensors.Tensor) error {
	if b.Len() != 0 {
		panic("replay: Restore into a buffer that is not empty")
	}
	keys, xs, logR, prio, err := readEntries[S](prefix, b.stateLen, ts)
	if err != nil {
		return err
	}
	if len(keys) > b.Cap {
		return fmt.Errorf("replay: tensor %skey: %d entries exceed the capacity %d", prefix, len(keys), b.Cap)
	}
	count, err := u64s(ts, prefix+"count")
	if err != nil {
		return err
	}
	if len(count) < 1 || b.Passes && len(count) < 2 {
		return fmt.Errorf("replay: tensor %scount has %d values", prefix, len(count))
	}
	w := b.stateLen
	for i, k := range keys {
		b.Add(k, xs[i*w:(i+1)*w], logR[i], prio[i])
	}
	if b.Len() != len(keys) {
		return fmt.Errorf("replay: tensor %skey repeats a key: %d distinct of %d", prefix, b.Len(), len(keys))
	}
	b.appended = count[0]
	if b.Passes {
		pos := make([]int, len(count)-2)
		for i := range pos {
			pos[i] = int(count[i+2])
		}
		return b.SetPass(pos, int(count[1]))
	}
	return nil
}

// Tensors encodes the buffer for a checkpoint as Buffer.Tensors does
// (no "count"); Restore rebuilds it.
func (b *Keyed[S]) Tensors(prefix string) []safetensors.Tensor {
	keys, xs, logR, prio := b.entries(b.Each)
	return entryTensors(prefix, b.stateLen, keys, xs, logR, prio)
}

// Restore refills an empty buffer from the tensors Tensors wrote.
func (b *Keyed[S]) Restore(prefix string, ts []safetensors.Tensor) error {
	if b.Len() != 0 {
		panic("replay: Restore into a buffer that is not empty")
	}
	keys, xs, logR, prio, err := readEntries[S](prefix, b.stateLen, ts)
	if err != nil {
		return err
	}
	if len(keys) > b.Cap {
		return fmt.Errorf("replay: tensor %skey: %d entries exceed the capacity %d", prefix, len(keys), b.Cap)
	}
	w := b.stateLen
	for i, k := range keys {
		b.Set(k, xs[i*w:(i+1)*w], logR[i], prio[i])
	}
	if b.Len() != len(keys) {
		return fmt.Errorf("replay: tensor %skey repeats a key: %d distinct of %d", prefix, b.Len(), len(keys))
	}
	return nil
}

// entries collects what each yields.
func (b *Buffer[S]) entries(each func(func(uint64, []S, float64, float64))) ([]uint64, []S, []float64, []float64) {
	return collect(b.Len(), b.stateLen, each)
}

func (b *Keyed[S]) entries(each func(func(uint64, []S, float64, float64))) ([]uint64, []S, []float64, []float64) {
	return collect(b.Len(), b.stateLen, each)
}

func collect[S Elem](n, w int, each func(func(uint64, []S, float64, float64))) ([]uint64, []S, []float64, []float64) {
	keys, xs := make([]uint64, 0, n), make([]S, 0, n*w)
	logR, prio := make([]float64, 0, n), make([]float64, 0, n)
	each(func(k uint64, x []S, lr, p float64) {
		keys, xs = append(keys, k), append(xs, x...)
		logR, prio = append(logR, lr), append(prio, p)
	})
	return keys, xs, logR, prio
}

func entryTensors[S Elem](prefix string, w int, keys []uint64, xs []S, logR, prio []float64) []safetensors.Tensor {
	n := len(keys)
	var x safetensors.Tensor
	switch v := any(xs).(type) {
	case []float32:
		x = safetensors.F32(prefix+"x", []int{n, w}, v)
	default:
		b := make([]byte, 0, 4*len(xs))
		for _, s := range xs {
			b = binary.LittleEndian.AppendUint32(b, uint32(int32(s)))
		}
		x = safetensors.Tensor{Name: prefix + "x", DType: "I32", Shape: []int{n, w}, Data: b}
	}
	return []safetensors.Tensor{u64Tensor(prefix+"key", keys), x,
		safetensors.F64(prefix+"log_r", []int{n}, logR), safetensors.F64(prefix+"priority", []int{n}, prio)}
}

func readEntries[S Elem](prefix string, w int, ts []safetensors.Tensor) ([]uint64, []S, []float64, []float64, error) {
	keys, err := u64s(ts, prefix+"key")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	n := len(keys)
	x, err := find(ts, prefix+"x")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	xs := make([]S, 0, n*w)
	switch any(xs).(type) {
	case []float32:
		v, err := x.Float32s()
		if err != nil {
			return nil, nil, nil, nil, err
		}
		for _, f := range v {
			xs = append(xs, S(f))
		}
	default:
		if x.DType != "I32" || len(x.Data)%4 != 0 {
			return nil, nil, nil, nil, fmt.Errorf("replay: tensor %sx is %s, want I32", prefix, x.DType)
		}
		for i := 0; i < len(x.Data); i += 4 {
			xs = append(xs, S(int32(binary.LittleEndian.Uint32(x.Data[i:]))))
		}
	}
	var f [2][]float64
	for i, name := range []string{"log_r", "priority"} {
		t, err := find(ts, prefix+name)
		if err == nil {
			f[i], err = t.Float64s()
		}
		if err != nil {
			return nil, nil, nil, nil, err
		}
	}
	if len(xs) != n*w || len(f[0]) != n || len(f[1]) != n {
		return nil, nil, nil, nil, fmt.Errorf("replay: tensors %s*: %d keys, %d words of x (rows of %d), %d log-rewards, %d priorities",
			prefix, n, len(xs), w, len(f[0]), len(f[1]))
	}
	for i, v := range f[0] {
		if math.IsNaN(v) {
			return nil, nil, nil, nil, fmt.Errorf("replay: tensor %slog_r: entry %d is NaN", prefix, i)
		}
	}
	return keys, xs, f[0], f[1], nil
}

func find(ts []safetensors.Tensor, name string) (safetensors.Tensor, error) {
	for _, x := range ts {
		if x.Name == name {
			return x, nil
		}
	}
	return safetensors.Tensor{}, fmt.Errorf("replay: no tensor %s", name)
}

func u64Tensor(name string, v []uint64) safetensors.Tensor {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return safetensors.Tensor{Name: name, DType: "I64", Shape: []int{len(v)}, Data: b}
}

func u64s(ts []safetensors.Tensor, name string) ([]uint64, error) {
	x, err := find(ts, name)
	if err != nil {
		return nil, err
	}
	if x.DType != "I64" || len(x.Data)%8 != 0 {
		return nil, fmt.Errorf("replay: tensor %s is %s, want I64", name, x.DType)
	}
	v := make([]uint64, len(x.Data)/8)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(x.Data[8*i:])
	}
	return v, nil
}
