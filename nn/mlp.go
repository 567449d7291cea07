package nn

import (
	"fmt"
	"math/rand/v2"
)

// MLP is an input layer followed by activation/Linear pairs, with no
// activation after the last layer, as the reference code's
// nn.Sequential(Linear, LeakyReLU, ..., Linear). The input layer is either a
// OneHot (index-list inputs) or a Linear (dense inputs).
type MLP struct {
	OneHot *OneHot // set for index-list inputs
	First  *Linear // set for dense inputs
	Body   []Layer // activation, Linear, activation, Linear, ...
}

// NewOneHotMLP builds an MLP on vocab-wide one-hot inputs with the given
// layer widths (sizes[0] is the first hidden width, the last is the output).
// Parameters are named as PyTorch names the layers of nn.Sequential
// (prefix.0.weight, prefix.2.weight, ...), with newAct building activations.
func NewOneHotMLP(prefix string, vocab int, sizes []int, newAct func() Layer, rng *rand.Rand) *MLP {
	if len(sizes) == 0 {
		panic("nn: NewOneHotMLP needs at least one layer width")
	}
	m := &MLP{OneHot: NewOneHot(fmt.Sprintf("%s.0", prefix), vocab, sizes[0], rng)}
	m.buildBody(prefix, sizes, newAct, rng)
	return m
}

// NewMLP builds an MLP on dense in-wide inputs.
func NewMLP(prefix string, in int, sizes []int, newAct func() Layer, rng *rand.Rand) *MLP {
	if len(sizes) == 0 {
		panic("nn: NewMLP needs at least one layer width")
	}
	m := &MLP{First: NewLinear(fmt.Sprintf("%s.0", prefix), in, sizes[0], rng)}
	m.buildBody(prefix, sizes, newAct, rng)
	return m
}

func (m *MLP) buildBody(prefix string, sizes []int, newAct func() Layer, rng *rand.Rand) {
	for i := 1; i < len(sizes); i++ {
		m.Body = append(m.Body, newAct(), NewLinear(fmt.Sprintf("%s.%d", prefix, 2*i), sizes[i-1], sizes[i], rng))
	}
}

// ForwardIndices runs the network on index-list inputs (k indices per row).
func (m *MLP) ForwardIndices(idx []int32, k int) *Matrix {
	return m.forwardBody(m.OneHot.ForwardIndices(idx, k))
}

// Forward runs the network on dense inputs.
func (m *MLP) Forward(x *Matrix) *Matrix { return m.forwardBody(m.First.Forward(x)) }

func (m *MLP) forwardBody(h *Matrix) *Matrix {
	for _, l := range m.Body {
		h = l.Forward(h)
	}
	return h
}

// Backward propagates the gradient of the most recent forward pass's output
// and returns the gradient with respect to a dense input (nil for index
// inputs, or when First.NoInputGrad is set).
func (m *MLP) Backward(dy *Matrix) *Matrix {
	for i := len(m.Body) - 1; i >= 0; i-- {
		dy = m.Body[i].Backward(dy)
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
	for _, l := range m.Body {
		ps = append(ps, l.Params()...)
	}
	return ps
}
