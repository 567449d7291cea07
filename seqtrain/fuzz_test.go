package seqtrain_test

import (
	"context"
	"testing"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/internal/fuzzckpt"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/seqtrain"
)

// fuzzCheckpoints returns the bytes of the seed checkpoints of the fuzz
// targets, from 4-round TFbind8 runs with tiny networks and batches:
// Teacher + PER with the SSR policy, PRT with SSR, and TB with an MLP on
// the append-only MDP.
func fuzzCheckpoints(tb testing.TB) [][]byte {
	tb.Helper()
	task, err := biochem.Named("tfbind8")
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, edit := range []func(*seqtrain.Config){
		func(c *seqtrain.Config) {},
		func(c *seqtrain.Config) { c.Method = seqtrain.PRT },
		func(c *seqtrain.Config) {
			c.Method, c.MDP, c.Policy = seqtrain.TB, "append", seqtrain.Policy{Kind: "mlp", Hidden: 4, Layers: 1}
		},
	} {
		c := seqtrain.DefaultConfig()
		c.Rounds, c.OnlineBatch, c.OfflineBatch, c.Buffer = 4, 4, 4, 8
		c.Policy = seqtrain.Policy{Kind: "ssr", Hidden: 4, Embed: 3}
		edit(&c)
		dir := tb.TempDir()
		o := seqtrain.RunOptions{Options: run.Options{OutDir: dir, EvalEvery: 2, CheckpointEvery: 2, NoFigures: true}, Task: "tfbind8", EvalSamples: 8}
		if _, err := seqtrain.Run(context.Background(), task, c, o); err != nil {
			tb.Fatal(err)
		}
		if _, err := seqtrain.Load(dir, task); err != nil {
			tb.Fatal(err)
		}
		out = append(out, fuzzckpt.File(tb, dir, run.CheckpointFile))
	}
	return out
}

// loadFuzzed writes b as the checkpoint of a fresh directory and reads it
// with ReadCheckpoint and Load (on TFbind8, networks from the stored
// policy). Errors are expected; a panic is a failure, and so is a
// checkpoint Load accepts but ReadCheckpoint describes differently.
func loadFuzzed(t *testing.T, b []byte) {
	dir := fuzzckpt.Dir(t, run.CheckpointFile, b)
	task, err := biochem.Named("tfbind8")
	if err != nil {
		t.Fatal(err)
	}
	st, err := seqtrain.ReadCheckpoint(dir)
	tr, lerr := seqtrain.Load(dir, task)
	if !fuzzckpt.Loaded(t, "ReadCheckpoint", err, lerr) {
		return
	}
	if tr.Round != st.Done || (tr.Teacher != nil) != st.Config.Method.HasTeacher() {
		t.Fatalf("Load's round %d and Teacher %v differ from ReadCheckpoint's %d and %s", tr.Round, tr.Teacher != nil, st.Done, st.Config.Method)
	}
}

// FuzzLoad feeds mutated checkpoint files to ReadCheckpoint and Load.
func FuzzLoad(f *testing.F) {
	fuzzckpt.FuzzFile(f, fuzzCheckpoints(f), loadFuzzed)
}

// FuzzLoadState keeps a seed checkpoint's tensors and replaces its header
// (the "gfn" metadata: the configuration, counters, random streams,
// checksums) with fuzzed JSON, its checksum then made to match, which
// reaches the configuration's validation and the trainer's construction.
func FuzzLoadState(f *testing.F) {
	// Load built the networks by the stored widths before loading found a
	// mismatch: 10^14 made make() panic (10^8 and 10^9 exhausted the
	// memory). Found by review.
	extra := []fuzzckpt.Replacement{
		{Old: `"hidden":4`, New: `"hidden":100000000000000`},
		{Old: `"embed":3`, New: `"embed":100000000000000`},
	}
	fuzzckpt.FuzzState(f, fuzzCheckpoints(f), "gfn", extra, loadFuzzed)

}
