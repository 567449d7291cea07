// Package target names what a training problem may know of its target
// distribution p(x) = R(x)/Z, as optional interfaces that every family
// (the grid and other DAG environments, diffusion samplers' energies,
// sequence tasks) asks for in the same words: the metrics that need the
// knowledge (log-Z gaps, mode counts) appear where a problem has it.
package target

// LogZer is a problem whose log-partition function log Z = log Σ_x R(x)
// (log ∫ R(x) dx over R^d) is known, so that ELBO and EUBO estimates read
// as gaps to it. A problem whose knowledge depends on its data returns
// NaN where it has none.
type LogZer interface {
	LogZ() float64
}

// Moder is a problem with a known set of modes: the trainers count the
// distinct modes their samples find. x is a terminal state (grid) or a
// sequence's tokens.
type Moder interface {
	IsMode(x []int32) bool
	NumModes() int
}
