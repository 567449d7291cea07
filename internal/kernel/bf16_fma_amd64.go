//go:build !purego

package kernel

//go:noescape
func roundBF16s8(dst, src *float32, n int)
