package diffusion

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/run/runtest"
	"github.com/gfngo/gfn/safetensors"
	"github.com/gfngo/gfn/timenet"
)

// legacyConfig is the run of testdata/legacy: a Teacher with buffer passes
// (its checkpoint, after iteration 7 of 12, falls mid-pass), exploration,
// a milestone from the end; the go kernel backend. The gfn before format 2
// wrote run/ (RunOptions: Task 25gmm, Preset reference, EvalEvery 5,
// EvalSamples 16, FinalSamples 32, CheckpointEvery 7, NoFigures, stopped
// after the checkpoint at 7) and, uninterrupted, full-summary.json and
// full-metrics.csv.
func legacyConfig() Config {
	c, _ := Preset("reference", "25gmm")
	c.Method = MethodTeacher
	c.Net = timenet.Config{Hidden: 8, Harmonics: 2}
	c.Steps, c.Batch, c.Iterations = 4, 4, 12
	c.Sigma2 = 5
	c.BufferCap, c.BufferPasses = 30, true
	c.Milestones = []int{-3}
	c.ExploreAll, c.ExploreDecay = true, 10
	c.Seed = 5
	c.Student.LR = 1e-2
	return c
}

// legacyCopy copies testdata/legacy/run into a fresh directory, with the
// checkpoint's run state and tensors edited by edit (if not nil).
func legacyCopy(t *testing.T, edit func(st map[string]any, ts []safetensors.Tensor) []safetensors.Tensor) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{run.CheckpointFile, run.ConfigFile, run.MetricsFile} {
		b, err := os.ReadFile(filepath.Join("testdata", "legacy", "run", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == run.CheckpointFile && edit != nil {
			ts, meta, err := safetensors.Read(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			var st map[string]any
			if err := json.Unmarshal([]byte(meta["gfn_state"]), &st); err != nil {
				t.Fatal(err)
			}
			ts = edit(st, ts)
			js, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			meta["gfn_state"] = string(js)
			var buf bytes.Buffer
			if err := safetensors.Write(&buf, ts, meta); err != nil {
				t.Fatal(err)
			}
			b = buf.Bytes()
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// legacyOptions are the legacy run's evaluation settings.
func legacyOptions(dir string) RunOptions {
	return RunOptions{Options: run.Options{OutDir: dir, EvalEvery: 5, CheckpointEvery: 7, NoFigures: true},
		Task: "25gmm", Preset: "reference", EvalSamples: 16, FinalSamples: 32}
}

// TestMigrateLegacy: a checkpoint of the gfn before format 2 is refused
// with a word on gfn migrate; Migrate converts it, and the resumed run
// ends with the outputs of the same run never interrupted, as this gfn
// writes them and as the earlier one wrote them.
func TestMigrateLegacy(t *testing.T) {
	defer kernel.Use(kernel.Use("go"))
	dir := legacyCopy(t, nil)
	var le *run.LegacyError
	if _, err := Resume(context.Background(), dir, energy.GMM25{}, RunOptions{}); !errors.As(err, &le) || !strings.Contains(err.Error(), "gfn migrate") {
		t.Fatalf("resuming a format-1 checkpoint: %v, want a run.LegacyError", err)
	}
	if err := Migrate(dir, energy.GMM25{}); err != nil {
		t.Fatal(err)
	}
	st, err := ReadCheckpoint(dir)
	if err != nil || st.Done != 7 || st.Task != "25gmm" || st.Preset != "reference" || st.EvalSamples != 16 {
		t.Fatalf("migrated checkpoint: %+v, %v", st, err)
	}
	if _, err := Resume(context.Background(), dir, energy.GMM25{}, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	if _, err := Run(context.Background(), energy.GMM25{}, legacyConfig(), legacyOptions(full)); err != nil {
		t.Fatal(err)
	}
	got, want := runtest.Outputs(t, dir), runtest.Outputs(t, full)
	// The keys of the buffer's entries count Append calls, which the old
	// checkpoints did not record (sampling does not depend on them; here
	// no entry was evicted, so they agree anyway).
	runtest.Same(t, want, got)

	// The earlier gfn's own uninterrupted outputs.
	csv, err := os.ReadFile(filepath.Join("testdata", "legacy", "full-metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := withoutWall(string(csv)), withoutWall(readFile(t, filepath.Join(dir, run.MetricsFile))); a != b {
		t.Errorf("metrics.csv differs from the earlier gfn's:\n%s\nvs\n%s", b, a)
	}
	var old, now map[string]any
	for _, f := range []struct {
		path string
		v    *map[string]any
	}{{filepath.Join("testdata", "legacy", "full-summary.json"), &old}, {filepath.Join(dir, run.SummaryFile), &now}} {
		if err := json.Unmarshal([]byte(readFile(t, f.path)), f.v); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range old {
		if k == "kernel" || strings.Contains(k, "seconds") || strings.HasPrefix(k, "ms_per_") || k == "resumed" {
			continue
		}
		if w, ok := now[k]; !ok || w != v {
			t.Errorf("summary %s: %v, the earlier gfn's %v", k, w, v)
		}
	}
}

// TestMigrateOldCurve: a checkpoint written before the gradient-norm
// columns (12-column run.curve, no grad_sums) migrates and resumes to the
// same parameters and metrics; its gradient norms are NaN (empty) in the
// earlier rows and in the first row after the resume, whose window began
// before it, and as the uninterrupted run's later.
func TestMigrateOldCurve(t *testing.T) {
	defer kernel.Use(kernel.Use("go"))
	dir := legacyCopy(t, func(st map[string]any, ts []safetensors.Tensor) []safetensors.Tensor {
		delete(st, "grad_sums")
		for i, x := range ts {
			if x.Name != "run.curve" {
				continue
			}
			rows, err := x.Float64s()
			if err != nil || x.Shape[1] != 14 {
				t.Fatalf("run.curve %v: %v", x.Shape, err)
			}
			var old []float64
			for r := 0; r < len(rows); r += 14 {
				old = append(old, rows[r:r+12]...)
			}
			ts[i] = safetensors.F64("run.curve", []int{x.Shape[0], 12}, old)
		}
		return ts
	})
	if err := Migrate(dir, energy.GMM25{}); err != nil {
		t.Fatal(err)
	}
	got, err := Resume(context.Background(), dir, energy.GMM25{}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Run(context.Background(), energy.GMM25{}, legacyConfig(), legacyOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if hashTrainer(got.Trainer) != hashTrainer(want.Trainer) || got.Summary.ELBO != want.Summary.ELBO {
		t.Error("resuming a migrated 12-column checkpoint changed the run")
	}
	if got.Curve.Len() != 3 || want.Curve.Len() != 3 {
		t.Fatalf("%d and %d points, want 3", got.Curve.Len(), want.Curve.Len())
	}
	for i := range 3 {
		for _, c := range curveColumns {
			g, w := got.Curve.Value(i, c), want.Curve.Value(i, c)
			switch {
			case c == "wall_seconds":
			case strings.HasSuffix(c, "_grad_norm"):
				// Rows 0 and 5 were written before the gradient norms; row
				// 10's window (iterations 6-10) began before the resume.
				if !math.IsNaN(g) {
					t.Errorf("row %d: %s %v, want NaN", i, c, g)
				}
			case g != w && !(math.IsNaN(g) && math.IsNaN(w)):
				t.Errorf("row %d: %s %v, want %v", i, c, g, w)
			}
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withoutWall drops the last column (wall_seconds) of a CSV.
func withoutWall(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if i := strings.LastIndexByte(line, ','); i >= 0 {
			line = line[:i]
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
