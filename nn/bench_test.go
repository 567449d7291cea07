package nn_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/nn"
)

// BenchmarkMLPStep times one training step of the reference
// shape: a batch of 4096 dense 256-wide inputs through two hidden layers
// of 256 (LeakyReLU) to 3 outputs, backward, gradient clipping and Adam.
// GFLOP/s counts the multiply-adds of the forward and backward products.
func BenchmarkMLPStep(b *testing.B) { benchMLPStep(b, nn.FP32) }

// BenchmarkMLPStepBF16 is BenchmarkMLPStep with the hidden layers in BF16
// (the 256×256 layer: MLP.SetPrecision keeps the input and output layers
// in float32), for benchstat -col .name.
func BenchmarkMLPStepBF16(b *testing.B) { benchMLPStep(b, nn.BF16) }

func benchMLPStep(b *testing.B, prec nn.Precision) {
	const batch, in, h, out = 4096, 256, 256, 3
	rng := rand.New(rand.NewPCG(1, 2))
	m := nn.NewMLP("m", in, []int{h, h, out}, nn.LeakyReLU, rng)
	m.First.NoInputGrad = true
	if err := m.SetPrecision(prec); err != nil {
		b.Skip(err)
	}
	opt := nn.NewAdam(nn.Group{Params: m.Params(), LR: 1e-3})
	x := nn.NewMatrix(batch, in)
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	dy := nn.NewMatrix(batch, out)
	for b.Loop() {
		nn.ZeroGrad(m.Params())
		y := m.Forward(x)
		for i := range dy.Data {
			dy.Data[i] = y.Data[i] / batch
		}
		m.Backward(dy)
		nn.ClipGradNorm(m.Params(), 1)
		opt.Step()
	}
	macs := float64(batch) * (in*h + h*h + h*out)     // forward
	macs += float64(batch) * (in*h + 2*h*h + 2*h*out) // weight and input gradients
	b.ReportMetric(2*macs*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
