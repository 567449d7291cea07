package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gfngo/gfn/bench"
	"github.com/gfngo/gfn/safetensors"
	"github.com/gfngo/gfn/seqtrain"
	"github.com/gfngo/gfn/train"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n%s", name, path, got)
	}
}

func runCLI(args ...string) (stdout, stderr string, err error) {
	var o, e bytes.Buffer
	err = run(context.Background(), args, &o, &e)
	return o.String(), e.String(), err
}

func TestHelpGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"help", []string{"help"}},
		{"train-help", []string{"train", "--help"}},
		{"sample-help", []string{"sample", "-h"}},
		{"eval-help", []string{"help", "eval"}},
		{"bench-speed-help", []string{"bench", "speed", "--help"}},
		{"bench-diffusion-help", []string{"bench", "diffusion", "--help"}},
		{"train-diffusion-help", []string{"train", "--task", "25gmm", "--help"}},
		{"train-seq-help", []string{"train", "--task", "tfbind8", "--help"}},
		{"train-smc-help", []string{"train", "--task", "manywell", "--method", "smc", "--help"}},
		{"train-ggns-help", []string{"train", "--task", "25gmm", "--method", "ggns", "--help"}},
		{"reward-help", []string{"reward", "--help"}},
		{"bench-biochem-help", []string{"bench", "biochem", "--help"}},
	} {
		out, _, err := runCLI(c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		golden(t, c.name, out)
	}
}

func TestUsageErrorsGolden(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o644)
	cases := []struct {
		name string
		args []string
	}{
		{"no-command", nil},
		{"unknown-command", []string{"fit"}},
		{"unknown-method", []string{"train", "--method", "ppo"}},
		{"unknown-task", []string{"train", "--task", "chess"}},
		{"bad-side", []string{"train", "--side", "1"}},
		{"bad-dim", []string{"train", "--dim", "0"}},
		{"bad-batch", []string{"train", "--batch", "0"}},
		{"bad-hidden", []string{"train", "--hidden", "256,x"}},
		{"bad-flag", []string{"train", "--sdie", "4"}},
		{"bad-schedule", []string{"train", "--schedule", "SSQ"}},
		{"sample-no-checkpoint", []string{"sample"}},
		{"sample-empty-dir", []string{"sample", "--checkpoint", "testdata"}},
		{"bench-unknown", []string{"bench", "fast"}},
		{"bad-buffer", []string{"train", "--buffer", "lifo"}},
		{"bad-objective", []string{"train", "--objective", "ztb"}},
		{"schedule-without-buffer", []string{"train", "--schedule", "SB"}},
		{"bad-ls-ratio", []string{"train", "--ls", "--ls-back-ratio", "1.5"}},
		{"bench-bad-iterations", []string{"bench", "speed", "--iterations", "0"}},
		{"diffusion-bad-method", []string{"train", "--task", "25gmm", "--method", "sac"}},
		{"diffusion-bad-preset", []string{"train", "--task", "manywell", "--preset", "fast"}},
		{"diffusion-bad-arch", []string{"train", "--task", "25gmm", "--arch", "unet"}},
		{"diffusion-bad-batch", []string{"train", "--task", "25gmm", "--batch", "1"}},
		{"diffusion-bad-drift-clip", []string{"train", "--task", "manywell", "--method", "pis", "--drift-clip", "-1"}},
		{"diffusion-ls-tb", []string{"train", "--task", "manywell", "--method", "tb", "--ls"}},
		{"diffusion-bad-ratio", []string{"train", "--task", "25gmm", "--ratio", "3:1"}},
		{"diffusion-bad-reward", []string{"train", "--task", "25gmm", "--teacher-reward", "mine"}},
		{"resume-missing", []string{"train", "--task", "25gmm", "--resume", "no-such-run"}},
		{"diffusion-bad-milestones", []string{"train", "--task", "25gmm", "--milestones", "10,x"}},
		{"seq-bad-method", []string{"train", "--task", "tfbind8", "--method", "ppo"}},
		{"seq-bad-policy", []string{"train", "--task", "qm9str", "--policy", "gnn"}},
		{"seq-bad-epsilon", []string{"train", "--task", "rna", "--epsilon", "1.5"}},
		{"reward-bad-seq", []string{"reward", "--task", "tfbind8", "--seq", "ACGTXCGT"}},
		{"reward-short-seq", []string{"reward", "--task", "tfbind8", "ACG"}},
		{"reward-no-seq", []string{"reward", "--task", "sehstr"}},
		{"reward-bad-task", []string{"reward", "--task", "chess", "--seq", "A"}},
	}
	var all strings.Builder
	for _, c := range cases {
		_, _, err := runCLI(c.args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: error %v is not a usage error (exit status 2)", c.name, err)
			continue
		}
		all.WriteString(c.name + ": " + err.Error() + "\n")
	}
	golden(t, "usage-errors", all.String())
	// Unwritable output directory: a usage error naming the path, before any work.
	_, _, err := runCLI("train", "--side", "4", "--out", filepath.Join(blocker, "run"))
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), blocker) {
		t.Errorf("unwritable --out: %v", err)
	}
}

func TestTrainSampleEvalEndToEnd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	out, stderr, err := runCLI("train", "--side", "6", "--hidden", "32,32", "--reward-calls", "3200", "--eval-samples", "2000", "--out", dir, "--seed", "3", "--cpuprofile", prof)
	if err != nil {
		t.Fatal(err, stderr)
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("no CPU profile written: %v", err)
	}
	for _, want := range []string{"modes found", "Student exact: L1", "wrote " + dir} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "200/200 100%") {
		t.Errorf("no progress bar on stderr:\n%s", stderr)
	}
	for _, f := range []string{"metrics.csv", "summary.json", "checkpoint.safetensors", "config.json", "distributions.png", "modes.png", "l1.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing output %s", f)
		}
	}
	var sum map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"modes_found", "reward_calls", "steps", "wall_seconds"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary.json lacks %q", k)
		}
	}
	if sum["reward_calls"].(float64) != 3200 || sum["steps"].(float64) != 200 {
		t.Errorf("summary %v", sum)
	}
	// The checkpoint holds PyTorch-layout tensors for both agents.
	f, _ := os.Open(filepath.Join(dir, "checkpoint.safetensors"))
	ts, _, err := safetensors.Read(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string][]int{}
	for _, tt := range ts {
		names[tt.Name] = tt.Shape
	}
	if s := names["student.model.0.weight"]; len(s) != 2 || s[0] != 32 || s[1] != 12 {
		t.Errorf("student.model.0.weight shape %v, want [32 12]", s)
	}
	for _, n := range []string{"teacher.model.4.bias", "student.logZ", "teacher.optim.step", "student.optim.model.2.weight.exp_avg"} {
		if _, ok := names[n]; !ok {
			t.Errorf("checkpoint lacks %s", n)
		}
	}
	// metrics.csv has the header and one row per curve point.
	f, _ = os.Open(filepath.Join(dir, "metrics.csv"))
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) < 10 || rows[0][0] != "step" {
		t.Errorf("metrics.csv: %d rows, err %v", len(rows), err)
	}

	// sample: deterministic from --seed, valid terminal states.
	a, _, err := runCLI("sample", "--checkpoint", dir, "-n", "50", "--seed", "1")
	if err != nil {
		t.Fatal(err)
	}
	b2, _, _ := runCLI("sample", "--checkpoint", dir, "-n", "50", "--seed", "1")
	if a != b2 {
		t.Error("sample is not deterministic for a fixed seed")
	}
	rows, err = csv.NewReader(strings.NewReader(a)).ReadAll()
	if err != nil || len(rows) != 51 || strings.Join(rows[0], ",") != "x1,x2,log_reward" {
		t.Fatalf("sample CSV: %d rows, header %v, err %v", len(rows), rows[0], err)
	}
	csvPath := filepath.Join(t.TempDir(), "s.csv")
	if _, _, err := runCLI("sample", "--checkpoint", dir, "-n", "10", "--out", csvPath); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(csvPath); strings.Count(string(b), "\n") != 11 {
		t.Errorf("sample --out wrote %q", b)
	}

	// eval: JSON with exact metrics matching what train reported.
	ev, _, err := runCLI("eval", "--checkpoint", dir, "--samples", "1000")
	if err != nil {
		t.Fatal(err)
	}
	var rep train.Evaluation
	if err := json.Unmarshal([]byte(ev), &rep); err != nil {
		t.Fatal(err, ev)
	}
	se := sum["student_exact"].(map[string]any)
	if rep.StudentExact == nil || rep.StudentExact.TV != se["tv"].(float64) || rep.Step != 200 {
		t.Errorf("eval %+v disagrees with train's summary %v", rep, se)
	}
	if got := evalDefault(t, dir); got != 100000 {
		t.Errorf("default eval samples of a grid checkpoint %d, want 100000", got)
	}
	if _, _, err := runCLI("eval", "--checkpoint", dir, "--weights", filepath.Join(t.TempDir(), "w.csv")); err == nil || !strings.Contains(err.Error(), "grid run") {
		t.Errorf("eval --weights of a grid checkpoint: %v", err)
	}
}

// Every method preset of gfn bench grid is a valid gfn train command line.
func TestBenchGridPresetsTrain(t *testing.T) {
	for name, preset := range bench.GridMethods {
		dir := filepath.Join(t.TempDir(), name)
		args := append([]string{"train", "--side", "5", "--hidden", "8", "--reward-calls", "320", "--eval-samples", "100", "--quiet", "--out", dir}, preset...)
		if _, stderr, err := runCLI(args...); err != nil {
			t.Errorf("preset %s: %v\n%s", name, err, stderr)
		}
	}
}

// TestSequenceTrainSampleReward trains a short sequence run, samples its
// checkpoint, and checks gfn reward against the task's own scoring.
func TestSequenceTrainSampleReward(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	out, _, err := runCLI("train", "--task", "tfbind8", "--rounds", "6", "--eval-every", "3", "--eval-samples", "64",
		"--hidden", "16", "--embed", "16", "--out", dir, "--quiet", "--cpuprofile", prof)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("no CPU profile written: %v", err)
	}
	for _, want := range []string{"method teacher-per", "rounds 6, reward calls 192", "modes found", "of 328"} {
		if !strings.Contains(out, want) {
			t.Errorf("train output lacks %q:\n%s", want, out)
		}
	}
	csvOut, _, err := runCLI("sample", "--checkpoint", dir, "--n", "5")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csvOut), "\n")
	if len(lines) != 6 || lines[0] != "sequence,score,log_reward,mode" {
		t.Fatalf("sample output:\n%s", csvOut)
	}
	seq := strings.Split(lines[1], ",")[0]
	rw, _, err := runCLI("reward", "--task", "tfbind8", "--seq", seq)
	if err != nil {
		t.Fatal(err)
	}
	// The sampled row's score and log-reward equal gfn reward's.
	got := strings.Split(strings.Split(strings.TrimSpace(rw), "\n")[1], ",")
	want := strings.Split(lines[1], ",")
	gs, _ := strconv.ParseFloat(got[1], 64)
	ws, _ := strconv.ParseFloat(want[1], 64)
	gl, _ := strconv.ParseFloat(got[3], 64)
	wl, _ := strconv.ParseFloat(want[2], 64)
	if got[0] != seq || math.Abs(gs-ws) > 1e-9*math.Abs(ws) || math.Abs(gl-wl) > 1e-9*math.Max(1, math.Abs(wl)) {
		t.Errorf("gfn reward %v, sampled row %v", got, want)
	}
	// Resume of a finished run is refused; of the periodic checkpoint it continues.
	if _, _, err := runCLI("train", "--resume", dir); err == nil || !strings.Contains(err.Error(), "finished") {
		t.Errorf("resuming a finished run: %v", err)
	}
	// gfn eval evaluates the Student as training does: its modes found and
	// learned log Z are the summary's, the bounds bracket the true log Z,
	// and a seed gives the same report twice.
	ev, _, err := runCLI("eval", "--checkpoint", dir, "--samples", "64", "--seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := runCLI("eval", "--checkpoint", dir, "--samples", "64", "--seed", "3")
	if err != nil || again != ev {
		t.Errorf("eval with one seed differs: %v\n%s\nvs\n%s", err, ev, again)
	}
	var rep struct {
		Task    string
		Round   int
		Student seqtrain.Metrics
	}
	if err := json.Unmarshal([]byte(ev), &rep); err != nil {
		t.Fatalf("eval output: %v\n%s", err, ev)
	}
	var sum seqtrain.Summary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	m := rep.Student
	if got := evalDefault(t, dir); got != 2048 {
		t.Errorf("default eval samples of a sequence checkpoint %d, want 2048", got)
	}
	if rep.Task != "tfbind8" || rep.Round != 6 || m.Samples != 64 || m.ModesSeen != sum.ModesFound || m.LogZ != sum.LogZ {
		t.Errorf("eval report %+v, summary's final evaluation %+v", rep, sum)
	}
	if !(m.ELBO < sum.TrueLogZ && sum.TrueLogZ < m.EUBO) || math.Abs(m.LogZErr-math.Abs(m.LogZEst-sum.TrueLogZ)) > 1e-12 {
		t.Errorf("ELBO %g, EUBO %g, log Z estimate %g (error %g) against log Z %g", m.ELBO, m.EUBO, m.LogZEst, m.LogZErr, sum.TrueLogZ)
	}
	if _, _, err := runCLI("eval", "--checkpoint", dir, "--figures"); err == nil || !strings.Contains(err.Error(), "diffusion") {
		t.Errorf("eval --figures of a sequence checkpoint: %v", err)
	}
	// --weights: the same report, and 64 log weights per set whose means
	// are the ELBO (model) and the EUBO (target), with their sequences.
	rows := evalWeights(t, ev, "--checkpoint", dir, "--samples", "64", "--seed", "3")
	if len(rows) != 1+2*64 || strings.Join(rows[0], ",") != "agent,set,log_w,sequence" {
		t.Fatalf("weights CSV: %d rows, header %v", len(rows), rows[0])
	}
	sums := map[string]float64{}
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[2], 64)
		if err != nil || r[0] != "student" || len(r[3]) != 8 || strings.Trim(r[3], "ACGT") != "" {
			t.Fatalf("weights row %v: %v", r, err)
		}
		sums[r[1]] += v
	}
	if e, x := sums["model"]/64, sums["target"]/64; math.Abs(e-m.ELBO) > 1e-9*math.Abs(m.ELBO) || math.Abs(x-m.EUBO) > 1e-9*math.Abs(m.EUBO) {
		t.Errorf("log weights' means %v (model), %v (target); eval's ELBO %v, EUBO %v", e, x, m.ELBO, m.EUBO)
	}
}

// TestDiffusionTrainSampleEval trains a tiny 25GMM Teacher run and reads
// its checkpoint with gfn sample and gfn eval.
func TestDiffusionTrainSampleEval(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, _, err := runCLI("train", "--task", "25gmm", "--method", "teacher", "--hidden", "16", "--harmonics", "7", "--steps", "5", "--batch", "16",
		"--iterations", "20", "--eval-every", "10", "--eval-samples", "50", "--final-samples", "100", "--out", dir, "--quiet"); err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Config struct {
			Net struct{ Hidden, Harmonics int }
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "config.json")); err != nil || json.Unmarshal(b, &rec) != nil {
		t.Fatalf("config.json: %v", err)
	}
	if rec.Config.Net.Hidden != 16 || rec.Config.Net.Harmonics != 7 {
		t.Errorf("config.json net %+v, want width 16 and 7 harmonics from --hidden and --harmonics", rec.Config.Net)
	}
	a, _, err := runCLI("sample", "--checkpoint", dir, "-n", "30", "--seed", "1")
	if err != nil {
		t.Fatal(err)
	}
	if b, _, _ := runCLI("sample", "--checkpoint", dir, "-n", "30", "--seed", "1"); a != b {
		t.Error("sample is not deterministic for a fixed seed")
	}
	rows, err := csv.NewReader(strings.NewReader(a)).ReadAll()
	if err != nil || len(rows) != 31 || strings.Join(rows[0], ",") != "x1,x2,log_reward" {
		t.Fatalf("sample CSV: %d rows, err %v:\n%s", len(rows), err, a)
	}
	for _, r := range rows[1:] {
		if v, err := strconv.ParseFloat(r[2], 64); err != nil || math.IsNaN(v) || v > 0 {
			t.Errorf("sample row %v: log-reward not a log-density of 25GMM (<= 0)", r)
		}
	}
	ev, _, err := runCLI("eval", "--checkpoint", dir, "--samples", "300", "--seed", "2")
	if err != nil {
		t.Fatal(err)
	}
	if again, _, _ := runCLI("eval", "--checkpoint", dir, "--samples", "300", "--seed", "2"); again != ev {
		t.Errorf("eval with one seed differs:\n%s\nvs\n%s", ev, again)
	}
	var rep struct {
		Task     string
		Step     int
		Student  map[string]float64
		Teacher  map[string]float64
		TrueLogZ *float64 `json:"true_log_z"`
	}
	if err := json.Unmarshal([]byte(ev), &rep); err != nil {
		t.Fatalf("eval output: %v\n%s", err, ev)
	}
	for _, m := range []map[string]float64{rep.Student, rep.Teacher} {
		if m["samples"] != 300 || !(m["elbo"] <= m["elbo_is"]) || !(m["w2"] > 0) {
			t.Errorf("eval metrics %v: want 300 samples, ELBO <= ELBO-IS (Jensen), W2 > 0", m)
		}
	}
	if rep.Task != "25gmm" || rep.Step != 20 || rep.TrueLogZ == nil || *rep.TrueLogZ != 0 {
		t.Errorf("eval report %+v", rep)
	}
	if got := evalDefault(t, dir); got != 10000 {
		t.Errorf("default eval samples of a diffusion checkpoint %d, want 10000", got)
	}
	checkWeights(t, dir, ev, rep.Student, rep.Teacher)
	// gfn eval names the task as summary.json does (Manywell's energy
	// prints itself with its dimension).
	mw := filepath.Join(t.TempDir(), "mw")
	if _, _, err := runCLI("train", "--task", "manywell", "--method", "tb", "--hidden", "16", "--steps", "5", "--batch", "16",
		"--iterations", "4", "--eval-every", "2", "--eval-samples", "50", "--final-samples", "100", "--out", mw, "--quiet"); err != nil {
		t.Fatal(err)
	}
	ev, _, err = runCLI("eval", "--checkpoint", mw, "--samples", "100")
	if err != nil || json.Unmarshal([]byte(ev), &rep) != nil || rep.Task != "manywell" {
		t.Errorf("gfn eval of a Manywell run: task %q (%v), want manywell", rep.Task, err)
	}
}

// evalWeights runs gfn eval with args and --weights, checks that it prints
// ev (the report without --weights), and returns the CSV's rows.
func evalWeights(t *testing.T, ev string, args ...string) [][]string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.csv")
	got, _, err := runCLI(append(append([]string{"eval"}, args...), "--weights", path)...)
	if err != nil || got != ev {
		t.Errorf("eval --weights printed (%v)\n%s\nwithout --weights\n%s", err, got, ev)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("weights CSV: %d rows, %v", len(rows), err)
	}
	return rows
}

// checkWeights: gfn eval --weights prints the evaluation it prints without
// (ev, with --samples 300 --seed 2; its metrics student and teacher) and
// writes 300 log weights per agent and set, whose means are the ELBO
// (model set) and the EUBO (exact set) and whose log-mean-exp on the model
// set is the ELBO-IS; every row carries its sample's d coordinates.
func checkWeights(t *testing.T, dir, ev string, student, teacher map[string]float64) {
	t.Helper()
	rows := evalWeights(t, ev, "--checkpoint", dir, "--samples", "300", "--seed", "2")
	if len(rows) != 1+4*300 || strings.Join(rows[0], ",") != "agent,set,log_w,x1,x2" {
		t.Fatalf("weights CSV: %d rows, header %v", len(rows), rows[0])
	}
	w := map[string][]float64{}
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[2], 64)
		if err != nil {
			t.Fatalf("row %v: %v", r, err)
		}
		for _, c := range r[3:] {
			if _, err := strconv.ParseFloat(c, 32); err != nil {
				t.Fatalf("row %v: coordinate %q: %v", r, c, err)
			}
		}
		w[r[0]+" "+r[1]] = append(w[r[0]+" "+r[1]], v)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for agent, m := range map[string]map[string]float64{"student": student, "teacher": teacher} {
		model, exact := w[agent+" model"], w[agent+" exact"]
		if len(model) != 300 || len(exact) != 300 {
			t.Fatalf("%s: %d model and %d exact rows, want 300 each", agent, len(model), len(exact))
		}
		var sm, sx, mx float64
		mx = math.Inf(-1)
		for i := range model {
			sm += model[i]
			sx += exact[i]
			mx = max(mx, model[i])
		}
		var se float64
		for _, v := range model {
			se += math.Exp(v - mx)
		}
		lme := mx + math.Log(se/300)
		if !near(sm/300, m["elbo"]) || !near(lme, m["elbo_is"]) || !near(sx/300, m["eubo"]) {
			t.Errorf("%s: log weights give ELBO %v, ELBO-IS %v, EUBO %v; eval printed %v", agent, sm/300, lme, sx/300, m)
		}
	}
	if _, _, err := runCLI("eval", "--checkpoint", dir, "--weights", filepath.Join(t.TempDir(), "w.csv"), "--figures"); err == nil || !strings.Contains(err.Error(), "--figures") {
		t.Errorf("eval --weights --figures: %v", err)
	}
}

// TestSMCRun runs the SMC baseline from the CLI: its summary holds the
// log Z estimate (in the elbo and elbo_is keys, as bench diffusion reads
// them), a W2 and the cost.
func TestSMCRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "smc")
	out, _, err := runCLI("train", "--task", "25gmm", "--method", "smc", "--particles", "500", "--temperatures", "32", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "log Z estimate") || !strings.Contains(out, "gradient evaluations") {
		t.Errorf("output:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Method    string
		ELBOIS    float64 `json:"elbo_is"`
		LogZ      float64 `json:"log_z"`
		W2        *float64
		GradEvals int `json:"grad_evals"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	// 25GMM's log Z is 0; 500 particles from a wide prior get within a few tenths.
	if s.Method != "smc" || s.ELBOIS != s.LogZ || math.Abs(s.LogZ) > 0.5 || s.W2 == nil || *s.W2 <= 0 || s.GradEvals == 0 {
		t.Errorf("summary %s", b)
	}
}

// TestSMCSuite: SMC runs on the suite's energies with Blessing et al.'s
// settings (HMC moves, their prior scale) and reports the suite metrics
// of its particles: EMC on the 40-mode mixture, MMD against exact
// samples, |Δ log Z| of its estimate.
func TestSMCSuite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "smc")
	if _, _, err := runCLI("train", "--task", "gmm40", "--method", "smc", "--particles", "400", "--temperatures", "32", "--out", dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		LogZ      float64  `json:"log_z"`
		Kernel    string   `json:"kernel"`
		PriorVar  float64  `json:"prior_var"`
		EMC       *float64 `json:"emc"`
		MMD       *float64 `json:"mmd"`
		DeltaLogZ *float64 `json:"delta_log_z"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Kernel != "hmc" || s.PriorVar != 1600 || s.EMC == nil || !(*s.EMC > 0 && *s.EMC <= 1) || s.MMD == nil || s.DeltaLogZ == nil || *s.DeltaLogZ != math.Abs(s.LogZ) {
		t.Errorf("summary %s", b)
	}
	// LGCP: no exact sampler and no known log Z, so no W2, MMD or
	// |Δ log Z|, and nothing NaN in the summary.
	dir = filepath.Join(t.TempDir(), "lgcp")
	if _, _, err := runCLI("train", "--task", "lgcp", "--method", "smc", "--particles", "8", "--temperatures", "2", "--out", dir); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		LogZ      float64  `json:"log_z"`
		TrueLogZ  *float64 `json:"true_log_z"`
		DeltaLogZ *float64 `json:"delta_log_z"`
		MMD       *float64 `json:"mmd"`
	}
	if err := json.Unmarshal(b, &l); err != nil || l.TrueLogZ != nil || l.DeltaLogZ != nil || l.MMD != nil || math.IsNaN(l.LogZ) {
		t.Errorf("lgcp summary (%v) %s", err, b)
	}
}

// TestRewardArguments: sequences given as repeated --seq, as arguments,
// or both with flags in between, and after "--", print the same rows in
// the order given.
func TestRewardArguments(t *testing.T) {
	want, _, err := runCLI("reward", "--task", "tfbind8", "--seq", "ACGTACGT", "--seq", "AAAAAAAA", "--seq", "CCCCCCCC")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(want, "\n"); n != 4 {
		t.Fatalf("3 sequences gave %d lines:\n%s", n, want)
	}
	for _, args := range [][]string{
		{"reward", "--task", "tfbind8", "ACGTACGT", "AAAAAAAA", "CCCCCCCC"},
		{"reward", "ACGTACGT", "--task", "tfbind8", "--seq", "AAAAAAAA", "CCCCCCCC"},
		{"reward", "--seq", "ACGTACGT", "AAAAAAAA", "--task", "tfbind8", "CCCCCCCC"},
		{"reward", "--task", "tfbind8", "--", "ACGTACGT", "AAAAAAAA", "CCCCCCCC"},
	} {
		got, _, err := runCLI(args...)
		if err != nil || got != want {
			t.Errorf("%q: %v\n%s\nwant\n%s", args, err, got, want)
		}
	}
	// After "--" an argument that looks like a flag is a sequence.
	_, _, err = runCLI("reward", "--task", "tfbind8", "--", "--task")
	if err == nil || !strings.Contains(err.Error(), `"--task" has length 6`) {
		t.Errorf("a sequence after --: %v", err)
	}
}

// evalDefault is gfn eval's default --samples for the run in dir.
func evalDefault(t *testing.T, dir string) int {
	t.Helper()
	f, _, err := familyOfRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return f.evalSamples
}

// TestGridObjectives: gfn train takes --objective subtb and fl-subtb
// (with --lambda), vargrad, fm and mdb on the grid, and refuses --lambda where
// it means nothing and objectives the grid lacks, naming the allowed ones.
func TestGridObjectives(t *testing.T) {
	for _, args := range [][]string{
		{"--objective", "subtb", "--lambda", "0.5"},
		{"--objective", "vargrad", "--buffer", "teacher"},
		{"--objective", "fm", "--method", "tb"},
		{"--objective", "mdb"},
		{"--objective", "fl-subtb", "--lambda", "0.5"},
		{"--objective", "mdb", "--free-state-rewards"},
	} {
		dir := t.TempDir()
		out, _, err := runCLI(append([]string{"train", "--dim", "2", "--side", "6", "--hidden", "16", "--reward-calls", "960", "--eval-samples", "0", "--quiet", "--out", dir}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "config.json"))
		if !strings.Contains(string(b), `"objective": "`+args[1]+`"`) || !strings.Contains(out, "Student exact: L1") {
			t.Errorf("%v: config.json %s\noutput %s", args, b, out)
		}
		// Free state rewards: the budget's 960 reward calls are terminal
		// ones, the visited states' counted apart.
		if free := slices.Contains(args, "--free-state-rewards"); free != strings.Contains(out, "reward calls 960 (and ") {
			t.Errorf("%v: output %s", args, out)
		}
	}
	for args, want := range map[string]string{
		"--lambda 0.5":                 `--lambda 0.5 weighs subtb's sub-trajectories; objective "tb" has none`,
		"--objective ztb":              `objective "ztb" is unknown (allowed: tb, db, subtb, vargrad, fm, mdb, fl-db, fl-subtb)`,
		"--objective fl-db --lambda 2": `--lambda 2 weighs subtb's sub-trajectories; objective "fl-db" has none`,
		"--objective subtb --n-mc 2":   `n-mc 2 averages TB residuals`,
	} {
		_, _, err := runCLI(append([]string{"train", "--out", t.TempDir()}, strings.Fields(args)...)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

// TestDiffusionObjectives: --objective vargrad and fl-subtb (with
// --lambda and --flow-lr) train a diffusion sampler; an objective the
// family lacks is refused naming the allowed ones, and --lambda and
// --flow-lr where they mean nothing.
func TestDiffusionObjectives(t *testing.T) {
	for _, c := range [][]string{{"--objective", "vargrad"}, {"--objective", "fl-subtb", "--lambda", "3", "--flow-lr", "0.003"}} {
		dir := t.TempDir()
		args := append([]string{"train", "--task", "25gmm", "--method", "teacher"}, c...)
		args = append(args, "--iterations", "20", "--batch", "16", "--steps", "5", "--hidden", "16", "--eval-every", "10",
			"--eval-samples", "32", "--final-samples", "32", "--quiet", "--out", dir)
		if _, _, err := runCLI(args...); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "config.json"))
		want := []string{`"objective": "` + c[1] + `"`}
		if c[1] == "fl-subtb" {
			want = append(want, `"lambda": 3`, `"flow_lr": 0.003`)
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%v: config.json lacks %s:\n%s", c, w, b)
			}
		}
	}
	// Each refused before anything trains (a run would take minutes).
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--objective", "fm"}, `objective "fm" is not available for diffusion samplers (allowed: tb, vargrad, db, subtb, fl-db, fl-subtb)`},
		{[]string{"--objective", "db", "--lambda", "3"}, `--lambda 3 weighs subtb's sub-trajectories; objective "db" has none`},
		{[]string{"--flow-lr", "0.1"}, `--flow-lr 0.1: objective "tb" learns no flow network`},
		{[]string{"--objective", "subtb", "--flow-lr", "-1"}, `flow learning rate -1 must be finite and > 0`},
	} {
		_, _, err := runCLI(append(append([]string{"train", "--task", "25gmm"}, c.args...), "--out", t.TempDir())...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
