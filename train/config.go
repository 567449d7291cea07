package train

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gfngo/gfn/internal/choice"
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
)

// TeacherReward names a Teacher reward form.
type TeacherReward string

// The Teacher reward forms: the grid reference code's, or the paper's text
// (see package teacher's Form).
const (
	RewardReference TeacherReward = "reference"
	RewardPaper     TeacherReward = "paper"
)

// Config holds every training setting. Zero values are not defaults: start
// from DefaultConfig.
type Config struct {
	Method Method `json:"method"`
	// Objective is the loss of both Student and Teacher (default tb).
	Objective   Objective `json:"objective"`
	Batch       int       `json:"batch"`
	RewardCalls int       `json:"reward_calls"` // budget of reward evaluations
	Hidden      []int     `json:"hidden"`
	LR          float64   `json:"lr"`
	LogZLR      float64   `json:"logz_lr"`
	LogZInit    float64   `json:"logz_init"`
	ClipNorm    float64   `json:"clip_norm"` // 0 disables clipping
	Eps         float64   `json:"eps"`       // ε-uniform exploration of the behaviour policies
	Temperature float64   `json:"temperature"`

	TeacherReward TeacherReward `json:"teacher_reward"`
	C             float64       `json:"c"`
	Alpha         float64       `json:"alpha"`
	TeacherEps    float64       `json:"teacher_eps"` // ε of the paper form
	NMC           int           `json:"n_mc"`
	TeacherLR     float64       `json:"teacher_lr"`
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

	// Buffer is the replay buffer's priority (uniform, reward = PRT,
	// loss = δ², teacher = PER); empty means no buffer.
	Buffer replay.Priority `json:"buffer,omitempty"`
	// BufferCap is its capacity; 0 asks the environment (the reference
	// formula on the grid).
	BufferCap int `json:"buffer_cap,omitempty"`
	// BufferPairing "completion" reproduces the reference code before its
	// commit 77091bf, which stored the batch's terminal states in the
	// order they finished but their rewards and priorities in batch order
	// (mismatched pairs); the paper's PRT and PER rows appear to come from
	// it. Empty or "batch" pairs them correctly.
	BufferPairing string `json:"buffer_pairing,omitempty"`
	// BufferTies orders the buffer's entries of equal priority for the
	// rank weights: "oldest" (or empty) first stored first, "hash" by a
	// fixed pseudo-random order (replay.Buffer.HashTies), closer to the
	// reference's unstable argsort where PRT's few reward levels tie.
	BufferTies string `json:"buffer_ties,omitempty"`

	// LocalSearch enables back-and-forth local search on 1 in 8 Student
	// batches (tb) or 1 in 4 Teacher batches (teacher), as the reference.
	LocalSearch  bool    `json:"local_search,omitempty"`
	LSIterations int     `json:"ls_iterations,omitempty"`
	LSBackRatio  float64 `json:"ls_back_ratio,omitempty"`

	Seed uint64 `json:"seed"`
}

// DefaultConfig is the grid setting of the paper and the reference code.
func DefaultConfig() Config {
	return Config{
		Method: MethodTeacher, Objective: ObjectiveTB, Batch: 16, RewardCalls: 96000, Hidden: []int{256, 256},
		LR: 1e-3, LogZLR: 0.1, ClipNorm: 1, Temperature: 1,
		TeacherReward: RewardReference, C: 19, Alpha: 0, TeacherEps: 1e-3, NMC: 1, TeacherLR: 1e-3,
		LSIterations: 4, LSBackRatio: 0.5, GAFNScale: 0.01,
	}
}

// Steps estimates the number of training iterations the budget allows:
// one per batch of reward calls, twice that with replay, less with local
// search (which spends reward calls on its rounds).
func (c Config) Steps() int {
	s := c.RewardCalls / c.Batch
	if c.LocalSearch {
		// 1 in 16 iterations (reference schedules) costs LSIterations extra batches.
		s = s * 16 / (16 + 2*c.LSIterations)
	}
	if c.Buffer != "" {
		s *= 2
	}
	return s
}

// Reward is the Teacher's reward of the configuration: the grid reference
// form or the paper's.
func (c Config) Reward() teacher.Reward {
	f := teacher.GridReference
	if c.TeacherReward == RewardPaper {
		f = teacher.Paper
	}
	return teacher.Reward{Form: f, C: c.C, Alpha: c.Alpha, Eps: c.TeacherEps}
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
	case c.Method == MethodTeacher && c.Buffer != "":
		return "SBTB"
	case c.Method == MethodTeacher:
		return "SSTT"
	case c.Buffer != "":
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
	case c.Objective != ObjectiveTB && c.Objective != ObjectiveDB:
		return fmt.Errorf("train: objective %q is unknown (allowed: %s, %s)", c.Objective, ObjectiveTB, ObjectiveDB)
	case c.Batch < 1:
		return fmt.Errorf("train: batch %d is invalid: it must be at least 1", c.Batch)
	case c.RewardCalls < c.Batch:
		return fmt.Errorf("train: reward calls %d are fewer than one batch of %d", c.RewardCalls, c.Batch)
	case len(c.Hidden) == 0:
		return fmt.Errorf("train: hidden layers %v: at least one is needed", c.Hidden)
	case !(c.LR > 0) || !(c.LogZLR > 0) || !(c.TeacherLR > 0):
		return fmt.Errorf("train: learning rates %v, %v (log Z), %v (Teacher) must be > 0", c.LR, c.LogZLR, c.TeacherLR)
	case c.ClipNorm < 0:
		return fmt.Errorf("train: clip norm %v must be >= 0 (0 disables clipping)", c.ClipNorm)
	case c.Eps < 0 || c.Eps > 1:
		return fmt.Errorf("train: eps %v must be in [0, 1]", c.Eps)
	case !(c.Temperature > 0):
		return fmt.Errorf("train: temperature %v must be > 0", c.Temperature)
	case c.TeacherReward != RewardReference && c.TeacherReward != RewardPaper:
		return fmt.Errorf("train: teacher reward %q is unknown (allowed: %s, %s)", c.TeacherReward, RewardReference, RewardPaper)
	case c.NMC < 1:
		return fmt.Errorf("train: n-mc %d must be at least 1", c.NMC)
	case c.Teachers < 0 || c.Teachers > 63:
		return fmt.Errorf("train: teachers %d must be in [0, 63] (0 or 1: one Teacher)", c.Teachers)
	case c.Teachers > 1 && c.Method != MethodTeacher:
		return fmt.Errorf("train: teachers %d need method %q, not %q", c.Teachers, MethodTeacher, c.Method)
	case c.Teachers > 1 && c.Objective != ObjectiveTB:
		return fmt.Errorf("train: teachers %d train with TB; objective %q has one Teacher only", c.Teachers, c.Objective)
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
	if err := c.Reward().Validate(); err != nil {
		return err
	}
	s := c.schedule()
	if strings.Trim(string(s), "STB") != "" {
		return fmt.Errorf("train: schedule %q may only contain S (Student), T (Teacher) and B (buffer)", s)
	}
	if c.Method == MethodGAFN && (c.Buffer != "" || c.LocalSearch || c.Objective != ObjectiveTB) {
		return fmt.Errorf("train: method gafn runs on-policy with TB, as the reference: no buffer, local search or DB")
	}
	if c.Method == MethodGAFN && !(c.GAFNScale >= 0) {
		return fmt.Errorf("train: gafn scale %v must be >= 0", c.GAFNScale)
	}
	if c.Method != MethodTeacher && s.Count(teacher.Teacher) > 0 {
		return fmt.Errorf("train: schedule %q uses the Teacher, which method %q does not have", s, c.Method)
	}
	if (s.Count(teacher.Buffer) > 0) != (c.Buffer != "") {
		return fmt.Errorf("train: schedule %q and buffer %q disagree: B slots need a buffer and a buffer needs B slots", s, c.Buffer)
	}
	if c.Buffer != "" && !slices.Contains(gridPriorities, c.Buffer) {
		return fmt.Errorf("train: buffer priority %q is unknown (allowed: %s)", c.Buffer, choice.List(gridPriorities))
	}
	if c.BufferTies != "" && c.BufferTies != "oldest" && c.BufferTies != "hash" {
		return fmt.Errorf("train: buffer ties %q is unknown (allowed: oldest, hash)", c.BufferTies)
	}
	if c.BufferPairing != "" && c.BufferPairing != "batch" && c.BufferPairing != "completion" {
		return fmt.Errorf("train: buffer pairing %q is unknown (allowed: batch, completion)", c.BufferPairing)
	}
	if c.BufferCap < 0 {
		return fmt.Errorf("train: buffer capacity %d must be >= 0 (0 = the environment's default)", c.BufferCap)
	}
	if c.LocalSearch && (c.LSIterations < 1 || !(c.LSBackRatio > 0 && c.LSBackRatio <= 1)) {
		return fmt.Errorf("train: local search needs iterations >= 1 (got %d) and a back ratio in (0, 1] (got %v)", c.LSIterations, c.LSBackRatio)
	}
	return s.Validate(c.Method == MethodTeacher, c.Buffer != "")
}

// gridPriorities are the buffer priorities of the grid's reference code
// (replay.Advantage is the log-of-log codes' PER, of diffusion samplers
// and sequences).
var gridPriorities = []replay.Priority{replay.Uniform, replay.Reward, replay.Loss, replay.Teacher}
