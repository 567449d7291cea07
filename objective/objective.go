package objective

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Batch is a batch of trajectories as an objective reads it.
//
// Trajectory b has n_b = Off[b+1] − Off[b] ≥ 1 transitions, indexed t ∈
// [Off[b], Off[b+1]) in the per-transition slices, and n_b + 1 states,
// indexed Off[b] + b + i (i = 0 for s_0, i = n_b for x) in the per-state
// slices. Only the fields an objective Needs must be set.
type Batch struct {
	Off []int
	// LogPF and LogPB are per transition: log P_F(s_{t+1}|s_t) and
	// log P_B(s_t|s_{t+1}).
	LogPF, LogPB []float64
	// LogR is per trajectory: log R(x).
	LogR []float64
	// LogZ is the learned log Z (TB).
	LogZ float64
	// LogF is per state: the learned log-flow (DB, SubTB, forward-looking);
	// the entries of terminal states are not read (log R(x) stands there).
	LogF []float64
	// StateLogR is per state: log R(s) of every state (modified DB, the
	// forward-looking objectives; FM reads it for the terminal states, and
	// −Inf marks a state that cannot stop there).
	StateLogR []float64
	// LogPStop is per state: log P_F(⊤|s), the log-probability of stopping
	// at s (modified DB).
	LogPStop []float64
	// FM's edges: state k's incoming edge log-flows are InLogF[InOff[k]:
	// InOff[k+1]] and its outgoing ones OutLogF[OutOff[k]:OutOff[k+1]].
	InOff, OutOff   []int
	InLogF, OutLogF []float64
	// Scale is per state: the weight c_i of log R(s_i) in a forward-looking
	// flow (nil: i/n_b, the diffusion samplers' t/T).
	Scale []float64
}

// Len is the number of trajectories.
func (b *Batch) Len() int { return len(b.Off) - 1 }

// Grad holds the gradient of the batch loss with respect to each input
// of a Batch, in the same layout; an objective sizes the slices it uses
// and zeroes them.
type Grad struct {
	LogPF, LogPB []float64
	LogZ         float64
	LogF         []float64
	StateLogR    []float64
	LogPStop     []float64
	InLogF       []float64
	OutLogF      []float64
}

// Result is an objective's value on a batch.
type Result struct {
	// Loss is the batch mean of PerObject.
	Loss float64
	// LogZ is the batch's estimate of log Z: TB's learned log Z, VarGrad's
	// mean of log R + Σ log P_B − Σ log P_F, the mean flow log F(s_0) of
	// the flow objectives (modified DB: log R(s_0) − log P_F(⊤|s_0); FM:
	// the log of s_0's outflow).
	LogZ float64
	// PerObject is ℓ(τ) of each trajectory; Delta its signed residual,
	// positive where R(x) lies above the estimate (see the package doc).
	PerObject, Delta []float64
}

// Needs says which inputs of a Batch an objective reads besides Off,
// LogPF, LogPB and LogR, and which capabilities of a problem it requires.
type Needs struct {
	LogZ, LogF, StateLogR, LogPStop, Edges bool
}

// Objective is a GFlowNet training objective.
type Objective interface {
	// Name is the objective's name as gfn train's --objective spells it.
	Name() string
	// Needs reports the inputs it reads.
	Needs() Needs
	// Eval computes the objective on b, the gradient of the batch loss
	// into g (nil: none) and the per-object values into r. It returns an
	// error naming the field whose length does not fit b.
	Eval(b *Batch, g *Grad, r *Result) error
}

// Names lists the objectives New builds.
var Names = []string{"tb", "db", "subtb", "vargrad", "fm", "mdb", "fl-db", "fl-subtb"}

// DefaultLambda is SubTB's λ of Madan et al.'s discrete experiments.
const DefaultLambda = 0.9

// New returns the objective called name; lambda is SubTB's λ (0: the
// default 0.9), read by subtb and fl-subtb only.
func New(name string, lambda float64) (Objective, error) {
	if lambda == 0 {
		lambda = DefaultLambda
	}
	if (name == "subtb" || name == "fl-subtb") && !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("objective: lambda %v must be finite and > 0", lambda)
	}
	switch name {
	case "tb":
		return &TB{}, nil
	case "db":
		return &DB{}, nil
	case "subtb":
		return &SubTB{Lambda: lambda}, nil
	case "vargrad":
		return &VarGrad{}, nil
	case "fm":
		return &FM{}, nil
	case "mdb":
		return &ModifiedDB{}, nil
	case "fl-db":
		return &ForwardLooking{Inner: &DB{}}, nil
	case "fl-subtb":
		return &ForwardLooking{Inner: &SubTB{Lambda: lambda}}, nil
	}
	return nil, fmt.Errorf("objective: %q is unknown (allowed: %s)", name, strings.Join(Names, ", "))
}

// check verifies the lengths of b's fields that need reads.
func check(b *Batch, needs Needs) (trajectories, transitions, states int, err error) {
	n := len(b.Off) - 1
	if n < 1 || b.Off[0] != 0 {
		return 0, 0, 0, fmt.Errorf("objective: Off %v must start at 0 and hold at least one trajectory", b.Off)
	}
	for i := range n {
		if b.Off[i+1] <= b.Off[i] {
			return 0, 0, 0, fmt.Errorf("objective: trajectory %d has %d transitions (Off[%d] = %d, Off[%d] = %d); each needs at least one", i, b.Off[i+1]-b.Off[i], i, b.Off[i], i+1, b.Off[i+1])
		}
	}
	T := b.Off[n]
	S := T + n
	type field struct {
		name string
		got  int
		want int
		need bool
	}
	for _, f := range []field{
		{"LogPF", len(b.LogPF), T, true}, {"LogPB", len(b.LogPB), T, true}, {"LogR", len(b.LogR), n, true},
		{"LogF", len(b.LogF), S, needs.LogF}, {"StateLogR", len(b.StateLogR), S, needs.StateLogR},
		{"LogPStop", len(b.LogPStop), S, needs.LogPStop},
		{"InOff", len(b.InOff), S + 1, needs.Edges}, {"OutOff", len(b.OutOff), S + 1, needs.Edges},
	} {
		if f.need && f.got != f.want {
			return 0, 0, 0, fmt.Errorf("objective: len(%s) = %d, want %d for %d trajectories of %d transitions", f.name, f.got, f.want, n, T)
		}
	}
	if needs.Edges && (b.InOff[S] != len(b.InLogF) || b.OutOff[S] != len(b.OutLogF)) {
		return 0, 0, 0, fmt.Errorf("objective: InOff ends at %d for %d in-edges and OutOff at %d for %d out-edges", b.InOff[S], len(b.InLogF), b.OutOff[S], len(b.OutLogF))
	}
	return n, T, S, nil
}

// grow returns s resized to n and zeroed.
func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// start sizes r for n trajectories and g's per-transition gradients.
func start(g *Grad, r *Result, n, T int) {
	r.PerObject, r.Delta, r.LogZ = grow(r.PerObject, n), grow(r.Delta, n), 0
	if g != nil {
		g.LogPF, g.LogPB, g.LogZ = grow(g.LogPF, T), grow(g.LogPB, T), 0
	}
}

// finish sets r.Loss, the mean of r.PerObject.
func finish(r *Result) {
	var s float64
	for _, v := range r.PerObject {
		s += v
	}
	r.Loss = s / float64(len(r.PerObject))
}

// Known reports whether name is an objective of Names.
func Known(name string) bool { return slices.Contains(Names, name) }
