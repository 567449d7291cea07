//go:build !amd64 || purego

package kernel

func amxTiles(cfg *byte, a *uint32, lda, aTile int, b *uint32, bPanel int, c *float32, ldc, cTile int, strips, panels, ksteps, acc int) {
	panic("unreachable")
}
