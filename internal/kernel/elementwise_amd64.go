//go:build !purego

package kernel

//go:noescape
func addTo8(dst, src *float32, n int)

//go:noescape
func gatherSum8(dst, table *float32, off *int, k, n int)

//go:noescape
func scale8(x *float32, n int, c float32)

//go:noescape
func addRows8(dst, src *float32, n, rows, ld int)

//go:noescape
func biasLeaky8(y, b *float32, n int, slope float32)

//go:noescape
func leakyGrad8(d, y *float32, n int, slope float32)

const simdElementwise = true

//go:noescape
func transpose8(dst *float32, dstStride int, src *float32, srcStride int, blocks int)

//go:noescape
func adam8(w, grad, m, v *float32, n int, b1, ob1, b2, ob2, step, sqrtBC2, eps float32)

//go:noescape
func dot8(x, y *float32, n int) float32

//go:noescape
func biasGELU8(y, z, b *float32, n int)

//go:noescape
func geluGrad8(d, z *float32, n int)

//go:noescape
func sumSq16(x *float32, n int, lanes *[16]float64)
