package ot

import "math/rand/v2"

// gmm25 draws n points of the 25-component Gaussian mixture on
// {-10,-5,0,5,10}² with variance 0.3 per coordinate, choosing components
// uniformly from modes (all 25 if nil), as float32 rows of length 2.
func gmm25(rng *rand.Rand, n int, modes []int) []float32 {
	if modes == nil {
		modes = make([]int, 25)
		for k := range modes {
			modes[k] = k
		}
	}
	const std = 0.5477225575051661 // √0.3
	p := make([]float32, 2*n)
	for i := range n {
		m := modes[rng.IntN(len(modes))]
		p[2*i] = float32(-10 + 5*float64(m%5) + std*rng.NormFloat64())
		p[2*i+1] = float32(-10 + 5*float64(m/5) + std*rng.NormFloat64())
	}
	return p
}

// first20 are the modes a sampler that misses 5 of the 25 would cover.
var first20 = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}

// manywell draws n points shaped like the 32-dimensional Manywell target:
// 16 independent pairs of a bimodal coordinate (±1.7, std 0.5, weights
// 0.2/0.8) and a standard normal one.
func manywell(rng *rand.Rand, n int) []float32 {
	const d = 32
	p := make([]float32, d*n)
	for i := range n {
		for k := 0; k < d; k += 2 {
			c := 1.7
			if rng.Float64() < 0.2 {
				c = -1.7
			}
			p[i*d+k] = float32(c + 0.5*rng.NormFloat64())
			p[i*d+k+1] = float32(rng.NormFloat64())
		}
	}
	return p
}

// uniform draws n·d coordinates uniform on [0, 1).
func uniform(rng *rand.Rand, n, d int) []float32 {
	p := make([]float32, n*d)
	for k := range p {
		p[k] = rng.Float32()
	}
	return p
}

// lattice draws n·d coordinates from {0, 1, 2}: many repeated points and
// many tied pairings.
func lattice(rng *rand.Rand, n, d int) []float32 {
	p := make([]float32, n*d)
	for k := range p {
		p[k] = float32(rng.IntN(3))
	}
	return p
}

// costMatrix is the dense n×n matrix of squared distances.
func costMatrix(x, y []float32, d int) []float64 {
	n := len(x) / d
	c := make([]float64, n*n)
	for i := range n {
		for j := range n {
			var s float64
			for k := range d {
				t := float64(x[i*d+k]) - float64(y[j*d+k])
				s += t * t
			}
			c[i*n+j] = s
		}
	}
	return c
}
