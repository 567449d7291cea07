package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gfngo/gfn/seqtrain"
)

// TestSequenceMethodTeacherAndExtend: --method teacher is Teacher + PER on
// a sequence task, as on the others; a finished run resumed with more
// --rounds continues to them, and without them is refused.
func TestSequenceMethodTeacherAndExtend(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	out, _, err := runCLI("train", "--task", "tfbind8", "--method", "teacher", "--rounds", "4", "--eval-every", "2",
		"--eval-samples", "16", "--hidden", "8", "--embed", "8", "--out", dir, "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "method teacher-per") {
		t.Errorf("--method teacher trained another method:\n%s", out)
	}
	if _, _, err := runCLI("train", "--resume", dir, "--quiet"); err == nil || !strings.Contains(err.Error(), "finished") {
		t.Errorf("resuming a finished run: %v", err)
	}
	out, _, err = runCLI("train", "--resume", dir, "--rounds", "6", "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	st, err := seqtrain.ReadCheckpoint(dir)
	if err != nil || st.Done != 6 || !st.Finished || st.Config.Method != seqtrain.TeacherPER {
		t.Errorf("extended run: %+v, %v\n%s", st, err, out)
	}
	if !strings.Contains(out, "at round 4 of 4; extending to --rounds 6") || !strings.Contains(out, "rounds 6,") {
		t.Errorf("extension output:\n%s", out)
	}
	if _, _, err := runCLI("train", "--task", "tfbind8", "--method", "ppo", "--out", t.TempDir()); err == nil || !strings.Contains(err.Error(), `"ppo"`) {
		t.Errorf("--method ppo: %v", err)
	}
}

// TestSequenceObjectives: --objective vargrad and db train a sequence
// task with the ssr policy (db with its flow head), subtb with the mlp
// policy, and an objective the family lacks is refused naming the
// allowed ones.
func TestSequenceObjectives(t *testing.T) {
	for _, args := range [][]string{
		{"--objective", "vargrad"},
		{"--objective", "db"},
		{"--objective", "subtb", "--lambda", "0.8", "--policy", "mlp"},
	} {
		dir := t.TempDir()
		out, _, err := runCLI(append([]string{"train", "--task", "tfbind8", "--rounds", "4", "--batch", "8", "--offline-batch", "8",
			"--hidden", "16", "--embed", "16", "--eval-every", "2", "--eval-samples", "16", "--quiet", "--out", dir}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		st, err := seqtrain.ReadCheckpoint(dir)
		if err != nil || st.Config.Objective != args[1] || !strings.Contains(out, "rounds 4,") {
			t.Errorf("%v: stored objective %q (%v)\n%s", args, st.Config.Objective, err, out)
		}
	}
	_, _, err := runCLI("train", "--task", "tfbind8", "--objective", "fm", "--out", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "allowed: tb, db, subtb, vargrad") {
		t.Errorf("fm on tfbind8: %v", err)
	}
}
