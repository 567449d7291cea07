package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/seqtrain"
	"github.com/gfngo/gfn/timenet"
)

// byRun indexes states by their label.
func byRun(rs []RunState) map[string]RunState {
	m := make(map[string]RunState, len(rs))
	for _, r := range rs {
		m[r.Run] = r
	}
	return m
}

// TestDiffusionStatus reads a table directory with a finished run, a real
// checkpoint without a summary, an unreadable checkpoint and unstarted
// runs.
func TestDiffusionStatus(t *testing.T) {
	tb, _ := DiffusionTableByName("main")
	o := DiffusionOptions{Out: t.TempDir(), Quick: true, Seeds: 1, Tasks: []string{"25gmm"}, Methods: []string{"tb"}}
	dir := func(method string, seed int) string {
		return filepath.Join(o.Dir(tb), "25gmm-"+method+"-seed"+strconv.Itoa(seed))
	}
	os.MkdirAll(dir("tb", 0), 0o755)
	os.WriteFile(filepath.Join(dir("tb", 0), "summary.json"), []byte(`{"wall_seconds": 61.5}`), 0o644)
	// A short real run whose summary is gone: its checkpoint says how far it got.
	c, err := diffusion.Preset("reference", "25gmm")
	if err != nil {
		t.Fatal(err)
	}
	c.Net = timenet.Config{Hidden: 4, Harmonics: 2}
	c.Steps, c.Batch, c.Iterations, c.BufferCap, c.Milestones = 3, 4, 6, 16, []int{-2}
	ro := diffusion.RunOptions{Options: run.Options{OutDir: dir("teacher", 0), EvalEvery: 3, CheckpointEvery: 3, NoFigures: true},
		Task: "25gmm", EvalSamples: 8, FinalSamples: 8}
	if _, err := diffusion.Run(context.Background(), energy.GMM25{}, c, ro); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir("teacher", 0), "summary.json"))
	// A seed beyond --seeds with a (corrupt) checkpoint is listed; its
	// unstarted neighbours are not.
	os.MkdirAll(dir("per", 3), 0o755)
	os.WriteFile(filepath.Join(dir("per", 3), run.CheckpointFile), []byte("not a checkpoint"), 0o644)

	rs, err := TableStatus(DiffusionRun{T: tb, O: o})
	if err != nil {
		t.Fatal(err)
	}
	m := byRun(rs)
	if r := m["25gmm tb seed 0"]; r.Status != RunDone || r.WallSeconds != 61.5 || r.Updated.IsZero() {
		t.Errorf("finished run: %+v", r)
	}
	if r := m["25gmm teacher seed 0"]; r.Status != RunResume || r.Done != 6 || r.Total != 6 || r.Unit != "iteration" {
		t.Errorf("checkpointed run: %+v", r)
	}
	if r := m["25gmm per seed 3"]; r.Status != RunResume || r.Done != -1 {
		t.Errorf("corrupt checkpoint: %+v", r)
	}
	if r, ok := m["25gmm eps seed 0"]; !ok || r.Status != RunFresh {
		t.Errorf("another method of the table: %+v, listed %v", r, ok)
	}
	if _, ok := m["25gmm eps seed 1"]; ok {
		t.Error("an unstarted run beyond --seeds 1 is listed")
	}
	for _, r := range rs {
		if strings.HasPrefix(r.Run, "manywell") && r.Seed == 0 && r.Status != RunFresh {
			t.Errorf("manywell run %+v", r)
		}
	}

	var out bytes.Buffer
	if err := WriteStatus(&out, "bench diffusion main", rs, time.Now()); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	head := "bench diffusion main: " + strconv.Itoa(len(rs)) + " runs, 1 finished (1m01s of wall time), 2 with a checkpoint (interrupted or running), " + strconv.Itoa(len(rs)-3) + " not started\n"
	if !strings.HasPrefix(text, head) {
		t.Errorf("first line of\n%s\nwant %q", text, head)
	}
	for _, want := range []string{"in 1m01s", "iteration 6 of 6 (100%)", "checkpoint unreadable", "not started", "s ago"} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}
	// Left: a fresh tb run needs what the finished one took; no teacher
	// run has finished to tell.
	if l, ok := Left(m["25gmm eps seed 0"], rs); ok || l != 0 {
		t.Errorf("left of a kind none finished: %v, %v", l, ok)
	}
	o2 := o
	o2.Seeds = 2
	rs2, _ := TableStatus(DiffusionRun{T: tb, O: o2})
	if l, ok := Left(byRun(rs2)["25gmm tb seed 1"], rs2); !ok || l != 61.5 {
		t.Errorf("left of an unstarted tb run: %v, %v, want 61.5 s", l, ok)
	}
	if !strings.Contains(text, "left: about 0.0s of one lane's wall time by the finished runs of the same kind, and "+strconv.Itoa(len(rs)-1)+" runs of kinds none has finished") {
		t.Errorf("status lacks the estimate line:\n%s", text)
	}
	if n := strings.Count(text, "\n"); n != len(rs)+3 {
		t.Errorf("%d lines for %d runs:\n%s", n, len(rs), text)
	}
}

// TestBiochemAndGridStatus reads a real sequence checkpoint and a grid
// table with finished and unstarted runs.
func TestBiochemAndGridStatus(t *testing.T) {
	o := BiochemOptions{Out: t.TempDir(), Quick: true, Seeds: 1, Tasks: []string{"tfbind8"}, Methods: []string{"tb"}}
	task, err := biochem.Named("tfbind8")
	if err != nil {
		t.Fatal(err)
	}
	c := seqtrain.DefaultConfig()
	c.Rounds, c.OnlineBatch, c.OfflineBatch, c.Buffer = 4, 4, 4, 8
	c.Policy = seqtrain.Policy{Kind: "ssr", Hidden: 4, Embed: 3}
	d := filepath.Join(o.Dir(), "tfbind8-teacher-per-seed0")
	so := seqtrain.RunOptions{Options: run.Options{OutDir: d, EvalEvery: 2, CheckpointEvery: 2, NoFigures: true}, Task: "tfbind8", EvalSamples: 8}
	if _, err := seqtrain.Run(context.Background(), task, c, so); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(d, "summary.json"))
	rs, err := TableStatus(BiochemRun{O: o})
	if err != nil {
		t.Fatal(err)
	}
	m := byRun(rs)
	if r := m["tfbind8 teacher-per seed 0"]; r.Status != RunResume || r.Done != 4 || r.Total != 4 || r.Unit != "round" {
		t.Errorf("checkpointed sequence run: %+v", r)
	}
	if r, ok := m["sehstr per seed 0"]; !ok || r.Status != RunFresh || len(rs) != len(BiochemTasks)*len(BiochemMethods) {
		t.Errorf("%d runs (want every task and method, seed 0); sehstr per: %+v", len(rs), r)
	}

	tb, _ := TableByName("multi")
	g := GridOptions{Out: t.TempDir(), Seeds: 1, Methods: []string{"teacher"}, Grids: []Grid{{2, 8}}}
	jobs := tb.Jobs(g)
	os.MkdirAll(jobs[0].Dir, 0o755)
	os.WriteFile(filepath.Join(jobs[0].Dir, "summary.json"), []byte(`{"wall_seconds": 2}`), 0o644)
	grs, err := TableStatus(GridRun{tb, g})
	if err != nil {
		t.Fatal(err)
	}
	// The table's grids and methods, and the asked d2 H8.
	if want := (len(tb.Grids) + 1) * len(tb.Methods); len(grs) != want || grs[len(grs)-len(tb.Methods)].Status != RunDone {
		t.Errorf("%d grid runs, want %d, the d2 H8 teacher run finished: %+v", len(grs), want, grs)
	}
}
