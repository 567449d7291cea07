package diffusion

import (
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/timenet"
)

// BenchmarkRowsHighDim times the per-coordinate loops of a training step
// at LGCP's d = 1,600 with a learned variance, where they (not the
// network's products) take most of an iteration: scoring the steps'
// log P_F (scoreRows) and their output gradients (gradRows), on 30 rows
// × 10 steps of random outputs. ns/op is one call of each.
func BenchmarkRowsHighDim(b *testing.B) {
	p := Process{Dim: 1600, Steps: 10, Sigma2: 1, LearnedVariance: true, VarianceRange: 4}
	n := 30
	rng := rand.New(rand.NewPCG(1, 2))
	var bt batch
	bt.Reset(p, n)
	for i := range bt.X {
		bt.X[i] = float32(rng.NormFloat64())
	}
	out := nn.NewMatrix(p.Steps*n, 2*p.Dim)
	for i := range out.Data {
		out.Data[i] = float32(rng.NormFloat64())
	}
	delta := make([]float64, n)
	for i := range delta {
		delta[i] = rng.NormFloat64()
	}
	var dy nn.Matrix
	b.Run("score", func(b *testing.B) {
		for range b.N {
			clear(bt.LogPF)
			scoreRows(p, out, &bt, 0, p.Steps, bt.LogPF, nil)
		}
	})
	b.Run("grad", func(b *testing.B) {
		for range b.N {
			gradRows(p, out, &bt, 0, p.Steps, delta, -1/float64(n), nil, true, &dy)
		}
	})
}

// BenchmarkSampleHighDim times sampling 300 trajectories of 10 steps at
// d = 1,600 (LGCP's size, the sendera preset's PIS network of width 64,
// a learned variance): the network passes, the serial noise draws and
// the parallel per-coordinate steps. ns/op is one Forward.
func BenchmarkSampleHighDim(b *testing.B) {
	p := Process{Dim: 1600, Steps: 10, Sigma2: 1, LearnedVariance: true, VarianceRange: 4}
	rng := rand.New(rand.NewPCG(1, 2))
	net, err := timenet.New(timenet.Config{Arch: timenet.PIS, Hidden: 64}, p.Dim, rng)
	if err != nil {
		b.Fatal(err)
	}
	var s sampler
	var bt batch
	s.Forward(p, net, 300, sampleOptions{}, rng, &bt)
	b.ResetTimer()
	for range b.N {
		s.Forward(p, net, 300, sampleOptions{}, rng, &bt)
	}
}

// BenchmarkTBStep times the Student's TB step on a sampled batch, Eval
// then Grad (the network's passes and the per-coordinate loops), at the
// suite's d = 50 (batch 300, T = 128, PIS width 64, learned variance):
// ns/op is one step.
func BenchmarkTBStep(b *testing.B) {
	p := Process{Dim: 50, Steps: 128, Sigma2: 5, LearnedVariance: true, VarianceRange: 4}
	rng := rand.New(rand.NewPCG(1, 2))
	net, err := timenet.New(timenet.Config{Arch: timenet.PIS, Hidden: 64}, p.Dim, rng)
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range net.Params() { // outputs that vary
		for i := range q.Value {
			if q.Value[i] == 0 {
				q.Value[i] = float32(0.01 * rng.NormFloat64())
			}
		}
	}
	var s sampler
	var bt batch
	s.Forward(p, net, 300, sampleOptions{}, rng, &bt)
	logR := make([]float64, bt.N)
	delta := make([]float64, bt.N)
	var tb balance
	b.ResetTimer()
	for range b.N {
		tb.Eval(p, net, 0, &bt, logR, delta)
		tb.Grad(p, net, nil, &bt, delta)
	}
}
