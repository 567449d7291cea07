package diffusion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/safetensors"
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
		o := diffusion.RunOptions{OutDir: dir, Task: "25gmm", EvalEvery: 2, EvalSamples: 8, FinalSamples: 8, CheckpointEvery: 2, NoFigures: true}
		if _, err := diffusion.Run(context.Background(), energy.GMM25{}, c, o); err != nil {
			tb.Fatal(err)
		}
		if _, err := diffusion.Load(dir, energy.GMM25{}); err != nil {
			tb.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, diffusion.CheckpointFile))
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// loadFuzzed writes b as the checkpoint of a fresh directory and reads it
// with ReadState and Load (on 25GMM). Errors are expected; a panic is a
// failure, and so is a checkpoint Load accepts but ReadState describes
// differently.
func loadFuzzed(t *testing.T, b []byte) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, diffusion.CheckpointFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, cfg, step, err := diffusion.ReadState(dir)
	tr, lerr := diffusion.Load(dir, energy.GMM25{})
	if lerr != nil {
		return
	}
	if err != nil {
		t.Fatalf("Load succeeded where ReadState failed: %v", err)
	}
	if tr.Step != step || tr.Cfg.Method != cfg.Method {
		t.Fatalf("Load's step %d and method %s differ from ReadState's %d and %s", tr.Step, tr.Cfg.Method, step, cfg.Method)
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
// state (the "gfn_state" metadata: the configuration, dimension, counters,
// random streams) with fuzzed JSON, which reaches the configuration's
// validation and the trainer's construction.
func FuzzLoadState(f *testing.F) {
	seeds := fuzzCheckpoints(f)
	tensors := make([][]safetensors.Tensor, len(seeds))
	for i, b := range seeds {
		ts, meta, err := safetensors.Read(bytes.NewReader(b))
		if err != nil {
			f.Fatal(err)
		}
		tensors[i] = ts
		f.Add(uint8(i), meta["gfn_state"])
	}
	// Load built the trainer with New, which sized the network by the
	// stored widths and drew a batch of the stored size before loading
	// found a mismatch: 10^14 wide or 10^15 samples made make() panic (10^5
	// and 10^8 exhausted the memory). Found by review.
	_, meta, _ := safetensors.Read(bytes.NewReader(seeds[0]))
	for _, r := range [][2]string{{`"Hidden":4`, `"Hidden":100000000000000`}, {`"batch":4`, `"batch":1000000000000000`}} {
		s := meta["gfn_state"]
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
		if err := safetensors.Write(&buf, ts, map[string]string{"format": "pt", "gfn_state": state}); err != nil {
			return // invalid UTF-8
		}
		loadFuzzed(t, buf.Bytes())
	})
}
