//go:build !linux || !amd64 || purego

package kernel

// requestAMX: GemmBF16 uses AMX only on Linux, where it knows how to ask
// for the tile state.
func requestAMX() bool { return false }
