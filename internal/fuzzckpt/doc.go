// Package fuzzckpt holds what the checkpoint-loading fuzz tests of the
// training packages (train, diffusion, seqtrain) share. Each package writes
// seed checkpoints from short runs (File reads one back), and has a
// function that writes a fuzzed file in a fresh directory (Dir), reads it
// with the package's state reader and Load, and compares what both say
// once Load accepts it (Loaded fails the test if the reader did not).
// FuzzFile fuzzes whole checkpoint files with that function; FuzzState
// keeps a seed checkpoint's tensors and replaces its run state, one
// safetensors metadata entry of JSON, with fuzzed JSON, which reaches the
// settings' validation and the construction of what they describe that
// bytes-level mutation of the whole file rarely gets past the header to.
//
// The package is for tests only: its functions take a testing.TB or
// testing.F.
package fuzzckpt
