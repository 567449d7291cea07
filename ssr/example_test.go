package ssr_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/sequence"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/ssr"
)

// The SSR policy on the prepend-append MDP, trained with trajectory balance.
func ExampleNew() {
	logR := func(xs []int32, n int, out []float64) error {
		for i := range n {
			out[i] = float64(xs[i*3]) // R = e^(first token)
		}
		return nil
	}
	env, err := sequence.NewPrependAppend(4, 3, logR)
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m := ssr.New(env, env, "student.", 64, 64, rng)
	logZ := nn.NewParam("logZ")
	opt := nn.NewAdam(nn.Group{Params: m.Params(), LR: 1e-3}, nn.Group{Params: []*nn.Param{logZ}, LR: 0.1})

	// The root's logits: one finite score per distinct child.
	s := make([]int32, env.StateLen())
	env.Init(s)
	finite := 0
	for _, v := range m.Forward(s, 1).Row(0) {
		if !math.IsInf(float64(v), -1) {
			finite++
		}
	}
	fmt.Println("actions:", env.NumActions(), "children of the root:", finite)

	smp := discrete.NewSampler(env)
	var tb discrete.TB
	var tr discrete.Trajectories
	r, delta := make([]float64, 16), make([]float64, 16)
	for range 300 {
		smp.Forward(m, 16, discrete.SampleOptions{}, rng, &tr)
		if err := env.LogReward(tr.Final, tr.Len(), r); err != nil {
			panic(err)
		}
		nn.ZeroGrad(opt.Params())
		tb.Loss(env, m, logZ, &tr, r, delta, true)
		opt.Step()
	}
	// Z = 16·(1 + e + e² + e³).
	trueLogZ := math.Log(16 * (1 + math.E + math.E*math.E + math.E*math.E*math.E))
	fmt.Printf("log Z within 0.1 of %.3f: %v\n", trueLogZ, math.Abs(float64(logZ.Value[0])-trueLogZ) < 0.1)
	// Output:
	// actions: 9 children of the root: 4
	// log Z within 0.1 of 6.213: true
}
