package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gfngo/gfn/rewardcmd"
	"github.com/gfngo/gfn/train"
)

// The test binary is also a reward program: run with GFN_REWARD_HELPER
// set to ok, nan@K (log-reward NaN for the first object of batch K) or
// exit@K (exits at batch K), it serves the helper rewards instead of
// running the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("GFN_REWARD_HELPER"); mode != "" {
		if err := rewardcmd.Serve(os.Stdin, os.Stdout, helperRewards(mode)); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func helperRewards(mode string) func(s rewardcmd.Shape, b *rewardcmd.Batch, out []float64) error {
	fail, at := "", 0
	if m, k, ok := strings.Cut(mode, "@"); ok {
		fail = m
		at, _ = strconv.Atoi(k)
	}
	return func(s rewardcmd.Shape, b *rewardcmd.Batch, out []float64) error {
		for i := range out {
			switch s.Kind {
			case rewardcmd.Sequence:
				out[i] = float64(strings.Count(b.Sequences[i], "G"))/2 - 1
			case rewardcmd.Points:
				for _, v := range b.Points[i] {
					out[i] -= v * v / 2
				}
			case rewardcmd.Grid:
				for j, v := range b.Cells[i] {
					out[i] += float64((j+1)*v) / 4
				}
			}
		}
		if b.Number == at {
			switch fail {
			case "nan":
				out[0] = math.NaN()
			case "exit":
				fmt.Fprintln(os.Stderr, "helper: out of memory")
				os.Exit(1)
			}
		}
		return nil
	}
}

func helperCmd(mode string) string {
	return fmt.Sprintf("GFN_REWARD_HELPER=%s '%s'", mode, os.Args[0])
}

// readReward returns the command recorded in dir's reward.json.
func readReward(t *testing.T, dir string) rewardRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rewardFile))
	if err != nil {
		t.Fatal(err)
	}
	var r rewardRecord
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func wantAll(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// TestRewardCmdSeqResume: the program returns NaN at batch 5 (round 4);
// the run stops naming the batch after a checkpoint of round 4, and
// --resume with a fixed program finishes it.
func TestRewardCmdSeqResume(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"train", "--reward-cmd", helperCmd("nan@5"), "--task", "seq", "--alphabet", "ACGT", "--length", "6",
		"--rounds", "12", "--batch", "8", "--offline-batch", "8", "--eval-every", "100", "--eval-samples", "16",
		"--hidden", "16", "--embed", "16", "--checkpoint-every", "2", "--out", dir, "--quiet"}
	out, _, err := runCLI(args...)
	if err == nil {
		t.Fatal("the run went through a NaN")
	}
	var ue usageError
	if errors.As(err, &ue) {
		t.Fatalf("a failing program is a usage error: %v", err)
	}
	wantAll(t, "error", err.Error(), "seqtrain: round 4", "rewardcmd: batch 5 (8 objects): log-reward 0 is NaN (object ", `"log_reward":[NaN,`,
		"checkpoint of round 4 written to "+dir, "gfn train --resume "+dir+" continues from round 4")
	wantAll(t, "output", out, "reward program", "sequences of 6 over ACGT", "protocol gfn-reward 1")
	out, _, err = runCLI("train", "--resume", dir, "--reward-cmd", helperCmd("ok"), "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, "resumed output", out, "resuming "+dir, "at round 4 of 12", "rounds 12, reward calls 96", "reward.json")
	if r := readReward(t, dir); r.Command != helperCmd("ok") || r.Kind != rewardcmd.Sequence || r.Length != 6 || strings.Join(r.Alphabet, "") != "ACGT" {
		t.Errorf("reward.json after the resume: %+v", r)
	}
	ev, _, err := runCLI("eval", "--checkpoint", dir, "--samples", "64")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Task    string
		Round   int
		Student map[string]*float64
	}
	if err := json.Unmarshal([]byte(ev), &rep); err != nil || rep.Task != "seq" || rep.Round != 12 ||
		rep.Student["elbo"] == nil || rep.Student["log_z_est"] == nil || rep.Student["eubo"] != nil || *rep.Student["samples"] != 64 {
		t.Errorf("gfn eval of a reward program's sequence run (ELBO, no EUBO without targets): %v\n%s", err, ev)
	}
	rows := sampleRows(t, "sample", "--checkpoint", dir, "-n", "10")
	if strings.Join(rows[0], ",") != "sequence,log_reward" || len(rows) != 11 {
		t.Fatalf("sample CSV header %v, %d rows", rows[0], len(rows))
	}
	for _, r := range rows[1:] {
		lr, err := strconv.ParseFloat(r[1], 64)
		if len(r[0]) != 6 || strings.Trim(r[0], "ACGT") != "" || err != nil || lr != float64(strings.Count(r[0], "G"))/2-1 {
			t.Errorf("sample row %v: not a 6-mer over ACGT with the program's log-reward", r)
		}
	}
}

// sampleRows runs gfn with args and reads its standard output as CSV.
func sampleRows(t *testing.T, args ...string) [][]string {
	t.Helper()
	out, _, err := runCLI(args...)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("gfn %v: %v, %d rows:\n%s", args, err, len(rows), out)
	}
	return rows
}

// TestRewardCmdPointsResume: the program exits at batch 6; the diffusion
// run stops naming the batch and the program's last words after a
// checkpoint, and --resume with a fixed program finishes it.
func TestRewardCmdPointsResume(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"train", "--reward-cmd", helperCmd("exit@6"), "--task", "points", "--dim", "3",
		"--iterations", "12", "--batch", "16", "--steps", "5", "--hidden", "16", "--eval-every", "100",
		"--eval-samples", "32", "--final-samples", "32", "--checkpoint-every", "4", "--out", dir, "--quiet"}
	_, stderr, err := runCLI(args...)
	if err == nil {
		t.Fatal("the run went on without its program")
	}
	wantAll(t, "error", err.Error(), "rewardcmd: batch 6 (16 objects): the program exited (exit status 1) without answering",
		"helper: out of memory", "training stopped: diffusion: iteration", "checkpoint of iteration", "gfn train --resume "+dir+" continues from iteration")
	wantAll(t, "stderr", stderr, "helper: out of memory")
	out, _, err := runCLI("train", "--resume", dir, "--reward-cmd", helperCmd("ok"), "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, "resumed output", out, "iterations 12", "reward.json")
	if strings.Contains(out, "samples.png") {
		t.Errorf("figures drawn without --figures:\n%s", out)
	}
	ev, _, err := runCLI("eval", "--checkpoint", dir, "--samples", "64")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Step    int
		Student map[string]*float64
	}
	if err := json.Unmarshal([]byte(ev), &rep); err != nil || rep.Step != 12 || rep.Student["elbo"] == nil || rep.Student["elbo_is"] == nil ||
		rep.Student["eubo"] != nil || rep.Student["w2"] != nil {
		t.Errorf("gfn eval of a reward program's points run (ELBO, no EUBO or W2 without exact samples): %v\n%s", err, ev)
	}
	// Without exact samples, --weights holds the fresh samples' log
	// weights only.
	wpath := filepath.Join(t.TempDir(), "w.csv")
	if _, _, err := runCLI("eval", "--checkpoint", dir, "--samples", "64", "--weights", wpath); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(wpath); err != nil || strings.Count(string(b), "\nstudent,model,") != 64 || strings.Contains(string(b), ",exact,") {
		t.Errorf("weights of a points run: want 64 student model rows and no exact ones (%v):\n%.300s", err, b)
	}
	if _, _, err := runCLI("eval", "--checkpoint", dir, "--figures"); err == nil || !strings.Contains(err.Error(), "does not run reward programs") {
		t.Errorf("gfn eval --figures of a reward program's run: %v", err)
	}
	rows := sampleRows(t, "sample", "--checkpoint", dir, "-n", "10")
	if strings.Join(rows[0], ",") != "x1,x2,x3,log_reward" || len(rows) != 11 {
		t.Fatalf("sample CSV header %v, %d rows", rows[0], len(rows))
	}
	for _, r := range rows[1:] {
		want := 0.0
		for _, s := range r[:3] {
			v, _ := strconv.ParseFloat(s, 32)
			want -= v * v / 2
		}
		if lr, err := strconv.ParseFloat(r[3], 64); err != nil || math.Abs(lr-want) > 1e-9*math.Max(1, -want) {
			t.Errorf("sample row %v: log-reward is not the program's -|x|²/2 = %v", r, want)
		}
	}
}

// TestRewardCmdGrid trains on a grid whose rewards come from the program
// and checks the exact target against the helper's rewards; then a run
// that fails at batch 12 (iteration 10) resumes from its checkpoint of
// iteration 8 with the command recorded in the checkpoint's spec.
func TestRewardCmdGrid(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ok")
	out, _, err := runCLI("train", "--reward-cmd", helperCmd("ok"), "--dim", "2", "--side", "5", "--hidden", "16",
		"--reward-calls", "320", "--eval-samples", "100", "--out", dir, "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	// log Z of R(x) = exp((x1 + 2 x2)/4) over the terminal states: the
	// cells with both coordinates < 4, and those with one equal to 4.
	z := 0.0
	for x1 := range 5 {
		for x2 := range 5 {
			if x1 < 4 || x2 < 4 {
				z += math.Exp(float64(x1+2*x2) / 4)
			}
		}
	}
	wantAll(t, "output", out, "hypergrid(d=2, H=5, custom)", fmt.Sprintf("(true %.4f)", math.Log(z)), "Student exact: L1", "reward.json, ", "modes.png")
	if strings.Contains(out, "modes found") {
		t.Errorf("a custom grid reports modes:\n%s", out)
	}
	// gfn sample starts the recorded program to score the samples.
	rows := sampleRows(t, "sample", "--checkpoint", dir, "-n", "20", "--seed", "1")
	if strings.Join(rows[0], ",") != "x1,x2,log_reward" || len(rows) != 21 {
		t.Fatalf("sample CSV header %v, %d rows", rows[0], len(rows))
	}
	for _, r := range rows[1:] {
		x1, _ := strconv.Atoi(r[0])
		x2, _ := strconv.Atoi(r[1])
		if lr, err := strconv.ParseFloat(r[2], 64); err != nil || lr != float64(x1+2*x2)/4 {
			t.Errorf("sample row %v: log-reward is not the program's (x1 + 2 x2)/4", r)
		}
	}
	if _, _, err := runCLI("sample", "--checkpoint", dir, "--reward-cmd", helperCmd("nan@1")); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("gfn sample --reward-cmd with a failing program: %v", err)
	}
	// gfn eval too: the exact target from the program's rewards.
	ev, _, err := runCLI("eval", "--checkpoint", dir, "--samples", "500")
	if err != nil {
		t.Fatal(err)
	}
	var rep train.Evaluation
	if err := json.Unmarshal([]byte(ev), &rep); err != nil || rep.TrueLogZ == nil || math.Abs(*rep.TrueLogZ-math.Log(z)) > 1e-9 ||
		rep.StudentExact == nil || rep.Samples != 500 {
		t.Errorf("gfn eval of a reward program's grid run: %v\n%s", err, ev)
	}
	cc, err := train.ReadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`{"task":"hypergrid","dim":2,"side":5,"reward":"custom","reward_cmd":%q}`, helperCmd("ok")); string(cc.Env) != want {
		t.Errorf("checkpoint spec %s, want %s", cc.Env, want)
	}

	dir = filepath.Join(t.TempDir(), "fail")
	_, _, err = runCLI("train", "--reward-cmd", helperCmd("nan@12"), "--dim", "2", "--side", "5", "--hidden", "16",
		"--reward-calls", "320", "--eval-samples", "100", "--checkpoint-every", "4", "--out", dir, "--quiet")
	if err == nil {
		t.Fatal("the run went through a NaN")
	}
	wantAll(t, "error", err.Error(), "step 10: rewardcmd: batch 12 (16 objects): log-reward 0 is NaN (object [",
		"gfn train --resume "+dir+" continues from iteration 8")
	// Without reward.json, the command comes from the checkpoint's spec:
	// the failing one again, which fails at its batch 12 again (batch 1
	// is the exact target's), at iteration 18.
	os.Remove(filepath.Join(dir, rewardFile))
	_, _, err = runCLI("train", "--resume", dir, "--quiet")
	wantAll(t, "error", fmt.Sprint(err), "step 18: rewardcmd: batch 12 (16 objects)", "continues from iteration 16")
	out, _, err = runCLI("train", "--resume", dir, "--reward-cmd", helperCmd("ok"), "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, "resumed output", out, "at iteration 16", "steps 20", "reward calls 320")
	if r := readReward(t, dir); r.Command != helperCmd("ok") || r.Kind != rewardcmd.Grid || r.Dim != 2 || r.Side != 5 || r.TimeoutSeconds != 60 {
		t.Errorf("reward.json after the resume: %+v", r)
	}
}

// TestRewardCmdUsage checks the help of the three kinds and the usage
// errors, which stop before the program starts.
func TestRewardCmdUsage(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"train-rewardcmd-seq-help", []string{"train", "--task", "seq", "--help"}},
		{"train-rewardcmd-points-help", []string{"train", "--reward-cmd", "x", "--task", "points", "--help"}},
		{"train-rewardcmd-grid-help", []string{"train", "--reward-cmd", "x", "--help"}},
	} {
		out, _, err := runCLI(c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		golden(t, c.name, out)
	}
	never := "echo started >&2; exit 1"
	var all strings.Builder
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no-command", []string{"train", "--task", "seq"}},
		{"bad-task", []string{"train", "--reward-cmd", never, "--task", "tfbind8"}},
		{"short-alphabet", []string{"train", "--reward-cmd", never, "--task", "seq", "--alphabet", "A"}},
		{"long-token", []string{"train", "--reward-cmd", never, "--task", "seq", "--alphabet", "A,CG"}},
		{"repeated-token", []string{"train", "--reward-cmd", never, "--task", "seq", "--alphabet", "ACGA"}},
		{"bad-length", []string{"train", "--reward-cmd", never, "--task", "seq", "--length", "0"}},
		{"bad-seq-method", []string{"train", "--reward-cmd", never, "--task", "seq", "--method", "ppo"}},
		{"bad-dim", []string{"train", "--reward-cmd", never, "--task", "points", "--dim", "0"}},
		{"pis", []string{"train", "--reward-cmd", never, "--task", "points", "--method", "pis"}},
		{"ls", []string{"train", "--reward-cmd", never, "--task", "points", "--method", "per", "--ls"}},
		{"grid-reward", []string{"train", "--reward-cmd", never, "--reward", "original"}},
		{"grid-side", []string{"train", "--reward-cmd", never, "--side", "1"}},
		{"bad-timeout", []string{"train", "--reward-cmd", never, "--reward-timeout", "-1s"}},
		{"resume-missing", []string{"train", "--reward-cmd", never, "--resume", "no-such-run"}},
	} {
		_, stderr, err := runCLI(c.args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: error %v is not a usage error", c.name, err)
			continue
		}
		if strings.Contains(stderr, "started") {
			t.Errorf("%s: the program started", c.name)
		}
		all.WriteString(c.name + ": " + err.Error() + "\n")
	}
	golden(t, "rewardcmd-usage-errors", all.String())
	// A program that fails the handshake stops the run before any output.
	dir := filepath.Join(t.TempDir(), "run")
	_, _, err := runCLI("train", "--reward-cmd", never, "--task", "seq", "--out", dir)
	wantAll(t, "handshake error", fmt.Sprint(err), "rewardcmd: handshake with", "exited (exit status 1)", "started")
	if _, err := os.Stat(filepath.Join(dir, rewardFile)); err == nil {
		t.Error("reward.json written for a program that never started")
	}
}

// TestRewardCmdPythonExample trains briefly with the Python example where
// python3 exists.
func TestRewardCmdPythonExample(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	prog, _ := filepath.Abs("../../examples/reward/my_reward.py")
	dir := filepath.Join(t.TempDir(), "run")
	out, stderr, err := runCLI("train", "--reward-cmd", "python3 '"+prog+"'", "--task", "seq", "--alphabet", "ACGT", "--length", "8",
		"--rounds", "10", "--eval-every", "5", "--eval-samples", "64", "--hidden", "16", "--embed", "16", "--out", dir, "--quiet")
	if err != nil {
		t.Fatal(err, stderr)
	}
	wantAll(t, "output", out, "rounds 10, reward calls 320")
	wantAll(t, "stderr", stderr, "my_reward.py: scoring")
}
