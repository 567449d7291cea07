package run

import "fmt"

// CheckpointFailed is err, the error that stopped a run, followed by the
// error of the checkpoint taken after it: "<err> (and the checkpoint
// failed: <cerr>)". It wraps err alone: errors.Is and errors.As find the
// cause of the stop, and cerr is only told.
func CheckpointFailed(err, cerr error) error {
	return fmt.Errorf("%w (and the checkpoint failed: %v)", err, cerr)
}

// SaveFailure keeps the state of a run that err stopped (a non-finite
// loss, a failing reward) for inspection or a resume: it calls
// checkpoint and returns err followed by where the state went,
// "<err> (checkpoint of <unit> <n> written to <dir>)", or
// CheckpointFailed(err, cerr) when the checkpoint failed too. unit and n
// name the state the checkpoint holds ("iteration", 120; "round", 7).
// The result wraps err.
func SaveFailure(err error, checkpoint func() error, unit string, n int, dir string) error {
	if cerr := checkpoint(); cerr != nil {
		return CheckpointFailed(err, cerr)
	}
	return fmt.Errorf("%w (checkpoint of %s %d written to %s)", err, unit, n, dir)
}
