package train

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/metrics"
	"github.com/gfngo/gfn/objective"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/teacher"
)

// TestTeacherRewardFromObjectiveLoss: with SubTB and VarGrad the Teacher
// is paid from the Student's per-object loss ℓ under its objective,
// weighted 1 + C where the object's residual says R lies above the
// Student's estimate: log R_T = log(log(1 + 10⁻³ + w·ℓ) + 10⁻⁸) in the
// grid reference form (α = 0), log(ε + w·ℓ) in the paper's.
func TestTeacherRewardFromObjectiveLoss(t *testing.T) {
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	for _, obj := range []Objective{ObjectiveSubTB, ObjectiveVarGrad, ObjectiveFM, ObjectiveMDB, ObjectiveFLDB, ObjectiveFLSubTB} {
		for _, form := range []teacher.Form{teacher.GridReference, teacher.Paper} {
			cfg := DefaultConfig()
			cfg.Objective, cfg.Hidden, cfg.RewardCalls, cfg.Reward.Form = obj, []int{16}, 16*4, form
			tr, err := New(g, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Iterate(); err != nil {
				t.Fatal(err)
			}
			n := tr.batch.Len()
			// The objective on the batch, computed apart.
			o, _ := objective.New(string(obj), 0)
			ind := discrete.Objective{Obj: o}
			delta, loss := make([]float64, n), make([]float64, n)
			if _, err := ind.Eval(g, tr.Student.Model, tr.Student.LogZ, &tr.batch, tr.logR, delta, loss); err != nil {
				t.Fatal(err)
			}
			tr.delta = grow(tr.delta, n)
			tr.studentDelta(&tr.batch, tr.logR, tr.delta)
			tr.teacherTargets()
			positive := 0
			for b := range n {
				w := 1.0
				if delta[b] > 0 {
					w, positive = 1+cfg.Reward.C, positive+1
				}
				want := math.Log(math.Log(1+1e-3+w*loss[b]) + 1e-8)
				if form == teacher.Paper {
					want = math.Log(cfg.Reward.Eps + w*loss[b])
				}
				if math.Abs(tr.logRT[b]-want) > 1e-9*(1+math.Abs(want)) {
					t.Errorf("%s %s: log R_T[%d] = %v, want %v (ℓ %v, δ %v)", obj, form, b, tr.logRT[b], want, loss[b], delta[b])
				}
			}
			if positive == 0 || positive == n {
				t.Logf("%s %s: %d of %d objects under-sampled: the C-weighting is tested on one side only", obj, form, positive, n)
			}
		}
	}
	// Fixed values: ℓ = 0.3 under-sampled (w = 20) and over-sampled (w = 1).
	r := teacher.Reward{Form: teacher.GridReference, C: 19, Eps: 1e-3}
	for _, c := range []struct{ d, want float64 }{
		{math.Sqrt(0.3), math.Log(math.Log(1.001+6) + 1e-8)},
		{-math.Sqrt(0.3), math.Log(math.Log(1.001+0.3) + 1e-8)},
	} {
		if got := r.LogReward(r.Term(c.d), 0); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("δ %v: log R_T %v, want %v", c.d, got, c.want)
		}
	}
}

// TestObjectivesTrain: on a small grid, SubTB and VarGrad Students, alone
// and with a Teacher and a buffer, learn the target about as well as TB
// (exact L1 to the target by dynamic programming), and VarGrad's log Z
// estimate approaches the true one.
func TestObjectivesTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("trains nine small grids")
	}
	g, _ := hypergrid.New(2, 6, hypergrid.Deceptive)
	target, logZ, err := metrics.Target(g)
	if err != nil {
		t.Fatal(err)
	}
	l1 := map[string]float64{}
	for _, obj := range []Objective{ObjectiveTB, ObjectiveSubTB, ObjectiveVarGrad, ObjectiveFM, ObjectiveMDB, ObjectiveFLDB, ObjectiveFLSubTB} {
		for _, c := range []struct {
			name   string
			method Method
			buffer replay.Priority
		}{{"alone", MethodTB, ""}, {"teacher", MethodTeacher, ""}, {"teacher-per", MethodTeacher, replay.Teacher}} {
			cfg := DefaultConfig()
			cfg.Objective, cfg.Method, cfg.Buffer.Priority, cfg.Hidden, cfg.RewardCalls = obj, c.method, c.buffer, []int{64, 64}, 16*1500
			if obj == ObjectiveMDB || obj == ObjectiveFLDB || obj == ObjectiveFLSubTB {
				// They score every visited state: about as many iterations
				// take several times the reward calls.
				cfg.RewardCalls *= 5
			}
			tr, err := New(g, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for !tr.Done() {
				if _, err := tr.Iterate(); err != nil {
					t.Fatal(err)
				}
			}
			p, err := metrics.Terminating(g, tr.Student.Model)
			if err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprintf("%s %s (%d iterations)", obj, c.name, tr.Step)
			l1[key] = metrics.Compare(p, target).L1
			if (obj == ObjectiveVarGrad || obj == ObjectiveFM || obj == ObjectiveMDB || obj == ObjectiveFLDB || obj == ObjectiveFLSubTB) && c.name == "alone" {
				if est := tr.StudentLogZ(); math.Abs(est-logZ) > 0.3 {
					t.Errorf("%s: the log Z estimate %v, true %v", obj, est, logZ)
				}
			}
		}
	}
	t.Logf("exact L1 at the budget: %v", l1)
	for k, v := range l1 {
		if !(v < 0.01) {
			t.Errorf("%s: exact L1 %v, want < 0.01", k, v)
		}
	}
}

// With FreeStateRewards the objectives that score visited states spend
// the budget on terminal rewards only, as TB does, and count the visited
// states' apart; the count survives a checkpoint. Other objectives refuse
// the setting.
func TestFreeStateRewards(t *testing.T) {
	g, _ := hypergrid.New(2, 6, hypergrid.Deceptive)
	cfg := DefaultConfig()
	cfg.Method, cfg.Objective, cfg.FreeStateRewards, cfg.Hidden, cfg.RewardCalls = MethodTB, ObjectiveFLDB, true, []int{16}, 16*20
	dir := t.TempDir()
	res, err := Run(context.Background(), g, cfg, RunOptions{Options: run.Options{OutDir: dir, NoFigures: true}})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trainer
	if tr.Step != 20 || tr.RewardCalls != 16*20 || tr.StateRewardCalls < 16*20 || res.Summary.StateRewardCalls != tr.StateRewardCalls {
		t.Errorf("steps %d, reward calls %d, state reward calls %d (summary %d)", tr.Step, tr.RewardCalls, tr.StateRewardCalls, res.Summary.StateRewardCalls)
	}
	back, err := Load(dir, g)
	if err != nil {
		t.Fatal(err)
	}
	if back.StateRewardCalls != tr.StateRewardCalls {
		t.Errorf("the checkpoint gives %d state reward calls, the run counted %d", back.StateRewardCalls, tr.StateRewardCalls)
	}
	cfg.Objective = ObjectiveSubTB
	if err := cfg.Validate(); err == nil {
		t.Error("free state rewards accepted for subtb")
	}
}
