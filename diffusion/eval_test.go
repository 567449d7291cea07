package diffusion

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/energy"
)

// TestLogWeights: an untrained Student has zero drift (its last layer
// starts at zero), so its forward process is Brownian motion, P_B its
// bridge, and every trajectory's log w is log R(x) − log N(x; 0, σ²·I),
// whatever the path: LogWeights must give that for each fresh and each
// exact sample, in sample order, and its means must be the metrics.
func TestLogWeights(t *testing.T) {
	cfg := smallConfig(MethodTB, 1)
	cfg.LearnedVariance = false
	e := energy.GMM25{}
	tr, err := New(e, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ev Evaluator
	if f, x := ev.LogWeights(); f != nil || x != nil {
		t.Fatal("LogWeights before any evaluation are not nil")
	}
	const n = 300
	rng := rand.New(rand.NewPCG(7, 8))
	exact := ExactSamples(e, n, rng)
	m, fresh, err := ev.Evaluate(e, tr.Proc, tr.Student, n, exact, rng)
	if err != nil {
		t.Fatal(err)
	}
	wf, wx := ev.LogWeights()
	if len(wf) != n || len(wx) != n {
		t.Fatalf("%d fresh and %d exact log weights, want %d each", len(wf), len(wx), n)
	}
	d, s2 := tr.Proc.Dim, tr.Proc.Sigma2
	logR := make([]float64, n)
	for _, set := range []struct {
		name string
		x    []float32
		w    []float64
	}{{"fresh", fresh, wf}, {"exact", exact, wx}} {
		if err := e.LogReward(set.x, logR); err != nil {
			t.Fatal(err)
		}
		for r := range n {
			var q float64
			for _, v := range set.x[r*d : (r+1)*d] {
				q += float64(v) * float64(v)
			}
			want := logR[r] + 0.5*(q/s2+float64(d)*math.Log(2*math.Pi*s2))
			if math.Abs(set.w[r]-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Fatalf("%s sample %d: log w %.9g, want log R − log N(x; 0, σ²) = %.9g", set.name, r, set.w[r], want)
			}
		}
	}
	mean, lme := meanAndLogMeanExp(wf)
	if mean != m.ELBO || lme != m.ELBOIS {
		t.Errorf("fresh log weights: mean %v, log-mean-exp %v; metrics ELBO %v, ELBO-IS %v", mean, lme, m.ELBO, m.ELBOIS)
	}
	if mean, _ := meanAndLogMeanExp(wx); mean != m.EUBO {
		t.Errorf("exact log weights: mean %v, EUBO %v", mean, m.EUBO)
	}

	// Without exact samples there are no exact log weights; after a
	// failed evaluation there are none at all.
	if _, _, err := ev.Evaluate(e, tr.Proc, tr.Student, 10, nil, rng); err != nil {
		t.Fatal(err)
	}
	if f, x := ev.LogWeights(); len(f) != 10 || x != nil {
		t.Errorf("without exact samples: %d fresh, %d exact log weights, want 10 and none", len(f), len(x))
	}
	if _, _, err := ev.Evaluate(e, tr.Proc, tr.Student, 10, exact[:4], rng); err == nil {
		t.Fatal("4 exact values for 10 points of dimension 2 accepted")
	}
	if f, x := ev.LogWeights(); f != nil || x != nil {
		t.Errorf("after a failed evaluation: %d fresh and %d exact log weights, want none", len(f), len(x))
	}
}
