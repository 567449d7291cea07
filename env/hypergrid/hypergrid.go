package hypergrid

import (
	"fmt"
	"math"

	"github.com/gfngo/gfn/internal/choice"
)

// Reward selects the reward function.
type Reward string

const (
	// Deceptive is the reference code's deceptive reward, the one the
	// paper's tables report; its deceptive region is a central cross.
	Deceptive Reward = "deceptive"
	// DeceptivePaper is the deceptive reward of the paper's equation
	// (a central box).
	DeceptivePaper Reward = "deceptive-paper"
	// Original is the hypergrid reward of Bengio et al. (2021).
	Original Reward = "original"
	// Custom is the reward of a grid made by NewCustom: a function's.
	Custom Reward = "custom"
)

// Rewards lists the valid reward names for New.
var Rewards = []Reward{Deceptive, DeceptivePaper, Original}

// LogRewardFunc writes log R(x) for n terminal states into out[:n]. xs
// holds them as rows of D+1 words, as discrete.Env.LogReward receives
// them: the coordinates, then the stop flag.
type LogRewardFunc func(xs []int32, n int, out []float64) error

// Grid is the hypergrid environment. It implements discrete.Env.
type Grid struct {
	D, H   int
	Reward Reward

	band      []bool // band[v]: coordinate value v lies in the mode band
	logReward LogRewardFunc
}

// New returns a d-dimensional grid of side h. It returns an error naming the
// bad value for d < 1, h < 2, an unknown reward, a grid whose cells do
// not fit in 64-bit keys, or one with more than MaxFeatures features d·h.
func New(d, h int, reward Reward) (*Grid, error) {
	if err := checkSize(d, h); err != nil {
		return nil, err
	}
	ok := false
	for _, r := range Rewards {
		ok = ok || r == reward
	}
	if !ok {
		return nil, fmt.Errorf("hypergrid: unknown reward %q (allowed: %s)", reward, choice.List(Rewards))
	}
	g := &Grid{D: d, H: h, Reward: reward, band: make([]bool, h)}
	for v := range h {
		g.band[v] = g.inModeBand(v)
	}
	return g, nil
}

// NewCustom returns a d-dimensional grid of side h whose log-reward is f
// (its Reward is Custom). Such a grid knows no modes: IsMode is false and
// NumModes 0. LogReward returns f's errors as they are, and an error naming
// the state for a log-reward that is NaN or infinite.
func NewCustom(d, h int, f LogRewardFunc) (*Grid, error) {
	if err := checkSize(d, h); err != nil {
		return nil, err
	}
	if f == nil {
		return nil, fmt.Errorf("hypergrid: the custom log-reward function is nil")
	}
	return &Grid{D: d, H: h, Reward: Custom, band: make([]bool, h), logReward: f}, nil
}

func checkSize(d, h int) error {
	if d < 1 {
		return fmt.Errorf("hypergrid: dimension %d is invalid: it must be at least 1", d)
	}
	if h < 2 {
		return fmt.Errorf("hypergrid: side %d is invalid: it must be at least 2", h)
	}
	if float64(d)*math.Log2(float64(h)) >= 63 {
		return fmt.Errorf("hypergrid: %d^%d cells do not fit in 63 bits", h, d)
	}
	if float64(d)*float64(h) > MaxFeatures {
		return fmt.Errorf("hypergrid: dimension %d and side %d give %d one-hot features, more than the %d allowed", d, h, d*h, MaxFeatures)
	}
	return nil
}

// MaxFeatures bounds a grid's one-hot features d·h (its FeatureLen, the
// rows of a policy's first layer). It keeps the int32 feature indices
// from overflowing and a side read from a corrupt checkpoint from
// allocating its size.
const MaxFeatures = 1 << 24

// u is the reference code's normalised coordinate, rounded after every
// operation (the explicit conversions forbid fused multiply-adds).
func (g *Grid) u(v int) float64 {
	return math.Abs(float64(float64(float64(v)/float64(g.H-1))*2) - 1)
}

// a is |x/(H-1) - 0.5|, for the paper's and the original rewards.
func (g *Grid) a(v int) float64 { return math.Abs(float64(v)/float64(g.H-1) - 0.5) }

func (g *Grid) inModeBand(v int) bool {
	switch g.Reward {
	case Deceptive:
		u := g.u(v)
		return u < 0.8 && u > 0.6
	default:
		a := g.a(v)
		return a > 0.3 && a < 0.4
	}
}

// RewardOf is R(x) for the coordinates x (float64, exact reference order).
// For a custom grid it is exp of the function's log-reward, NaN if the
// function fails.
func (g *Grid) RewardOf(x []int32) float64 {
	x = x[:g.D]
	switch g.Reward {
	case Custom:
		s := append(append(make([]int32, 0, g.D+1), x...), 0)
		var out [1]float64
		if err := g.logReward(s, 1, out[:]); err != nil {
			return math.NaN()
		}
		return math.Exp(out[0])
	case Deceptive:
		outer, ring := 1.0, 1.0
		for _, v := range x {
			u := g.u(int(v))
			if !(u > 0.2) {
				outer = 0
			}
			if !(u < 0.8 && u > 0.6) {
				ring = 0
			}
		}
		return outer*(-1e-1) + ring*2 + 1e-1 + 1e-5
	case DeceptivePaper:
		center, ring := 1.0, 1.0
		for _, v := range x {
			a := g.a(int(v))
			if !(a < 0.1) {
				center = 0
			}
			if !(a > 0.3 && a < 0.4) {
				ring = 0
			}
		}
		return 1e-5 + 0.1*center + 2*ring
	default:
		outer, ring := 1.0, 1.0
		for _, v := range x {
			a := g.a(int(v))
			if !(a > 0.25) {
				outer = 0
			}
			if !(a > 0.3 && a < 0.4) {
				ring = 0
			}
		}
		return 0.1 + 0.5*outer + 2*ring
	}
}

// IsMode reports whether terminal x has the maximal reward: every
// coordinate lies in the mode band.
func (g *Grid) IsMode(x []int32) bool {
	for _, v := range x[:g.D] {
		if !g.band[v] {
			return false
		}
	}
	return true
}

// NumModes is the number of maximal-reward terminal states, computed from
// the per-coordinate band without enumerating the grid.
func (g *Grid) NumModes() int {
	n := 0
	for _, b := range g.band {
		if b {
			n++
		}
	}
	m := 1
	for range g.D {
		m *= n
	}
	return m
}

// String names the grid: "hypergrid(d=2, H=128, deceptive)".
func (g *Grid) String() string { return fmt.Sprintf("hypergrid(d=%d, H=%d, %s)", g.D, g.H, g.Reward) }

// StateLen is d+1: the coordinates, then the stop flag.
func (g *Grid) StateLen() int { return g.D + 1 }

// NumActions is d+1: increment coordinate i < d, or stop (action d).
func (g *Grid) NumActions() int { return g.D + 1 }

// StopAction is d: every non-terminal cell can stop (discrete.Stopper).
func (g *Grid) StopAction() int { return g.D }

// NumBackActions is d+1: decrement coordinate i < d, or undo the stop.
func (g *Grid) NumBackActions() int { return g.D + 1 }

// FeatureLen is d·H: a one-hot block of H values per coordinate.
func (g *Grid) FeatureLen() int { return g.D * g.H }

// FeaturesPerState is d: one index per coordinate.
func (g *Grid) FeaturesPerState() int { return g.D }

// Init writes the origin, not stopped.
func (g *Grid) Init(s []int32) { clear(s[:g.D+1]) }

// Features writes i·H + x_i for each coordinate i.
func (g *Grid) Features(s []int32, idx []int32) {
	for i, v := range s[:g.D] {
		idx[i] = int32(i*g.H) + v
	}
}

// ForwardMask allows incrementing every coordinate below H-1, and stop.
func (g *Grid) ForwardMask(s []int32, mask []bool) {
	for i, v := range s[:g.D] {
		mask[i] = int(v) < g.H-1
	}
	mask[g.D] = true
}

// Step increments coordinate a, or stops for a = d; the result is
// terminal after a stop or when the coordinate reaches H-1.
func (g *Grid) Step(s []int32, a int) bool {
	if a == g.D {
		s[g.D] = 1
		return true
	}
	s[a]++
	return int(s[a]) == g.H-1
}

// IsTerminal reports whether s is stopped or has a coordinate at H-1.
func (g *Grid) IsTerminal(s []int32) bool {
	if s[g.D] != 0 {
		return true
	}
	for _, v := range s[:g.D] {
		if int(v) == g.H-1 {
			return true
		}
	}
	return false
}

// IsInitial reports whether s is the origin, not stopped.
func (g *Grid) IsInitial(s []int32) bool {
	for _, v := range s[:g.D+1] {
		if v != 0 {
			return false
		}
	}
	return true
}

// BackwardMask marks the parents of s that are not terminal: the stop
// alone for a stopped state, the coordinate at H-1 alone for a state that
// ended there, and otherwise every positive coordinate.
func (g *Grid) BackwardMask(s []int32, mask []bool) int {
	clear(mask[:g.D+1])
	if s[g.D] != 0 {
		mask[g.D] = true
		return 1
	}
	edge, n := -1, 0
	for i, v := range s[:g.D] {
		if int(v) == g.H-1 {
			if edge >= 0 {
				panic(fmt.Sprintf("hypergrid: state %v has two coordinates at H-1", s))
			}
			edge = i
		}
	}
	if edge >= 0 {
		// Decrementing any other coordinate would leave a terminal parent.
		mask[edge] = true
		return 1
	}
	for i, v := range s[:g.D] {
		if v > 0 {
			mask[i] = true
			n++
		}
	}
	return n
}

// BackStep decrements coordinate b, or undoes the stop for b = d, and
// returns the same index as the forward action.
func (g *Grid) BackStep(s []int32, b int) int {
	if b == g.D {
		s[g.D] = 0
		return g.D
	}
	s[b]--
	return b
}

// BackwardCount is BackwardMask's count at the child of s by action a,
// computed from s alone.
func (g *Grid) BackwardCount(s []int32, a int) int {
	if a == g.D || int(s[a])+1 == g.H-1 {
		return 1
	}
	n := 0
	for i, v := range s[:g.D] {
		if v > 0 || i == a {
			n++
		}
	}
	return n
}

// LogReward implements discrete.Env.
func (g *Grid) LogReward(xs []int32, n int, out []float64) error {
	w := g.D + 1
	if g.logReward != nil {
		if err := g.logReward(xs[:n*w], n, out[:n]); err != nil {
			return err
		}
		for i, v := range out[:n] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("hypergrid: log-reward %v at %v is invalid: log-rewards must be finite", v, xs[i*w:i*w+g.D])
			}
		}
		return nil
	}
	for i := range n {
		r := g.RewardOf(xs[i*w : i*w+g.D])
		if !(r > 0) || math.IsInf(r, 0) {
			return fmt.Errorf("hypergrid: reward %v at %v is invalid: rewards must be finite and > 0", r, xs[i*w:i*w+g.D])
		}
		out[i] = math.Log(r)
	}
	return nil
}

// TerminalKey is the cell index Σ x_i·H^i of terminal x.
func (g *Grid) TerminalKey(x []int32) uint64 {
	var k uint64
	for i := g.D - 1; i >= 0; i-- {
		k = k*uint64(g.H) + uint64(x[i])
	}
	return k
}

// CellOf writes the coordinates of cell key k into x (flag cleared).
func (g *Grid) CellOf(k uint64, x []int32) {
	for i := range g.D {
		x[i] = int32(k % uint64(g.H))
		k /= uint64(g.H)
	}
	x[g.D] = 0
}

// ReplayCapacity is the reference code's replay-buffer size,
// int(0.1·(H-1+d)·(H-1)^(d-1)).
func (g *Grid) ReplayCapacity() int {
	return int(0.1 * float64(g.H-1+g.D) * math.Pow(float64(g.H-1), float64(g.D-1)))
}

// ReplayTransitions is the reference's transition replay batch for DB,
// batch·(H/2).
func (g *Grid) ReplayTransitions(batch int) int { return batch * (g.H / 2) }
