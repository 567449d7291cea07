//go:build !purego

package kernel

import "golang.org/x/sys/cpu"

//go:noescape
func kern4x16(k int, a *float32, rsA, psA int, b *float32, ldb int, c *float32, ldc int, acc int)

//go:noescape
func kern8x32(k int, a *float32, psA int, b *float32, ldb int, c *float32, ldc int, acc int)

// kern4x32, kern2x32 and kern1x32 are kern8x32 for fewer rows, with A
// read through a row stride and a p stride (in place or packed).
//
//go:noescape
func kern4x32(k int, a *float32, rsA, psA int, b *float32, ldb int, c *float32, ldc int, acc int)

//go:noescape
func kern2x32(k int, a *float32, rsA, psA int, b *float32, ldb int, c *float32, ldc int, acc int)

//go:noescape
func kern1x32(k int, a *float32, rsA, psA int, b *float32, ldb int, c *float32, ldc int, acc int)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		backend = backendAVX2
		hasSIMD = true
	}
	if cpu.X86.HasAVX512F && hasSIMD {
		backend = backendAVX512
		hasAVX512 = true
	}
}
