//go:build !amd64 || purego

package kernel

func bfkern12x32(kp int, a *uint32, rsA, psA int, b *uint32, ldb int, c *float32, ldc int, acc int) {
	panic("unreachable")
}

func bfPairRows(dst *uint32, dstStride, chunkStride int, src *float32, srcStride int, rows2, n int) {
	panic("unreachable")
}

func bfPairCols(dst *uint32, dstStride int, src *float32, srcStride int, rows, np int) {
	panic("unreachable")
}
