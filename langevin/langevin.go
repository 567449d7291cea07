package langevin

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/energy"
)

// Options configures the search. The zero value of every field means the
// reference's setting (see the package comment), so Options{} is the
// reference's local search.
type Options struct {
	// Steps is the number K of MALA steps. Default 200.
	Steps int

	// BurnIn: steps i (0-based) with i > BurnIn are reported to the visit
	// function and collected. Default 100 (steps 101..K−1); a negative
	// value reports every step.
	BurnIn int

	// StepSize is the initial η. Default 0.001.
	StepSize float64

	// TargetAccept is the acceptance rate η is steered towards. Default
	// 0.574; must lie in (0, 1).
	TargetAccept float64

	// Grow and Shrink multiply η before each step after the first, Grow
	// when the last computed acceptance rate is above TargetAccept, Shrink
	// otherwise. Defaults 1.01 and 0.99; Grow = Shrink = 1 keeps η fixed,
	// which makes the chains exact MCMC for R/Z.
	Grow, Shrink float64

	// AdaptEvery: the acceptance rate is recomputed after each step i with
	// i mod AdaptEvery = 0, over the steps since the last recomputation.
	// Default 5.
	AdaptEvery int
}

// withDefaults fills zero fields with the reference's settings and checks
// the result.
func (o Options) withDefaults() (Options, error) {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	if o.Steps == 0 {
		o.Steps = 200
	}
	if o.BurnIn == 0 {
		o.BurnIn = 100
	}
	if o.AdaptEvery == 0 {
		o.AdaptEvery = 5
	}
	def(&o.StepSize, 0.001)
	def(&o.TargetAccept, 0.574)
	def(&o.Grow, 1.01)
	def(&o.Shrink, 0.99)
	positive := func(v float64) bool { return v > 0 && !math.IsInf(v, 1) } // false for NaN
	switch {
	case o.Steps < 0:
		return o, fmt.Errorf("langevin: Steps = %d, must be positive", o.Steps)
	case o.AdaptEvery < 0:
		return o, fmt.Errorf("langevin: AdaptEvery = %d, must be positive", o.AdaptEvery)
	case !positive(o.StepSize):
		return o, fmt.Errorf("langevin: StepSize = %v, must be positive and finite", o.StepSize)
	case !(o.TargetAccept > 0 && o.TargetAccept < 1):
		return o, fmt.Errorf("langevin: TargetAccept = %v, must lie in (0, 1)", o.TargetAccept)
	case !positive(o.Grow):
		return o, fmt.Errorf("langevin: Grow = %v, must be positive and finite", o.Grow)
	case !positive(o.Shrink):
		return o, fmt.Errorf("langevin: Shrink = %v, must be positive and finite", o.Shrink)
	}
	return o, nil
}

// Step is what a visit function sees after a step. Its slices belong to
// the search: they are valid only during the call and must not be
// modified.
type Step struct {
	// Index is the step number i, from 0.
	Index int
	// StepSize is the η this step's proposals used.
	StepSize float64
	// X holds the states after the step, row-major: an accepted row holds
	// its proposal, a rejected row its previous state.
	X []float32
	// LogR holds log R of the rows of X.
	LogR []float64
	// Accepted reports which rows accepted their proposal at this step.
	Accepted []bool
}

// Stats summarises a search.
type Stats struct {
	// Steps is the number of steps taken.
	Steps int
	// Proposals and Accepted count row proposals over all steps.
	Proposals, Accepted int
	// Reported counts the accepted proposals of the reported steps
	// (i > BurnIn): the states Collect returns.
	Reported int
	// StepSize is the η of the last step.
	StepSize float64
}

// AcceptRate is Accepted/Proposals, NaN before any proposal.
func (s Stats) AcceptRate() float64 { return float64(s.Accepted) / float64(s.Proposals) }

// Chain runs searches and keeps their scratch memory, so that a search
// allocates nothing once the chain has seen a batch of its size. A Chain
// is not safe for concurrent use.
type Chain struct {
	opt    Options
	y      []float32 // proposals
	gx, gy []float64 // ∇log R of the states and of the proposals
	lx, ly []float64 // log R of the states and of the proposals
	acc    []bool

	// Collect's destinations during a search, nil otherwise.
	outX []float32
	outL []float64
	out  bool
}

// New returns a Chain for the options, with zero fields set to the
// reference's values, or an error naming an invalid option.
func New(opt Options) (*Chain, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Chain{opt: o}, nil
}

// Options returns the chain's options with the defaults filled in.
func (c *Chain) Options() Options { return c.opt }

// Run is New(opt) followed by Chain.Run.
func Run(e energy.Gradient, x []float32, opt Options, rng *rand.Rand, visit func(Step) error) (Stats, error) {
	c, err := New(opt)
	if err != nil {
		return Stats{}, err
	}
	return c.Run(e, x, rng, visit)
}

// Run runs the search from the rows of x, one chain per row, updating x in
// place: on return x holds the final states. After each step i > BurnIn it
// calls visit (if not nil); a visit error ends the search and is returned
// wrapped. All randomness comes from rng: per step, Dim() normals per row
// in row order, then one uniform per row.
func (c *Chain) Run(e energy.Gradient, x []float32, rng *rand.Rand, visit func(Step) error) (Stats, error) {
	return c.run(e, x, rng, visit)
}

// run is Run, appending the reported accepted proposals to c.outX and
// c.outL if c.out is set (Collect: no closure, so no allocation).
func (c *Chain) run(e energy.Gradient, x []float32, rng *rand.Rand, visit func(Step) error) (Stats, error) {
	o := c.opt
	d := e.Dim()
	if d <= 0 || len(x)%d != 0 {
		return Stats{}, fmt.Errorf("langevin: len(x) = %d is not a multiple of Dim() = %d", len(x), d)
	}
	n := len(x) / d
	c.y = grow(c.y, len(x))
	c.gx, c.gy = grow(c.gx, len(x)), grow(c.gy, len(x))
	c.lx, c.ly = grow(c.lx, n), grow(c.ly, n)
	c.acc = grow(c.acc, n)
	y, gx, gy, lx, ly, acc := c.y, c.gx, c.gy, c.lx, c.ly, c.acc

	if err := e.GradLogReward(x, lx, gx); err != nil {
		return Stats{}, fmt.Errorf("langevin: initial states: %w", err)
	}
	for b := range n {
		if !finite(lx[b]) {
			return Stats{}, fmt.Errorf("langevin: initial state row %d: log R = %v at x = %v", b, lx[b], x[b*d:(b+1)*d])
		}
		for _, g := range gx[b*d : (b+1)*d] {
			if !finite(g) {
				return Stats{}, fmt.Errorf("langevin: initial state row %d: gradient %v is not finite at x = %v", b, g, x[b*d:(b+1)*d])
			}
		}
	}

	st := Stats{StepSize: o.StepSize}
	eta, rate := o.StepSize, 0.0
	winAcc, winN := 0, 0
	for i := range o.Steps {
		if i > 0 { // LG:33: the first step uses η₀
			if rate > o.TargetAccept {
				eta *= o.Grow
			} else {
				eta *= o.Shrink
			}
		}
		noise := math.Sqrt(2 * eta)
		for k, v := range x {
			y[k] = float32(float64(v) + eta*gx[k] + noise*rng.NormFloat64())
		}
		if err := e.GradLogReward(y, ly, gy); err != nil {
			return st, fmt.Errorf("langevin: step %d: %w", i, err)
		}
		accepted := 0
		for b := range n {
			if !finite(ly[b]) {
				return st, fmt.Errorf("langevin: step %d, row %d: log R of the proposal = %v at x = %v", i, b, ly[b], y[b*d:(b+1)*d])
			}
			la := logAccept(x[b*d:(b+1)*d], y[b*d:(b+1)*d], gx[b*d:(b+1)*d], gy[b*d:(b+1)*d], lx[b], ly[b], eta)
			if math.IsNaN(la) {
				return st, fmt.Errorf("langevin: step %d, row %d: log acceptance ratio is NaN (log R %v → %v, η = %v, proposal x = %v)", i, b, lx[b], ly[b], eta, y[b*d:(b+1)*d])
			}
			acc[b] = rng.Float64() < math.Exp(min(la, 0))
			if acc[b] {
				copy(x[b*d:(b+1)*d], y[b*d:(b+1)*d])
				copy(gx[b*d:(b+1)*d], gy[b*d:(b+1)*d])
				lx[b] = ly[b]
				accepted++
			}
		}
		st.Steps, st.StepSize = i+1, eta
		st.Proposals += n
		st.Accepted += accepted
		winAcc += accepted
		winN += n
		if i > o.BurnIn {
			st.Reported += accepted
			if c.out {
				for b, ok := range acc {
					if ok {
						c.outX = append(c.outX, x[b*d:(b+1)*d]...)
						c.outL = append(c.outL, lx[b])
					}
				}
			}
			if visit != nil {
				if err := visit(Step{Index: i, StepSize: eta, X: x, LogR: lx, Accepted: acc}); err != nil {
					return st, fmt.Errorf("langevin: step %d: visit: %w", i, err)
				}
			}
		}
		if i%o.AdaptEvery == 0 { // LG:57-62
			rate = float64(winAcc) / float64(winN)
			winAcc, winN = 0, 0
		}
	}
	return st, nil
}

// Collect runs the search as the reference's local search does and
// appends every accepted proposal of the steps i > BurnIn to xs, with its
// log R to logR, in step order and row order within a step (LG:50-53, 64);
// it returns the extended slices, which after an error hold what was
// collected before it. Passing the previous call's slices resliced to zero
// length avoids allocation once they are large enough.
func (c *Chain) Collect(e energy.Gradient, x []float32, rng *rand.Rand, xs []float32, logR []float64) ([]float32, []float64, Stats, error) {
	c.outX, c.outL, c.out = xs, logR, true
	st, err := c.run(e, x, rng, nil)
	xs, logR = c.outX, c.outL
	c.outX, c.outL, c.out = nil, nil, false // keep no reference to the caller's memory
	return xs, logR, st, err
}

// logAccept returns log α, the log Metropolis–Hastings ratio of the MALA
// move from x (log R = lx, gradient gx) to y (ly, gy) with step size eta:
//
//	log α = ly − lx + (‖y − x − η·gx‖² − ‖x − y − η·gy‖²) / (4η).
//
// The Gaussian proposal's normalisers cancel.
func logAccept(x, y []float32, gx, gy []float64, lx, ly, eta float64) float64 {
	var fwd, bck float64
	for j := range x {
		xv, yv := float64(x[j]), float64(y[j])
		r := yv - xv - eta*gx[j] // residual of the forward proposal
		s := xv - yv - eta*gy[j] // and of the reverse one
		fwd += r * r
		bck += s * s
	}
	return ly - lx + (fwd-bck)/(4*eta)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// grow returns s resized to n, reusing its memory when large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
