package train

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gfngo/gfn/objective"

	"github.com/gfngo/gfn/agent"
	"github.com/gfngo/gfn/internal/choice"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/teacher"
)

// Method names a training method.
type Method string

// The methods.
const (
	MethodTB      Method = "tb"      // on-policy TB Student alone
	MethodTeacher Method = "teacher" // Student + adaptive Teacher
	MethodGAFN    Method = "gafn"    // TB with RND intrinsic rewards (Pan et al. 2023)
)

// Methods lists the valid methods.
var Methods = []Method{MethodTB, MethodTeacher, MethodGAFN}

// Objective names a GFlowNet training objective.
type Objective string

// The objectives.
const (
	ObjectiveTB Objective = "tb" // trajectory balance with a learned log Z
	ObjectiveDB Objective = "db" // detailed balance with a state-flow head
	// SubTB is sub-trajectory balance (Madan et al. 2023) with a
	// state-flow head, sub-trajectories weighted by Config.Lambda.
	ObjectiveSubTB Objective = "subtb"
	// VarGrad is the variance of log R + Σ log P_B − Σ log P_F over the
	// batch: no learned log Z (its estimate is the batch mean).
	ObjectiveVarGrad Objective = "vargrad"
	// FM is flow matching (Bengio et al. 2021): the policy's outputs are
	// log edge flows, each visited state's inflow (from its parents)
	// matched to its outflow; log Z's estimate is s_0's outflow.
	ObjectiveFM Objective = "fm"
	// MDB is modified detailed balance (Deleu et al. 2022) for
	// environments where every state can stop (discrete.Stopper): each
	// visited state is scored as if it stopped there, a reward call each.
	ObjectiveMDB Objective = "mdb"
	// FLDB and FLSubTB are DB and SubTB on forward-looking flows (Pan et
	// al. 2023): log F(s) = log R(s) + the flow head's output, every
	// visited state scored as if it stopped there (discrete.Stopper), a
	// reward call each.
	ObjectiveFLDB    Objective = "fl-db"
	ObjectiveFLSubTB Objective = "fl-subtb"
)

// Objectives lists the grid's objectives. The Teacher of tb, subtb,
// vargrad, fm, mdb, fl-db and fl-subtb trains with TB, paid from the Student's per-object loss under
// the Student's objective (package objective); db's Teacher trains with
// DB on per-transition rewards, as the paper's DB appendix.
var Objectives = []Objective{ObjectiveTB, ObjectiveDB, ObjectiveSubTB, ObjectiveVarGrad, ObjectiveFM, ObjectiveMDB, ObjectiveFLDB, ObjectiveFLSubTB}

// TeacherReward names a Teacher reward form as gfn train's
// --teacher-reward and earlier config.json files do.
type TeacherReward string

// The Teacher reward forms: the grid reference code's
// (teacher.GridReference), or the paper's text (teacher.Paper).
const (
	RewardReference TeacherReward = "reference"
	RewardPaper     TeacherReward = "paper"
)

// Config holds every training setting, grouped by concern as in every
// family: the agents' optimisers, the Teacher's reward, the replay buffer
// and local search. Zero values are not defaults: start from
// DefaultConfig.
type Config struct {
	Method Method `json:"method"`
	// Objective is the Student's loss (default tb; see Objectives for the
	// Teacher's).
	Objective Objective `json:"objective"`
	// Lambda is SubTB's λ (subtb, fl-subtb; 0: objective.DefaultLambda, 0.9).
	Lambda      float64 `json:"lambda,omitempty"`
	Batch       int     `json:"batch"`
	RewardCalls int     `json:"reward_calls"` // budget of reward evaluations
	// FreeStateRewards keeps the rewards of visited non-terminal states
	// (mdb, fl-db, fl-subtb score every one) out of the RewardCalls
	// budget, counting them apart (Trainer.StateRewardCalls), so that
	// these objectives take as many trajectories as the others: the
	// comparison at equal terminal queries, where intermediate rewards are
	// taken as given, as Deleu et al. and Pan et al. do.
	FreeStateRewards bool  `json:"free_state_rewards,omitempty"`
	Hidden           []int `json:"hidden"`
	// Student and Teacher are the agents' optimisers; their Clip covers
	// the policy and log Z together, as the reference clips them.
	Student     agent.Optim `json:"student"`
	Teacher     agent.Optim `json:"teacher"`
	LogZInit    float64     `json:"logz_init"`
	Eps         float64     `json:"eps"` // ε-uniform exploration of the behaviour policies
	Temperature float64     `json:"temperature"`

	// Reward is the Teacher's reward: the grid reference form
	// (teacher.GridReference) or the paper's (teacher.Paper).
	Reward teacher.Reward `json:"reward"`
	// NMC is the number of backward trajectories per x averaged in the
	// Teacher's reward.
	NMC int `json:"n_mc"`
	// Teachers is the number of Teachers of method teacher: 0 or 1 is the
	// paper's single Teacher. K > 1 Teachers (the multi-Teacher of the
	// paper's discussion; TB only) take the schedule's T slots in turn,
	// each trains on every batch, and they share the Student's loss
	// signal by TeacherSplit.
	Teachers int `json:"teachers,omitempty"`
	// TeacherSplit is how K > 1 Teachers share the reward (teacher.Share
	// when empty; teacher.None gives each the whole reward).
	TeacherSplit teacher.Split `json:"teacher_split,omitempty"`
	// GAFNScale scales GAFN's intrinsic rewards (0.01 on the grid).
	GAFNScale float64 `json:"gafn_scale,omitempty"`
	// Schedule is the cycle of behaviour policies: S (Student), T
	// (Teacher), B (buffer). Empty means the reference grid schedule:
	// "SSTT" for the Teacher ("SBTB" with a buffer), "S" for TB ("SB").
	Schedule string `json:"schedule"`

	Buffer Buffer      `json:"buffer"`
	LS     LocalSearch `json:"ls"`

	// Precision is the arithmetic of the Student's and Teachers' hidden
	// layers' products (nn.MLP.SetPrecision: with Hidden {256, 256}, the
	// 256×256 layer). The one-hot input layer and the logits layer stay
	// float32, as do GAFN's RND networks, log Z, the TB residual and every
	// metric; one hidden width has no hidden-to-hidden layer, so BF16 then
	// changes nothing. nn.FP32, the zero value, is left out of
	// config.json; BF16 needs a CPU with AMX-BF16 or AVX512_BF16 (New
	// refuses it otherwise with nn.Precision.Check's error).
	Precision nn.Precision `json:"precision,omitempty"`

	Seed uint64 `json:"seed"`
}

// Buffer is the replay buffer's setting.
type Buffer struct {
	// Priority is uniform, reward (PRT), loss (δ²) or teacher (PER);
	// empty means no buffer.
	Priority replay.Priority `json:"priority,omitempty"`
	// Cap is its capacity; 0 asks the environment (the reference formula
	// on the grid).
	Cap int `json:"cap,omitempty"`
	// Pairing "completion" reproduces the reference code before its
	// commit 77091bf, which stored the batch's terminal states in the
	// order they finished but their rewards and priorities in batch order
	// (mismatched pairs); the paper's PRT and PER rows appear to come from
	// it. Empty or "batch" pairs them correctly.
	Pairing string `json:"pairing,omitempty"`
	// Ties orders the buffer's entries of equal priority for the rank
	// weights: "oldest" (or empty) first stored first, "hash" by a fixed
	// pseudo-random order (replay.Buffer.HashTies), closer to the
	// reference's unstable argsort where PRT's few reward levels tie.
	Ties string `json:"ties,omitempty"`
}

// LocalSearch is the back-and-forth local search's setting.
type LocalSearch struct {
	// On enables it on 1 in 8 Student batches (tb) or 1 in 4 Teacher
	// batches (teacher), as the reference.
	On         bool    `json:"on,omitempty"`
	Iterations int     `json:"iterations,omitempty"`
	BackRatio  float64 `json:"back_ratio,omitempty"`
}

// DefaultConfig is the grid setting of the paper and the reference code.
func DefaultConfig() Config {
	return Config{
		Method: MethodTeacher, Objective: ObjectiveTB, Batch: 16, RewardCalls: 96000, Hidden: []int{256, 256},
		Student: agent.Optim{LR: 1e-3, LogZLR: 0.1, Clip: 1}, Teacher: agent.Optim{LR: 1e-3, LogZLR: 0.1, Clip: 1},
		Temperature: 1, Reward: teacher.Reward{Form: teacher.GridReference, C: 19, Eps: 1e-3}, NMC: 1,
		LS: LocalSearch{Iterations: 4, BackRatio: 0.5}, GAFNScale: 0.01,
	}
}

// UnmarshalJSON reads a Config, also in the flat layout of the checkpoints
// and config.json files of earlier gfn versions.
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	var probe struct {
		LR *float64 `json:"lr"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	if probe.LR == nil {
		return json.Unmarshal(b, (*plain)(c))
	}
	var old struct {
		plain
		Buffer        replay.Priority `json:"buffer"`
		LR            float64         `json:"lr"`
		LogZLR        float64         `json:"logz_lr"`
		ClipNorm      float64         `json:"clip_norm"`
		TeacherLR     float64         `json:"teacher_lr"`
		TeacherReward TeacherReward   `json:"teacher_reward"`
		C             float64         `json:"c"`
		Alpha         float64         `json:"alpha"`
		TeacherEps    float64         `json:"teacher_eps"`
		BufferCap     int             `json:"buffer_cap"`
		BufferPairing string          `json:"buffer_pairing"`
		BufferTies    string          `json:"buffer_ties"`
		LocalSearch   bool            `json:"local_search"`
		LSIterations  int             `json:"ls_iterations"`
		LSBackRatio   float64         `json:"ls_back_ratio"`
	}
	old.plain = plain(*c)
	old.LR, old.LogZLR, old.ClipNorm, old.TeacherLR = c.Student.LR, c.Student.LogZLR, c.Student.Clip, c.Teacher.LR
	old.C, old.Alpha, old.TeacherEps, old.TeacherReward = c.Reward.C, c.Reward.Alpha, c.Reward.Eps, RewardReference
	old.LSIterations, old.LSBackRatio = c.LS.Iterations, c.LS.BackRatio
	if err := json.Unmarshal(b, &old); err != nil {
		return err
	}
	*c = Config(old.plain)
	c.Student = agent.Optim{LR: old.LR, LogZLR: old.LogZLR, Clip: old.ClipNorm}
	c.Teacher = agent.Optim{LR: old.TeacherLR, LogZLR: old.LogZLR, Clip: old.ClipNorm}
	c.Reward = teacher.Reward{Form: teacher.GridReference, C: old.C, Alpha: old.Alpha, Eps: old.TeacherEps}
	if old.TeacherReward == RewardPaper {
		c.Reward.Form = teacher.Paper
	}
	c.Buffer = Buffer{old.Buffer, old.BufferCap, old.BufferPairing, old.BufferTies}
	c.LS = LocalSearch{old.LocalSearch, old.LSIterations, old.LSBackRatio}
	return nil
}

// Steps estimates the number of training iterations the budget allows:
// one per batch of reward calls, twice that with replay, less with local
// search (which spends reward calls on its rounds).
func (c Config) Steps() int {
	s := c.RewardCalls / c.Batch
	if c.LS.On {
		// 1 in 16 iterations (reference schedules) costs LS.Iterations extra batches.
		s = s * 16 / (16 + 2*c.LS.Iterations)
	}
	if c.Buffer.Priority != "" {
		s *= 2
	}
	return s
}

// usesObjective reports whether the Student's objective runs through
// package objective (the others keep their own code: TB, DB).
func (c Config) usesObjective() bool {
	switch c.Objective {
	case ObjectiveSubTB, ObjectiveVarGrad, ObjectiveFM, ObjectiveMDB, ObjectiveFLDB, ObjectiveFLSubTB:
		return true
	}
	return false
}

// teacherObjective is the Teacher's objective: DB with DB, TB otherwise.
func (c Config) teacherObjective() Objective {
	if c.Objective == ObjectiveDB {
		return ObjectiveDB
	}
	return ObjectiveTB
}

// numTeachers is the number of Teachers of the run (0 without one).
func (c Config) numTeachers() int {
	if c.Method != MethodTeacher {
		return 0
	}
	return max(c.Teachers, 1)
}

// split is the effective multi-Teacher split.
func (c Config) split() teacher.Split {
	if c.TeacherSplit == "" {
		return teacher.Share
	}
	return c.TeacherSplit
}

// schedule returns the effective cycle.
func (c Config) schedule() teacher.Schedule {
	switch {
	case c.Schedule != "":
		return teacher.Schedule(c.Schedule)
	case c.Method == MethodTeacher && c.Buffer.Priority != "":
		return "SBTB"
	case c.Method == MethodTeacher:
		return "SSTT"
	case c.Buffer.Priority != "":
		return "SB"
	default:
		return "S"
	}
}

// Validate reports the first invalid setting, naming the value and what is
// allowed.
func (c Config) Validate() error {
	okMethod := false
	for _, m := range Methods {
		okMethod = okMethod || m == c.Method
	}
	switch {
	case !okMethod:
		return fmt.Errorf("train: method %q is unknown (allowed: %s)", c.Method, choice.List(Methods))
	case !slices.Contains(Objectives, c.Objective):
		return fmt.Errorf("train: objective %q is unknown (allowed: %s)", c.Objective, choice.List(Objectives))
	case c.Lambda < 0 || math.IsInf(c.Lambda, 0) || math.IsNaN(c.Lambda):
		return fmt.Errorf("train: lambda %v must be finite and >= 0 (0: %v)", c.Lambda, objective.DefaultLambda)
	case c.NMC > 1 && c.usesObjective():
		return fmt.Errorf("train: n-mc %d averages TB residuals over backward trajectories; objective %q takes n-mc 1", c.NMC, c.Objective)
	case c.Batch < 1:
		return fmt.Errorf("train: batch %d is invalid: it must be at least 1", c.Batch)
	case c.RewardCalls < c.Batch:
		return fmt.Errorf("train: reward calls %d are fewer than one batch of %d", c.RewardCalls, c.Batch)
	case len(c.Hidden) == 0:
		return fmt.Errorf("train: hidden layers %v: at least one is needed", c.Hidden)
	case !(c.Student.LR > 0) || !(c.Student.LogZLR > 0) || !(c.Teacher.LR > 0) || !(c.Teacher.LogZLR > 0):
		return fmt.Errorf("train: learning rates %v, %v (log Z), %v (Teacher), %v (Teacher's log Z) must be > 0", c.Student.LR, c.Student.LogZLR, c.Teacher.LR, c.Teacher.LogZLR)
	case c.Student.Clip < 0 || c.Teacher.Clip < 0:
		return fmt.Errorf("train: clip norms %v and %v (Teacher) must be >= 0 (0 disables clipping)", c.Student.Clip, c.Teacher.Clip)
	case c.Student.WeightDecay != 0 || c.Teacher.WeightDecay != 0:
		return fmt.Errorf("train: weight decay %v and %v (Teacher): the grid trains without weight decay (allowed: 0)", c.Student.WeightDecay, c.Teacher.WeightDecay)
	case c.Eps < 0 || c.Eps > 1:
		return fmt.Errorf("train: eps %v must be in [0, 1]", c.Eps)
	case !(c.Temperature > 0):
		return fmt.Errorf("train: temperature %v must be > 0", c.Temperature)
	case c.Reward.Form != teacher.GridReference && c.Reward.Form != teacher.Paper:
		return fmt.Errorf("train: teacher reward form %q is unknown (allowed: %s, %s)", c.Reward.Form, teacher.GridReference, teacher.Paper)
	case c.NMC < 1:
		return fmt.Errorf("train: n-mc %d must be at least 1", c.NMC)
	case c.Teachers < 0 || c.Teachers > 63:
		return fmt.Errorf("train: teachers %d must be in [0, 63] (0 or 1: one Teacher)", c.Teachers)
	case c.Teachers > 1 && c.Method != MethodTeacher:
		return fmt.Errorf("train: teachers %d need method %q, not %q", c.Teachers, MethodTeacher, c.Method)
	case c.FreeStateRewards && c.Objective != ObjectiveMDB && c.Objective != ObjectiveFLDB && c.Objective != ObjectiveFLSubTB:
		return fmt.Errorf("train: free state rewards apply to the objectives that score visited states (mdb, fl-db, fl-subtb), not %q", c.Objective)
	case c.Teachers > 1 && c.Objective != ObjectiveTB:
		return fmt.Errorf("train: teachers %d train with TB; objective %q has one Teacher only", c.Teachers, c.Objective)
	case c.Precision != nn.FP32 && c.Precision != nn.BF16:
		return fmt.Errorf("train: precision %v is unknown (allowed: %s)", c.Precision, strings.Join(nn.Precisions, ", "))
	}
	if c.TeacherSplit != "" {
		if err := c.TeacherSplit.Validate(); err != nil {
			return err
		}
	}
	for _, h := range c.Hidden {
		if h < 1 {
			return fmt.Errorf("train: hidden width %d must be at least 1", h)
		}
	}
	if err := c.Reward.Validate(); err != nil {
		return err
	}
	s := c.schedule()
	if strings.Trim(string(s), "STB") != "" {
		return fmt.Errorf("train: schedule %q may only contain S (Student), T (Teacher) and B (buffer)", s)
	}
	if c.Method == MethodGAFN && (c.Buffer.Priority != "" || c.LS.On || c.Objective != ObjectiveTB) {
		return fmt.Errorf("train: method gafn runs on-policy with TB, as the reference: no buffer, local search or DB")
	}
	if c.Method == MethodGAFN && !(c.GAFNScale >= 0) {
		return fmt.Errorf("train: gafn scale %v must be >= 0", c.GAFNScale)
	}
	if c.Method != MethodTeacher && s.Count(teacher.Teacher) > 0 {
		return fmt.Errorf("train: schedule %q uses the Teacher, which method %q does not have", s, c.Method)
	}
	b := c.Buffer
	if (s.Count(teacher.Buffer) > 0) != (b.Priority != "") {
		return fmt.Errorf("train: schedule %q and buffer %q disagree: B slots need a buffer and a buffer needs B slots", s, b.Priority)
	}
	if b.Priority != "" && !slices.Contains(gridPriorities, b.Priority) {
		return fmt.Errorf("train: buffer priority %q is unknown (allowed: %s)", b.Priority, choice.List(gridPriorities))
	}
	if b.Ties != "" && b.Ties != "oldest" && b.Ties != "hash" {
		return fmt.Errorf("train: buffer ties %q is unknown (allowed: oldest, hash)", b.Ties)
	}
	if b.Pairing != "" && b.Pairing != "batch" && b.Pairing != "completion" {
		return fmt.Errorf("train: buffer pairing %q is unknown (allowed: batch, completion)", b.Pairing)
	}
	if b.Cap < 0 {
		return fmt.Errorf("train: buffer capacity %d must be >= 0 (0 = the environment's default)", b.Cap)
	}
	if c.LS.On && (c.LS.Iterations < 1 || !(c.LS.BackRatio > 0 && c.LS.BackRatio <= 1)) {
		return fmt.Errorf("train: local search needs iterations >= 1 (got %d) and a back ratio in (0, 1] (got %v)", c.LS.Iterations, c.LS.BackRatio)
	}
	return s.Validate(c.Method == MethodTeacher, b.Priority != "")
}

// gridPriorities are the buffer priorities of the grid's reference code
// (replay.Advantage is the log-of-log codes' PER, of diffusion samplers
// and sequences).
var gridPriorities = []replay.Priority{replay.Uniform, replay.Reward, replay.Loss, replay.Teacher}
