package run

import (
	"encoding/json"
	"math/rand/v2"

	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/safetensors"
)

// Family is one training run of a family (the grid, diffusion samplers,
// sequences, or a user's own), as the driver sees it: the family does
// its step and its evaluations, and names its agents, its random streams
// and its own state; Drive does the rest (the loop, the curve, the
// checkpoints, resuming, timing and progress).
//
// The methods are called from one goroutine. A Family's curve columns
// and cadence (Layout) must not change during a run.
type Family interface {
	// Layout describes the run's checkpoint kind, unit and curve.
	Layout() Layout
	// Done reports whether the budget is spent.
	Done() bool
	// Progress reports the units done and the planned total (for the
	// progress bar and messages; Done decides the end).
	Progress() (done, total int)
	// Step does one unit of training and returns the values that the
	// curve averages since its last point, in the order of Layout.Means
	// (NaN: not defined at this step). The slice may be reused.
	Step() ([]float64, error)
	// Point writes the family's own columns of the curve point taken
	// after the current unit into row (indexed as Layout.Columns; the
	// driver's columns are filled already).
	Point(row []float64) error
	// Finish runs the final evaluation and returns the summary, a value
	// that encodes to summary.json. A summary that embeds Summary has its
	// common fields filled by the driver.
	Finish(curve *Curve) (any, error)
	// Agents lists the networks with their optimisers, in checkpoint
	// order; their tensors are named after them.
	Agents() []Agent
	// Streams lists the random streams, all of them: checkpoints store
	// them, and a failed evaluation is undone by restoring them.
	Streams() []Stream
	// Save returns the family's own state (counters, buffers, settings)
	// for a checkpoint; Restore sets it from one, after the agents and
	// streams were set.
	Save() (State, error)
	Restore(State) error
}

// Statuser is a Family that adds a few words to the progress bar after
// each unit ("modes 3 | loss 0.52").
type Statuser interface {
	Status() string
}

// Recoverer is a Family that tells which errors of Step leave a state
// worth a checkpoint (a non-finite loss, a failing reward): the driver
// writes one and says where. Without it, no error is.
type Recoverer interface {
	Recoverable(err error) bool
}

// Figurer is a Family that draws figures into a finished run's
// directory, after its outputs (unless Options.NoFigures).
type Figurer interface {
	Figures(dir string, curve *Curve) error
}

// Layout is what the driver needs to know of a family's run.
type Layout struct {
	// Kind names the family in checkpoints ("grid", "diffusion",
	// "sequence"); a checkpoint of another kind is refused.
	Kind string
	// Unit names a step of training: "iteration" or "round".
	Unit string
	// Columns are the curve's columns in CSV order. The first is the unit
	// label (Cadence.Label); "wall_seconds", if present, and the columns
	// named in Means are the driver's; the family's Point fills the rest.
	Columns []Column
	// Means name the columns filled with the mean, over the units since
	// the last point, of Step's values: sum of the defined (non-NaN)
	// values in unit order, divided once by the number of units; NaN
	// where none was defined or no unit was done.
	Means []string
	// Digits is the significant digits of a CSV cell (0: 10).
	Digits int
	// Cadence places the curve points.
	Cadence Cadence
	// Config describes the run for config.json and checkpoint headers.
	Config any
}

// Column is one column of the curve.
type Column struct {
	Name string
	// Int columns are written as integers (counters).
	Int bool
}

// Cadence places the curve's points. After the u-th unit (counted from
// 1) the point is labelled i = u − Base, and it is taken when i ≥ First
// and i mod Every = 0; with AtStart a point (labelled 0) is taken before
// the first unit, and with AtEnd one after the last unit unless one was
// just taken.
//
// The families keep their reference codes' placements: the grid's
// (Base 0, First 1, AtStart, AtEnd: points at 0, Every, 2·Every, ... and
// the end), the diffusion samplers' (the 0-based iteration i with
// i mod Every = 0: Base 1, First 0) and the sequences' (0-based rounds
// i > 0 with i mod Every = 0, and the last: Base 1, First 1, AtEnd).
type Cadence struct {
	// Every is the family's default spacing of points, in units;
	// Options.EvalEvery overrides it.
	Every       int
	Base, First int
	AtStart     bool
	AtEnd       bool
}

// due reports whether a point is taken after u units.
func (c Cadence) due(u int) bool {
	i := u - c.Base
	return i >= c.First && i%c.Every == 0
}

// Agent is one network with its optimiser as a checkpoint stores it:
// the parameters under Name + "." + parameter name (PyTorch's layout,
// so Python loads them by prefix) and the Adam state under Name +
// ".optim.". Params must include every parameter the optimiser does not
// hold (a target network without gradients); nil takes Opt.Params().
type Agent struct {
	Name   string
	Params []*nn.Param
	Opt    *nn.Adam
}

// Stream is one named random stream.
type Stream struct {
	Name string
	Src  *rand.PCG
}

// State is a family's own part of a checkpoint: JSON (its settings and
// counters) and tensors (lists: buffers, seen objects). Tensor names must
// not begin with an agent's name and a dot, nor with "run.".
type State struct {
	JSON    json.RawMessage
	Tensors []safetensors.Tensor
}

// Tensor returns the tensor of s named name.
func (s State) Tensor(name string) (safetensors.Tensor, bool) {
	for _, x := range s.Tensors {
		if x.Name == name {
			return x, true
		}
	}
	return safetensors.Tensor{}, false
}
