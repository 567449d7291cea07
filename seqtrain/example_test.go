package seqtrain_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/seqtrain"
)

// gcTask is a user's own sequence reward: DNA 6-mers, log R = the number
// of "GC" steps, so GCGCGC is the best string.
type gcTask struct{}

func (gcTask) Length() int        { return 6 }
func (gcTask) Alphabet() []string { return []string{"A", "C", "G", "T"} }
func (gcTask) LogReward(xs []int32, n int, out []float64) error {
	for b := range n {
		x := xs[b*6 : (b+1)*6]
		out[b] = 0
		for i := 0; i+1 < len(x); i++ {
			if x[i] == 2 && x[i+1] == 1 { // G then C
				out[b]++
			}
		}
	}
	return nil
}

// A user's own reward over strings, trained with the Teacher and PER in
// the prepend-append MDP with a small SSR policy.
func Example() {
	cfg := seqtrain.DefaultConfig() // Teacher + PER, the reference's settings
	cfg.Rounds = 300
	cfg.Policy.Hidden, cfg.Policy.Embed = 32, 32
	res, err := seqtrain.Run(context.Background(), gcTask{}, cfg, seqtrain.RunOptions{Options: run.Options{EvalEvery: 100}, EvalSamples: 256})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := res.Summary
	fmt.Printf("%d rounds, %d reward calls, %d curve points\n", s.Steps, s.RewardCalls, res.Curve.Len())
	// Jensen: the mean of log w never exceeds the log of its mean.
	fmt.Println("ELBO <= log Z estimate:", s.ELBO <= s.LogZEst)
	fmt.Println(strings.Join(gcTask{}.Alphabet(), ""))
	// Output:
	// 300 rounds, 9600 reward calls, 3 curve points
	// ELBO <= log Z estimate: true
	// ACGT
}
