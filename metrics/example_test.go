package metrics_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/metrics"
)

// The exact terminating distribution of an untrained policy, against the
// target R/Z.
func ExampleTerminating() {
	env, _ := hypergrid.New(2, 16, hypergrid.Deceptive)
	model := discrete.NewMLPModel(env, env, "model", []int{32}, rand.New(rand.NewPCG(1, 1)))
	target, logZ, _ := metrics.Target(env)
	p, _ := metrics.Terminating(env, model)
	var total float64
	for _, v := range p {
		total += v
	}
	d := metrics.Compare(p, target)
	fmt.Printf("%d terminal states, log Z %.3f, P_F^T sums to %.6f, far from the target: %v\n", len(p), logZ, total, d.TV > 0.5)
	// Output: 255 terminal states, log Z 3.374, P_F^T sums to 1.000000, far from the target: true
}
