package seqtrain

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gfngo/gfn/objective"

	"github.com/gfngo/gfn/agent"

	"github.com/gfngo/gfn/internal/choice"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/teacher"
)

// Method names a training method of the sequence experiments.
type Method string

const (
	// TB is on-policy trajectory balance: the Student's own samples, no
	// exploration noise, no replay.
	TB Method = "tb"
	// Eps is on-policy TB with ε-uniform exploration over unique children.
	Eps Method = "eps"
	// PRT adds a replay of seen objects drawn half from the top decile by
	// reward and half from the rest (Shen et al. 2023).
	PRT Method = "prt"
	// PER replays by the Student's loss (prioritised experience replay):
	// the portions are by the priority log(1.001 + w·δ²).
	PER Method = "per"
	// TeacherPRT adds the Teacher to PRT: it samples one online batch in
	// three and trains on every batch the Student trains on, rewarded by
	// the Student's loss.
	TeacherPRT Method = "teacher-prt"
	// TeacherPER adds the Teacher to PER, as TeacherPRT to PRT.
	TeacherPER Method = "teacher-per"
)

// Methods lists the methods in the paper's order.
var Methods = []Method{TB, Eps, PRT, PER, TeacherPRT, TeacherPER}

// ParseMethod returns the method named s: one of Methods, or "teacher",
// the name every family gives its default Teacher method, which on
// sequences is Teacher + PER.
func ParseMethod(s string) (Method, error) {
	if s == "teacher" {
		return TeacherPER, nil
	}
	if m := Method(s); slices.Contains(Methods, m) {
		return m, nil
	}
	return "", fmt.Errorf("seqtrain: method %q is unknown (allowed: %s; teacher is teacher-per)", s, choice.List(Methods))
}

// Policy chooses the policy network of both agents.
type Policy struct {
	// Kind is "ssr" (the reference's state×state→R network, package ssr)
	// or "mlp" (an MLP on the one-hot state with one logit per action).
	Kind string `json:"kind"`
	// Hidden and Embed are the SSR widths H and E (Hidden only for the
	// MLP, one hidden layer per entry of Layers).
	Hidden int `json:"hidden"`
	Embed  int `json:"embed,omitempty"`
	Layers int `json:"layers,omitempty"` // MLP hidden layers (0: 2)
	heads  int // extra output columns (a state-flow head)
}

// Objectives lists the Student's objectives.
var Objectives = []string{"tb", "db", "subtb", "vargrad"}

// objective is the Student's objective's name ("tb" when empty).
func (c Config) objective() string {
	if c.Objective == "" {
		return "tb"
	}
	return c.Objective
}

// flows reports whether the objective learns state flows.
func (c Config) flows() bool { return c.Objective == "db" || c.Objective == "subtb" }

// PolicyKinds lists the policy kinds.
var PolicyKinds = []string{"ssr", "mlp"}

// Config is a training run's settings. DefaultConfig gives the reference
// code's shared settings; Preset fills in a task's.
type Config struct {
	Method Method `json:"method"`
	// MDP is "pa" (prepend-append, the reference's) or "append"
	// (autoregressive).
	MDP string `json:"mdp"`
	// Rounds is the number of training rounds. A round is one online
	// batch (OnlineBatch fresh samples: reward calls) with one gradient
	// step per agent, then, for the replay methods, one offline batch of
	// OfflineBatch replayed objects on fresh P_B trajectories with one
	// step per agent.
	Rounds       int `json:"rounds"`
	OnlineBatch  int `json:"online_batch"`
	OfflineBatch int `json:"offline_batch"`
	// Epsilon is the per-step probability of a uniform choice among the
	// unique children (every method but TB).
	Epsilon float64 `json:"epsilon"`
	// Buffer is the capacity of the replay buffers (first-seen objects for
	// PRT, every online object for PER, FIFO).
	Buffer int `json:"buffer"`
	// TopPercentile splits a replay batch: half from the objects whose
	// priority is at least this percentile of the buffer's, half from the
	// others (90).
	TopPercentile float64 `json:"top_percentile"`
	// Schedule gives the sampler of each round's online batch (S Student,
	// T Teacher; the reference's "SST": the Teacher every third round,
	// round mod 3 = 2). Used by the Teacher methods only.
	Schedule teacher.Schedule `json:"schedule"`
	Policy   Policy           `json:"policy"`
	// Objective is the Student's training objective (package objective):
	// tb (empty, the reference's), db, subtb (sub-trajectories weighted
	// by Lambda^(j−i); 0: 0.9) or vargrad. The Teacher trains with TB,
	// paid from the Student's per-object loss. db and subtb learn state
	// flows: the Student's policy then gets a flow head (ssr: a linear
	// head on the state embedding, ssr.NewFlow; mlp: one more output), or
	// a Model must have an output column beyond the actions.
	Objective string      `json:"objective,omitempty"`
	Lambda    float64     `json:"lambda,omitempty"`
	Student   agent.Optim `json:"student"`
	Teacher   agent.Optim `json:"teacher"`
	// LogZInit is log Z's initial value and LogZMin its floor after each
	// step (both agents; the reference: 5 and 0).
	LogZInit float64 `json:"logz_init"`
	LogZMin  float64 `json:"logz_min"`
	// LossCap caps a trajectory's squared residual in the loss (5000);
	// ClipNorm is the policy's gradient-norm clip (10, every step).
	LossCap  float64 `json:"loss_cap"`
	ClipNorm float64 `json:"clip_norm"`
	// Reward is the Teacher's reward (the sequence form, C = 19, α = 0.5).
	Reward teacher.Reward `json:"reward"`
	// LS is the back-and-forth local search of the online batch (off by
	// default; the reference's TFbind8 appendix: 7 rounds of 3 steps).
	// As in the reference, with local search the Student draws every
	// online batch (the Teacher still trains on it).
	LS LocalSearch `json:"ls,omitzero"`
	// Precision is the arithmetic of both agents' hidden products: the
	// ssr policy's encoder second layer and scorer first layer
	// (ssr.Model.SetPrecision), the mlp policy's layers between two hidden
	// layers (nn.MLP.SetPrecision). Input and output layers (the one-hot
	// encoder, the edge score, the logits), log Z, the TB residual and
	// every metric stay float32/float64. A Model of its own takes a
	// precision other than FP32 through a SetPrecision(nn.Precision) error
	// method, and New refuses it without one. nn.FP32, the zero value,
	// is left out of config.json; BF16 needs a CPU with AMX-BF16 or
	// AVX512_BF16 (New refuses it otherwise with nn.Precision.Check's
	// error).
	Precision nn.Precision `json:"precision,omitempty"`
	Seed      uint64       `json:"seed"`
	// Model builds both agents' policy networks (nil: the one Policy
	// names). A function is not stored with a run: Resume takes it again
	// from RunOptions.Model, LoadModel as its argument.
	Model ModelFunc `json:"-"`
}

// DefaultConfig is the reference code's shared settings with the
// TFbind8 row (2,000 rounds, ε = 0.01, SSR width 128), Teacher + PER.
func DefaultConfig() Config {
	return Config{
		Method:        TeacherPER,
		MDP:           "pa",
		Rounds:        2000,
		OnlineBatch:   32,
		OfflineBatch:  32,
		Epsilon:       0.01,
		Buffer:        1000,
		TopPercentile: 90,
		Schedule:      "SST",
		Policy:        Policy{Kind: "ssr", Hidden: 128, Embed: 128},
		Student:       agent.Optim{LR: 1e-4, LogZLR: 1e-2},
		Teacher:       agent.Optim{LR: 5e-4, LogZLR: 1e-2},
		LogZInit:      5,
		LogZMin:       0,
		LossCap:       teacher.SequenceCap,
		ClipNorm:      10,
		Reward:        teacher.Reward{Form: teacher.Sequence, C: 19, Alpha: 0.5, Eps: 1e-3},
	}
}

// HasTeacher reports whether the method trains a Teacher.
func (m Method) HasTeacher() bool { return m == TeacherPRT || m == TeacherPER }

// Replays reports whether the method has an offline (replay) batch.
func (m Method) Replays() bool { return m != TB && m != Eps }

// ByLoss reports whether the replay priority is the Student's loss.
func (m Method) ByLoss() bool { return m == PER || m == TeacherPER }

// epsilon is the exploration of the method's online batches.
func (c Config) epsilon() float64 {
	if c.Method == TB {
		return 0
	}
	return c.Epsilon
}

// Validate reports the first invalid setting, naming the value and what
// is allowed.
func (c Config) Validate() error {
	pos := func(name string, v int) error {
		if v < 1 {
			return fmt.Errorf("seqtrain: %s %d must be at least 1", name, v)
		}
		return nil
	}
	m, err := ParseMethod(string(c.Method))
	if err != nil {
		return err
	}
	c.Method = m
	switch {
	case c.MDP != "pa" && c.MDP != "append":
		return fmt.Errorf("seqtrain: mdp %q is unknown (allowed: pa, append)", c.MDP)
	case !slices.Contains(PolicyKinds, c.Policy.Kind):
		return fmt.Errorf("seqtrain: policy %q is unknown (allowed: %s)", c.Policy.Kind, choice.List(PolicyKinds))
	case !slices.Contains(Objectives, c.objective()):
		return fmt.Errorf("seqtrain: objective %q is unknown (allowed: %s)", c.Objective, strings.Join(Objectives, ", "))
	case c.objective() != "tb" && c.LS.Rounds > 0:
		return fmt.Errorf("seqtrain: local search scores with the TB residual; objective %s runs without it", c.Objective)
	case c.Lambda < 0 || math.IsInf(c.Lambda, 0) || math.IsNaN(c.Lambda):
		return fmt.Errorf("seqtrain: lambda %v must be finite and >= 0 (0: %v)", c.Lambda, objective.DefaultLambda)
	case !(c.Epsilon >= 0 && c.Epsilon <= 1):
		return fmt.Errorf("seqtrain: epsilon %v must be in [0, 1]", c.Epsilon)
	case !(c.TopPercentile >= 0 && c.TopPercentile <= 100):
		return fmt.Errorf("seqtrain: top percentile %v must be in [0, 100]", c.TopPercentile)
	case !(c.LossCap > 0):
		return fmt.Errorf("seqtrain: loss cap %v must be > 0", c.LossCap)
	case !(c.ClipNorm >= 0):
		return fmt.Errorf("seqtrain: clip norm %v must be >= 0 (0: no clipping)", c.ClipNorm)
	case math.IsNaN(c.LogZInit) || math.IsInf(c.LogZInit, 0) || math.IsNaN(c.LogZMin) || c.LogZInit < c.LogZMin:
		return fmt.Errorf("seqtrain: log Z init %v must be finite and >= its floor %v", c.LogZInit, c.LogZMin)
	case c.Precision != nn.FP32 && c.Precision != nn.BF16:
		return fmt.Errorf("seqtrain: precision %v is unknown (allowed: %s)", c.Precision, strings.Join(nn.Precisions, ", "))
	}
	for _, p := range []struct {
		name string
		v    int
	}{{"rounds", c.Rounds}, {"online batch", c.OnlineBatch}, {"offline batch", c.OfflineBatch},
		{"buffer", c.Buffer}, {"policy hidden width", c.Policy.Hidden}} {
		if err := pos(p.name, p.v); err != nil {
			return err
		}
	}
	if c.Policy.Kind == "ssr" {
		if err := pos("policy embedding width", c.Policy.Embed); err != nil {
			return err
		}
	}
	for _, o := range []struct {
		name string
		o    agent.Optim
	}{{"student", c.Student}, {"teacher", c.Teacher}} {
		if !(o.o.LR > 0) || !(o.o.LogZLR > 0) {
			return fmt.Errorf("seqtrain: %s learning rates %v (policy) and %v (log Z) must be > 0", o.name, o.o.LR, o.o.LogZLR)
		}
	}
	if err := c.LS.validate(c.OnlineBatch); err != nil {
		return err
	}
	if c.LS.Teacher && !c.Method.HasTeacher() {
		return fmt.Errorf("seqtrain: the Teacher's local search needs a Teacher method (teacher-prt, teacher-per), not %s", c.Method)
	}
	if c.Method.HasTeacher() {
		if err := c.Schedule.Validate(true, false); err != nil {
			return fmt.Errorf("seqtrain: %w", err)
		}
		if err := c.Reward.Validate(); err != nil {
			return fmt.Errorf("seqtrain: %w", err)
		}
	}
	return nil
}
