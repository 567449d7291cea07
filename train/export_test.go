package train

// SetAfterCheckpoint installs a hook that Run calls after each periodic
// checkpoint; an error stops the run there, as a kill would.
func SetAfterCheckpoint(o *RunOptions, f func(step int) error) { o.afterCheckpoint = f }
