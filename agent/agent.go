package agent

import (
	"fmt"
	"math"

	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/run"
)

// Model is a policy with trainable parameters: discrete.Model,
// timenet.Net, or a user's own.
type Model interface {
	Params() []*nn.Param
}

// Agent is a policy Model, its log Z and its optimiser. The optimiser's
// groups hold every trainable parameter: the model's, then log Z.
type Agent[M Model] struct {
	Model M
	LogZ  *nn.Param
	Opt   *nn.Adam
}

// New returns the agent of model with Adam at learning rate lr and, if
// logZ is set, a second group of it alone at logZLR.
func New[M Model](model M, lr float64, logZ *nn.Param, logZLR float64) Agent[M] {
	groups := []nn.Group{{Params: model.Params(), LR: lr}}
	if logZ != nil {
		groups = append(groups, nn.Group{Params: []*nn.Param{logZ}, LR: logZLR})
	}
	return Agent[M]{Model: model, LogZ: logZ, Opt: nn.NewAdam(groups...)}
}

// NewLogZ is a log Z parameter named "logZ" (the checkpoints' and the
// reference codes' name) set to v.
func NewLogZ(v float64) *nn.Param {
	z := nn.NewParam("logZ")
	z.Value[0] = float32(v)
	return z
}

// Params is every trainable parameter, log Z last.
func (a *Agent[M]) Params() []*nn.Param { return a.Opt.Params() }

// LogZValue is log Z as a float64 (NaN without one).
func (a *Agent[M]) LogZValue() float64 {
	if a.LogZ == nil {
		return math.NaN()
	}
	return float64(a.LogZ.Value[0])
}

// Checkpointed is the agent as the driver stores it under name.
func (a *Agent[M]) Checkpointed(name string) run.Agent {
	return run.Agent{Name: name, Opt: a.Opt}
}

// Optim are an agent's optimiser settings, the same in every family.
type Optim struct {
	LR     float64 `json:"lr"`      // the policy's Adam learning rate
	LogZLR float64 `json:"logz_lr"` // log Z's
	// WeightDecay is Adam's coupled L2 penalty on every group (0: none).
	WeightDecay float64 `json:"weight_decay,omitempty"`
	// Clip, if > 0, clips the gradient to this joint norm. What it covers
	// is the family's reference's: the grid clips the policy and log Z
	// together, the diffusion samplers the network alone.
	Clip float64 `json:"clip,omitempty"`
}

// Validate reports a learning rate that is not positive or a weight
// decay or clip that is negative, naming the value; who names the agent
// ("Student").
func (o Optim) Validate(who string) error {
	switch {
	case !(o.LR > 0) || math.IsInf(o.LR, 0) || !(o.LogZLR > 0) || math.IsInf(o.LogZLR, 0):
		return fmt.Errorf("agent: %s learning rates %v (policy) and %v (log Z) must be finite and > 0", who, o.LR, o.LogZLR)
	case !(o.WeightDecay >= 0) || !(o.Clip >= 0):
		return fmt.Errorf("agent: %s weight decay %v and clip %v must be >= 0", who, o.WeightDecay, o.Clip)
	}
	return nil
}
