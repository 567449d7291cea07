package task

import (
	"encoding/json"
	"fmt"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/internal/choice"
)

// Names lists the available tasks.
var Names = []string{"hypergrid"}

// Spec describes an environment.
type Spec struct {
	Task   string `json:"task"`
	Dim    int    `json:"dim,omitempty"`
	Side   int    `json:"side,omitempty"`
	Reward string `json:"reward,omitempty"`
	// RewardCmd is the command line of the reward program (package
	// rewardcmd) of a hypergrid whose Reward is "custom"; BuildFunc builds
	// it with the program's log-reward.
	RewardCmd string `json:"reward_cmd,omitempty"`
}

// Build constructs the environment of s. A spec with a reward command
// needs the program: BuildFunc.
func Build(s Spec) (discrete.Env, error) {
	if s.RewardCmd != "" || s.Reward == string(hypergrid.Custom) {
		return nil, fmt.Errorf("task: the %s rewards come from the program %q: build it with BuildFunc and the program's log-reward", s.Task, s.RewardCmd)
	}
	switch s.Task {
	case "hypergrid":
		return env(hypergrid.New(s.Dim, s.Side, hypergrid.Reward(s.Reward)))
	default:
		return nil, fmt.Errorf("task: %q is unknown (allowed: %s)", s.Task, choice.List(Names))
	}
}

// BuildFunc constructs the hypergrid of s (Task "hypergrid", Reward
// "custom" or empty) with the log-reward f, such as a reward program's
// (rewardcmd.Client.Cells).
func BuildFunc(s Spec, f hypergrid.LogRewardFunc) (discrete.Env, error) {
	if s.Task != "hypergrid" {
		return nil, fmt.Errorf("task: task %q cannot take a log-reward function (allowed: hypergrid)", s.Task)
	}
	if s.Reward != "" && s.Reward != string(hypergrid.Custom) {
		return nil, fmt.Errorf("task: reward %q and a log-reward function: give one of them", s.Reward)
	}
	return env(hypergrid.NewCustom(s.Dim, s.Side, f))
}

// env returns g as a discrete.Env, nil with an error: a nil *Grid would
// make a non-nil interface.
func env(g *hypergrid.Grid, err error) (discrete.Env, error) {
	if err != nil {
		return nil, err
	}
	return g, nil
}

// BuildJSON is Build on a JSON-encoded Spec, for train.Load.
func BuildJSON(raw json.RawMessage) (discrete.Env, error) {
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("task: environment spec: %w", err)
	}
	return Build(s)
}

// RewardCalls is the reference code's reward-call budget for a grid:
// 16 × 1.5 × (4000 steps, 8000 for d=2 with H > 256, 16000 for d=4 with
// H > 16), i.e. 96,000, 192,000 or 384,000 (d=4, H=32: 384,000 as the
// paper states).
func RewardCalls(s Spec) int {
	steps := 4000
	switch {
	case s.Task != "hypergrid":
	case s.Dim == 2 && s.Side > 256:
		steps = 8000
	case s.Dim == 4 && s.Side > 16:
		steps = 16000
	}
	return steps * 3 / 2 * 16
}
