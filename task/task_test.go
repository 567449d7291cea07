package task

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	raw, _ := json.Marshal(Spec{Task: "hypergrid", Dim: 4, Side: 16, Reward: "deceptive"})
	env, err := BuildJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := env.(interface{ NumModes() float64 }).NumModes(); got != 81 {
		t.Errorf("d4 H16 has %v modes, want 81", got)
	}
	if _, err := Build(Spec{Task: "go"}); err == nil || !strings.Contains(err.Error(), `task "go" is unknown`) {
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
