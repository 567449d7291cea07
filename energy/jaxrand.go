package energy

import (
	"math"
	"math/bits"
)

// This file reproduces, bit for bit, the one random draw that fixes the
// component locations of Blessing et al.'s GMM40 and Student-t mixture:
// jax.random.uniform(jax.random.PRNGKey(0), shape, float32, minval, maxval)
// under JAX 0.4.28 (the version their requirements pin), whose default PRNG
// is Threefry-2x32 with 20 rounds (Salmon et al. 2011, "Parallel random
// numbers: as easy as 1, 2, 3") and whose jax_threefry_partitionable flag
// was still off. The construction, written from that specification:
//
//   - PRNGKey(0) is the key pair (0, 0) (the seed's high and low words);
//   - the N = prod(shape) random words are Threefry-2x32 of the counters
//     0..N−1: padded with one zero if N is odd, split into halves
//     (c_i, c_{h+i}), h = ⌈N/2⌉, each pair hashed into (y_i, y_{h+i});
//   - a word u becomes the float32 f = bits(u>>9 | 0x3F800000) − 1 in
//     [0, 1), then max(minval, f·(maxval − minval) + minval), rounding in
//     float32 after the product and after the sum.
//
// The tests check Random123's known answers for Threefry-2x32-20 and JAX's
// documented uniform(PRNGKey(0)) = 0.41845703.

// threefry2x32 is the Threefry-2x32 block function with 20 rounds: it
// encrypts the counter pair (x0, x1) under the key (k0, k1).
func threefry2x32(k0, k1, x0, x1 uint32) (uint32, uint32) {
	rot := [2][4]int{{13, 15, 26, 6}, {17, 29, 16, 24}}
	ks := [3]uint32{k0, k1, k0 ^ k1 ^ 0x1BD11BDA}
	x0 += ks[0]
	x1 += ks[1]
	for i := range 5 {
		for _, r := range rot[i%2] {
			x0 += x1
			x1 = bits.RotateLeft32(x1, r)
			x1 ^= x0
		}
		// Key injection after every four rounds.
		x0 += ks[(i+1)%3]
		x1 += ks[(i+2)%3] + uint32(i+1)
	}
	return x0, x1
}

// jaxUniformKey0 returns n values of JAX's uniform(PRNGKey(0), (n,),
// float32, lo, hi), in row-major order of the requested shape.
func jaxUniformKey0(n int, lo, hi float32) []float32 {
	h := (n + 1) / 2
	words := make([]uint32, 2*h)
	for i := range h {
		c1 := uint32(h + i)
		if h+i >= n { // the zero pad of an odd count
			c1 = 0
		}
		words[i], words[h+i] = threefry2x32(0, 0, uint32(i), c1)
	}
	out := make([]float32, n)
	span := hi - lo
	for i := range out {
		f := math.Float32frombits(words[i]>>9|0x3F800000) - 1
		// The explicit conversion rounds the product to float32 before the
		// sum, as XLA does (no fused multiply-add).
		out[i] = max(lo, float32(f*span)+lo)
	}
	return out
}
