package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gfngo/gfn/diffusion"
	gfnrun "github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/run/runtest"
	"github.com/gfngo/gfn/safetensors"
	"github.com/gfngo/gfn/seqtrain"
)

// buildGFN builds the gfn binary into a temporary directory.
func buildGFN(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gfn")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// TestDiffusionSIGKILLResume: a diffusion run killed with SIGKILL after a
// periodic checkpoint and resumed with --resume ends with the same
// parameters, buffer, metrics and summary as an uninterrupted run.
func TestDiffusionSIGKILLResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gfn and trains three times")
	}
	bin := buildGFN(t)
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"train", "--task", "25gmm", "--method", "teacher", "--hidden", "32", "--steps", "10", "--batch", "64",
			"--iterations", "2500", "--eval-every", "250", "--eval-samples", "200", "--final-samples", "400",
			"--checkpoint-every", "50", "--out", out, "--quiet"}
	}
	full, part := filepath.Join(dir, "full"), filepath.Join(dir, "part")
	if out, err := exec.Command(bin, args(full)...).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	killedAt := killAndResume(t, bin, args(part), part, 300, func() (int, error) {
		st, err := diffusion.ReadCheckpoint(part)
		return st.Done, err
	})
	a, b := readTensors(t, full), readTensors(t, part)
	for name, v := range a {
		if name == "run.unit_ns" {
			continue // wall-clock times
		}
		if name == "run.curve" {
			// Rows of 14 float64s whose last column is the wall clock.
			v, w := slices.Clone(v), slices.Clone(b[name])
			for i := 13 * 8; i+8 <= len(v) && i+8 <= len(w); i += 14 * 8 {
				clear(v[i : i+8])
				clear(w[i : i+8])
			}
			if !bytes.Equal(v, w) {
				t.Errorf("the curve differs after kill at iteration %d and resume", killedAt)
			}
			continue
		}
		if !bytes.Equal(v, b[name]) {
			t.Errorf("tensor %s differs after kill at iteration %d and resume", name, killedAt)
		}
	}
	if len(a) != len(b) {
		t.Errorf("%d tensors, want %d", len(b), len(a))
	}
	if x, y := withoutLastColumn(t, filepath.Join(full, "metrics.csv")), withoutLastColumn(t, filepath.Join(part, "metrics.csv")); x != y {
		t.Errorf("metrics.csv differs:\n%s\nvs\n%s", x, y)
	}
}

// killAndResume starts gfn with args, kills it with SIGKILL once step()
// reports a checkpoint at iteration >= at, checks the run was unfinished,
// resumes it with --resume dir and returns the iteration it was killed at.
func killAndResume(t *testing.T, bin string, args []string, dir string, at int, step func() (int, error)) int {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killedAt := -1
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if s, err := step(); err == nil && s >= at {
			cmd.Process.Signal(syscall.SIGKILL)
			killedAt = s
			break
		}
	}
	cmd.Wait()
	if killedAt < 0 {
		t.Fatalf("no checkpoint at iteration >= %d appeared", at)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
		t.Fatalf("the run finished before it was killed (checkpoint at %d): make it longer", killedAt)
	}
	out, err := exec.Command(bin, "train", "--resume", dir, "--quiet").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "resuming") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	return killedAt
}

func readTensors(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "checkpoint.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts, _, err := safetensors.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, x := range ts {
		m[x.Name] = x.Data
	}
	return m
}

// TestGridSIGKILLResume: the same for a grid run (Teacher, d=2 H=16).
func TestGridSIGKILLResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gfn and trains three times")
	}
	bin := buildGFN(t)
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"train", "--dim", "2", "--side", "16", "--hidden", "64,64", "--reward-calls", "48000",
			"--eval-samples", "1000", "--checkpoint-every", "100", "--out", out, "--quiet"}
	}
	full, part := filepath.Join(dir, "full"), filepath.Join(dir, "part")
	if out, err := exec.Command(bin, args(full)...).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	killedAt := killAndResume(t, bin, args(part), part, 600, func() (int, error) {
		ck, err := gfnrun.Open(part)
		if err != nil {
			return 0, err
		}
		return ck.Header.Done, nil
	})
	a, b := readTensors(t, full), readTensors(t, part)
	for name, v := range a {
		if strings.HasPrefix(name, "student.") || strings.HasPrefix(name, "teacher.") || strings.HasPrefix(name, "state.") {
			if !bytes.Equal(v, b[name]) {
				t.Errorf("tensor %s differs after kill at iteration %d and resume", name, killedAt)
			}
		}
	}
	for _, f := range []string{"metrics.csv"} {
		if x, y := withoutLastColumn(t, filepath.Join(full, f)), withoutLastColumn(t, filepath.Join(part, f)); x != y {
			t.Errorf("%s differs:\n%s\nvs\n%s", f, x, y)
		}
	}
}

// withoutLastColumn is a CSV file without its last (wall-clock) column.
func withoutLastColumn(t *testing.T, path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(raw), "\n") {
		if i := strings.LastIndexByte(l, ','); i >= 0 {
			l = l[:i]
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// TestSequenceSIGKILLResume: the same for a sequence run (TFbind8,
// Teacher + PER, a small SSR): killed after a periodic checkpoint and
// resumed, it ends with the tensors and curve of an uninterrupted run.
func TestSequenceSIGKILLResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gfn and trains three times")
	}
	bin := buildGFN(t)
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"train", "--task", "tfbind8", "--rounds", "700", "--hidden", "16", "--embed", "16",
			"--eval-every", "100", "--eval-samples", "128", "--checkpoint-every", "50", "--out", out, "--quiet"}
	}
	full, part := filepath.Join(dir, "full"), filepath.Join(dir, "part")
	if out, err := exec.Command(bin, args(full)...).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	killedAt := killAndResume(t, bin, args(part), part, 200, func() (int, error) {
		st, err := seqtrain.ReadCheckpoint(part)
		return st.Done, err
	})
	// Every output, checkpoint tensors included, wall-clock times aside.
	t.Logf("killed at round %d", killedAt)
	runtest.Same(t, runtest.Outputs(t, full), runtest.Outputs(t, part))
	if x, y := withoutLastColumn(t, filepath.Join(full, "metrics.csv")), withoutLastColumn(t, filepath.Join(part, "metrics.csv")); x != y {
		t.Errorf("metrics.csv differs:\n%s\nvs\n%s", x, y)
	}
}

// TestResumeRefusesSettingFlags: a setting flag beside --resume, which the
// checkpoint's settings would silently override, is a usage error naming
// it and the flags allowed, in every family; so is another task. The
// allowed ones pass the check (the finished run is then refused).
func TestResumeRefusesSettingFlags(t *testing.T) {
	root := t.TempDir()
	runs := []struct {
		family string
		train  []string
	}{
		{"grid", []string{"--side", "4", "--hidden", "16", "--reward-calls", "320", "--eval-samples", "0"}},
		{"diffusion", []string{"--task", "25gmm", "--method", "tb", "--hidden", "16", "--steps", "5", "--batch", "16",
			"--iterations", "3", "--eval-samples", "20", "--final-samples", "20"}},
		{"seq", []string{"--task", "tfbind8", "--method", "tb", "--rounds", "2", "--eval-every", "1", "--eval-samples", "16"}},
	}
	var all strings.Builder
	for _, r := range runs {
		dir := filepath.Join(root, r.family)
		if _, stderr, err := runCLI(append([]string{"train", "--out", dir, "--quiet"}, r.train...)...); err != nil {
			t.Fatalf("%s run: %v\n%s", r.family, err, stderr)
		}
		for _, extra := range [][]string{{"--lr", "0.5", "--seed", "7"}, {"--task", "rna"}} {
			_, _, err := runCLI(append([]string{"train", "--resume", dir}, extra...)...)
			var ue usageError
			if !errors.As(err, &ue) {
				t.Errorf("%s %v: error %v, want a usage error", r.family, extra, err)
				continue
			}
			fmt.Fprintf(&all, "%s %s: %s\n", r.family, strings.Join(extra, " "), strings.ReplaceAll(err.Error(), root, "ROOT"))
		}
		_, _, err := runCLI("train", "--resume", dir, "--quiet", "--out", dir)
		if err == nil || !strings.Contains(err.Error(), "finished") {
			t.Errorf("%s: resume with allowed flags: %v, want the finished run refused", r.family, err)
		}
		// A fresh start over an unfinished run (checkpoint, no summary) is
		// refused; its checkpoint is left as it was.
		if err := os.Remove(filepath.Join(dir, "summary.json")); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(filepath.Join(dir, "checkpoint.safetensors"))
		_, _, err = runCLI(append([]string{"train", "--out", dir, "--quiet"}, r.train...)...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "gfn train --resume "+dir) {
			t.Errorf("%s: fresh run over an unfinished one: %v, want a usage error naming --resume", r.family, err)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, "checkpoint.safetensors")); !bytes.Equal(before, after) {
			t.Errorf("%s: the unfinished run's checkpoint changed", r.family)
		}
	}
	golden(t, "resume-flags", all.String())
	// A directory without a checkpoint is named as such, whatever the
	// flags beside --resume (a finished run whose checkpoint was deleted;
	// an empty directory).
	finished := t.TempDir()
	if err := os.WriteFile(filepath.Join(finished, "summary.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{finished: "the run there is finished", t.TempDir(): "no checkpoint.safetensors there"} {
		_, _, err := runCLI("train", "--resume", dir, "--drift-clip", "1e4")
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("resume %s: %v, want a usage error naming it and %q", dir, err, want)
		}
	}
	// --drift-clip is a diffusion resume's setting, checked.
	_, _, err := runCLI("train", "--resume", filepath.Join(root, "diffusion"), "--drift-clip", "0")
	if err == nil || !strings.Contains(err.Error(), "--drift-clip 0") {
		t.Errorf("resume --drift-clip 0: %v", err)
	}
	// An overflow names the command that continues the run with a bound.
	dir := filepath.Join(root, "diffusion")
	err = overflowHint(fmt.Errorf("x: %w", &diffusion.OverflowError{Iteration: 2, Sampler: "Teacher"}), dir)
	if want := "gfn train --resume " + dir + " --drift-clip 1e4 continues from iteration 3"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("overflow error %v lacks %q", err, want)
	}
	// With a bound in force the cause is NaN parameters: no hint.
	nan := fmt.Errorf("x: %w", &diffusion.OverflowError{Iteration: 2, Sampler: "Teacher", Clip: 1e4})
	if err := overflowHint(nan, dir); err != nan {
		t.Errorf("overflow under a drift clip became %v", err)
	}
	if err := overflowHint(errors.New("other"), dir); err.Error() != "other" {
		t.Errorf("another error became %v", err)
	}
}

// TestFreshOut: a fresh run may replace a finished run (whose summary goes
// first, so that the new run counts as unfinished until it ends) but not an
// unfinished one; a resume writing elsewhere is held to the same rule.
func TestFreshOut(t *testing.T) {
	root := t.TempDir()
	write := func(dir string, files ...string) {
		os.MkdirAll(dir, 0o755)
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	finished, unfinished, empty := filepath.Join(root, "finished"), filepath.Join(root, "unfinished"), filepath.Join(root, "empty")
	write(finished, "checkpoint.safetensors", "summary.json")
	write(unfinished, "checkpoint.safetensors")
	write(empty)
	for _, dir := range []string{finished, empty, filepath.Join(root, "new")} {
		if err := checkFreshOut(dir); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
	if exists(filepath.Join(finished, "summary.json")) || !exists(filepath.Join(finished, "checkpoint.safetensors")) {
		t.Error("the finished run's summary must go, its checkpoint stay (until the new run overwrites it)")
	}
	var ue usageError
	if err := checkFreshOut(unfinished); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--resume "+unfinished) {
		t.Errorf("unfinished run: %v, want a usage error naming --resume", err)
	}
	for _, c := range []struct {
		out, want string
		fail      bool
	}{{"", unfinished, false}, {unfinished + "/", unfinished, false}, {empty, empty, false}, {unfinished, unfinished, false}} {
		got, err := resumeOut(unfinished, c.out)
		if got != c.want || (err != nil) != c.fail {
			t.Errorf("resumeOut(%s, %q) = %s, %v; want %s", unfinished, c.out, got, err, c.want)
		}
	}
	if _, err := resumeOut(empty, unfinished); !errors.As(err, &ue) {
		t.Errorf("resume into another unfinished run: %v, want a usage error", err)
	}
}

// TestGridResumeProfiles: --cpuprofile, allowed beside --resume, profiles
// the resumed grid run.
func TestGridResumeProfiles(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		var o, e bytes.Buffer
		done <- run(ctx, []string{"train", "--side", "8", "--hidden", "16", "--reward-calls", "32000", "--eval-samples", "0",
			"--checkpoint-every", "5", "--out", dir, "--quiet"}, &o, &e)
	}()
	for !exists(filepath.Join(dir, "checkpoint.safetensors")) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	if _, stderr, err := runCLI("train", "--resume", dir, "--quiet", "--cpuprofile", prof); err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr)
	}
	if st, err := os.Stat(prof); err != nil || st.Size() == 0 {
		t.Errorf("no profile of the resumed run: %v", err)
	}
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }
