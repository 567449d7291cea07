package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/seqtrain"
)

func TestBiochemJobs(t *testing.T) {
	out := t.TempDir()
	jobs, err := BiochemJobs(BiochemOptions{Out: out, CheckpointEvery: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 4*6*5 {
		t.Fatalf("%d jobs, want 120 (4 tasks × 6 methods × 5 seeds)", len(jobs))
	}
	want := []string{"train", "--task", "tfbind8", "--method", "tb", "--seed", "0",
		"--out", filepath.Join(out, "biochem", "tfbind8-tb-seed0"), "--quiet", "--checkpoint-every", "100"}
	if !slices.Equal(jobs[0].Args, want) || jobs[0].Rounds != 2000 {
		t.Errorf("first job %q, %d rounds; want %q, 2000", jobs[0].Args, jobs[0].Rounds, want)
	}
	// Cheap tasks first; within a task seed by seed, methods in the
	// paper's order.
	for i, j := range jobs {
		task := BiochemTasks[i/30]
		seed, method := i%30/6, BiochemMethods[i%6]
		if j.Task != task || j.Seed != seed || j.Method != method {
			t.Fatalf("job %d is %s %s seed %d, want %s %s seed %d", i, j.Task, j.Method, j.Seed, task, method, seed)
		}
	}
	if !slices.Equal(BiochemTasks, []string{"tfbind8", "rna", "qm9str", "sehstr"}) {
		t.Errorf("run order %q", BiochemTasks)
	}
	for _, name := range biochem.Names {
		if !slices.Contains(BiochemTasks, name) || !slices.Contains(biochemPaperOrder, name) {
			t.Errorf("task %s is not run or not shown", name)
		}
	}

	// --quick: 1/20 of the rounds, evaluations every quarter; the
	// selection's order does not matter.
	q, err := BiochemJobs(BiochemOptions{Out: out, Quick: true, Seeds: 1, Tasks: []string{"qm9str", "tfbind8"},
		Methods: []string{"teacher-per", "eps"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range q {
		got = append(got, fmt.Sprintf("%s %s %d %d", j.Task, j.Method, j.Seed, j.Rounds))
	}
	if want := []string{"tfbind8 eps 0 100", "tfbind8 teacher-per 0 100", "qm9str eps 0 50", "qm9str teacher-per 0 50"}; !slices.Equal(got, want) {
		t.Errorf("quick jobs %q, want %q", got, want)
	}
	if a := strings.Join(q[2].Args, " "); !strings.HasSuffix(a, "--rounds 50 --eval-every 12 --eval-samples 256") {
		t.Errorf("quick qm9str args %q", a)
	}

	for _, c := range []struct {
		o    BiochemOptions
		want string
	}{
		{BiochemOptions{Tasks: []string{"chess"}}, `task "chess" is unknown (allowed: tfbind8, rna, qm9str, sehstr)`},
		{BiochemOptions{Methods: []string{"teacher"}}, `method "teacher" is not a row of table main (allowed: tb, eps, prt, per, teacher-prt, teacher-per)`},
		{BiochemOptions{Seeds: -1}, "seeds -1"},
	} {
		if _, err := BiochemJobs(c.o); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "bench: ") {
			t.Errorf("%+v: error %v, want one with %q", c.o, err, c.want)
		}
	}
}

func TestBiochemJobNext(t *testing.T) {
	root := t.TempDir()
	write := func(dir string, files ...string) string {
		d := filepath.Join(root, dir)
		os.MkdirAll(d, 0o755)
		for _, f := range files {
			os.WriteFile(filepath.Join(d, f), []byte("{}"), 0o644)
		}
		return d
	}
	fresh := []string{"train", "--task", "tfbind8", "--method", "tb"}
	for _, c := range []struct {
		name   string
		dir    string
		status RunStatus
		args   []string
	}{
		{"missing directory", filepath.Join(root, "none"), RunFresh, fresh},
		{"empty directory", write("empty"), RunFresh, fresh},
		{"metrics only", write("metrics", "metrics.csv"), RunFresh, fresh},
		{"checkpoint", write("ckpt", "checkpoint.safetensors", "config.json", "metrics.csv"), RunResume,
			[]string{"train", "--resume", filepath.Join(root, "ckpt"), "--quiet"}},
		{"summary", write("done", "summary.json", "checkpoint.safetensors"), RunDone, nil},
	} {
		st, args := nextRun(c.dir, fresh)
		if st != c.status || !slices.Equal(args, c.args) {
			t.Errorf("%s: %v %q, want %v %q", c.name, st, args, c.status, c.args)
		}
	}
}

// fakeBiochemRun writes what gfn train would (summary.json, metrics.csv)
// for the job of the directory it is given, records the arguments, and
// fails the eps runs.
func fakeBiochemRun(jobs []BiochemJob, calls *atomic.Int32, ran chan<- []string) Runner {
	return func(ctx context.Context, args []string) error {
		calls.Add(1)
		ran <- args
		dir := ""
		if i := slices.Index(args, "--out"); i >= 0 {
			dir = args[i+1]
		} else {
			dir = args[slices.Index(args, "--resume")+1]
		}
		j := jobs[slices.IndexFunc(jobs, func(j BiochemJob) bool { return j.Dir == dir })]
		if j.Method == "eps" {
			return errors.New("boom")
		}
		os.MkdirAll(dir, 0o755)
		metrics := "round,reward_calls,student_loss,teacher_loss,modes_seen,modes_eval,elbo,eubo,log_z,log_z_est,log_z_err,pearson,samples,wall_seconds\n" +
			"49,1600,10,,3,0,-3,12,4,8,0.3,0.1,256,0.5\n" + fmt.Sprintf("99,3200,8,,%d,1,-2,11,4,8.2,0.1,0.2,256,1\n", 5+j.Seed)
		os.WriteFile(filepath.Join(dir, "metrics.csv"), []byte(metrics), 0o644)
		return os.WriteFile(filepath.Join(dir, "summary.json"), []byte(fmt.Sprintf(`{"task": %q, "method": %q, "seed": %d,
			"steps": %d, "reward_calls": 3200, "modes_total": 328, "modes_found": %d, "modes_eval": 1, "elbo": -2,
			"log_z_est": 8.2, "log_z_err": 0.1, "eubo": 11, "pearson": null, "log_z": 4, "samples": 256,
			"true_log_z": 8.3, "wall_seconds": 1, "ms_per_step_mean": 10}`, j.Task, j.trainMethod(), j.Seed, j.Rounds, 5+j.Seed)), 0o644)
	}
}

func TestRunBiochemIsResumable(t *testing.T) {
	o := BiochemOptions{Out: t.TempDir(), Jobs: 2, Quick: true, Seeds: 2, Tasks: []string{"tfbind8"}, Methods: []string{"tb", "eps", "teacher-per"}}
	jobs, err := BiochemJobs(o)
	if err != nil || len(jobs) != 6 {
		t.Fatalf("%d jobs, %v", len(jobs), err)
	}
	// teacher-per seed 0 was interrupted after a checkpoint: it is
	// resumed, first.
	interruptRun(t, jobs[2])
	var calls atomic.Int32
	ran := make(chan []string, 100)
	var log bytes.Buffer
	o.Jobs = 1
	rs, err := runBiochemTable(context.Background(), o, fakeBiochemRun(jobs, &calls, ran), &log)
	if err == nil || !strings.Contains(err.Error(), "eps") {
		t.Errorf("the failing run was not reported: %v", err)
	}
	if calls.Load() != 6 || len(rs) != 4 {
		t.Errorf("%d runs, %d results", calls.Load(), len(rs))
	}
	if first := <-ran; !slices.Equal(first, []string{"train", "--resume", jobs[2].Dir, "--quiet"}) {
		t.Errorf("first run %q, want the resumption of %s", first, jobs[2].Dir)
	}
	if !strings.Contains(log.String(), "1 to resume, 5 to start") || !strings.Contains(log.String(), "teacher-per seed 0 (resumed) done") {
		t.Errorf("log:\n%s", log.String())
	}
	calls.Store(0)
	if rs, _ = runBiochemTable(context.Background(), o, fakeBiochemRun(jobs, &calls, ran), &log); calls.Load() != 2 || len(rs) != 4 {
		t.Errorf("again: %d runs (only the failed ones are retried), %d results", calls.Load(), len(rs))
	}
	calls.Store(0)
	o.CollectOnly = true
	rs, err = runBiochemTable(context.Background(), o, fakeBiochemRun(jobs, &calls, ran), &log)
	if err != nil || calls.Load() != 0 || len(rs) != 4 || !strings.Contains(log.String(), "4 of 6 runs finished") {
		t.Errorf("collect only: %d runs, %d results, %v", calls.Load(), len(rs), err)
	}
	if r := rs[3]; r.Method != "teacher-per" || r.Seed != 1 || r.ModesSeen != 6 || r.Rounds != 100 || !math.IsNaN(r.Pearson) || r.TrueLogZ != 8.3 {
		t.Errorf("last result %+v", r)
	}
	// Running a subset still collects every finished run of the table.
	o.Methods = []string{"tb"}
	rs, err = runBiochemTable(context.Background(), o, fakeBiochemRun(jobs, &calls, ran), &log)
	if err != nil || calls.Load() != 0 || len(rs) != 4 {
		t.Errorf("--methods tb: %d runs, %d results (want the table's 4), %v", calls.Load(), len(rs), err)
	}
	o.Methods = []string{"tb", "eps", "teacher-per"}
	// A table of another length (not --quick) refuses the quick runs.
	o.Quick = false
	if _, err := runBiochemTable(context.Background(), o, fakeBiochemRun(jobs, &calls, ran), &log); err == nil || !strings.Contains(err.Error(), "2000") {
		t.Errorf("quick runs collected into a full table: %v", err)
	}
	// ... and will not resume a quick run's checkpoint into it.
	o.CollectOnly = false
	interruptRun(t, jobs[5]) // a quick run: 100 rounds
	os.Remove(filepath.Join(jobs[5].Dir, "summary.json"))
	full, _ := BiochemJobs(o)
	for _, j := range full[:5] {
		os.RemoveAll(j.Dir)
	}
	calls.Store(0)
	if _, err := runBiochemTable(context.Background(), o, fakeBiochemRun(full, &calls, ran), &log); err == nil ||
		!strings.Contains(err.Error(), "with 100 rounds, but the run wants tfbind8 teacher-per seed 1 with 2000 rounds") || calls.Load() != 0 {
		t.Errorf("a quick checkpoint resumed into a full table: %v (%d runs)", err, calls.Load())
	}
}

// results builds synthetic results: for each method, one run per value.
func results(task, metric string, byMethod map[string][]float64) []BiochemResult {
	var rs []BiochemResult
	for m, vs := range byMethod {
		for i, v := range vs {
			r := BiochemResult{Task: task, Method: m, Seed: i, ELBO: math.NaN(), EUBO: math.NaN()}
			switch metric {
			case "modes":
				r.ModesSeen = int(v)
			case "elbo":
				r.ELBO = v
			case "eubo":
				r.EUBO = v
			}
			rs = append(rs, r)
		}
	}
	return rs
}

func TestClaimCheck(t *testing.T) {
	for _, c := range []struct {
		name    string
		claim   Claim
		on      string // the results' task ("": the claim's)
		values  map[string][]float64
		verdict Verdict
		detail  string
	}{
		{"more modes", Claim{Task: "rna", Metric: "modes", Method: "teacher-per", Than: []string{"per"}, Rel: Better}, "",
			map[string][]float64{"teacher-per": {11, 13}, "per": {7, 9}}, Holds, "(12.0 ± 1.0 vs 8.0 ± 1.0)"},
		{"fewer modes", Claim{Task: "rna", Metric: "modes", Method: "teacher-per", Than: []string{"per"}, Rel: Better}, "",
			map[string][]float64{"teacher-per": {7, 9}, "per": {11, 13}}, Fails, "(8.0 ± 1.0 vs 12.0 ± 1.0)"},
		{"equal is not more", Claim{Task: "rna", Metric: "modes", Method: "teacher-per", Than: []string{"per"}, Rel: Better}, "",
			map[string][]float64{"teacher-per": {8, 8}, "per": {8, 8}}, Fails, "(8.0 ± 0.0 vs 8.0 ± 0.0)"},
		{"other task's runs do not count", Claim{Task: "qm9str", Metric: "modes", Method: "teacher-per", Than: []string{"per"}, Rel: Better}, "rna",
			map[string][]float64{"teacher-per": {11, 13}, "per": {7, 9}}, NotEnoughRuns, "(Teacher + PER has 0, PER has 0; 2 needed)"},
		{"lower EUBO is better", Claim{Task: "rna", Metric: "eubo", Method: "teacher-prt", Than: []string{"prt", "per"}, Rel: Better}, "",
			map[string][]float64{"teacher-prt": {1, 1.2}, "prt": {2, 2}, "per": {1.5, 1.7}}, Holds, "(1.100 ± 0.100 vs PRT 2.000 ± 0.000, PER 1.600 ± 0.100)"},
		{"higher EUBO fails", Claim{Task: "rna", Metric: "eubo", Method: "teacher-prt", Than: []string{"prt", "per"}, Rel: Better}, "",
			map[string][]float64{"teacher-prt": {1, 1.2}, "prt": {2, 2}, "per": {0.5, 0.5}}, Fails, "(1.100 ± 0.100 vs PRT 2.000 ± 0.000, PER 0.500 ± 0.000)"},
		{"higher ELBO", Claim{Task: "rna", Metric: "elbo", Method: "teacher-per", Than: []string{"prt"}, Rel: Better}, "",
			map[string][]float64{"teacher-per": {-1, -1.2}, "prt": {-2, -2}}, Holds, "(-1.100 ± 0.100 vs -2.000 ± 0.000)"},
		{"clearly: bands apart", Claim{Task: "rna", Metric: "modes", Method: "per", Than: []string{"prt"}, Rel: ClearlyBetter}, "",
			map[string][]float64{"per": {10, 12}, "prt": {7, 9}}, Holds, "(11.0 ± 1.0 vs 8.0 ± 1.0)"},
		{"clearly: bands overlap", Claim{Task: "rna", Metric: "modes", Method: "per", Than: []string{"prt"}, Rel: ClearlyBetter}, "",
			map[string][]float64{"per": {9, 11}, "prt": {7, 9}}, Fails, "(10.0 ± 1.0 vs 8.0 ± 1.0)"},
		{"clearly lower EUBO", Claim{Task: "rna", Metric: "eubo", Method: "per", Than: []string{"prt"}, Rel: ClearlyBetter}, "",
			map[string][]float64{"per": {1, 1}, "prt": {3, 5}}, Holds, "(1.000 ± 0.000 vs 4.000 ± 1.000)"},
		{"comparable: bands overlap", Claim{Task: "qm9str", Metric: "elbo", Method: "per", Than: []string{"prt"}, Rel: Comparable}, "",
			map[string][]float64{"per": {-1, -3}, "prt": {-2.5, -3.5}}, Holds, "(-2.000 ± 1.000 vs -3.000 ± 0.500)"},
		{"comparable either way", Claim{Task: "qm9str", Metric: "elbo", Method: "prt", Than: []string{"per"}, Rel: Comparable}, "",
			map[string][]float64{"per": {-1, -3}, "prt": {-2.5, -3.5}}, Holds, "(-3.000 ± 0.500 vs -2.000 ± 1.000)"},
		{"not comparable", Claim{Task: "qm9str", Metric: "elbo", Method: "per", Than: []string{"prt"}, Rel: Comparable}, "",
			map[string][]float64{"per": {-1, -1.2}, "prt": {-3, -3.2}}, Fails, "(-1.100 ± 0.100 vs -3.100 ± 0.100)"},
		{"one run is not enough", Claim{Task: "rna", Metric: "modes", Method: "teacher-per", Than: []string{"tb", "eps"}, Rel: Better}, "",
			map[string][]float64{"teacher-per": {11, 13}, "tb": {1}}, NotEnoughRuns, "(TB has 1, ε-exploration has 0; 2 needed)"},
		{"NaN values do not count", Claim{Task: "rna", Metric: "eubo", Method: "teacher-per", Than: []string{"per"}, Rel: Better}, "",
			map[string][]float64{"teacher-per": {1, math.NaN()}, "per": {2, 3}}, NotEnoughRuns, "(Teacher + PER has 1; 2 needed)"},
	} {
		on := c.on
		if on == "" {
			on = c.claim.Task
		}
		got := c.claim.Check(results(on, c.claim.Metric, c.values))
		if got.Verdict != c.verdict || got.Detail != c.detail {
			t.Errorf("%s: %s %s, want %s %s", c.name, got.Verdict, got.Detail, c.verdict, c.detail)
		}
	}
}

func TestBiochemClaims(t *testing.T) {
	texts := map[string]bool{}
	for _, c := range BiochemClaims {
		if !slices.Contains(BiochemTasks, c.Task) || !slices.Contains(BiochemMethods, c.Method) || len(c.Than) == 0 || c.Statement == "" {
			t.Errorf("claim %+v", c)
		}
		if _, ok := claimMetrics[c.Metric]; !ok {
			t.Errorf("claim %+v: unknown metric", c)
		}
		for _, m := range c.Than {
			if !slices.Contains(BiochemMethods, m) || m == c.Method {
				t.Errorf("claim %+v compares with %q", c, m)
			}
		}
		if texts[c.Text()] {
			t.Errorf("claim %q twice", c.Text())
		}
		texts[c.Text()] = true
	}
	for _, want := range []string{
		"Teacher + PER finds more modes than PER on rna",
		"Teacher + PRT finds more modes than PRT on qm9str",
		"Teacher + PER finds more modes than TB and ε-exploration on sehstr",
		"Teacher + PRT has a lower EUBO than PRT and PER on tfbind8",
		"Teacher + PER has an ELBO comparable to PRT and PER on tfbind8",
		"Teacher + PRT has a higher ELBO than PRT and PER on rna",
		"PER finds about as many modes as PRT on sehstr",
		"PER has a clearly lower EUBO than PRT on rna",
		"Teacher + PER has a higher ELBO than TB, ε-exploration, PRT, PER and Teacher + PRT on qm9str",
	} {
		if !texts[want] {
			t.Errorf("no claim %q", want)
		}
	}
	if len(BiochemClaims) != 52 {
		t.Errorf("%d claims, want 52", len(BiochemClaims))
	}
}

func TestBiochemMarkdownGolden(t *testing.T) {
	f, err := os.Open("testdata/biochem-results.csv")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ReadBiochemCSV(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	WriteBiochemMarkdown(&buf, BiochemReport{Jobs: 2, Command: "gfn bench biochem --task tfbind8,rna --seeds 2"}, rs)
	checkGolden(t, "testdata/biochem-results.md.golden", buf.Bytes())
	// The CSV round-trips, missing values included.
	checkCSVRoundTrip(t, rs, WriteBiochemCSV, ReadBiochemCSV)
}

func TestBiochemFigure(t *testing.T) {
	o := BiochemOptions{Out: t.TempDir(), Seeds: 3, Tasks: []string{"tfbind8", "rna"}, Methods: []string{"tb", "per"}}
	jobs, err := BiochemJobs(o)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(o.Dir(), "figure.png")
	if drew, err := BiochemFigure(path, jobs); drew || err != nil {
		t.Fatalf("no finished run: drew %v, %v", drew, err)
	}
	write := func(j BiochemJob, finished bool, rows ...string) {
		os.MkdirAll(j.Dir, 0o755)
		os.WriteFile(filepath.Join(j.Dir, "metrics.csv"), []byte(strings.Join(append([]string{seqHeader}, rows...), "\n")), 0o644)
		if finished {
			os.WriteFile(filepath.Join(j.Dir, "summary.json"), []byte("{}"), 0o644)
		}
	}
	row := func(round, modes int, elbo, eubo float64) string {
		return fmt.Sprintf("%d,0,1,,%d,0,%s,%s,4,8,0.1,0.1,64,1", round, modes, strconv.FormatFloat(elbo, 'g', -1, 64), strconv.FormatFloat(eubo, 'g', -1, 64))
	}
	// tfbind8 tb: seeds 0 and 1 finished, seed 2 stopped at a checkpoint
	// (not drawn); per: only seed 0; rna: tb seed 0 with an empty EUBO.
	write(jobs[0], true, row(50, 2, -3, 12), row(99, 4, -2, 11))
	write(jobs[2], true, row(50, 4, -5, 14), row(99, 6, -4, 13))
	write(jobs[4], false, row(50, 100, 100, 100))
	write(jobs[1], true, row(50, 1, -3, 12), row(99, 2, -2, 11))
	write(jobs[6], true, row(50, 1, -3, 12), strings.Replace(row(99, 2, -2, 11), ",11,", ",,", 1))
	var curves []seqCurve
	for _, j := range []BiochemJob{jobs[0], jobs[2]} {
		c, err := readSeqCurve(j.Dir)
		if err != nil {
			t.Fatal(err)
		}
		curves = append(curves, c)
	}
	rounds, modes, elbo, eubo := seedBands(curves)
	if !slices.Equal(rounds, []float64{50, 99}) || !slices.Equal(modes[0], []float64{3, 5}) || !slices.Equal(modes[1], []float64{1, 1}) ||
		!slices.Equal(elbo[0], []float64{-4, -3}) || !slices.Equal(eubo[1], []float64{1, 1}) {
		t.Errorf("bands: rounds %v, modes %v, ELBO %v, EUBO %v", rounds, modes, elbo, eubo)
	}
	if drew, err := BiochemFigure(path, jobs); !drew || err != nil {
		t.Fatalf("drew %v, %v", drew, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("figure.png: %v", err)
	}
	// A finished run without a readable metrics.csv is an error.
	os.Remove(filepath.Join(jobs[1].Dir, "metrics.csv"))
	if _, err := BiochemFigure(path, jobs); err == nil {
		t.Error("a finished run without metrics.csv was drawn")
	}
}

// seqHeader is the header of a sequence run's metrics.csv.
const seqHeader = "round,reward_calls,student_loss,teacher_loss,modes_seen,modes_eval,elbo,eubo,log_z,log_z_est,log_z_err,pearson,samples,wall_seconds"

// The summary.json collectBiochem reads is the one seqtrain writes, and
// the one of an earlier gfn (the final evaluation under "final", as the
// committed tables' runs have it).
func TestCollectBiochemReadsSeqtrainSummary(t *testing.T) {
	s := seqtrain.Summary{Task: "tfbind8", Method: seqtrain.PER, Seed: 1, RewardCalls: 3200, ModesTotal: 328,
		ModesFound: 7, ModesEval: 2, ELBO: -2, LogZEst: 8.2, LogZErr: 0.1, EUBO: 11, Pearson: math.NaN(), LogZ: 4, Samples: 256, TrueLogZ: 8.3}
	s.Steps, s.WallSeconds, s.MsPerStepMean = 100, 3, 12
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	old := `{"task": "tfbind8", "method": "per", "seed": 1, "rounds": 100, "reward_calls": 3200, "seen": 900, "num_modes": 328,
		"final": {"modes_seen": 7, "modes_eval": 2, "elbo": -2, "log_z_est": 8.2, "log_z_err": 0.1, "eubo": 11, "pearson": null,
		"log_z": 4, "samples": 256}, "true_log_z": 8.3, "wall_seconds": 3, "ms_per_round_mean": 12, "kernel": "go"}`
	for _, b := range [][]byte{b, []byte(old)} {
		dir := filepath.Join(t.TempDir(), "run")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644)
		rs, err := collectBiochem([]BiochemJob{{Task: "tfbind8", Method: "per", Seed: 1, Dir: dir, Rounds: 100}})
		want := BiochemResult{Task: "tfbind8", Method: "per", Seed: 1, Rounds: 100, RewardCalls: 3200, ModesSeen: 7, NumModes: 328, ModesEval: 2,
			ELBO: -2, EUBO: 11, LogZEst: 8.2, TrueLogZ: 8.3, LogZErr: 0.1, Pearson: math.NaN(), WallSeconds: 3, MsPerRound: 12}
		if err != nil || len(rs) != 1 || !math.IsNaN(rs[0].Pearson) {
			t.Fatalf("%+v, %v", rs, err)
		}
		rs[0].Pearson, want.Pearson = 0, 0
		if rs[0] != want {
			t.Errorf("%s:\ngot %+v\nwant %+v", b, rs[0], want)
		}
	}
}

// TestBiochemAppendixTables: the α and local-search tables run their rows'
// gfn train flags on TFbind8 into their own directories, collect results
// under the row names (a run of the row's method with other flags, such as
// another α, is refused), and write results.md with their own claims.
func TestBiochemAppendixTables(t *testing.T) {
	out := t.TempDir()
	for _, c := range []struct {
		table string
		rows  []string
		flags map[string]string // row → the flags that follow --method in its args
	}{
		{"alpha", []string{"teacher-per-alpha0", "teacher-per-alpha0.5", "teacher-per-alpha1"}, map[string]string{
			"teacher-per-alpha0": "teacher-per --alpha 0 ", "teacher-per-alpha0.5": "teacher-per --alpha 0.5", "teacher-per-alpha1": "teacher-per --alpha 1"}},
		{"local-search", []string{"per", "per-ls", "teacher-per", "teacher-per-ls", "teacher-per-tls"}, map[string]string{
			"per": "per --seed", "per-ls": "per --ls --ls-greedy --seed", "teacher-per": "teacher-per --seed",
			"teacher-per-ls": "teacher-per --ls --ls-greedy --seed", "teacher-per-tls": "teacher-per --ls --ls-greedy --ls-teacher"}},
	} {
		o := BiochemOptions{Out: out, Table: c.table, Seeds: 2, Jobs: 1, Quick: true}
		jobs, err := BiochemJobs(o)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 2*len(c.rows) {
			t.Fatalf("%s: %d jobs, want %d (tfbind8 only, 2 seeds)", c.table, len(jobs), 2*len(c.rows))
		}
		for i, j := range jobs {
			if row := c.rows[i%len(c.rows)]; j.Method != row || j.Task != "tfbind8" || j.Table != c.table {
				t.Errorf("%s: job %d is %s %s, want tfbind8 %s", c.table, i, j.Task, j.Method, row)
			}
			if want := filepath.Join(out, "biochem-"+c.table, fmt.Sprintf("tfbind8-%s-seed%d", j.Method, j.Seed)); j.Dir != want {
				t.Errorf("%s: dir %s, want %s", c.table, j.Dir, want)
			}
			if a := strings.Join(j.Args, " "); !strings.Contains(a, "--method "+c.flags[j.Method]) {
				t.Errorf("%s %s: args %q lack %q", c.table, j.Method, a, c.flags[j.Method])
			}
		}
		var calls atomic.Int32
		ran := make(chan []string, 100)
		var log bytes.Buffer
		fake := fakeBiochemRun(jobs, &calls, ran)
		rs, err := runBiochemTable(context.Background(), o, fake, &log)
		if err != nil || len(rs) != len(jobs) {
			t.Fatalf("%s: %d results, %v", c.table, len(rs), err)
		}
		for i, r := range rs {
			if r.Method != jobs[i].Method {
				t.Errorf("%s: result %d is row %s, want %s", c.table, i, r.Method, jobs[i].Method)
			}
		}
		var md bytes.Buffer
		WriteBiochemMarkdown(&md, BiochemReport{Table: c.table, Jobs: 1}, rs)
		tab, _ := BiochemTableByName(c.table)
		for _, want := range []string{"# gfn bench biochem --table " + c.table, tab.Claims[0].Text(), "| " + c.rows[0] + " | 2 |"} {
			if !strings.Contains(md.String(), want) {
				t.Errorf("%s: results.md lacks %q:\n%s", c.table, want, md.String())
			}
		}
	}
	// An unfinished run of another α in a row's directory is not resumed
	// as that row.
	o := BiochemOptions{Out: out, Table: "alpha", Seeds: 2, Quick: true}
	jobs, _ := BiochemJobs(o)
	os.RemoveAll(jobs[0].Dir)
	os.RemoveAll(jobs[1].Dir)
	interruptRun(t, jobs[1]) // α = 0.5, seed 0
	os.Rename(jobs[1].Dir, jobs[0].Dir)
	var calls atomic.Int32
	if _, err := runBiochemTable(context.Background(), o, fakeBiochemRun(jobs, &calls, make(chan []string, 100)), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "teacher-per-alpha0") || calls.Load() != 0 {
		t.Errorf("an α = 0.5 checkpoint resumed as the α = 0 row: %v (%d runs)", err, calls.Load())
	}
	if _, err := BiochemJobs(BiochemOptions{Table: "alpha", Methods: []string{"tb"}}); err == nil ||
		!strings.Contains(err.Error(), `method "tb" is not a row of table alpha`) {
		t.Errorf("a main row in the alpha table: %v", err)
	}
	if _, err := BiochemJobs(BiochemOptions{Table: "gamma"}); err == nil || !strings.Contains(err.Error(), `table "gamma" is unknown (allowed: main, alpha, local-search)`) {
		t.Errorf("unknown table: %v", err)
	}
}
