package diffusion

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
)

// TestVarGrad: a VarGrad Student (alone and with the Teacher) raises the
// ELBO of 25GMM as TB does (TestStudentImproves); each batch's residuals
// are ζ − ζ̄, summing to zero, with the Student's log Z the batch mean ζ̄.
func TestVarGrad(t *testing.T) {
	for _, m := range []Method{MethodTB, MethodTeacher} {
		cfg := smallConfig(m, 300)
		cfg.Objective = "vargrad"
		res, err := Run(context.Background(), energy.GMM25{}, cfg, quick)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Curve
		n := c.Len() - 1
		t.Logf("%s: ELBO %.3f -> %.3f, EUBO %.3f, learned log Z %.3f", m, c.Value(0, "elbo"), c.Value(n, "elbo"), *res.Summary.EUBO, res.Summary.LogZ)
		if !(c.Value(n, "elbo") > c.Value(0, "elbo")+0.5) {
			t.Errorf("%s: ELBO %.3f -> %.3f, want an increase of at least 0.5 nat", m, c.Value(0, "elbo"), c.Value(n, "elbo"))
		}
		tr := res.Trainer
		if _, err := tr.Iterate(); err != nil {
			t.Fatal(err)
		}
		var sum, mean float64
		nb := tr.batch.N
		for b := range nb {
			sum += tr.delta[b]
			mean += tr.logR[b] + tr.batch.LogPB[b] - tr.batch.LogPF[b]
		}
		mean /= float64(nb)
		if math.Abs(sum) > 1e-9*float64(nb) || math.Abs(float64(tr.Student.LogZ.Value[0])-mean) > 1e-4*(1+math.Abs(mean)) {
			t.Errorf("%s: residuals sum to %v; log Z %v, batch mean ζ %v", m, sum, tr.Student.LogZ.Value[0], mean)
		}
	}
	cfg := smallConfig(MethodPIS, 10)
	cfg.Objective = "vargrad"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "pis") {
		t.Errorf("pis with vargrad: %v", err)
	}
}
