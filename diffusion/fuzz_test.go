package diffusion_test

import (
	"context"
	"testing"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/internal/fuzzckpt"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/timenet"
)

// fuzzCheckpoints returns the bytes of the seed checkpoints of the fuzz
// targets, from 4-iteration 25GMM runs with tiny networks and batches:
// Teacher (Student, Teacher, buffer), PER with the PIS network and local
// search, and PIS.
func fuzzCheckpoints(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, edit := range []func(*diffusion.Config){
		func(c *diffusion.Config) {},
		func(c *diffusion.Config) {
			c.Method, c.Net.Arch, c.LocalSearch, c.LSEvery = diffusion.MethodPER, timenet.PIS, true, 2
			c.LS.Steps, c.LS.BurnIn = 2, 1
		},
		func(c *diffusion.Config) { c.Method, c.Milestones = diffusion.MethodPIS, nil },
	} {
		c, err := diffusion.Preset("reference", "25gmm")
		if err != nil {
			tb.Fatal(err)
		}
		c.Net = timenet.Config{Hidden: 4, Harmonics: 2}
		c.Steps, c.Batch, c.Iterations, c.BufferCap, c.Milestones = 3, 4, 4, 16, []int{-2}
		edit(&c)
		dir := tb.TempDir()
		o := diffusion.RunOptions{Options: run.Options{OutDir: dir, EvalEvery: 2, CheckpointEvery: 2, NoFigures: true},
			Task: "25gmm", EvalSamples: 8, FinalSamples: 8}
		if _, err := diffusion.Run(context.Background(), energy.GMM25{}, c, o); err != nil {
			tb.Fatal(err)
		}
		if _, err := diffusion.Load(dir, energy.GMM25{}); err != nil {
			tb.Fatal(err)
		}
		out = append(out, fuzzckpt.File(tb, dir, run.CheckpointFile))
	}
	return out
}

// loadFuzzed writes b as the checkpoint of a fresh directory and reads it
// with ReadCheckpoint and Load (on 25GMM). Errors are expected; a panic is
// a failure, and so is a checkpoint Load accepts but ReadCheckpoint
// describes differently.
func loadFuzzed(t *testing.T, b []byte) {
	dir := fuzzckpt.Dir(t, run.CheckpointFile, b)
	st, err := diffusion.ReadCheckpoint(dir)
	tr, lerr := diffusion.Load(dir, energy.GMM25{})
	if !fuzzckpt.Loaded(t, "ReadCheckpoint", err, lerr) {
		return
	}
	if tr.Step != st.Done || (tr.Teacher != nil) != (st.Config.Method == diffusion.MethodTeacher) {
		t.Fatalf("Load's step %d and Teacher %v differ from ReadCheckpoint's %d and method %s", tr.Step, tr.Teacher != nil, st.Done, st.Config.Method)
	}
}

// FuzzLoad feeds mutated checkpoint files to ReadCheckpoint and Load.
func FuzzLoad(f *testing.F) {
	fuzzckpt.FuzzFile(f, fuzzCheckpoints(f), loadFuzzed)
}

// FuzzLoadState keeps a seed checkpoint's tensors and replaces its
// header (the "gfn" metadata: the configuration, dimension, counters,
// random streams, checksums) with fuzzed JSON, which reaches the configuration's
// validation and the trainer's construction.
func FuzzLoadState(f *testing.F) {
	// Load built the trainer with New, which sized the network by the
	// stored widths and drew a batch of the stored size before loading
	// found a mismatch: 10^14 wide or 10^15 samples made make() panic (10^5
	// and 10^8 exhausted the memory). Found by review.
	extra := []fuzzckpt.Replacement{
		{Old: `"Hidden":4`, New: `"Hidden":100000000000000`},
		{Old: `"batch":4`, New: `"batch":1000000000000000`},
	}
	fuzzckpt.FuzzState(f, fuzzCheckpoints(f), "gfn", extra, loadFuzzed)
}
