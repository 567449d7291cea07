package seqtrain

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/run"
)

// TestTrainerEvaluate: Evaluate's ELBO and EUBO are the means of the log
// weights it returns, of n fresh and n target sequences, and the same
// seed gives the same evaluation.
func TestTrainerEvaluate(t *testing.T) {
	res, err := conformanceRun(context.Background(), conformanceConfig(), run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := res.Trainer.Evaluate(40, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Round != 12 || ev.Student.Samples != 40 || len(ev.Weights) != 2 {
		t.Fatalf("evaluation %+v: want round 12, 40 samples, model and target weights", ev)
	}
	for _, w := range ev.Weights {
		if len(w.LogW) != 40 || len(w.X) != 40*3 {
			t.Fatalf("set %s: %d weights of %d tokens, want 40 of 120", w.Set, len(w.LogW), len(w.X))
		}
	}
	mean := func(v []float64) (s float64) {
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	if m := mean(ev.Weights[0].LogW); math.Abs(m-ev.Student.ELBO) > 1e-9 {
		t.Errorf("ELBO %v, mean model log w %v", ev.Student.ELBO, m)
	}
	if m := mean(ev.Weights[1].LogW); math.Abs(m-ev.Student.EUBO) > 1e-9 {
		t.Errorf("EUBO %v, mean target log w %v", ev.Student.EUBO, m)
	}
	again, _ := res.Trainer.Evaluate(40, rand.New(rand.NewPCG(1, 2)))
	if again.Student != ev.Student {
		t.Errorf("the same seed evaluated %+v, then %+v", ev.Student, again.Student)
	}
}
