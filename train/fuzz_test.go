package train_test

import (
	"context"
	"testing"

	"github.com/gfngo/gfn/internal/fuzzckpt"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/task"
	"github.com/gfngo/gfn/train"
)

// fuzzCheckpoints writes the seed checkpoints of the fuzz targets, from
// short runs on a 2×4 grid with tiny networks: Teacher with a PER buffer
// (modes, buffer entries), TB with detailed balance and a transition
// buffer, and TB alone. It returns each checkpoint file's bytes (5 to 8
// kB).
func fuzzCheckpoints(f testing.TB) [][]byte {
	f.Helper()
	spec := task.Spec{Task: "hypergrid", Dim: 2, Side: 4, Reward: "deceptive"}
	env, err := task.Build(spec)
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for i, edit := range []func(*train.Config){
		func(c *train.Config) { c.Buffer.Priority = replay.Teacher; c.Buffer.Cap = 8 },
		func(c *train.Config) {
			c.Method, c.Objective, c.Buffer.Priority, c.Buffer.Cap = train.MethodTB, train.ObjectiveDB, replay.Reward, 8
		},
		func(c *train.Config) { c.Method = train.MethodTB },
	} {
		cfg := train.DefaultConfig()
		cfg.Hidden, cfg.Batch, cfg.RewardCalls, cfg.Seed = []int{3}, 2, 12, uint64(i)
		edit(&cfg)
		dir := f.TempDir()
		opt := train.RunOptions{EnvSpec: spec}
		opt.OutDir, opt.CheckpointEvery = dir, 2
		if _, err := train.Run(context.Background(), env, cfg, opt); err != nil {
			f.Fatal(err)
		}
		if _, err := train.Load(dir, env); err != nil {
			f.Fatal(err)
		}
		out = append(out, fuzzckpt.File(f, dir, train.CheckpointFile))
	}
	return out
}

// loadFuzzed writes b as the checkpoint of a fresh directory and reads it
// with ReadCheckpoint and Load (the environment from task.BuildJSON, as
// gfn does). Errors are expected; a panic is a failure, and so is a
// checkpoint Load accepts but the header describes differently. (Saving
// what was loaded would fsync twice per input, a hundred times the cost
// of Load.)
func loadFuzzed(t *testing.T, b []byte) {
	dir := fuzzckpt.Dir(t, train.CheckpointFile, b)
	st, err := train.ReadCheckpoint(dir)
	if err != nil {
		return
	}
	env, err := task.BuildJSON(st.Env)
	if err != nil {
		return
	}
	tr, lerr := train.Load(dir, env)
	ck, err := run.Open(dir)
	if !fuzzckpt.Loaded(t, "run.Open", err, lerr) {
		return
	}
	if tr.Step != ck.Header.Done {
		t.Fatalf("Load's step %d differs from the header's %d", tr.Step, ck.Header.Done)
	}
}

// FuzzLoad feeds mutated checkpoint files to ReadCheckpoint and Load.
func FuzzLoad(f *testing.F) {
	fuzzckpt.FuzzFile(f, fuzzCheckpoints(f), loadFuzzed)
}

// FuzzLoadState keeps a seed checkpoint's tensors and replaces its header
// (the "gfn" metadata: settings, environment spec, counters, random
// streams, list lengths, checksums) with fuzzed JSON under a matching
// header checksum, which reaches the settings' validation and the
// builders that bytes-level mutation of the whole file rarely gets past
// the checksums.
func FuzzLoadState(f *testing.F) {
	// A width beyond what the file holds made New allocate it before
	// loading found the mismatch (found by review): 10^14 makes make()
	// panic at once rather than exhaust the memory if that returns.
	extra := []fuzzckpt.Replacement{{Old: `"hidden":[3]`, New: `"hidden":[3,100000000000000]`}}
	fuzzckpt.FuzzState(f, fuzzCheckpoints(f), "gfn", extra, loadFuzzed)

}
