package langevin

import (
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/energy"
)

// BenchmarkCollect is one local search with the reference's settings: 500
// chains, 200 steps.
func BenchmarkCollect(b *testing.B) {
	for _, e := range []interface {
		energy.Gradient
		energy.Sampler
		String() string
	}{energy.GMM25{}, energy.Manywell{}} {
		b.Run(e.String(), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			x0 := make([]float32, 500*e.Dim())
			e.Sample(x0, rng)
			x := make([]float32, len(x0))
			c, err := New(Options{})
			if err != nil {
				b.Fatal(err)
			}
			var xs []float32
			var logR []float64
			for b.Loop() {
				copy(x, x0)
				xs, logR, _, err = c.Collect(e, x, rng, xs[:0], logR[:0])
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
