// Package runtest is the driver's conformance suite: every family that
// trains through package run passes it, as every environment passes
// discrete/envtest. Check runs a family's short run several ways and
// demands the same bits from each:
//
//   - stopped after a periodic checkpoint, then resumed;
//   - killed (SIGKILL, in a child process) at a random moment, then
//     resumed from whatever checkpoint the kill left (or run afresh if it
//     left none);
//   - cancelled between units with no periodic checkpoint: the run
//     writes one, says where, and resumes from it;
//   - finished, then extended: the curve keeps its points and continues;
//   - a checkpoint with a byte changed anywhere is refused, naming the
//     file (and the tensor, in tensor data).
//
// "The same bits" is every output a run writes, wall-clock times aside:
// summary.json but its times and resume count, metrics.csv but its
// wall_seconds column, and every checkpoint tensor but the units'
// timings, with the curve's wall_seconds column masked.
package runtest

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gfngo/gfn/run"
)

// Subject is a family's run under test.
type Subject struct {
	// Run trains a fresh run of Units units to its end with opt (OutDir
	// set), as the family's public Run does.
	Run func(ctx context.Context, opt run.Options) error
	// Resume continues the run in dir with opt (OutDir set), as the
	// family's public Resume does; extra > 0 raises its budget by extra
	// units first (an extension of a finished run).
	Resume func(ctx context.Context, dir string, extra int, opt run.Options) error
	// Units is the budget of Run, at least 3.
	Units int
	// Seed draws the suite's random choices (where to stop, which byte
	// to change).
	Seed uint64
}

// childEnv tells a re-executed test binary to train into a directory
// and be killed there.
const childEnv = "GFN_RUNTEST_CHILD_DIR"

// killPause is the child's pause after each checkpoint.
const killPause = 5 * time.Millisecond

// Check runs the suite on s as subtests of t. The test that calls it
// must be safe to re-execute: the kill check runs the test binary again
// with -test.run set to t's name, and Check, seeing its variable, then
// only trains.
func Check(t *testing.T, s Subject) {
	if dir := os.Getenv(childEnv); dir != "" {
		// The child: train with a checkpoint after every unit until killed.
		// A pause after each checkpoint spreads the run over the kill's window.
		err := s.Run(context.Background(), run.Options{OutDir: dir, CheckpointEvery: 1,
			AfterCheckpoint: func(int) error { time.Sleep(killPause); return nil }})
		if err != nil {
			fmt.Fprintln(os.Stderr, "runtest child:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	if s.Units < 3 {
		t.Fatalf("runtest: Units %d, want at least 3", s.Units)
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x5eed))
	ctx := context.Background()
	ref := t.TempDir()
	if err := s.Run(ctx, run.Options{OutDir: ref}); err != nil {
		t.Fatalf("reference run: %v", err)
	}
	refOut := Outputs(t, ref)

	t.Run("stop-resume", func(t *testing.T) {
		dir := t.TempDir()
		k := 1 + rng.IntN(s.Units-1)
		stop := errors.New("runtest: stopped")
		err := s.Run(ctx, run.Options{OutDir: dir, CheckpointEvery: 1, AfterCheckpoint: func(done int) error {
			if done == k {
				return stop
			}
			return nil
		}})
		if !errors.Is(err, stop) {
			t.Fatalf("run stopped after unit %d: error %v, want the hook's", k, err)
		}
		if err := s.Resume(ctx, dir, 0, run.Options{}); err != nil {
			t.Fatalf("resume after unit %d: %v", k, err)
		}
		Same(t, refOut, Outputs(t, dir))
	})

	t.Run("kill", func(t *testing.T) {
		if testing.Short() {
			t.Skip("short: runs the test binary again")
		}
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^"+strings.Split(t.Name(), "/")[0]+"$")
		cmd.Env = append(os.Environ(), childEnv+"="+dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill once a checkpoint exists, after a random further delay.
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(dir, run.CheckpointFile)); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(s.Units) * int64(killPause))))
		cmd.Process.Kill()
		werr := cmd.Wait()
		if werr == nil {
			t.Log("the child finished before the kill")
		}
		var err error
		switch _, serr := os.Stat(filepath.Join(dir, run.CheckpointFile)); {
		case serr != nil:
			err = s.Run(ctx, run.Options{OutDir: dir})
		default:
			err = s.Resume(ctx, dir, 0, run.Options{})
			if errors.Is(err, run.ErrFinished) {
				err = nil // killed after the final checkpoint
			}
		}
		if err != nil {
			t.Fatalf("after the kill: %v (child: %s)", err, out.String())
		}
		Same(t, refOut, Outputs(t, dir))
	})

	t.Run("cancel", func(t *testing.T) {
		dir := t.TempDir()
		k := 1 + rng.IntN(s.Units-1)
		err := s.Run(&cancelAfter{Context: ctx, left: k}, run.Options{OutDir: dir})
		e, ok := run.IsInterrupted(err)
		if !ok || !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled run: error %v, want *run.Interrupted wrapping context.Canceled", err)
		}
		if e.Dir != dir {
			t.Errorf("interrupted run names checkpoint %q, want %q", e.Dir, dir)
		}
		c, err := run.Open(dir)
		if err != nil {
			t.Fatalf("no checkpoint after the cancel: %v", err)
		}
		if c.Header.Done != e.Done || e.Total <= 0 || !strings.Contains(e.Error(), fmt.Sprintf(" %d of %d", e.Done, e.Total)) {
			t.Errorf("checkpoint at %d, error %q", c.Header.Done, e)
		}
		if err := s.Resume(ctx, dir, 0, run.Options{}); err != nil {
			t.Fatalf("resume after the cancel: %v", err)
		}
		Same(t, refOut, Outputs(t, dir))
	})

	t.Run("extend", func(t *testing.T) {
		dir := t.TempDir()
		if err := s.Run(ctx, run.Options{OutDir: dir}); err != nil {
			t.Fatal(err)
		}
		if err := s.Resume(ctx, dir, 0, run.Options{}); !errors.Is(err, run.ErrFinished) {
			t.Fatalf("resuming a finished run without a larger budget: error %v, want run.ErrFinished", err)
		}
		before := readCSV(t, filepath.Join(dir, run.MetricsFile))
		if err := s.Resume(ctx, dir, s.Units, run.Options{}); err != nil {
			t.Fatalf("extend: %v", err)
		}
		after := readCSV(t, filepath.Join(dir, run.MetricsFile))
		if len(after) <= len(before) {
			t.Fatalf("extended curve has %d rows, the finished one %d", len(after), len(before))
		}
		wall := slices.Index(before[0], "wall_seconds")
		for i, row := range before {
			if !reflect.DeepEqual(mask(row, wall), mask(after[i], wall)) {
				t.Fatalf("row %d changed by the extension: %q, then %q", i, row, after[i])
			}
		}
		last := func(rows [][]string) int { n, _ := strconv.Atoi(rows[len(rows)-1][0]); return n }
		if last(after) <= last(before) {
			t.Errorf("extended curve ends at %d, the finished one at %d", last(after), last(before))
		}
		c, err := run.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Header.Finished || c.Header.Resumed != 1 {
			t.Errorf("extended checkpoint: finished %v, resumed %d; want true, 1", c.Header.Finished, c.Header.Resumed)
		}
	})

	t.Run("corrupt", func(t *testing.T) {
		src := filepath.Join(ref, run.CheckpointFile)
		good, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		hlen := 8 + int(uint64(good[0])|uint64(good[1])<<8|uint64(good[2])<<16|uint64(good[3])<<24)
		// Bytes of the header and of the tensor data, chosen at random.
		pos := []int{8 + rng.IntN(hlen-8), hlen + rng.IntN(len(good)-hlen), len(good) - 1}
		for _, p := range pos {
			dir := t.TempDir()
			bad := slices.Clone(good)
			bad[p] ^= 0x10
			if err := os.WriteFile(filepath.Join(dir, run.CheckpointFile), bad, 0o644); err != nil {
				t.Fatal(err)
			}
			err := s.Resume(ctx, dir, 0, run.Options{})
			if err == nil || errors.Is(err, run.ErrFinished) {
				t.Errorf("byte %d of %d changed: error %v, want the checkpoint refused", p, len(bad), err)
				continue
			}
			if !strings.Contains(err.Error(), filepath.Join(dir, run.CheckpointFile)) {
				t.Errorf("byte %d changed: error %q does not name the file", p, err)
			}
			if p >= hlen && !strings.Contains(err.Error(), "tensor") {
				t.Errorf("byte %d (tensor data) changed: error %q names no tensor", p, err)
			}
		}
	})
}

// cancelAfter is a context whose Err reports cancellation from its
// left-th call on: the run stops after a chosen number of units, with
// no checkpoint to stop at.
type cancelAfter struct {
	context.Context
	left int
}

func (c *cancelAfter) Err() error {
	if c.left--; c.left < 0 {
		return context.Canceled
	}
	return nil
}

// timeKeys are the summary's wall-clock fields.
var timeKeys = []string{"wall_seconds", "train_seconds", "eval_seconds", "ms_per_step_mean", "ms_per_step_early",
	"ms_per_step_late", "resumed", "peak_rss_mib"}

// Outputs reads what the run in dir wrote, wall-clock times removed:
// "summary.json" (re-encoded, times removed), "metrics.csv" (the
// wall_seconds column emptied) and each checkpoint tensor's bytes by
// name (run.unit_ns left out, run.curve's wall_seconds masked), plus the
// family's state as "state".
func Outputs(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	b, err := os.ReadFile(filepath.Join(dir, run.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	for _, k := range timeKeys {
		delete(sum, k)
	}
	js, _ := json.Marshal(sum)
	out["summary.json"] = string(js)
	rows := readCSV(t, filepath.Join(dir, run.MetricsFile))
	wall := slices.Index(rows[0], "wall_seconds")
	var m strings.Builder
	for _, r := range rows {
		m.WriteString(strings.Join(mask(r, wall), ",") + "\n")
	}
	out["metrics.csv"] = m.String()
	c, err := run.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	out["state"] = string(c.Header.State)
	out["config"] = string(c.Header.Config)
	wallCol := slices.Index(c.Header.Columns, "wall_seconds")
	for _, x := range c.Tensors {
		switch x.Name {
		case "run.unit_ns":
			continue
		case "run.curve":
			v, _ := x.Float64s()
			if wallCol >= 0 {
				for i := wallCol; i < len(v); i += len(c.Header.Columns) {
					v[i] = math.NaN()
				}
			}
			out["tensor "+x.Name] = fmt.Sprint(v)
		default:
			out["tensor "+x.Name] = x.DType + fmt.Sprint(x.Shape) + string(x.Data)
		}
	}
	return out
}

// Same reports every output in which got differs from want.
func Same(t testing.TB, want, got map[string]string) {
	t.Helper()
	for _, k := range slices.Sorted(keys(want, got)) {
		if want[k] != got[k] {
			w, g := want[k], got[k]
			if len(w) > 300 || len(g) > 300 {
				w, g = fmt.Sprintf("%d bytes", len(w)), fmt.Sprintf("%d bytes", len(g))
			}
			t.Errorf("%s differs: want %s, got %s", k, w, g)
		}
	}
}

func keys(ms ...map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

func readCSV(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("%s: %v (%d rows)", path, err, len(rows))
	}
	return rows
}

func mask(row []string, col int) []string {
	r := slices.Clone(row)
	if col >= 0 && col < len(r) {
		r[col] = ""
	}
	return r
}
