package bench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gfngo/gfn/diffusion"
)

func TestDiffusionMarkdownGolden(t *testing.T) {
	f, err := os.Open("testdata/diffusion-results.csv")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ReadDiffusionCSV(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	WriteDiffusionMarkdown(&buf, DiffusionReport{Table: "main", Preset: "reference", Jobs: 2,
		Command: "gfn bench diffusion --table main --seeds 2 --jobs 2"}, rs)
	checkGolden(t, "testdata/diffusion-results.md.golden", buf.Bytes())
	// The CSV round-trips, missing values included.
	checkCSVRoundTrip(t, rs, WriteDiffusionCSV, ReadDiffusionCSV)
}

func TestDiffusionTablesUseKnownMethodsAndPaperNumbers(t *testing.T) {
	paper := PaperDiffusion()
	has := func(table, method, task string) bool {
		return slices.ContainsFunc(paper, func(p PaperDiffusionRow) bool {
			return p.Table == table && p.Method == method && p.Task == task
		})
	}
	for _, tb := range DiffusionTables {
		for _, m := range tb.Methods {
			if _, ok := DiffusionMethods[m]; !ok {
				t.Errorf("table %s: method %q has no flags", tb.Name, m)
			}
			for _, task := range tb.Tasks {
				if tb.Name == "passes" {
					continue // not in the paper
				}
				if !has(tb.Name, m, task) {
					t.Errorf("table %s: no paper number for %s on %s", tb.Name, m, task)
				}
			}
		}
	}
	for _, p := range paper {
		if _, ok := DiffusionMethods[p.Method]; !ok && !p.Quoted {
			t.Errorf("paper row %s/%s/%s is neither a method nor quoted", p.Table, p.Task, p.Method)
		}
		if !strings.Contains(p.Ref, "(tab:") {
			t.Errorf("paper row %s/%s/%s cites no table label: %q", p.Table, p.Task, p.Method, p.Ref)
		}
	}
	i := slices.IndexFunc(paper, func(p PaperDiffusionRow) bool {
		return p.Table == "main" && p.Method == "eps" && p.Task == "manywell"
	})
	if p := paper[i]; p.W2.Mean != 6.15 || !math.IsNaN(p.W2.Std) || p.EUBO.Std != 4.761 {
		t.Errorf("Manywell eps: W2 %+v (the std is misprinted: NaN), EUBO %+v", p.W2, p.EUBO)
	}
}

func TestDiffusionJobNext(t *testing.T) {
	root := t.TempDir()
	write := func(dir string, files ...string) string {
		d := filepath.Join(root, dir)
		os.MkdirAll(d, 0o755)
		for _, f := range files {
			os.WriteFile(filepath.Join(d, f), []byte("{}"), 0o644)
		}
		return d
	}
	fresh := []string{"train", "--task", "25gmm", "--method", "tb"}
	for _, c := range []struct {
		name   string
		dir    string
		status RunStatus
		args   []string
	}{
		{"missing directory", filepath.Join(root, "none"), RunFresh, fresh},
		{"empty directory", write("empty"), RunFresh, fresh},
		{"logs only", write("log", "run.log"), RunFresh, fresh},
		{"checkpoint", write("ckpt", diffusion.CheckpointFile, diffusion.ConfigFile, "samples.png"), RunResume,
			[]string{"train", "--resume", filepath.Join(root, "ckpt"), "--quiet"}},
		{"summary", write("done", "summary.json", diffusion.CheckpointFile), RunDone, nil},
		{"summary without checkpoint", write("done2", "summary.json"), RunDone, nil},
	} {
		st, args := DiffusionJob{Dir: c.dir, Args: fresh}.Next()
		if st != c.status || !slices.Equal(args, c.args) {
			t.Errorf("%s: %v %q, want %v %q", c.name, st, args, c.status, c.args)
		}
	}
}

func TestDiffusionJobs(t *testing.T) {
	main, _ := DiffusionTableByName("main")
	out := t.TempDir()
	jobs := main.Jobs(DiffusionOptions{Out: out})
	if len(jobs) != 8*2*5 {
		t.Fatalf("%d jobs, want 80 (8 methods × 2 tasks × 5 seeds)", len(jobs))
	}
	if j := jobs[0]; j.Method != "smc" || j.Iterations != 0 {
		t.Errorf("first job %s with %d iterations, want smc with none", j.Method, j.Iterations)
	}
	j := jobs[3]
	want := []string{"train", "--task", "25gmm", "--preset", "paper", "--method", "tb", "--seed", "0",
		"--out", filepath.Join(out, "main", "25gmm-tb-seed0"), "--quiet", "--checkpoint-every", "500"}
	if !slices.Equal(j.Args, want) || j.Iterations != 25001 {
		t.Errorf("first job %q, %d iterations; want %q, 25001", j.Args, j.Iterations, want)
	}
	if jobs[16].Seed != 1 || jobs[15].Seed != 0 {
		t.Errorf("jobs are not ordered seed first: job 16 is %+v", jobs[16])
	}
	q := main.Jobs(DiffusionOptions{Out: out, Quick: true, Preset: "paper", Methods: []string{"teacher"}, Tasks: []string{"manywell"}})
	if len(q) != 1 || !slices.Contains(q[0].Args, "--iterations") || !slices.Contains(q[0].Args, "paper") || q[0].Iterations != 40 {
		t.Errorf("quick jobs %+v", q)
	}
	p := main.Jobs(DiffusionOptions{Out: out, Preset: "paper", Seeds: 1})
	if p[3].Iterations != 25001 {
		t.Errorf("paper preset: %d iterations, want 25001", p[3].Iterations)
	}
	alpha, _ := DiffusionTableByName("alpha")
	for _, j := range alpha.Jobs(DiffusionOptions{Out: out, Seeds: 1}) {
		if (j.Method == "teacher-alpha0.5") != (j.SameAs == filepath.Join(out, "main", j.Task+"-teacher-seed0")) {
			t.Errorf("alpha job %s: SameAs %q", j.Method, j.SameAs)
		}
	}
	if _, err := DiffusionTableByName("table9"); err == nil {
		t.Error("unknown table accepted")
	}
}

// fakeDiffusionRun writes a summary.json where gfn train would, and
// records the arguments it ran.
func fakeDiffusionRun(calls *atomic.Int32, ran chan<- []string) Runner {
	return func(ctx context.Context, args []string) error {
		calls.Add(1)
		ran <- args
		dir := ""
		if i := slices.Index(args, "--out"); i >= 0 {
			dir = args[i+1]
		} else {
			dir = args[slices.Index(args, "--resume")+1]
		}
		if strings.Contains(dir, "eps") {
			return errors.New("boom")
		}
		os.MkdirAll(dir, 0o755)
		return os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"task": "25gmm", "preset": "paper", "steps": 40,
			"elbo": -1, "elbo_is": -0.5, "eubo": 3, "w2": 2, "log_z": -0.9, "eval_samples": 400, "wall_seconds": 1, "ms_per_iter_mean": 10}`), 0o644)
	}
}

func TestRunDiffusionIsResumable(t *testing.T) {
	tb, _ := DiffusionTableByName("main")
	o := DiffusionOptions{Out: t.TempDir(), Jobs: 2, Quick: true, Tasks: []string{"25gmm"},
		Methods: []string{"tb", "eps", "prt", "per", "teacher"}}
	jobs := tb.Jobs(o)
	if len(jobs) != 5 {
		t.Fatalf("%d quick jobs, want 5", len(jobs))
	}
	// teacher was interrupted after a checkpoint: it is resumed, first.
	os.MkdirAll(jobs[4].Dir, 0o755)
	os.WriteFile(filepath.Join(jobs[4].Dir, diffusion.CheckpointFile), nil, 0o644)
	var calls atomic.Int32
	ran := make(chan []string, 100)
	var log bytes.Buffer
	o.Jobs = 1
	rs, err := RunDiffusion(context.Background(), tb, o, fakeDiffusionRun(&calls, ran), &log)
	if err == nil || !strings.Contains(err.Error(), "eps") {
		t.Errorf("the failing run was not reported: %v", err)
	}
	if calls.Load() != 5 || len(rs) != 4 {
		t.Errorf("%d runs, %d results", calls.Load(), len(rs))
	}
	if first := <-ran; !slices.Equal(first, []string{"train", "--resume", jobs[4].Dir, "--quiet"}) {
		t.Errorf("first run %q, want the resumption of %s", first, jobs[4].Dir)
	}
	if !strings.Contains(log.String(), "1 to resume, 4 to start") || !strings.Contains(log.String(), "teacher seed 0 (resumed) done") {
		t.Errorf("log:\n%s", log.String())
	}
	calls.Store(0)
	rs, _ = RunDiffusion(context.Background(), tb, o, fakeDiffusionRun(&calls, ran), &log)
	if calls.Load() != 1 || len(rs) != 4 { // only the failed one is retried
		t.Errorf("resumed: %d runs, %d results", calls.Load(), len(rs))
	}
	calls.Store(0)
	o.CollectOnly = true
	rs, err = RunDiffusion(context.Background(), tb, o, fakeDiffusionRun(&calls, ran), &log)
	if err != nil || calls.Load() != 0 || len(rs) != 4 {
		t.Errorf("collect only: %d runs, %d results, %v", calls.Load(), len(rs), err)
	}
	// Running a subset still collects every finished run of the table.
	o.CollectOnly, o.Methods = false, []string{"tb"}
	rs, err = RunDiffusion(context.Background(), tb, o, fakeDiffusionRun(&calls, ran), &log)
	if err != nil || calls.Load() != 0 || len(rs) != 4 {
		t.Errorf("--methods tb: %d runs, %d results (want the table's 4), %v", calls.Load(), len(rs), err)
	}
	// A table of another length (not --quick) refuses the quick runs.
	o.Quick = false
	if _, err := RunDiffusion(context.Background(), tb, o, fakeDiffusionRun(&calls, ran), &log); err == nil || !strings.Contains(err.Error(), "25001") {
		t.Errorf("quick runs collected into a full table: %v", err)
	}

	// The alpha table copies main's finished Teacher run for α = 0.5.
	alpha, _ := DiffusionTableByName("alpha")
	o = DiffusionOptions{Out: o.Out, Jobs: 1, Quick: true, Tasks: []string{"25gmm"}}
	calls.Store(0)
	rs, err = RunDiffusion(context.Background(), alpha, o, fakeDiffusionRun(&calls, ran), &log)
	if err != nil || calls.Load() != 1 || len(rs) != 2 {
		t.Errorf("alpha: %d runs, %d results, %v", calls.Load(), len(rs), err)
	}
	if !strings.Contains(log.String(), "1 copied from the main table") {
		t.Errorf("log:\n%s", log.String())
	}
	for _, bad := range []DiffusionOptions{
		{Out: o.Out, Methods: []string{"sac"}},
		{Out: o.Out, Tasks: []string{"funnel"}},
		{Out: o.Out, Preset: "fast"},
	} {
		if _, err := RunDiffusion(context.Background(), tb, bad, fakeDiffusionRun(&calls, ran), &log); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestReadDiffusionCSVWithoutLastEvaluation reads a results.csv of the
// version before the last-evaluation columns: its rows keep their values
// and get no last evaluation.
func TestReadDiffusionCSVWithoutLastEvaluation(t *testing.T) {
	in := strings.Join(diffusionHeaderV1, ",") + "\nmain,25gmm,tb,paper,0,25001,7500300,-1.1,-1.0,18.5,4.63,-1.05,10000,3600,340\n"
	rs, err := ReadDiffusionCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].ELBO != -1.1 || rs[0].MsPerIterMean != 340 || rs[0].Last.Samples != 0 || !math.IsNaN(rs[0].Last.ELBO) {
		t.Errorf("read %+v", rs)
	}
	if _, err := ReadDiffusionCSV(strings.NewReader("table,task\nmain,25gmm\n")); err == nil {
		t.Error("a results.csv of another header was read")
	}
}

// TestLastEval takes the last row of a run's metrics.csv, and NaN for a run
// without one.
func TestLastEval(t *testing.T) {
	dir := t.TempDir()
	e, err := lastEval(dir)
	if err != nil || e.Samples != 0 || !math.IsNaN(e.ELBO) || !math.IsNaN(e.W2) {
		t.Fatalf("no metrics.csv: %+v, %v", e, err)
	}
	csv := "step,reward_calls,student_loss,elbo,elbo_is,eubo,w2,samples\n" +
		"0,600,27.1,-6.1,-1.0,8.6,7.0,2000\n" +
		"100,60600,1.2,-0.2,0.01,0.3,1.5,2000\n"
	if err := os.WriteFile(filepath.Join(dir, "metrics.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err = lastEval(dir)
	want := DiffusionEval{ELBO: -0.2, ELBOIS: 0.01, EUBO: 0.3, W2: 1.5, Step: 100, Samples: 2000}
	if err != nil || e != want {
		t.Errorf("lastEval = %+v, %v; want %+v", e, err, want)
	}
}
