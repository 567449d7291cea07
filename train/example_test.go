package train_test

import (
	"context"
	"fmt"

	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/train"
)

// Train a Student with an adaptive Teacher on a small deceptive grid.
func ExampleRun() {
	env, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	cfg := train.DefaultConfig() // method teacher, batch 16, Adam 1e-3 / 0.1, C=19
	cfg.Hidden = []int{64, 64}
	cfg.RewardCalls = 16 * 1500
	res, err := train.Run(context.Background(), env, cfg, train.RunOptions{})
	if err != nil {
		panic(err)
	}
	s := res.Summary
	fmt.Printf("modes %d/%v, exact TV < 0.05: %v\n", s.ModesFound, s.ModesTotal, s.StudentExact.TV < 0.05)
	// Output: modes 4/4, exact TV < 0.05: true
}
