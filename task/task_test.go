package task

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	raw, _ := json.Marshal(Spec{Task: "hypergrid", Dim: 4, Side: 16, Reward: "deceptive"})
	env, err := BuildJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := env.(interface{ NumModes() int }).NumModes(); got != 81 {
		t.Errorf("d4 H16 has %v modes, want 81", got)
	}
	if _, err := Build(Spec{Task: "go"}); err == nil || !strings.Contains(err.Error(), `task: "go" is unknown (allowed: hypergrid)`) {
		t.Errorf("unknown task: %v", err)
	}
	if _, err := BuildJSON(json.RawMessage(`{`)); err == nil {
		t.Error("bad JSON accepted")
	}
	for _, c := range []struct {
		s    Spec
		want int
	}{{Spec{Task: "hypergrid", Dim: 4, Side: 32}, 384000}, {Spec{Task: "hypergrid", Dim: 2, Side: 128}, 96000},
		{Spec{Task: "hypergrid", Dim: 4, Side: 16}, 96000}, {Spec{Task: "hypergrid", Dim: 6, Side: 64}, 96000},
		{Spec{Task: "hypergrid", Dim: 2, Side: 512}, 192000}, {Spec{Task: "hypergrid", Dim: 4, Side: 128}, 384000}} {
		if got := RewardCalls(c.s); got != c.want {
			t.Errorf("RewardCalls(%+v) = %d, want %d", c.s, got, c.want)
		}
	}
}

func TestBuildFunc(t *testing.T) {
	s := Spec{Task: "hypergrid", Dim: 2, Side: 5, Reward: "custom", RewardCmd: "python3 r.py"}
	raw, _ := json.Marshal(s)
	if string(raw) != `{"task":"hypergrid","dim":2,"side":5,"reward":"custom","reward_cmd":"python3 r.py"}` {
		t.Errorf("spec JSON %s", raw)
	}
	if _, err := BuildJSON(raw); err == nil || !strings.Contains(err.Error(), `from the program "python3 r.py": build it with BuildFunc`) {
		t.Errorf("Build of a reward-command spec: %v", err)
	}
	env, err := BuildFunc(s, func(xs []int32, n int, out []float64) error {
		for i := range n {
			out[i] = float64(xs[3*i] + xs[3*i+1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, 1)
	if err := env.LogReward([]int32{1, 3, 1}, 1, out); err != nil || out[0] != 4 || fmt.Sprint(env) != "hypergrid(d=2, H=5, custom)" {
		t.Errorf("custom grid %v: log R %v, %v", env, out, err)
	}
	if _, err := BuildFunc(Spec{Task: "chess"}, nil); err == nil {
		t.Error("BuildFunc of an unknown task")
	}
	if _, err := BuildFunc(Spec{Task: "hypergrid", Dim: 2, Side: 5, Reward: "deceptive"}, nil); err == nil {
		t.Error("BuildFunc with a built-in reward")
	}
	// Specs without a command encode as before.
	raw, _ = json.Marshal(Spec{Task: "hypergrid", Dim: 2, Side: 128, Reward: "deceptive"})
	if string(raw) != `{"task":"hypergrid","dim":2,"side":128,"reward":"deceptive"}` {
		t.Errorf("spec JSON %s", raw)
	}
}
