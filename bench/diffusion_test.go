package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
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
				if tb.Name == "passes" || tb.Name == "suite" {
					continue // not in the paper (the suite's published numbers: TestPaperSuite)
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
		{"checkpoint", write("ckpt", "checkpoint.safetensors", "config.json", "samples.png"), RunResume,
			[]string{"train", "--resume", filepath.Join(root, "ckpt"), "--quiet"}},
		{"summary", write("done", "summary.json", "checkpoint.safetensors"), RunDone, nil},
		{"summary without checkpoint", write("done2", "summary.json"), RunDone, nil},
	} {
		st, args := nextRun(c.dir, fresh)
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
	os.WriteFile(filepath.Join(jobs[4].Dir, "checkpoint.safetensors"), nil, 0o644)
	var calls atomic.Int32
	ran := make(chan []string, 100)
	var log bytes.Buffer
	o.Jobs = 1
	rs, err := runDiffusionTable(context.Background(), tb, o, fakeDiffusionRun(&calls, ran), &log)
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
	rs, _ = runDiffusionTable(context.Background(), tb, o, fakeDiffusionRun(&calls, ran), &log)
	if calls.Load() != 1 || len(rs) != 4 { // only the failed one is retried
		t.Errorf("resumed: %d runs, %d results", calls.Load(), len(rs))
	}
	calls.Store(0)
	o.CollectOnly = true
	rs, err = runDiffusionTable(context.Background(), tb, o, fakeDiffusionRun(&calls, ran), &log)
	if err != nil || calls.Load() != 0 || len(rs) != 4 {
		t.Errorf("collect only: %d runs, %d results, %v", calls.Load(), len(rs), err)
	}
	// Running a subset still collects every finished run of the table.
	o.CollectOnly, o.Methods = false, []string{"tb"}
	rs, err = runDiffusionTable(context.Background(), tb, o, fakeDiffusionRun(&calls, ran), &log)
	if err != nil || calls.Load() != 0 || len(rs) != 4 {
		t.Errorf("--methods tb: %d runs, %d results (want the table's 4), %v", calls.Load(), len(rs), err)
	}
	// A table of another length (not --quick) refuses the quick runs.
	o.Quick = false
	if _, err := runDiffusionTable(context.Background(), tb, o, fakeDiffusionRun(&calls, ran), &log); err == nil || !strings.Contains(err.Error(), "25001") {
		t.Errorf("quick runs collected into a full table: %v", err)
	}

	// The alpha table copies main's finished Teacher run for α = 0.5.
	alpha, _ := DiffusionTableByName("alpha")
	o = DiffusionOptions{Out: o.Out, Jobs: 1, Quick: true, Tasks: []string{"25gmm"}}
	calls.Store(0)
	rs, err = runDiffusionTable(context.Background(), alpha, o, fakeDiffusionRun(&calls, ran), &log)
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
		if _, err := runDiffusionTable(context.Background(), tb, bad, fakeDiffusionRun(&calls, ran), &log); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestReadDiffusionCSVWithoutLastEvaluation reads a results.csv of the
// versions before the last-evaluation columns and before the divergence
// columns: its rows keep their values, get no last evaluation (the first)
// and no start ELBO, and none diverged.
func TestReadDiffusionCSVWithoutLastEvaluation(t *testing.T) {
	const v1 = "main,25gmm,tb,paper,0,25001,7500300,-1.1,-1.0,18.5,4.63,-1.05,10000,3600,340"
	for _, c := range []struct {
		name     string
		in       string
		lastELBO float64 // NaN: none
	}{
		{"v1", strings.Join(diffusionHeaderV1, ",") + "\n" + v1 + "\n", math.NaN()},
		{"v2", strings.Join(diffusionHeaderV2, ",") + "\n" + v1 + ",25000,2000,-1.2,-1.1,19,4.7\n", -1.2},
	} {
		rs, err := ReadDiffusionCSV(strings.NewReader(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(rs) != 1 || rs[0].ELBO != -1.1 || rs[0].MsPerIterMean != 340 {
			t.Fatalf("%s: read %+v", c.name, rs)
		}
		r := rs[0]
		if l := r.Last.ELBO; !(l == c.lastELBO || math.IsNaN(l) && math.IsNaN(c.lastELBO)) || (r.Last.Samples == 0) != math.IsNaN(c.lastELBO) {
			t.Errorf("%s: last evaluation %+v, want ELBO %v", c.name, r.Last, c.lastELBO)
		}
		if !math.IsNaN(r.StartELBO) || r.DivergedAt != 0 || r.Diverged() {
			t.Errorf("%s: start ELBO %v, diverged at %d; want NaN, none", c.name, r.StartELBO, r.DivergedAt)
		}
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

// TestDiffusionDivergedAt judges runs from their curves: a run diverged when its
// final ELBO is below its first evaluation's, at the row from which the
// ELBO stays below that start.
func TestDiffusionDivergedAt(t *testing.T) {
	nan := math.NaN()
	step := []float64{0, 100, 200, 300, 400, 500}
	for _, c := range []struct {
		name      string
		elbo      []float64
		final     float64
		wantStart float64
		wantAt    int
	}{
		{"converged", []float64{-10, -5, -2, -1, -0.5, -0.2}, -0.1, -10, 0},
		{"dips below the start and recovers", []float64{-10, -12, -15, -9, -3, -1}, -0.9, -10, 0},
		{"collapses", []float64{-10, -5, -2, -1e6, -7e4, -7e4}, -71207, -10, 300},
		{"collapses to NaN", []float64{-10, -5, -2, nan, nan, -7e4}, -71207, -10, 300},
		{"dips, recovers, then collapses", []float64{-10, -12, -3, -11.5, -2e3, -5e3}, -4e3, -10, 300},
		{"back at the margin exactly, then below", []float64{-10, -5, -11, -11.5, -12, -13}, -14, -10, 300},
		{"never rises", []float64{-10, -11.5, -12, -13, -14, -15}, -16, -10, 100},
		{"below the start within the margin", []float64{-10, -10.5, -10.8, -10.9, -10.9, -10.95}, -10.99, -10, 0},
		{"below only at the final evaluation", []float64{-10, -5, -2, -1, -0.5, -0.2}, -50, -10, 501},
		{"final ELBO equal to the start", []float64{-10, -12, -15, -13, -12, -11}, -10, -10, 0},
		{"NaN start", []float64{nan, -5, -2, -1, -0.5, -0.2}, -50, nan, 0},
		{"no curve", nil, -50, nan, 0},
	} {
		start, at := divergedAt(step[:len(c.elbo)], c.elbo, c.final, 501)
		if at != c.wantAt || !(start == c.wantStart || math.IsNaN(start) && math.IsNaN(c.wantStart)) {
			t.Errorf("%s: start %v, diverged at %d; want %v, %d", c.name, start, at, c.wantStart, c.wantAt)
		}
	}
}

// writeDiffusionRun writes a finished run as gfn train would: a
// metrics.csv with an evaluation every 100 iterations whose ELBO is elbo(step)
// (NaN as an empty cell), a summary.json with the final ELBO and a
// samples.png.
func writeDiffusionRun(t *testing.T, dir string, iterations int, elbo func(step int) float64, final float64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("step,reward_calls,student_loss,teacher_loss,student_logz,teacher_logz,elbo,elbo_is,eubo,w2,samples,wall_seconds\n")
	for s := 0; s < iterations; s += 100 {
		e := ""
		if v := elbo(s); !math.IsNaN(v) {
			e = strconv.FormatFloat(v, 'g', 10, 64)
		}
		fmt.Fprintf(&b, "%d,%d,-2.7,,0,,%s,%s,%g,6.1,2000,%d\n", s, 300*(s+1), e, e, 400-float64(s)/100, s/4)
	}
	summary := fmt.Sprintf(`{"task": "manywell", "preset": "paper", "steps": %d, "reward_calls": %d, "elbo": %g, "elbo_is": %g,
		"eubo": 350, "w2": 6.2, "log_z": 161, "eval_samples": 10000, "wall_seconds": 7200, "ms_per_iter_mean": 280}`,
		iterations, 300*iterations, final, final+1)
	for name, data := range map[string]string{"metrics.csv": b.String(), "summary.json": summary, "samples.png": "png"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDiffusionDivergedRuns aggregates synthetic Manywell runs: a PIS seed
// whose ELBO collapses at iteration 23,100 is detected, counted and named
// in results.md, and left out of the means and the mean curves; a run
// whose ELBO dips below its start and recovers is kept; a method whose
// only run diverged shows no numbers.
func TestDiffusionDivergedRuns(t *testing.T) {
	root := t.TempDir()
	const iterations = 25001
	converged := func(offset float64) func(int) float64 {
		return func(s int) float64 { return 160.9 + offset - 2500*math.Exp(-float64(s)/1000) }
	}
	collapsed := func(s int) float64 {
		switch {
		case s < 23100:
			return converged(0)(s)
		case s%300 == 0:
			return math.NaN() // the loss at 1e11: no finite ELBO
		}
		return -1e5
	}
	for _, r := range []struct {
		method     string
		seed       int
		elbo       func(int) float64
		final      float64
		divergedAt int
	}{
		{"pis", 0, converged(0.1), 161.0, 0},
		{"pis", 1, collapsed, -71207, 23100},
		{"pis", 2, converged(-0.1), 160.8, 0},
		// Dips below its start (iterations 100 to 400) and recovers.
		{"tb", 0, func(s int) float64 {
			if s > 0 && s < 500 {
				return -2500 - float64(s)
			}
			return converged(-1)(s)
		}, 159.9, 0},
		// Rises, then falls below its start at iteration 5,000 for good.
		{"teacher", 0, func(s int) float64 {
			if s < 5000 {
				return converged(0)(s)
			}
			return -3000 - float64(s)
		}, -28000, 5000},
	} {
		job := DiffusionJob{Task: "manywell", Method: r.method, Preset: "paper", Seed: r.seed, Iterations: iterations,
			Dir: filepath.Join(root, fmt.Sprintf("manywell-%s-seed%d", r.method, r.seed))}
		writeDiffusionRun(t, job.Dir, iterations, r.elbo, r.final)
		rs, err := collectDiffusion("main", []DiffusionJob{job})
		if err != nil || len(rs) != 1 {
			t.Fatalf("%s seed %d: %d results, %v", r.method, r.seed, len(rs), err)
		}
		if got := rs[0]; got.DivergedAt != r.divergedAt || got.Diverged() != (r.divergedAt > 0) || math.Abs(got.StartELBO-r.elbo(0)) > 1e-6 {
			t.Errorf("%s seed %d: diverged at %d (%v) from a start ELBO of %v; want %d from %v",
				r.method, r.seed, got.DivergedAt, got.Diverged(), got.StartELBO, r.divergedAt, r.elbo(0))
		}
	}
	tb, _ := DiffusionTableByName("main")
	jobs := tb.Jobs(DiffusionOptions{Out: filepath.Dir(root), Seeds: 3, Tasks: []string{"manywell"}})
	for i := range jobs {
		jobs[i].Dir = filepath.Join(root, filepath.Base(jobs[i].Dir))
	}
	rs, err := collectDiffusion("main", jobs)
	if err != nil || len(rs) != 5 {
		t.Fatalf("%d results, %v", len(rs), err)
	}

	// results.md: the PIS row averages seeds 0 and 2 only.
	var md bytes.Buffer
	WriteDiffusionMarkdown(&md, DiffusionReport{Table: "main", Preset: "paper", Jobs: 2,
		Command: "gfn bench diffusion --table main --seeds 3 --tasks manywell"}, rs)
	checkGolden(t, "testdata/diffusion-diverged.md.golden", md.Bytes())
	for _, want := range []string{
		"| pis [3] | 2 (+1 diverged) | 160.900 ± 0.100 |",
		"| tb | 1 | 159.900 ± 0.000 ",
		"| teacher | 0 (+1 diverged) | diverged |",
		"manywell pis seed 1 diverged at iteration 23,100: final ELBO -71207.000 below its first evaluation's -2339.100; left out of the row.",
		"manywell teacher seed 0 diverged at iteration 5,000:",
		"Left out here as well: pis seed 1 (diverged at iteration 23,100), teacher seed 0 (diverged at iteration 5,000).",
		"| manywell | pis | 3 |", // the run time counts every run
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("results.md lacks %q", want)
		}
	}

	// A row the paper quotes (pis) whose runs all diverged says so; it is
	// not "quoted from the paper, not run here".
	md.Reset()
	i := slices.IndexFunc(rs, func(r DiffusionResult) bool { return r.Method == "pis" && r.Seed == 1 })
	WriteDiffusionMarkdown(&md, DiffusionReport{Table: "main", Preset: "paper"}, rs[i:i+1])
	if want := "| pis [3] | 0 (+1 diverged) | diverged | 160.516 ± 1.025 |"; !strings.Contains(md.String(), want) {
		t.Errorf("results.md of the diverged PIS seed alone lacks %q:\n%s", want, md.String())
	}

	// results.csv keeps every run with its start ELBO and divergence.
	var out bytes.Buffer
	if err := WriteDiffusionCSV(&out, rs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), ",-2339.1,23100,,,\n") || !strings.Contains(out.String(), ",-2340.1,,,,\n") {
		t.Errorf("results.csv:\n%s", out.String())
	}
	again, err := ReadDiffusionCSV(&out)
	if err != nil || len(again) != len(rs) {
		t.Fatalf("read back %d rows, %v", len(again), err)
	}
	for i := range rs {
		if again[i].DivergedAt != rs[i].DivergedAt || again[i].StartELBO != rs[i].StartELBO {
			t.Errorf("row %d read back diverged at %d from %v, want %d from %v",
				i, again[i].DivergedAt, again[i].StartELBO, rs[i].DivergedAt, rs[i].StartELBO)
		}
	}

	// The mean curves leave the diverged runs out.
	curves, err := meanDiffusionCurves(jobs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method         string
		runs, diverged int
		elbo           func(int) float64 // the mean, nil for none
	}{
		{"pis", 2, 1, converged(0)},
		{"tb", 1, 0, nil},
		{"teacher", 0, 1, nil},
	} {
		i := slices.IndexFunc(curves, func(m *meanCurve) bool { return m.method == c.method })
		if i < 0 {
			t.Errorf("no curve for %s", c.method)
			continue
		}
		m := curves[i]
		if m.runs != c.runs || m.diverged != c.diverged {
			t.Errorf("%s: %d runs, %d diverged; want %d, %d", c.method, m.runs, m.diverged, c.runs, c.diverged)
		}
		if c.runs == 0 && len(m.step) != 0 {
			t.Errorf("%s: a curve of %d steps from diverged runs only", c.method, len(m.step))
		}
		if c.elbo == nil {
			continue
		}
		if len(m.step) != 251 {
			t.Fatalf("%s: %d steps, want 251", c.method, len(m.step))
		}
		for k, s := range m.step {
			if want := c.elbo(int(s)); math.Abs(m.elbo[k]-want) > 1e-6 { // metrics.csv has 10 digits
				t.Fatalf("%s: mean ELBO %v at step %v, want %v", c.method, m.elbo[k], s, want)
			}
		}
	}
	files, err := DiffusionFigures(filepath.Join(root, "figures"), jobs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"manywell-elbo.png", "manywell-eubo.png", "manywell-pis-seed0-samples.png", "manywell-tb-seed0-samples.png"}
	if !slices.Equal(files, want) {
		t.Errorf("figures %q, want %q (no samples of a method whose runs all diverged)", files, want)
	}
}

// TestDiffusionBudgetOverride: --batch and --iterations replace every
// preset's budget, the runs going to a directory of their own and a
// finished run counted at the new length; smc keeps its own settings.
func TestDiffusionBudgetOverride(t *testing.T) {
	tab, err := DiffusionTableByName("main")
	if err != nil {
		t.Fatal(err)
	}
	o := DiffusionOptions{Out: "/r", Seeds: 1, Batch: 300, Iterations: 2000, Tasks: []string{"25gmm"}}
	for _, j := range tab.Jobs(o) {
		if !strings.HasPrefix(j.Dir, "/r/main-batch300-it2000/") {
			t.Errorf("%s: directory %s", j.Method, j.Dir)
		}
		args := strings.Join(j.Args, " ")
		override := strings.Contains(args, "--batch 300") && strings.Contains(args, "--iterations 2000")
		if j.Method == "smc" || j.Method == "ggns" {
			if override || j.Iterations != 0 {
				t.Errorf("%s: %s (iterations %d)", j.Method, args, j.Iterations)
			}
			continue
		}
		if !override || j.Iterations != 2000 {
			t.Errorf("%s: %s (iterations %d), want the override", j.Method, args, j.Iterations)
		}
	}
}
