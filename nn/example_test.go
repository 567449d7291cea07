package nn_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/gfngo/gfn/nn"
)

// An MLP on one-hot inputs given as index lists, with a masked
// log-softmax over its outputs.
func ExampleNewOneHotMLP() {
	rng := rand.New(rand.NewPCG(1, 1))
	net := nn.NewOneHotMLP("policy", 10, []int{16, 3}, nn.LeakyReLU, rng)
	logits := net.ForwardIndices([]int32{2, 7, 0, 5}, 2) // two rows, two active features each
	var logp nn.Matrix
	nn.LogSoftmax(&logp, logits, []bool{true, true, true, true, false, true})
	fmt.Println(logits.Rows, logits.Cols, logp.At(1, 1))
	// Output: 2 3 -Inf
}
