package train_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/train"
)

// TestTrainerEvaluate: Evaluate's exact distances are the final
// summary's (computed there by Run's own path), and n = 0 skips the
// empirical L1.
func TestTrainerEvaluate(t *testing.T) {
	env, _ := hypergrid.New(2, 6, hypergrid.Deceptive)
	cfg := train.DefaultConfig()
	cfg.Hidden, cfg.RewardCalls = []int{16}, 16*60
	res, err := train.Run(context.Background(), env, cfg, train.RunOptions{EvalSamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := res.Trainer.Evaluate(500, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if ev.StudentExact == nil || *ev.StudentExact != *s.StudentExact || ev.TeacherExact == nil || *ev.TeacherExact != *s.TeacherExact {
		t.Errorf("exact distances %+v / %+v, summary's %+v / %+v", ev.StudentExact, ev.TeacherExact, s.StudentExact, s.TeacherExact)
	}
	if ev.TrueLogZ == nil || *ev.TrueLogZ != *s.TrueLogZ || ev.LogZ != s.LogZ || ev.ModesFound != s.ModesFound || ev.Step != s.Steps {
		t.Errorf("evaluation %+v disagrees with the summary %+v", ev, s)
	}
	if ev.EmpiricalL1 == nil || ev.Samples != 500 || *ev.EmpiricalL1 <= 0 || *ev.EmpiricalL1 > 2 {
		t.Errorf("empirical L1 %v of %d samples, want one in (0, 2] of 500", ev.EmpiricalL1, ev.Samples)
	}
	if ev, _ := res.Trainer.Evaluate(0, nil); ev.EmpiricalL1 != nil || ev.Samples != 0 {
		t.Errorf("n = 0 gave an empirical L1 %v of %d samples", ev.EmpiricalL1, ev.Samples)
	}
}
