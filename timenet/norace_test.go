//go:build !race

package timenet

const raceEnabled = false
