package ot

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkW2 times W2 between two sample sets of the evaluation's sizes:
// 25GMM and Manywell-shaped data (x and y drawn independently from the
// same law), and 25GMM with x from 20 modes only, the hard case of a
// sampler that misses modes.
func BenchmarkW2(b *testing.B) {
	for _, bc := range []struct {
		name string
		d    int
		gen  func(rng *rand.Rand, n int) (x, y []float32)
	}{
		{"gmm25", 2, func(rng *rand.Rand, n int) ([]float32, []float32) {
			return gmm25(rng, n, nil), gmm25(rng, n, nil)
		}},
		{"gmm25-missing5", 2, func(rng *rand.Rand, n int) ([]float32, []float32) {
			return gmm25(rng, n, first20), gmm25(rng, n, nil)
		}},
		{"manywell", 32, func(rng *rand.Rand, n int) ([]float32, []float32) {
			return manywell(rng, n), manywell(rng, n)
		}},
	} {
		for _, n := range []int{2000, 10000} {
			b.Run(fmt.Sprintf("%s-n%d", bc.name, n), func(b *testing.B) {
				x, y := bc.gen(rand.New(rand.NewPCG(1, 2)), n)
				var w float64
				for b.Loop() {
					var err error
					if w, err = W2(x, y, bc.d); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(w, "W2")
			})
		}
	}
}
