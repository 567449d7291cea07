//go:build !amd64 || purego

package kernel

const simdElementwise = false

func addTo8(dst, src *float32, n int)                    { panic("unreachable") }
func scale8(x *float32, n int, c float32)                { panic("unreachable") }
func gatherSum8(dst, table *float32, off *int, k, n int) { panic("unreachable") }
func addRows8(dst, src *float32, n, rows, ld int)        { panic("unreachable") }
func biasLeaky8(y, b *float32, n int, slope float32)     { panic("unreachable") }
func leakyGrad8(d, y *float32, n int, slope float32)     { panic("unreachable") }

func transpose8(dst *float32, dstStride int, src *float32, srcStride int, blocks int) {
	panic("unreachable")
}

func adam8(w, grad, m, v *float32, n int, b1, ob1, b2, ob2, step, sqrtBC2, eps float32) {
	panic("unreachable")
}

func dot8(x, y *float32, n int) float32 { panic("unreachable") }

func biasGELU16(y, z, b *float32, rows, cols int) { panic("unreachable") }
func biasGELU8(y, z, b *float32, rows, cols int)  { panic("unreachable") }
func geluGrad16(d, z *float32, n int)             { panic("unreachable") }
func geluGrad8(d, z *float32, n int)              { panic("unreachable") }

func sumSq16(x *float32, n int, lanes *[16]float64) { panic("unreachable") }

func tanhExp4(th, ev *float64, x *float32, n int, a, b float64) {
	panic("unreachable")
}

func gaussStep4(xn, x, o *float32, z *float64, n int, c *[8]float64, lp float64) float64 {
	panic("unreachable")
}

func gaussScore4(xn, x, o *float32, n int, c *[8]float64, lp float64) float64 {
	panic("unreachable")
}

func gaussGrad4(dst, xn, x, o *float32, n int, c *[8]float64, w, ev float64) { panic("unreachable") }

func bridgeSq4(x, y *float32, n int, a, q float64) float64 { panic("unreachable") }

func dotQuads8(c *float64, ldc int, a *float64, lda, rows int, bp *float64, m int) {
	panic("unreachable")
}
