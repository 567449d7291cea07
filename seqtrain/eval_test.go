package seqtrain

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/discrete"
)

// zeroModel is the test's linear model with every weight zero: uniform
// over the valid actions.
func zeroModel(env discrete.Env, prefix string, rng *rand.Rand) (discrete.Model, error) {
	m, err := newLinearModel(env, prefix, rng)
	clear(m.(*linearModel).w.Value)
	return m, err
}

// TestLogWeights: in the append-only MDP a uniform policy gives every
// trajectory Σ log P_F = −L·log A and Σ log P_B = 0 (one parent each), so
// each sample's log w is log R(x) + L·log A whatever x is: LogWeights
// must give that for every fresh sample (in the order of Samples) and
// every target (in their order), with the metrics as their means.
func TestLogWeights(t *testing.T) {
	task := toyTask{A: 3, L: 4}
	cfg := toyConfig(TB)
	cfg.MDP = "append"
	cfg.Model = zeroModel
	tr, err := New(task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ev Evaluator
	if f, g := ev.LogWeights(); len(f)+len(g)+len(ev.Samples()) != 0 {
		t.Fatal("log weights before any evaluation")
	}
	const n, nt = 300, 200
	targets, _ := task.TargetSamples(nt, rand.New(rand.NewPCG(3, 4)))
	m, err := ev.Evaluate(tr, n, targets, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	fresh, target := ev.LogWeights()
	xs := ev.Samples()
	if len(fresh) != n || len(target) != nt || len(xs) != n*task.L {
		t.Fatalf("%d fresh, %d target log weights, %d sample tokens; want %d, %d, %d", len(fresh), len(target), len(xs), n, nt, n*task.L)
	}
	offset := float64(task.L) * math.Log(float64(task.A))
	distinct := map[float64]bool{}
	for _, set := range []struct {
		name string
		x    []int32
		w    []float64
	}{{"fresh", xs, fresh}, {"target", targets, target}} {
		for i, w := range set.w {
			x := set.x[i*task.L : (i+1)*task.L]
			want := task.logR(x) + offset
			if math.Abs(w-want) > 1e-5 {
				t.Fatalf("%s sample %d %v: log w %.9g, want log R + L·log A = %.9g", set.name, i, x, w, want)
			}
			distinct[want] = true
		}
	}
	if len(distinct) < 4 {
		t.Fatalf("only %d distinct rewards: the test cannot tell samples apart", len(distinct))
	}
	if mean(fresh) != m.ELBO || logMeanExp(fresh) != m.LogZEst || mean(target) != m.EUBO {
		t.Errorf("means of the log weights %v, %v, %v; metrics ELBO %v, log Z estimate %v, EUBO %v",
			mean(fresh), logMeanExp(fresh), mean(target), m.ELBO, m.LogZEst, m.EUBO)
	}
	// Without targets there are no target log weights.
	if _, err := ev.Evaluate(tr, 10, nil, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	if f, g := ev.LogWeights(); len(f) != 10 || len(g) != 0 {
		t.Errorf("without targets: %d fresh and %d target log weights, want 10 and none", len(f), len(g))
	}
	// A failed evaluation (a NaN reward among the targets) leaves none.
	tr.task = toyTask{A: 3, L: 4, nan: "abca"}
	bad := append([]int32{0, 1, 2, 0}, targets...)
	var nf *NonFiniteError
	if _, err := ev.Evaluate(tr, n, bad, rand.New(rand.NewPCG(1, 2))); !errors.As(err, &nf) || nf.Seq != `"abca"` {
		t.Fatalf("a NaN reward of target abca: error %v, want a NonFiniteError naming abca", err)
	}
	if f, g := ev.LogWeights(); len(f)+len(g)+len(ev.Samples()) != 0 {
		t.Errorf("after a failed evaluation: %d fresh, %d target log weights, %d sample tokens, want none", len(f), len(g), len(ev.Samples()))
	}
}
