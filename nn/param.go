package nn

import (
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/internal/kernel"
)

// Param is a trainable tensor with its gradient.
type Param struct {
	Name  string
	Shape []int // the shape as stored in Value
	Value []float32
	Grad  []float32
	// Transposed marks a 2-D weight stored in×out whose canonical (PyTorch,
	// checkpoint) layout is out×in.
	Transposed bool
}

// NewParam returns a zero-initialised parameter.
func NewParam(name string, shape ...int) *Param {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return &Param{Name: name, Shape: shape, Value: make([]float32, n), Grad: make([]float32, n)}
}

// Len is the number of elements.
func (p *Param) Len() int { return len(p.Value) }

// ZeroGrad clears the gradients of ps.
func ZeroGrad(ps []*Param) {
	for _, p := range ps {
		clear(p.Grad)
	}
}

// GradNorm is the Euclidean norm of all gradients together, in float64.
func GradNorm(ps []*Param) float64 {
	var s float64
	for _, p := range ps {
		s += kernel.SumSquares(p.Grad)
	}
	return math.Sqrt(s)
}

// ClipGradNorm rescales the gradients of ps so that their joint norm is at
// most maxNorm, as torch.nn.utils.clip_grad_norm_ does (coefficient
// maxNorm/(norm+1e-6), capped at 1). It returns the norm before clipping.
func ClipGradNorm(ps []*Param, maxNorm float64) float64 {
	norm := GradNorm(ps)
	coef := maxNorm / (norm + 1e-6)
	if coef < 1 {
		c := float32(coef)
		for _, p := range ps {
			kernel.Scale(p.Grad, c)
		}
	}
	return norm
}

// uniformInit fills v with U(-bound, bound) draws.
func uniformInit(v []float32, bound float64, rng *rand.Rand) {
	for i := range v {
		v[i] = float32((rng.Float64()*2 - 1) * bound)
	}
}
