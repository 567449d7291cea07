package train_test

import (
	"context"
	"testing"

	"github.com/gfngo/gfn/internal/fuzzckpt"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/task"
	"github.com/gfngo/gfn/train"
)

// fuzzCheckpoints writes the seed checkpoints of the fuzz targets, from
// short runs on a 2×4 grid with tiny networks: Teacher with a PER buffer
// (a run record, modes, buffer entries), TB with detailed balance and a
// transition buffer, and TB saved by Trainer.Save (no run record). It
// returns each checkpoint file's bytes (5 to 8 kB).
func fuzzCheckpoints(f testing.TB) [][]byte {
	f.Helper()
	spec := task.Spec{Task: "hypergrid", Dim: 2, Side: 4, Reward: "deceptive"}
	env, err := task.Build(spec)
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for i, edit := range []func(*train.Config){
		func(c *train.Config) { c.Buffer = replay.Teacher; c.BufferCap = 8 },
		func(c *train.Config) {
			c.Method, c.Objective, c.Buffer, c.BufferCap = train.MethodTB, train.ObjectiveDB, replay.Reward, 8
		},
		func(c *train.Config) { c.Method = train.MethodTB },
	} {
		cfg := train.DefaultConfig()
		cfg.Hidden, cfg.Batch, cfg.RewardCalls, cfg.Seed = []int{3}, 2, 12, uint64(i)
		edit(&cfg)
		dir := f.TempDir()
		if cfg.Method == train.MethodTB && cfg.Buffer == "" {
			tr, err := train.New(env, cfg)
			if err != nil {
				f.Fatal(err)
			}
			for range 3 {
				if _, err := tr.Iterate(); err != nil {
					f.Fatal(err)
				}
			}
			if err := tr.Save(dir, spec); err != nil {
				f.Fatal(err)
			}
		} else if _, err := train.Run(context.Background(), env, cfg, train.RunOptions{OutDir: dir, EnvSpec: spec, CheckpointEvery: 2}); err != nil {
			f.Fatal(err)
		}
		if _, _, err := train.Load(dir, task.BuildJSON); err != nil {
			f.Fatal(err)
		}
		out = append(out, fuzzckpt.File(f, dir, train.CheckpointFile))
	}
	return out
}

// loadFuzzed writes b as the checkpoint of a fresh directory and reads it
// with ReadCheckpoint and Load (environments from task.BuildJSON, as gfn
// does). Errors are expected; a panic is a failure, and so is a checkpoint
// Load accepts but ReadCheckpoint describes differently. (Saving what was
// loaded would fsync twice per input, a hundred times the cost of Load.)
func loadFuzzed(t *testing.T, b []byte) {
	dir := fuzzckpt.Dir(t, train.CheckpointFile, b)
	cc, err := train.ReadCheckpoint(dir)
	tr, _, lerr := train.Load(dir, task.BuildJSON)
	if !fuzzckpt.Loaded(t, "ReadCheckpoint", err, lerr) {
		return
	}
	if tr.Step != cc.Step || tr.RewardCalls != cc.RewardCalls {
		t.Fatalf("Load's counters %d, %d differ from ReadCheckpoint's %d, %d", tr.Step, tr.RewardCalls, cc.Step, cc.RewardCalls)
	}
}

// FuzzLoad feeds mutated checkpoint files to ReadCheckpoint and Load.
func FuzzLoad(f *testing.F) {
	fuzzckpt.FuzzFile(f, fuzzCheckpoints(f), loadFuzzed)
}

// FuzzLoadState keeps a seed checkpoint's tensors and replaces its run
// state (the "gfn_train_state" metadata: settings, environment spec,
// counters, random stream, list lengths) with fuzzed JSON, which reaches
// the settings' validation and the builders that bytes-level mutation of
// the whole file rarely gets past the header.
func FuzzLoadState(f *testing.F) {
	// A width beyond what the file holds made New allocate it before
	// loading found the mismatch (found by review): 10^14 makes make()
	// panic at once rather than exhaust the memory if that returns.
	extra := []fuzzckpt.Replacement{{Old: `"hidden":[3]`, New: `"hidden":[3,100000000000000]`}}
	fuzzckpt.FuzzState(f, fuzzCheckpoints(f), "gfn_train_state", extra, loadFuzzed)
}
