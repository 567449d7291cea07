package bench

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/seqtrain"
)

// gfnBuild is the gfn binary the end-to-end tests share: built once, in
// a directory TestMain removes.
var gfnBuild struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// gfnBinary builds gfn (once per test binary) and returns its path.
func gfnBinary(t *testing.T) string {
	t.Helper()
	gfnBuild.once.Do(func() {
		gfnBuild.dir, gfnBuild.err = os.MkdirTemp("", "gfn-bench-test")
		if gfnBuild.err != nil {
			return
		}
		gfnBuild.bin = filepath.Join(gfnBuild.dir, "gfn")
		build := exec.Command("go", "build", "-o", gfnBuild.bin, "../cmd/gfn")
		gfnBuild.out, gfnBuild.err = build.CombinedOutput()
	})
	if gfnBuild.err != nil {
		t.Fatalf("build: %v\n%s", gfnBuild.err, gfnBuild.out)
	}
	return gfnBuild.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if gfnBuild.dir != "" {
		os.RemoveAll(gfnBuild.dir)
	}
	os.Exit(code)
}

// interruptRun starts job j as gfn bench biochem would (its quick
// settings), with a checkpoint every tenth of its rounds, and stops it
// after the first checkpoint, as a bench killed mid-run would leave it.
func interruptRun(t *testing.T, j BiochemJob) {
	t.Helper()
	task, err := biochem.Named(j.Task)
	if err != nil {
		t.Fatal(err)
	}
	_, every, samples := biochemQuick(task.Settings())
	cfg := seqtrain.ForTask(task)
	cfg.Method, cfg.Seed, cfg.Rounds = seqtrain.Method(j.trainMethod()), uint64(j.Seed), j.Rounds
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The plain progress bar reports every tenth of the rounds, after
	// that round's checkpoint: cancelling there stops the run at it.
	tenth := j.Rounds / 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = seqtrain.Run(ctx, task, cfg, seqtrain.RunOptions{Options: run.Options{OutDir: j.Dir, EvalEvery: every,
		CheckpointEvery: tenth, Progress: cancelAt{tenth, cancel}}, Task: j.Task, EvalSamples: samples})
	if err == nil {
		t.Fatal("the run to interrupt finished")
	}
	if st, rerr := seqtrain.ReadCheckpoint(j.Dir); rerr != nil || st.Done != tenth {
		t.Fatalf("interrupted run (%v): checkpoint at round %d, %v; want %d", err, st.Done, rerr, tenth)
	}
}

// gfn bench biochem runs its jobs as gfn processes: this test runs a
// quick TFbind8 table of two methods and two seeds end to end, one of
// whose runs was interrupted after a checkpoint and must be resumed, then
// runs it again (nothing to do) and collects it.
func TestBenchBiochemQuickSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gfn and runs four small trainings")
	}
	bin := gfnBinary(t)
	out := t.TempDir()
	o := BiochemOptions{Out: out, Tasks: []string{"tfbind8"}, Methods: []string{"tb", "teacher-per"}, Seeds: 2, Quick: true}
	jobs, err := BiochemJobs(o)
	if err != nil || len(jobs) != 4 || jobs[3].Method != "teacher-per" || jobs[3].Seed != 1 {
		t.Fatalf("jobs %+v, %v", jobs, err)
	}
	interruptRun(t, jobs[3])

	args := []string{"bench", "biochem", "--task", "tfbind8", "--methods", "tb,teacher-per", "--seeds", "2", "--quick", "--out", out}
	cmd := exec.Command(bin, append(args, "--jobs", "2")...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench biochem: %v\n%s\n%s", err, stdout, stderr.String())
	}
	if !strings.Contains(stderr.String(), "4 runs, 0 already done, 1 to resume, 3 to start") ||
		!strings.Contains(stderr.String(), "tfbind8 teacher-per seed 1 (resumed) done") {
		t.Errorf("log:\n%s", stderr.String())
	}
	var sum seqtrain.Summary
	b, _ := os.ReadFile(filepath.Join(jobs[3].Dir, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil || sum.Resumed != 1 || sum.Steps != jobs[3].Rounds {
		t.Errorf("the interrupted run was not resumed: %+v, %v", sum, err)
	}
	dir := o.Dir()
	readCSV := func() []BiochemResult {
		t.Helper()
		f, err := os.Open(filepath.Join(dir, "results.csv"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rs, err := ReadBiochemCSV(f)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	rs := readCSV()
	if len(rs) != 4 {
		t.Fatalf("results.csv has %d rows, want 4", len(rs))
	}
	for i, r := range rs {
		if r.Task != "tfbind8" || r.Method != jobs[i].Method || r.Seed != jobs[i].Seed || r.Rounds != 100 || r.RewardCalls != 3200 ||
			r.NumModes != 328 || r.ModesSeen < 1 || !(r.ELBO < r.EUBO) || !(r.WallSeconds > 0) || !(r.MsPerRound > 0) {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## tfbind8 (length 8, 4 tokens, 328 modes, log Z = 8.3350, 100 rounds)", "| tb | 2 |",
		"| teacher-per | 2 |", "Smoke run", "Teacher + PER finds more modes than TB and ε-exploration on tfbind8: **not enough runs** (ε-exploration has 0; 2 needed)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("results.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"figure.png", "logs/tfbind8-teacher-per-seed1.log", "tfbind8-tb-seed0/curves.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}

	// Resumable: a second invocation trains nothing.
	again, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil || !strings.Contains(string(again), "4 runs, 4 already done, 0 to resume, 0 to start") {
		t.Errorf("second run: %v\n%s", err, again)
	}
	// Collect only, with a third seed that has not run: it stays unrun.
	coll := append(args[:len(args):len(args)], "--collect-only")
	coll[7] = "3" // --seeds
	got, err := exec.Command(bin, coll...).CombinedOutput()
	if err != nil || !strings.Contains(string(got), "4 of 6 runs finished; collecting them only") {
		t.Errorf("collect only: %v\n%s", err, got)
	}
	if len(readCSV()) != 4 || exists(filepath.Join(dir, "tfbind8-tb-seed2")) {
		t.Error("collect-only ran something or lost rows")
	}
}
