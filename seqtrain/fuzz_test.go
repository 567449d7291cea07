package seqtrain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/safetensors"
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
		o := seqtrain.RunOptions{OutDir: dir, Task: "tfbind8", EvalEvery: 2, EvalSamples: 8, CheckpointEvery: 2, NoFigures: true}
		if _, err := seqtrain.Run(context.Background(), task, c, nil, o); err != nil {
			tb.Fatal(err)
		}
		if _, err := seqtrain.Load(dir, task, nil); err != nil {
			tb.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, seqtrain.CheckpointFile))
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// loadFuzzed writes b as the checkpoint of a fresh directory and reads it
// with ReadState and Load (on TFbind8, networks from the stored policy).
// Errors are expected; a panic is a failure, and so is a checkpoint Load
// accepts but ReadState describes differently.
func loadFuzzed(t *testing.T, b []byte) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, seqtrain.CheckpointFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	task, err := biochem.Named("tfbind8")
	if err != nil {
		t.Fatal(err)
	}
	_, cfg, round, err := seqtrain.ReadState(dir)
	tr, lerr := seqtrain.Load(dir, task, nil)
	if lerr != nil {
		return
	}
	if err != nil {
		t.Fatalf("Load succeeded where ReadState failed: %v", err)
	}
	if tr.Round != round || tr.Cfg.Method != cfg.Method {
		t.Fatalf("Load's round %d and method %s differ from ReadState's %d and %s", tr.Round, tr.Cfg.Method, round, cfg.Method)
	}
}

// FuzzLoad feeds mutated checkpoint files to ReadState and Load.
func FuzzLoad(f *testing.F) {
	for _, b := range fuzzCheckpoints(f) {
		f.Add(b)
	}
	f.Fuzz(loadFuzzed)
}

// FuzzLoadState keeps a seed checkpoint's tensors and replaces its run
// state (the "gfn_seq_state" metadata: the configuration, counters,
// random streams, curve) with fuzzed JSON, which reaches the
// configuration's validation and the trainer's construction.
func FuzzLoadState(f *testing.F) {
	seeds := fuzzCheckpoints(f)
	tensors := make([][]safetensors.Tensor, len(seeds))
	for i, b := range seeds {
		ts, meta, err := safetensors.Read(bytes.NewReader(b))
		if err != nil {
			f.Fatal(err)
		}
		tensors[i] = ts
		f.Add(uint8(i), meta["gfn_seq_state"])
	}
	// Load built the networks by the stored widths before loading found a
	// mismatch: 10^14 made make() panic (10^8 and 10^9 exhausted the
	// memory). Found by review.
	_, meta, _ := safetensors.Read(bytes.NewReader(seeds[0]))
	for _, r := range [][2]string{{`"hidden":4`, `"hidden":100000000000000`}, {`"embed":3`, `"embed":100000000000000`}} {
		s := meta["gfn_seq_state"]
		if !strings.Contains(s, r[0]) {
			f.Fatalf("no %s in %s", r[0], s)
		}
		f.Add(uint8(0), strings.Replace(s, r[0], r[1], 1))
	}
	f.Fuzz(func(t *testing.T, which uint8, state string) {
		if !json.Valid([]byte(state)) {
			return // the file-level target covers malformed JSON
		}
		var buf bytes.Buffer
		ts := tensors[int(which)%len(tensors)]
		if err := safetensors.Write(&buf, ts, map[string]string{"format": "pt", "gfn_seq_state": state}); err != nil {
			return // invalid UTF-8
		}
		loadFuzzed(t, buf.Bytes())
	})
}
