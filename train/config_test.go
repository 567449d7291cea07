package train_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gfngo/gfn/agent"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/train"
)

// TestConfigJSON: a Config survives its JSON, and the flat layout of
// earlier versions' config.json and checkpoints reads into the groups.
func TestConfigJSON(t *testing.T) {
	c := train.DefaultConfig()
	c.Buffer = train.Buffer{Priority: replay.Teacher, Cap: 30, Pairing: "completion", Ties: "hash"}
	c.LS.On, c.Reward.Form, c.Teacher.LR = true, teacher.Paper, 5e-3
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back train.Config
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, c) {
		t.Errorf("round trip: %+v (%v), want %+v", back, err, c)
	}

	old := `{"method":"tb","objective":"tb","batch":16,"reward_calls":1600,"hidden":[64],"lr":0.002,"logz_lr":0.2,
		"logz_init":1.5,"clip_norm":0.5,"eps":0.1,"temperature":1,"teacher_reward":"paper","c":9,"alpha":0.5,
		"teacher_eps":0.01,"n_mc":2,"teacher_lr":0.003,"schedule":"SB","buffer":"reward","buffer_cap":40,
		"buffer_pairing":"completion","local_search":true,"ls_iterations":3,"ls_back_ratio":0.25,"seed":7}`
	got := train.DefaultConfig()
	if err := json.Unmarshal([]byte(old), &got); err != nil {
		t.Fatal(err)
	}
	want := train.DefaultConfig()
	want.Method, want.RewardCalls, want.Hidden, want.LogZInit, want.Eps, want.NMC = train.MethodTB, 1600, []int{64}, 1.5, 0.1, 2
	want.Student = agent.Optim{LR: 0.002, LogZLR: 0.2, Clip: 0.5}
	want.Teacher = agent.Optim{LR: 0.003, LogZLR: 0.2, Clip: 0.5}
	want.Reward = teacher.Reward{Form: teacher.Paper, C: 9, Alpha: 0.5, Eps: 0.01}
	want.Schedule, want.Seed = "SB", 7
	want.Buffer = train.Buffer{Priority: replay.Reward, Cap: 40, Pairing: "completion"}
	want.LS = train.LocalSearch{On: true, Iterations: 3, BackRatio: 0.25}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flat layout read as\n%+v\nwant\n%+v", got, want)
	}
}
