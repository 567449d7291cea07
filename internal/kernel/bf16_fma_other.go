//go:build !amd64 || purego

package kernel

func roundBF16s8(dst, src *float32, n int) {
	panic("unreachable")
}
