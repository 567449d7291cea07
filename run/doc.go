// Package run is the driver of every training family (train: the grid and
// other DAG environments; diffusion: samplers of energies over R^d;
// seqtrain: sequences; or a user's own): the one training loop, its
// evaluation cadence, its curve, its checkpoints, resuming and extending
// a run, its timings and its progress bar. A family supplies only what is
// its own, as a Family: one unit of training (Step), the curve columns it
// computes (Point), the final evaluation (Finish), its agents, random
// streams and own state; the driver records and stops, as gonum/optimize
// separates a Problem and a Method from the loop that drives them.
//
// The loop is in driver.go: Drive runs a fresh run, Resume continues the
// run of a checkpoint (Open reads and verifies one), also a finished one
// whose family was given a larger budget (its curve continues).
//
//   - Curve points follow the family's Cadence; the driver fills the unit
//     label, the means of Step's values since the last point and the
//     wall-clock column, the family the rest (Layout.Columns).
//   - Checkpoints (format 2, checkpoint.go) are safetensors files: every
//     agent's parameters under its name (PyTorch's layout: Python loads
//     "student.*" by prefix) and Adam state under name + ".optim.", the
//     family's tensors, the curve and the units' durations, and a "gfn"
//     metadata header (JSON) with the random streams, the counters and
//     the family's state, and a CRC-32C of the header and of every
//     tensor's bytes: a corrupt byte anywhere is refused, naming the file
//     and the tensor.
//   - A run with an output directory checkpoints every CheckpointEvery
//     units, when its context is cancelled (then it returns *Interrupted,
//     which names the unit and the directory), when a recoverable error
//     stops it (Recoverer), and at the end.
//   - A failed evaluation restores every random stream and is taken again
//     first on resume; a run resumed from any of its checkpoints ends with
//     the bits of the run never interrupted, wall-clock times aside
//     (package runtest checks it for every family, a kill -9 included).
//
// Every file is written atomically (package safefile): a crash or a
// failed encoder leaves the previous file whole and no partial one. The
// package prints nothing but the progress bar, to the writer it is given.
package run
