package diffusion

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/run"
)

// TestTrainerEvaluate: Evaluate scores the Student and the Teacher on
// the same exact samples; each ELBO and EUBO is the mean of the log
// weights it returns, ELBO ≤ ELBO-IS (Jensen), and 25GMM's log Z is known.
func TestTrainerEvaluate(t *testing.T) {
	res, err := Run(context.Background(), energy.GMM25{}, conformanceConfig(8), tiny(run.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := res.Trainer.Evaluate(50, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Step != 8 || ev.Teacher == nil || len(ev.Weights) != 4 || ev.TrueLogZ == nil || *ev.TrueLogZ != 0 {
		t.Fatalf("evaluation step %d, teacher %v, %d weight sets, true log Z %v: want 8, a Teacher, 4 sets, 0", ev.Step, ev.Teacher, len(ev.Weights), ev.TrueLogZ)
	}
	mean := func(v []float64) (s float64) {
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	for i, m := range []Metrics{ev.Student, ev.Student, *ev.Teacher, *ev.Teacher} {
		w := ev.Weights[i]
		want := m.ELBO
		if w.Set == "exact" {
			want = m.EUBO
		}
		if len(w.LogW) != 50 || len(w.X) != 100 || math.Abs(mean(w.LogW)-want) > 1e-9 {
			t.Errorf("%s %s: %d weights, mean %v, want 50 with mean %v", w.Agent, w.Set, len(w.LogW), mean(w.LogW), want)
		}
		if !(m.ELBO <= m.ELBOIS) {
			t.Errorf("%s: ELBO %v > ELBO-IS %v", w.Agent, m.ELBO, m.ELBOIS)
		}
	}
	if ev.DeltaLogZ == nil || ev.MMD == nil || ev.MMDSamples != 50 {
		t.Errorf("suite metrics |Δ log Z| %v, MMD %v of %d samples: want both, of 50", ev.DeltaLogZ, ev.MMD, ev.MMDSamples)
	} else if want := math.Abs(ev.Student.ELBOIS - 0); math.Abs(*ev.DeltaLogZ-want) > 1e-9 {
		t.Errorf("|Δ log Z| %v, |ELBO-IS − log Z| %v", *ev.DeltaLogZ, want)
	}
	if _, mixture := any(energy.GMM25{}).(energy.Mixture); mixture != (ev.EMC != nil) {
		t.Errorf("EMC %v for a mixture: %v", ev.EMC, mixture)
	}
	if &ev.Weights[1].X[0] != &ev.Weights[3].X[0] {
		t.Error("the Student and the Teacher were not scored on the same exact samples")
	}
}
