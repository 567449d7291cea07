package nn

import (
	"math"

	"github.com/gfngo/gfn/internal/kernel"
)

// Group is a set of parameters sharing a learning rate.
type Group struct {
	Params []*Param
	LR     float64
}

// Adam is torch.optim.Adam (no amsgrad) with parameter groups.
type Adam struct {
	Groups            []Group
	Beta1, Beta2, Eps float64
	// WeightDecay is torch's coupled L2 penalty: each step uses the
	// gradient g + WeightDecay·θ (0: none).
	WeightDecay float64
	Steps       int
	m, v        [][]float32 // per parameter, in group order
	params      []*Param    // every group's parameters, in order
}

// NewAdam returns Adam with PyTorch's defaults β=(0.9, 0.999), ε=1e-8.
func NewAdam(groups ...Group) *Adam {
	a := &Adam{Groups: groups, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	for _, g := range groups {
		for _, p := range g.Params {
			a.m = append(a.m, make([]float32, p.Len()))
			a.v = append(a.v, make([]float32, p.Len()))
			a.params = append(a.params, p)
		}
	}
	return a
}

// Params lists every parameter of every group, in order. The slice is
// made once, by NewAdam (a training step asks for it several times), and
// must not be modified.
func (a *Adam) Params() []*Param { return a.params }

// Step applies one update from the current gradients.
func (a *Adam) Step() {
	a.Steps++
	bc1 := 1 - math.Pow(a.Beta1, float64(a.Steps))
	bc2 := 1 - math.Pow(a.Beta2, float64(a.Steps))
	c := kernel.AdamCoef{
		B1: float32(a.Beta1), OneMinusB1: 1 - float32(a.Beta1),
		B2: float32(a.Beta2), OneMinusB2: 1 - float32(a.Beta2),
		SqrtBC2: float32(math.Sqrt(bc2)), Eps: float32(a.Eps),
	}
	k := 0
	for _, g := range a.Groups {
		c.Step = float32(g.LR / bc1)
		for _, p := range g.Params {
			if a.WeightDecay != 0 {
				wd := float32(a.WeightDecay)
				for i, v := range p.Value {
					p.Grad[i] += wd * v
				}
			}
			kernel.Adam(p.Value, p.Grad[:len(p.Value)], a.m[k], a.v[k], c)
			k++
		}
	}
}
