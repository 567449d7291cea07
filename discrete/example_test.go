package discrete_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/nn"
)

// Sample a batch from a fresh policy and take one TB gradient step.
func Example() {
	env, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	rng := rand.New(rand.NewPCG(1, 2))
	model := discrete.NewMLPModel(env, env, "model", []int{32, 32}, rng)
	logZ := nn.NewParam("logZ")
	opt := nn.NewAdam(nn.Group{Params: model.Params(), LR: 1e-3}, nn.Group{Params: []*nn.Param{logZ}, LR: 0.1})

	var batch discrete.Trajectories
	discrete.NewSampler(env).Forward(model, 16, discrete.SampleOptions{}, rng, &batch)
	logR := make([]float64, batch.Len())
	if err := env.LogReward(batch.Final, batch.Len(), logR); err != nil {
		panic(err)
	}
	delta := make([]float64, batch.Len())
	var tb discrete.TB
	nn.ZeroGrad(opt.Params())
	loss := tb.Loss(env, model, logZ, &batch, logR, delta, true)
	opt.Step()
	// A fresh policy stops early in the low-reward corner (R = 1e-5), so
	// δ < 0 and the first Adam step lowers log Z by its learning rate.
	fmt.Printf("%d trajectories, loss > 0: %v, log Z after one step %.1f\n", batch.Len(), loss > 0, logZ.Value[0])
	// Output: 16 trajectories, loss > 0: true, log Z after one step -0.1
}
