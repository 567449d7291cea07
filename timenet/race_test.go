//go:build race

package timenet

// The race detector makes sync.Pool (which package kernel draws scratch
// from) drop items at random, so allocation counts are meaningless under it.
const raceEnabled = true
