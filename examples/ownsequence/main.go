// Command ownsequence trains a sequence sampler with an adaptive Teacher
// and PER on a user's own reward over DNA 10-mers: the number of copies
// of the motif "GATA", so GATAGATA?? and ??GATAGATA strings are the modes.
package main

import (
	"context"
	"fmt"
	"log"

	gfnrun "github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/seqtrain"
)

// motif is the task: sequences of 10 tokens over A, C, G, T.
type motif struct{}

func (motif) Length() int        { return 10 }
func (motif) Alphabet() []string { return []string{"A", "C", "G", "T"} }

// LogReward is 2 nats per occurrence of GATA (tokens 2 0 3 0).
func (motif) LogReward(xs []int32, n int, out []float64) error {
	for b := range n {
		x := xs[b*10 : (b+1)*10]
		out[b] = 0
		for i := 0; i+4 <= 10; i++ {
			if x[i] == 2 && x[i+1] == 0 && x[i+2] == 3 && x[i+3] == 0 {
				out[b] += 2
			}
		}
	}
	return nil
}

func run(rounds int) (string, error) {
	cfg := seqtrain.DefaultConfig() // Teacher + PER, the reference code's settings
	cfg.Rounds = rounds
	res, err := seqtrain.Run(context.Background(), motif{}, cfg, seqtrain.RunOptions{Options: gfnrun.Options{EvalEvery: rounds}, EvalSamples: 512})
	if err != nil {
		return "", err
	}
	s := res.Summary
	return fmt.Sprintf("%d sequences seen; ELBO %.2f, log Z estimate %.2f", s.Seen, s.ELBO, s.LogZEst), nil
}

func main() {
	out, err := run(1000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
}
