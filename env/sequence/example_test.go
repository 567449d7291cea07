package sequence_test

import (
	"fmt"
	"math"

	"github.com/gfngo/gfn/env/sequence"
)

// A user's reward: DNA-like sequences of length 4 over {A, C, G, T} (tokens
// 0..3), rewarded by their GC content, R = exp(#G + #C).
func ExampleNewPrependAppend() {
	gc := func(xs []int32, n int, out []float64) error {
		for i := range n {
			out[i] = 0
			for _, c := range xs[i*4 : (i+1)*4] {
				if c == 1 || c == 2 {
					out[i]++
				}
			}
		}
		return nil
	}
	env, err := sequence.NewPrependAppend(4, 4, gc)
	if err != nil {
		panic(err)
	}
	// Build "GATC" as the MDP does: A, then prepend G, append T, append C.
	s := make([]int32, env.StateLen())
	env.Init(s)
	mask := make([]bool, env.NumActions())
	env.ForwardMask(s, mask)
	valid := 0
	for _, ok := range mask {
		if ok {
			valid++
		}
	}
	fmt.Println(env, "actions:", env.NumActions(), "valid at the root:", valid)
	for _, a := range []int{env.PrependAction(0), env.PrependAction(2), env.AppendAction(3), env.AppendAction(1), sequence.Stop} {
		env.Step(s, a)
	}
	logR := make([]float64, 1)
	if err := env.LogReward(s, 1, logR); err != nil {
		panic(err)
	}
	fmt.Println("tokens:", env.Tokens(s), "terminal:", env.IsTerminal(s), "key:", env.TerminalKey(s))
	fmt.Println("R =", math.Exp(logR[0]))
	// Output:
	// sequence(prepend-append, A=4, n=4) actions: 9 valid at the root: 4
	// tokens: [2 0 3 1] terminal: true key: 141
	// R = 7.38905609893065
}
