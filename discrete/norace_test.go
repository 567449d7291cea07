//go:build !race

package discrete_test

const raceEnabled = false
