package diffusion_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/timenet"
)

// shifted is a user's own target: an unnormalised Gaussian in R^2 centred
// at (1, -1) with variance 0.5, whose log Z = log(2π·0.5) is known.
type shifted struct{}

func (shifted) Dim() int { return 2 }

func (shifted) LogReward(x []float32, out []float64) error {
	if _, err := energy.Rows(2, x, out); err != nil {
		return err
	}
	for i := range out {
		a, b := float64(x[2*i])-1, float64(x[2*i+1])+1
		out[i] = -(a*a + b*b) / (2 * 0.5)
	}
	return nil
}

func (shifted) LogZ() float64 { return math.Log(2 * math.Pi * 0.5) }

// Training a diffusion sampler for one's own energy: any type with Dim and
// a batched LogReward will do (an exact sampler adds EUBO and W2, a
// gradient enables local search).
func Example_ownEnergy() {
	cfg := diffusion.DefaultConfig()
	cfg.Method = diffusion.MethodTB
	cfg.Net = timenet.Config{Hidden: 32}
	cfg.Steps, cfg.Batch, cfg.Iterations = 10, 128, 400
	cfg.Sigma2, cfg.Student.LogZLR = 1, 0.1 // a target of unit scale near the origin
	res, err := diffusion.Run(context.Background(), shifted{}, cfg, diffusion.RunOptions{FinalSamples: 2000})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := res.Summary
	fmt.Printf("log Z %.2f; ELBO within 0.1 nats of it: %v; EUBO: %v\n", *s.TrueLogZ, *s.TrueLogZ-s.ELBO < 0.1, s.EUBO)
	// Output: log Z 1.14; ELBO within 0.1 nats of it: true; EUBO: <nil>
}

// Choosing the Student's objective: subtrajectory balance on forward-
// looking flows (gfn-diffusion's partial energy) learns a flow network of
// (x, t) beside the policy and no log Z; the Student's log Z then holds
// the flows' estimate of it.
func Example_objective() {
	cfg := diffusion.DefaultConfig()
	cfg.Method, cfg.Objective = diffusion.MethodTB, "fl-subtb"
	cfg.Net = timenet.Config{Hidden: 32}
	cfg.Steps, cfg.Batch, cfg.Iterations = 10, 128, 400
	cfg.Sigma2 = 1
	res, err := diffusion.Run(context.Background(), shifted{}, cfg, diffusion.RunOptions{FinalSamples: 2000})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := res.Summary
	fmt.Printf("flow network: %v; ELBO within 0.2 nats of log Z: %v\n", res.Trainer.FlowNet() != nil, *s.TrueLogZ-s.ELBO < 0.2)
	// Output: flow network: true; ELBO within 0.2 nats of log Z: true
}
