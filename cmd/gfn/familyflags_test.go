package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gfnrun "github.com/gfngo/gfn/run"
)

// TestFlagOfAnotherFamily: a flag of another family is a usage error
// that names the tasks taking it; an unknown flag of no family is the
// flag package's error alone.
func TestFlagOfAnotherFamily(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--rounds", "5"}, "--rounds is a flag of the sequence tasks (tfbind8, qm9str, sehstr, rna); task hypergrid does not take it"},
		{[]string{"train", "--task", "tfbind8", "--reward-calls", "5"}, "--reward-calls is a flag of the grid (hypergrid); task tfbind8 does not take it"},
		{[]string{"train", "--task", "25gmm", "--side", "5"}, "--side is a flag of the grid (hypergrid)"},
		{[]string{"train", "--bogus", "1"}, "flag provided but not defined: -bogus"},
	} {
		_, _, err := runCLI(c.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want a usage error with %q", c.args, err, c.want)
		}
		if c.args[1] == "--bogus" && strings.Contains(err.Error(), "is a flag of") {
			t.Errorf("%q: %v names a family", c.args, err)
		}
	}
}

// TestInterruptedHint: an interrupted run's error says where it stopped
// and the command that continues it.
func TestInterruptedHint(t *testing.T) {
	e := &gfnrun.Interrupted{Unit: "iteration", Done: 120, Total: 6000, Dir: "runs/x y", Err: context.Canceled}
	if got, want := interruptedHint(e), "interrupted at iteration 120 of 6000; continue with: gfn train --resume 'runs/x y'"; got != want {
		t.Errorf("hint %q, want %q", got, want)
	}
	e.Dir = ""
	if got := interruptedHint(e); !strings.Contains(got, "no checkpoint") {
		t.Errorf("hint without a directory %q", got)
	}
	if interruptedHint(errors.New("other")) != "" {
		t.Error("a hint for another error")
	}
}

// TestCtrlCWritesCheckpoint: SIGINT to the default grid run with no
// periodic checkpoints writes one, prints where and how to continue, and
// the printed command finishes the run.
func TestCtrlCWritesCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("short: builds gfn and trains for a few seconds")
	}
	bin := buildGFN(t)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "train", "--side", "16", "--hidden", "32,32", "--reward-calls", "400000",
		"--eval-samples", "100", "--checkpoint-every", "0", "--out", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // training, past the first curve point
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err == nil {
		t.Fatal("the interrupted run exited 0")
	}
	want := "; continue with: gfn train --resume " + dir
	if !strings.Contains(stderr.String(), "interrupted at iteration ") || !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr %q lacks the interruption message %q", stderr.String(), want)
	}
	c, err := gfnrun.Open(dir)
	if err != nil || c.Header.Done == 0 || c.Header.Finished {
		t.Fatalf("checkpoint after Ctrl-C: %v (done %d)", err, c.Header.Done)
	}
	if out, err := exec.Command(bin, "train", "--resume", dir, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, gfnrun.SummaryFile)); err != nil {
		t.Errorf("the resumed run wrote no summary: %v", err)
	}
}
