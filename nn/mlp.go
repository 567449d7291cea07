package nn

import (
	"fmt"
	"math/rand/v2"
)

// MLP is an input layer followed by Linear layers, each hidden layer with a
// fused activation and the last with none, as the reference code's
// nn.Sequential(Linear, LeakyReLU, ..., Linear). The input layer is either a
// OneHot (index-list inputs) or a Linear (dense inputs).
type MLP struct {
	OneHot *OneHot   // set for index-list inputs
	First  *Linear   // set for dense inputs
	Layers []*Linear // the layers after the input layer

	tape  tape
	tapeX Matrix // recorded dense inputs, once EndRecord has run
}

// NewOneHotMLP builds an MLP on vocab-wide one-hot inputs with the given
// layer widths (sizes[0] is the first hidden width, the last is the output)
// and hidden activation act. Parameters are named as PyTorch names the
// layers of nn.Sequential (prefix.0.weight, prefix.2.weight, ...).
func NewOneHotMLP(prefix string, vocab int, sizes []int, act Activation, rng *rand.Rand) *MLP {
	return newMLP(prefix, vocab, true, sizes, act, rng)
}

// NewMLP builds an MLP on dense in-wide inputs.
func NewMLP(prefix string, in int, sizes []int, act Activation, rng *rand.Rand) *MLP {
	return newMLP(prefix, in, false, sizes, act, rng)
}

func newMLP(prefix string, in int, oneHot bool, sizes []int, act Activation, rng *rand.Rand) *MLP {
	if len(sizes) == 0 {
		panic("nn: an MLP needs at least one layer width")
	}
	firstAct := Identity
	if len(sizes) > 1 {
		firstAct = act
	}
	w, b := newAffine(prefix+".0", in, sizes[0], rng)
	m := &MLP{}
	if oneHot {
		m.OneHot = &OneHot{W: w, B: b, Act: firstAct}
	} else {
		m.First = &Linear{W: w, B: b, Act: firstAct}
	}
	m.build(prefix, sizes, act, rng)
	return m
}

func (m *MLP) build(prefix string, sizes []int, act Activation, rng *rand.Rand) {
	for i := 1; i < len(sizes); i++ {
		l := NewLinear(fmt.Sprintf("%s.%d", prefix, 2*i), sizes[i-1], sizes[i], rng)
		if i < len(sizes)-1 {
			l.Act = act
		}
		m.Layers = append(m.Layers, l)
	}
}

// ForwardIndices runs the network on index-list inputs (k indices per row).
func (m *MLP) ForwardIndices(idx []int32, k int) *Matrix {
	y := m.forwardLayers(m.OneHot.ForwardIndices(idx, k))
	if m.tape.on {
		m.record(idx, k, nil)
	}
	return y
}

// Forward runs the network on dense inputs.
func (m *MLP) Forward(x *Matrix) *Matrix {
	y := m.forwardLayers(m.First.Forward(x))
	if m.tape.on {
		m.record(nil, 0, x)
	}
	return y
}

func (m *MLP) forwardLayers(h *Matrix) *Matrix {
	for _, l := range m.Layers {
		h = l.Forward(h)
	}
	return h
}

// Backward propagates the gradient of the most recent forward pass's output
// (overwriting dy) and returns the gradient with respect to a dense input
// (nil for index inputs, or when First.NoInputGrad is set).
func (m *MLP) Backward(dy *Matrix) *Matrix {
	for i := len(m.Layers) - 1; i >= 0; i-- {
		dy = m.Layers[i].Backward(dy)
	}
	if m.OneHot != nil {
		m.OneHot.Backward(dy)
		return nil
	}
	return m.First.Backward(dy)
}

// Params lists the trainable parameters in PyTorch's state_dict order.
func (m *MLP) Params() []*Param {
	var ps []*Param
	if m.OneHot != nil {
		ps = append(ps, m.OneHot.Params()...)
	} else {
		ps = append(ps, m.First.Params()...)
	}
	for _, l := range m.Layers {
		ps = append(ps, l.Params()...)
	}
	return ps
}

// SetPrecision sets the precision of the hidden layers' products: every
// Linear of Layers but the last, those between two hidden activations.
// The input layer and the output layer stay in float32 (set them apart
// with their own SetPrecision if wanted): the input layer reads the raw
// state (coordinates, times), which bfloat16 would round to three digits,
// and is a gather (OneHot) or usually narrow; the output layer gives the
// logits or the drift, which the loss uses directly, and is narrow (a few
// actions), a shape the float32 kernel serves with its own dot products and
// the bfloat16 one would pad to 32 columns. So with BF16 a network of one
// hidden layer changes nothing. Biases, activations, weights, gradients
// and Adam stay float32 throughout.
//
// SetPrecision returns p.Check's error, and then changes nothing.
func (m *MLP) SetPrecision(p Precision) error {
	if err := p.Check(); err != nil {
		return err
	}
	for i, l := range m.Layers {
		if i < len(m.Layers)-1 {
			l.prec = p
		}
	}
	return nil
}

// Precision returns the precision of the hidden layers' products
// (SetPrecision), FP32 for a network without hidden-to-hidden layers.
func (m *MLP) Precision() Precision {
	if len(m.Layers) < 2 {
		return FP32
	}
	return m.Layers[0].prec
}

// Output is the output of the most recent forward pass (after Record,
// EndRecord or KeepRows).
func (m *MLP) Output() *Matrix {
	if n := len(m.Layers); n > 0 {
		return &m.Layers[n-1].y
	}
	if m.OneHot != nil {
		return &m.OneHot.y
	}
	return &m.First.y
}

// Clone returns an MLP that shares m's parameters and precisions but has
// its own activation buffers, so that the two can run forward passes concurrently
// (inference: neither may be trained while the other runs).
func (m *MLP) Clone() *MLP {
	c := &MLP{}
	if m.OneHot != nil {
		c.OneHot = &OneHot{W: m.OneHot.W, B: m.OneHot.B, Act: m.OneHot.Act}
	} else {
		c.First = &Linear{W: m.First.W, B: m.First.B, Act: m.First.Act, NoInputGrad: m.First.NoInputGrad, prec: m.First.prec}
	}
	for _, l := range m.Layers {
		c.Layers = append(c.Layers, &Linear{W: l.W, B: l.B, Act: l.Act, NoInputGrad: l.NoInputGrad, prec: l.prec})
	}
	return c
}
