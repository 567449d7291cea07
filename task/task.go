package task

import (
	"encoding/json"
	"fmt"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
)

// Names lists the available tasks.
var Names = []string{"hypergrid"}

// Spec describes an environment.
type Spec struct {
	Task   string `json:"task"`
	Dim    int    `json:"dim,omitempty"`
	Side   int    `json:"side,omitempty"`
	Reward string `json:"reward,omitempty"`
}

// Build constructs the environment of s.
func Build(s Spec) (discrete.Env, error) {
	switch s.Task {
	case "hypergrid":
		return hypergrid.New(s.Dim, s.Side, hypergrid.Reward(s.Reward))
	default:
		return nil, fmt.Errorf("task %q is unknown (allowed: %v)", s.Task, Names)
	}
}

// BuildJSON is Build on a JSON-encoded Spec, for train.Load.
func BuildJSON(raw json.RawMessage) (discrete.Env, error) {
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("environment spec: %w", err)
	}
	return Build(s)
}

// RewardCalls is the paper's reward-call budget for a grid: 384,000 for
// d=4, H=32 and 96,000 otherwise.
func RewardCalls(s Spec) int {
	if s.Task == "hypergrid" && s.Dim == 4 && s.Side == 32 {
		return 384000
	}
	return 96000
}
