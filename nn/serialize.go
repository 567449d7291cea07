package nn

import (
	"fmt"

	"github.com/gfngo/gfn/safetensors"
)

// canonical returns the parameter in its checkpoint layout (out×in for
// transposed weights) with that shape.
func canonical(p *Param, v []float32) ([]int, []float32) {
	if !p.Transposed {
		return p.Shape, v
	}
	in, out := p.Shape[0], p.Shape[1]
	t := make([]float32, len(v))
	for i := range in {
		for j := range out {
			t[j*in+i] = v[i*out+j]
		}
	}
	return []int{out, in}, t
}

// ParamTensors encodes the values of ps as F32 tensors named prefix+name, in
// PyTorch's layout.
func ParamTensors(prefix string, ps []*Param) []safetensors.Tensor {
	ts := make([]safetensors.Tensor, 0, len(ps))
	for _, p := range ps {
		shape, v := canonical(p, p.Value)
		ts = append(ts, safetensors.F32(prefix+p.Name, shape, v))
	}
	return ts
}

// setFromTensor copies a checkpoint tensor into dst (layout of p).
func setFromTensor(p *Param, dst []float32, t safetensors.Tensor) error {
	want := p.Shape
	if p.Transposed {
		want = []int{p.Shape[1], p.Shape[0]}
	}
	if fmt.Sprint(t.Shape) != fmt.Sprint(want) && !(len(want) == 0 && t.NumElements() == 1) {
		return fmt.Errorf("nn: tensor %q has shape %v, want %v", t.Name, t.Shape, want)
	}
	v, err := t.Float32s()
	if err != nil {
		return err
	}
	if !p.Transposed {
		copy(dst, v)
		return nil
	}
	in, out := p.Shape[0], p.Shape[1]
	for i := range in {
		for j := range out {
			dst[i*out+j] = v[j*in+i]
		}
	}
	return nil
}

func index(ts []safetensors.Tensor) map[string]safetensors.Tensor {
	m := make(map[string]safetensors.Tensor, len(ts))
	for _, t := range ts {
		m[t.Name] = t
	}
	return m
}

// LoadParams sets every parameter of ps from the tensor named prefix+name.
// A missing tensor or a shape mismatch is an error; parameters before the
// failure are already set, so callers load into fresh models.
func LoadParams(prefix string, ps []*Param, ts []safetensors.Tensor) error {
	byName := index(ts)
	for _, p := range ps {
		t, ok := byName[prefix+p.Name]
		if !ok {
			return fmt.Errorf("nn: checkpoint has no tensor %q", prefix+p.Name)
		}
		if err := setFromTensor(p, p.Value, t); err != nil {
			return err
		}
	}
	return nil
}

// StateTensors encodes the optimizer state as tensors named
// prefix+param+".exp_avg", prefix+param+".exp_avg_sq" and prefix+"step",
// after the fields of torch.optim.Adam's state.
func (a *Adam) StateTensors(prefix string) []safetensors.Tensor {
	var ts []safetensors.Tensor
	for k, p := range a.Params() {
		shape, m := canonical(p, a.m[k])
		_, v := canonical(p, a.v[k])
		ts = append(ts, safetensors.F32(prefix+p.Name+".exp_avg", shape, m), safetensors.F32(prefix+p.Name+".exp_avg_sq", shape, v))
	}
	return append(ts, safetensors.I64(prefix+"step", nil, []int64{int64(a.Steps)}))
}

// LoadState restores what StateTensors wrote.
func (a *Adam) LoadState(prefix string, ts []safetensors.Tensor) error {
	byName := index(ts)
	for k, p := range a.Params() {
		for _, s := range []struct {
			suffix string
			dst    []float32
		}{{".exp_avg", a.m[k]}, {".exp_avg_sq", a.v[k]}} {
			t, ok := byName[prefix+p.Name+s.suffix]
			if !ok {
				return fmt.Errorf("nn: checkpoint has no tensor %q", prefix+p.Name+s.suffix)
			}
			if err := setFromTensor(p, s.dst, t); err != nil {
				return err
			}
		}
	}
	t, ok := byName[prefix+"step"]
	if !ok {
		return fmt.Errorf("nn: checkpoint has no tensor %q", prefix+"step")
	}
	st, err := t.Int64s()
	if err != nil || len(st) != 1 {
		return fmt.Errorf("nn: tensor %q is not one int64", prefix+"step")
	}
	a.Steps = int(st[0])
	return nil
}
