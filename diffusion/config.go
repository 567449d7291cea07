package diffusion

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gfngo/gfn/agent"

	"github.com/gfngo/gfn/internal/choice"
	"github.com/gfngo/gfn/langevin"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/timenet"
)

// Method names a training method of the diffusion table.
type Method string

// The methods of the diffusion table.
const (
	MethodTB      Method = "tb"      // on-policy TB
	MethodEps     Method = "eps"     // on-policy TB with exploration noise
	MethodPRT     Method = "prt"     // TB with replay prioritised by log R (odd iterations replay)
	MethodPER     Method = "per"     // TB with replay prioritised by the Teacher's advantage
	MethodTeacher Method = "teacher" // Student + adaptive Teacher
	MethodPIS     Method = "pis"     // path integral sampler: the loss backpropagated through the simulated SDE
)

// Methods lists the valid methods.
var Methods = []Method{MethodTB, MethodEps, MethodPRT, MethodPER, MethodTeacher, MethodPIS}

// Optim holds one agent's optimiser settings.
// Its Clip, if > 0, clips the gradient of every network parameter (not
// log Z) to this joint norm after ClipTime. Neither code base sets it; it
// is a guard against a policy whose loss spikes (the Manywell Teacher's,
// docs/results).
type Optim struct {
	agent.Optim
	// ClipTime clips the gradient of the time-encoder parameters
	// (t_model.*) to this joint norm (0: no clipping), as the reference
	// code does for its Teacher only.
	ClipTime float64 `json:"clip_time,omitempty"`
	// FlowLR is the flow network's Adam learning rate (the objectives db,
	// subtb, fl-db, fl-subtb); 0 means DefaultFlowLR.
	FlowLR float64 `json:"flow_lr,omitempty"`
}

// flowLR is FlowLR or its default.
func (o Optim) flowLR() float64 {
	if o.FlowLR == 0 {
		return DefaultFlowLR
	}
	return o.FlowLR
}

// Config holds every training setting. Start from DefaultConfig (the
// paper preset on 25GMM) or Preset.
type Config struct {
	Method Method `json:"method"`
	// Process: Steps, Sigma2 and LearnedVariance (Dim comes from the
	// energy).
	Steps           int     `json:"steps"`
	Sigma2          float64 `json:"sigma2"`
	LearnedVariance bool    `json:"learned_variance,omitempty"`
	// DriftClip > 0 bounds the drift output to ±DriftClip (Process.Clip);
	// the paper preset and the pis method set gfn-diffusion's 10⁴. The
	// bound is inert while |drift| < DriftClip; it keeps an untrained or
	// diverging policy from overflowing float32 within one trajectory.
	DriftClip  float64 `json:"drift_clip,omitempty"`
	Batch      int     `json:"batch"`
	Iterations int     `json:"iterations"`
	// Net is the Student's network; the Teacher has the same.
	Net timenet.Config `json:"net"`
	// Precision is the arithmetic of both networks' hidden-layer products
	// (timenet.Config.Precision: the state embedding's second layer, the
	// joint layers); nn.FP32, the zero value, is left out of config.json.
	// The input and output layers, the time branch, log Z, the
	// log-densities, the TB residual and every metric stay float32 or
	// float64. BF16 needs a CPU with AMX-BF16 or AVX512_BF16 (New refuses
	// it otherwise with nn.Precision.Check's error).
	Precision nn.Precision `json:"precision,omitempty"`
	// Student and Teacher optimisers.
	Student Optim `json:"student"`
	Teacher Optim `json:"teacher"`
	// Milestones are the iterations at which every learning rate is
	// multiplied by Gamma (torch's MultiStepLR); a negative m counts from
	// the end, Iterations−1+m, as the authors' code sets its milestones to
	// epochs−6000 and epochs−2000 whatever the run's length (in a run
	// shorter than that they are never reached, as in torch).
	Milestones []int   `json:"milestones,omitempty"`
	Gamma      float64 `json:"gamma"`
	// Explore is the exploration std f of the Student's on-policy batches
	// (0: none); ExploreDecay > 0 decays it linearly to 0 at that
	// iteration.
	Explore      float64 `json:"explore,omitempty"`
	ExploreDecay int     `json:"explore_decay,omitempty"`
	// ExploreAll applies the exploration to the Student batches of every
	// method, not only eps (gfn-diffusion's commands pair --exploratory
	// with its buffer, --both_ways).
	ExploreAll bool `json:"explore_all,omitempty"`
	// BufferCap is the replay buffer's capacity (PRT, PER, Teacher).
	BufferCap int `json:"buffer_cap"`
	// BufferPasses draws from the buffer as the reference code's
	// DataLoader does (replay.Buffer.Passes): positions drawn once per
	// pass with that moment's priorities, which FIFO evictions then shift
	// onto newer entries. Off: every draw uses the current priorities.
	BufferPasses bool `json:"buffer_passes,omitempty"`
	// Reward is the Teacher's reward (and PER's priority): the log-of-log
	// reference form with C = 19, α = 0.5 by default.
	Reward teacher.Reward `json:"reward"`
	// Objective is the Student's objective: tb (empty, both papers'),
	// vargrad (gfn-diffusion's "tb-avg": the variance of log R + Σ log P_B
	// − Σ log P_F over the batch, no log Z learned), db or subtb (with a
	// flow network of (x, t), gfn-diffusion's conditional flow model), or
	// fl-db or fl-subtb (the same with gfn-diffusion's partial energy:
	// forward-looking flows, T − 1 energy evaluations per trajectory).
	// Without a learned log Z the Student's log Z holds the objective's
	// estimate (VarGrad's batch mean, the flows' mean log F(s_0)). The
	// Teacher trains with TB, paid from the Student's per-object loss
	// (package objective).
	Objective string `json:"objective,omitempty"`
	// Lambda is SubTB's λ (subtb, fl-subtb); 0 means DefaultLambda, 2.
	Lambda float64 `json:"lambda,omitempty"`
	// Percentile fixes the log-reward threshold at this percentile of
	// one batch of the untrained Student's samples (90 in the reference
	// code); objects at or below it do not train the Teacher nor enter
	// PER's buffer, and those strictly below have the floor advantage.
	Percentile float64 `json:"percentile"`
	// Schedule is the cycle of roles; empty: "S" (tb, eps), "SB" (prt,
	// per), "STSB" (teacher). A T slot lets the Teacher sample into the
	// buffer and the Student train on a buffer draw.
	Schedule string `json:"schedule,omitempty"`
	// TeacherSchedule, if set, replaces "STSB" as the teacher method's
	// default cycle (the paper preset sets "STSBSB": the paper's 3:1:2 in
	// the order of the released code's --adv_freq 3).
	TeacherSchedule string `json:"teacher_schedule,omitempty"`
	// LocalSearch runs MALA from buffer samples on Student slots of
	// iterations divisible by LSEvery (PER + LS, Teacher + LS).
	LocalSearch bool             `json:"local_search,omitempty"`
	LSEvery     int              `json:"ls_every,omitempty"`
	LS          langevin.Options `json:"ls"`
	Seed        uint64           `json:"seed"`
}

// schedule returns the effective cycle.
func (c Config) schedule() teacher.Schedule {
	switch {
	case c.Schedule != "":
		return teacher.Schedule(c.Schedule)
	case c.Method == MethodTeacher && c.TeacherSchedule != "":
		return teacher.Schedule(c.TeacherSchedule)
	case c.Method == MethodTeacher:
		return "STSB"
	case c.Method == MethodPRT || c.Method == MethodPER:
		return "SB"
	}
	return "S"
}

// buffered reports whether the method keeps a replay buffer.
func (c Config) buffered() bool {
	return c.Method == MethodPRT || c.Method == MethodPER || c.Method == MethodTeacher
}

// priority is the buffer's ordering.
func (c Config) priority() replay.Priority {
	if c.Method == MethodPRT {
		return replay.Reward
	}
	return replay.Teacher
}

// explore returns the exploration std of iteration it (Student batches of
// the eps method, or of every method with ExploreAll).
func (c Config) explore(it int) float64 {
	if c.Method != MethodEps && !c.ExploreAll {
		return 0
	}
	if c.ExploreDecay > 0 {
		return c.Explore * max(0, 1-float64(it)/float64(c.ExploreDecay))
	}
	return c.Explore
}

// lrScale is the learning-rate factor of iteration it: Gamma to the
// number of milestones passed.
func (c Config) lrScale(it int) float64 {
	s := 1.0
	for _, m := range c.milestones() {
		if m >= 0 && it >= m { // one before the start is never reached
			s *= c.Gamma
		}
	}
	return s
}

// milestones resolves the milestones counted from the end.
func (c Config) milestones() []int {
	ms := make([]int, len(c.Milestones))
	for i, m := range c.Milestones {
		if m < 0 {
			m += c.Iterations - 1
		}
		ms[i] = m
	}
	return ms
}

// Objectives lists the Student's objectives of the diffusion samplers.
var Objectives = []string{"tb", "vargrad", "db", "subtb", "fl-db", "fl-subtb"}

// objective is the Student's objective ("tb" when empty).
func (c Config) objective() string {
	if c.Objective == "" {
		return "tb"
	}
	return c.Objective
}

// Validate reports the first invalid setting, naming the value and what is
// allowed.
func (c Config) Validate() error {
	switch {
	case !slices.Contains(Methods, c.Method):
		return fmt.Errorf("diffusion: method %q is unknown (allowed: %s)", c.Method, choice.List(Methods))
	case c.Steps < 1:
		return fmt.Errorf("diffusion: steps %d must be at least 1", c.Steps)
	case !(c.Sigma2 > 0):
		return fmt.Errorf("diffusion: sigma^2 %v must be > 0", c.Sigma2)
	case !(c.DriftClip >= 0) || math.IsInf(c.DriftClip, 0):
		return fmt.Errorf("diffusion: drift clip %v must be finite and >= 0 (0: none)", c.DriftClip)
	case c.Batch < 2:
		return fmt.Errorf("diffusion: batch %d must be at least 2", c.Batch)
	case c.Iterations < 1:
		return fmt.Errorf("diffusion: iterations %d must be at least 1", c.Iterations)
	case !(c.Student.LR > 0) || !(c.Student.LogZLR > 0):
		return fmt.Errorf("diffusion: Student learning rates %v, %v (log Z) must be > 0", c.Student.LR, c.Student.LogZLR)
	case c.Method == MethodTeacher && (!(c.Teacher.LR > 0) || !(c.Teacher.LogZLR > 0)):
		return fmt.Errorf("diffusion: Teacher learning rates %v, %v (log Z) must be > 0", c.Teacher.LR, c.Teacher.LogZLR)
	case !(c.Student.Clip >= 0) || !(c.Teacher.Clip >= 0) || math.IsInf(c.Student.Clip+c.Teacher.Clip, 0):
		return fmt.Errorf("diffusion: gradient clip %v, %v (Teacher) must be finite and >= 0 (0: none)",
			c.Student.Clip, c.Teacher.Clip)
	case c.Student.WeightDecay < 0 || c.Teacher.WeightDecay < 0 || c.Student.ClipTime < 0 || c.Teacher.ClipTime < 0:
		return fmt.Errorf("diffusion: weight decay %v, %v (Teacher) and clipping %v, %v (Teacher) must be >= 0",
			c.Student.WeightDecay, c.Teacher.WeightDecay, c.Student.ClipTime, c.Teacher.ClipTime)
	case !(c.Gamma > 0):
		return fmt.Errorf("diffusion: gamma %v must be > 0", c.Gamma)
	case c.Explore < 0 || c.ExploreDecay < 0:
		return fmt.Errorf("diffusion: exploration %v (decay %d) must be >= 0", c.Explore, c.ExploreDecay)
	case c.Method == MethodEps && !(c.Explore > 0):
		return fmt.Errorf("diffusion: method eps needs an exploration std > 0 (got %v)", c.Explore)
	case c.buffered() && c.BufferCap < 1:
		return fmt.Errorf("diffusion: buffer capacity %d must be at least 1 for method %s", c.BufferCap, c.Method)
	case !(c.Percentile >= 0 && c.Percentile <= 100):
		return fmt.Errorf("diffusion: percentile %v must be in [0, 100]", c.Percentile)
	case !slices.Contains(Objectives, c.objective()):
		return fmt.Errorf("diffusion: objective %q is not available for diffusion samplers (allowed: %s)", c.Objective, strings.Join(Objectives, ", "))
	case !(c.Lambda >= 0) || math.IsInf(c.Lambda, 0):
		return fmt.Errorf("diffusion: lambda %v must be finite and > 0 (0: the default %v)", c.Lambda, DefaultLambda)
	case c.Lambda != 0 && c.objective() != "subtb" && c.objective() != "fl-subtb":
		return fmt.Errorf("diffusion: lambda %v weighs subtb's sub-trajectories; objective %s has none", c.Lambda, c.objective())
	case !(c.Student.FlowLR >= 0) || math.IsInf(c.Student.FlowLR, 0):
		return fmt.Errorf("diffusion: flow learning rate %v must be finite and > 0 (0: the default %v)", c.Student.FlowLR, DefaultFlowLR)
	case c.Method == MethodPIS && c.objective() != "tb":
		return fmt.Errorf("diffusion: method pis trains by its own loss through the trajectory; objective %s does not apply", c.Objective)
	case c.Method == MethodPIS && c.ExploreAll:
		return fmt.Errorf("diffusion: method pis trains on its own reparameterised trajectories: no exploration (explore-all set)")
	case c.LocalSearch && c.Method != MethodPER && c.Method != MethodTeacher:
		return fmt.Errorf("diffusion: local search runs from the replay buffer: methods per and teacher only (got %s)", c.Method)
	case c.LocalSearch && c.LSEvery < 1:
		return fmt.Errorf("diffusion: local search every %d iterations: must be at least 1", c.LSEvery)
	case c.Precision != nn.FP32 && c.Precision != nn.BF16:
		return fmt.Errorf("diffusion: precision %v is unknown (allowed: %s)", c.Precision, strings.Join(nn.Precisions, ", "))
	}
	if err := c.Reward.Validate(); err != nil {
		return err
	}
	if err := c.schedule().Validate(c.Method == MethodTeacher, c.buffered()); err != nil {
		return err
	}
	if c.buffered() && c.schedule().Count(teacher.Buffer)+c.schedule().Count(teacher.Teacher) == 0 {
		return fmt.Errorf("diffusion: schedule %q never replays the buffer of method %s", c.schedule(), c.Method)
	}
	for i, m := range c.milestones() {
		if i > 0 && m < c.milestones()[i-1] {
			return fmt.Errorf("diffusion: milestones %v must be in increasing order (negative ones count from the end of the run)", c.Milestones)
		}
	}
	return nil
}
