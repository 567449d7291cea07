package seqtrain

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gfngo/gfn/agent"
	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/objective"
	"github.com/gfngo/gfn/run"
)

// TestObjectivesTrainTowardsTarget: DB, SubTB and VarGrad Students with
// the Teacher and PER bound and approach log Z as TB's does
// (TestTrainsTowardsTarget), with the mlp policy and, for the flow
// objectives, the ssr policy's flow head too.
func TestObjectivesTrainTowardsTarget(t *testing.T) {
	task := toyTask{A: 3, L: 3}
	z := task.LogZ()
	for _, c := range []struct{ obj, policy string }{{"db", "mlp"}, {"subtb", "mlp"}, {"vargrad", "mlp"}, {"db", "ssr"}, {"subtb", "ssr"}} {
		obj := c.obj
		cfg := toyConfig(TeacherPER)
		if c.policy == "ssr" {
			cfg.Policy = Policy{Kind: "ssr", Hidden: 16, Embed: 16}
		}
		cfg.Objective, cfg.Rounds = obj, 400
		cfg.OnlineBatch, cfg.OfflineBatch = 16, 16
		cfg.Student = agent.Optim{LR: 3e-3, LogZLR: 1e-1}
		res, err := Run(context.Background(), task, cfg, RunOptions{Options: run.Options{EvalEvery: 100}, EvalSamples: 1024})
		if err != nil {
			t.Fatal(err)
		}
		m := res.Summary
		t.Logf("%s %s: ELBO %.4f, EUBO %.4f, log Z %.4f (estimate error %.4f), modes %d", obj, c.policy, m.ELBO, m.EUBO, z, m.LogZErr, m.ModesFound)
		// ELBO ≤ log Z up to the noise of 1,024 samples of a near-exact sampler.
		if m.ELBO > z+0.01 || z-m.ELBO > 0.3 || m.EUBO-z > 0.3 || m.ModesFound != 2 {
			t.Errorf("%s %s after %d rounds: ELBO %v, EUBO %v for log Z %v, modes %d", obj, c.policy, cfg.Rounds, m.ELBO, m.EUBO, z, m.ModesFound)
		}
		if est := float64(res.Trainer.Student.LogZ.Value[0]); math.Abs(est-z) > 0.3 {
			t.Errorf("%s %s: the Student's log Z estimate %v, true %v", obj, c.policy, est, z)
		}
	}
}

// TestObjectiveTeacherReward: the Student's residual handed to the
// Teacher's reward is sign(δ)·√ℓ of its objective.
func TestObjectiveTeacherReward(t *testing.T) {
	task := toyTask{A: 3, L: 3}
	cfg := toyConfig(TeacherPER)
	cfg.Objective, cfg.Rounds = "subtb", 3
	tr, err := New(task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Iterate(); err != nil {
		t.Fatal(err)
	}
	n := tr.tr.Len()
	o := discrete.Objective{Obj: &objective.SubTB{Lambda: objective.DefaultLambda}}
	delta, loss := make([]float64, n), make([]float64, n)
	if _, err := o.Eval(tr.env, tr.Student.Model, nil, &tr.tr, tr.logR, delta, loss); err != nil {
		t.Fatal(err)
	}
	tr.eval(tr.Student, tr.logR)
	for b := range n {
		if want := math.Copysign(math.Sqrt(loss[b]), delta[b]); tr.Student.delta[b] != want {
			t.Errorf("δ handed to the Teacher [%d] = %v, want %v", b, tr.Student.delta[b], want)
		}
	}
}

// TestObjectiveRefusals: unknown objectives name the allowed ones, and a
// user's model needs a flow column for the flow objectives.
func TestObjectiveRefusals(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Objective = "fm" }, `objective "fm" is unknown (allowed: tb, db, subtb, vargrad)`},
		{func(c *Config) { c.Objective, c.LS = "vargrad", LocalSearch{Rounds: 7, Back: 3} }, "local search"},
	} {
		cfg := toyConfig(TeacherPER)
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	// A user's model without a flow column is refused at New.
	cfg := toyConfig(TB)
	cfg.Objective = "db"
	cfg.Model = func(env discrete.Env, prefix string, rng *rand.Rand) (discrete.Model, error) {
		return cfg.Policy.build(env, prefix, rng)
	}
	if _, err := New(toyTask{A: 3, L: 3}, cfg); err == nil || !strings.Contains(err.Error(), "state-flow column") {
		t.Errorf("a model without a flow column: %v", err)
	}
}
