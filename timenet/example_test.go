package timenet_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/timenet"
)

// One sampling step of a diffusion sampler on 25GMM (d = 2): the drift and
// raw log-variance of 500 states at time t = i/T, then a second call that
// evaluates two steps at once (two blocks of rows).
func ExampleNew() {
	rng := rand.New(rand.NewPCG(1, 1))
	net, err := timenet.New(timenet.Config{Arch: timenet.PIS, Hidden: 64}, 2, rng)
	if err != nil {
		log.Fatal(err)
	}
	const T = 100
	x := nn.NewMatrix(500, 2) // x_0 = 0
	out := net.Forward(x, []float32{0.0 / T})
	u, v := out.Row(0)[:2], out.Row(0)[2:]
	fmt.Println(out.Rows, out.Cols, u, v) // zero last layer: Brownian motion at first

	two := nn.NewMatrix(1000, 2) // rows 0..499 at step 10, 500..999 at step 11
	out = net.Forward(two, []float32{10.0 / T, 11.0 / T})
	net.Backward(nn.NewMatrix(out.Rows, out.Cols)) // dL/d(out) = 0: gradients stay 0
	fmt.Println(out.Rows, len(net.Params()))
	// Output:
	// 500 4 [0 0] [0 0]
	// 1000 13
}

// A sampler records its T steps, one Forward each, and trains on them:
// EndRecord's output is that of one Forward over every step, and Backward
// applies to all of them, without a second forward pass.
func ExampleRecorder() {
	rng := rand.New(rand.NewPCG(1, 1))
	net, err := timenet.New(timenet.Config{Arch: timenet.PIS, Hidden: 64}, 2, rng)
	if err != nil {
		log.Fatal(err)
	}
	const T, n, d = 100, 300, 2
	states := make([]float32, (T+1)*n*d) // step-major: step i is rows i·n…(i+1)·n−1
	r := net.(timenet.Recorder)
	r.Record(T * n)
	x := nn.Matrix{Rows: n, Cols: d}
	for i := range T {
		x.Data = states[i*n*d : (i+1)*n*d]
		out := r.Forward(&x, []float32{float32(i) / T})
		_ = out // draw step i+1's states from the drift and variance in out
	}
	out := r.EndRecord()         // T·n rows: every step's outputs
	dy := nn.NewMatrix(T*n, 2*d) // the loss's gradient with respect to out
	net.Backward(dy)
	fmt.Println(out.Rows, out.Cols)
	// Output:
	// 30000 4
}
