package seqtrain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/run/runtest"
)

// conformanceConfig is a short Teacher + PER run (both agents, a buffer).
func conformanceConfig() Config {
	c := toyConfig(TeacherPER)
	c.Rounds = 12
	c.Policy = Policy{Kind: "mlp", Hidden: 8, Layers: 1}
	return c
}

// conformanceRun runs cfg with opt, evaluating every 4 rounds unless opt
// says otherwise.
func conformanceRun(ctx context.Context, cfg Config, opt run.Options) (*Result, error) {
	if opt.EvalEvery == 0 {
		opt.EvalEvery = 4
	}
	return Run(ctx, toyTask{A: 3, L: 3}, cfg, RunOptions{Options: opt, EvalSamples: 16, Task: "toy"})
}

// extend resumes the run in dir with its budget raised by extra rounds.
func extend(ctx context.Context, dir string, extra int, opt run.Options) (*Result, error) {
	o := RunOptions{Options: opt}
	if extra > 0 {
		st, err := ReadCheckpoint(dir)
		if err != nil {
			return nil, err
		}
		o.Budget = st.Config.Rounds + extra
	}
	return Resume(ctx, dir, toyTask{A: 3, L: 3}, o)
}

func TestDriverConformance(t *testing.T) {
	cfg := conformanceConfig()
	runtest.Check(t, runtest.Subject{
		Run: func(ctx context.Context, opt run.Options) error {
			_, err := conformanceRun(ctx, cfg, opt)
			return err
		},
		Resume: func(ctx context.Context, dir string, extra int, opt run.Options) error {
			_, err := extend(ctx, dir, extra, opt)
			return err
		},
		Units: cfg.Rounds,
		Seed:  3,
	})
}

// TestCancelWritesCheckpoint: Ctrl-C (a cancelled context) on a run
// without periodic checkpoints writes one and says where, and the run
// resumed from it ends as one never interrupted.
func TestCancelWritesCheckpoint(t *testing.T) {
	cfg := conformanceConfig()
	full, err := conformanceRun(context.Background(), cfg, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err = conformanceRun(&cancelAfter{Context: context.Background(), left: 5}, cfg, run.Options{OutDir: dir})
	e, ok := run.IsInterrupted(err)
	if !ok || !errors.Is(err, context.Canceled) || e.Dir != dir || e.Done != 5 || e.Total != cfg.Rounds || e.Unit != "round" {
		t.Fatalf("cancelled run: %v (%+v), want *run.Interrupted at round 5 of %d naming %s", err, e, cfg.Rounds, dir)
	}
	st, err := ReadCheckpoint(dir)
	if err != nil || st.Done != 5 || st.Finished || st.Task != "toy" || st.EvalSamples != 16 {
		t.Fatalf("checkpoint after the cancel: %+v, %v", st, err)
	}
	res, err := Resume(context.Background(), dir, toyTask{A: 3, L: 3}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameCurve(t, full.Curve, res.Curve)
	if !slices.Equal(params(full.Trainer), params(res.Trainer)) || res.Summary.Resumed != 1 {
		t.Errorf("resumed run: other parameters, or resumed %d (want 1)", res.Summary.Resumed)
	}
}

// cancelAfter is a context cancelled from its left+1-th Err on: the
// driver asks before each round, so the run stops after left rounds.
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

// TestExtendFinishedRun: a finished run resumed with a larger budget
// continues (its curve keeps its points and goes on; training, whose
// stream evaluations do not touch, ends as a run of that budget), and
// without one it is refused.
func TestExtendFinishedRun(t *testing.T) {
	cfg := conformanceConfig()
	dir := t.TempDir()
	short, err := conformanceRun(context.Background(), cfg, run.Options{OutDir: dir, NoFigures: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(context.Background(), dir, toyTask{A: 3, L: 3}, RunOptions{}); !errors.Is(err, run.ErrFinished) {
		t.Fatalf("resuming a finished run: %v, want run.ErrFinished", err)
	}
	long, err := extend(context.Background(), dir, 8, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := long.Curve.Column("round"), []float64{4, 8, 11, 12, 16, 19}; !slices.Equal(got, want) {
		t.Errorf("extended curve at rounds %v, want %v", got, want)
	}
	for i, r := range short.Curve.Rows {
		if !slices.Equal(maskWall(short.Curve, r), maskWall(long.Curve, long.Curve.Rows[i])) {
			t.Errorf("point %d changed by the extension", i)
		}
	}
	cfg.Rounds = 20
	ref, err := conformanceRun(context.Background(), cfg, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(params(ref.Trainer), params(long.Trainer)) || long.Summary.Steps != 20 || long.Summary.RewardCalls != ref.Summary.RewardCalls {
		t.Errorf("extended run: steps %d, reward calls %d; a 20-round run's %d", long.Summary.Steps, long.Summary.RewardCalls, ref.Summary.RewardCalls)
	}
	if _, err := Resume(context.Background(), dir, toyTask{A: 3, L: 3}, RunOptions{Budget: 10}); err == nil || !strings.Contains(err.Error(), "below the 20 done") {
		t.Errorf("a budget below the rounds done: %v", err)
	}
}

func maskWall(c *run.Curve, r []float64) []string {
	out := make([]string, len(r))
	for j, v := range r {
		if c.Columns[j].Name != "wall_seconds" {
			out[j] = run.Cell(v, 17)
		}
	}
	return out
}

// TestSummaryKeys: summary.json has one name per idea, as every family:
// the final evaluation at the top level, modes_found, modes_total,
// true_log_z, and the driver's steps and timings.
func TestSummaryKeys(t *testing.T) {
	dir := t.TempDir()
	if _, err := conformanceRun(context.Background(), conformanceConfig(), run.Options{OutDir: dir, NoFigures: true}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, run.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"family", "unit", "steps", "task", "method", "seed", "reward_calls", "seen", "modes_found",
		"modes_total", "modes_eval", "elbo", "eubo", "log_z", "log_z_est", "log_z_err", "pearson", "samples", "true_log_z",
		"ms_per_step_mean", "kernel"} {
		if _, ok := m[k]; !ok {
			t.Errorf("summary.json has no %s: %s", k, b)
		}
	}
	for _, k := range []string{"final", "rounds", "num_modes", "ms_per_round_mean"} {
		if _, ok := m[k]; ok {
			t.Errorf("summary.json still has %s", k)
		}
	}
	if m["family"] != "sequence" || m["unit"] != "round" || m["steps"] != 12.0 || m["method"] != "teacher-per" {
		t.Errorf("summary.json: %s", b)
	}
}

// TestMethodTeacher: "teacher", every family's name of its Teacher
// method, is Teacher + PER on sequences.
func TestMethodTeacher(t *testing.T) {
	if m, err := ParseMethod("teacher"); err != nil || m != TeacherPER {
		t.Errorf("ParseMethod(teacher) = %q, %v", m, err)
	}
	if _, err := ParseMethod("ppo"); err == nil || !strings.Contains(err.Error(), `"ppo"`) {
		t.Errorf("ParseMethod(ppo): %v", err)
	}
	cfg := conformanceConfig()
	cfg.Method = "teacher"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := conformanceRun(context.Background(), cfg, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := conformanceRun(context.Background(), conformanceConfig(), run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Summary.Method != TeacherPER || a.Trainer.Teacher == nil || !slices.Equal(params(a.Trainer), params(b.Trainer)) {
		t.Errorf("method teacher: summary method %q, not the teacher-per run", a.Summary.Method)
	}
}

// TestMigrateLegacy: checkpoints of the earlier layout (format 1, written
// by gfn before the run driver: a Teacher + PER run stopped at its
// periodic checkpoint of round 25, and a PRT run whose evaluation after
// round 20 failed) convert with Migrate, and resume to the outputs of an
// uninterrupted run. The checkpoints were written on the AVX-512 kernel
// backend, so the outputs are compared bit for bit only where that
// backend runs; elsewhere (another backend rounds the products
// differently) the migrated run must resume and finish with the
// uninterrupted run's rounds and reward calls.
func TestMigrateLegacy(t *testing.T) {
	const recorded = kernel.Backend("avx512")
	exact := slices.Contains(kernel.Available(), recorded)
	if exact {
		defer kernel.Use(kernel.Use(recorded))
	}
	legacyConfig := func(m Method) Config {
		c := toyConfig(m)
		c.Rounds = 40
		c.Policy = Policy{Kind: "mlp", Hidden: 8, Layers: 1}
		return c
	}
	for _, c := range []struct {
		name  string
		cfg   Config
		every int
		task  func() Task
	}{
		{"teacher-per-round25", legacyConfig(TeacherPER), 10, func() Task { return legacyToy{toyTask{A: 3, L: 3}} }},
		{"prt-evalfailed", legacyConfig(PRT), 20, func() Task { failed := true; return flaky{toyTask{A: 3, L: 3}, &failed} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, filepath.Join("testdata", "legacy", c.name), dir)
			if _, err := Resume(context.Background(), dir, c.task(), RunOptions{}); err == nil || !strings.Contains(err.Error(), "gfn migrate") {
				t.Fatalf("resuming a format-1 checkpoint: %v, want an error naming gfn migrate", err)
			}
			if err := Migrate(dir, c.task()); err != nil {
				t.Fatal(err)
			}
			if err := Migrate(dir, c.task()); err != nil {
				t.Fatalf("migrating a format-2 checkpoint: %v", err)
			}
			res, err := Resume(context.Background(), dir, c.task(), RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			full, err := Run(context.Background(), legacyToy{toyTask{A: 3, L: 3}}, c.cfg,
				RunOptions{Options: run.Options{EvalEvery: c.every, NoFigures: true}, EvalSamples: 32, Task: "toy"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary.Resumed != full.Summary.Resumed+1 {
				t.Errorf("migrated run: resumed %d, want %d", res.Summary.Resumed, full.Summary.Resumed+1)
			}
			if !exact {
				for _, col := range []string{"round", "reward_calls"} {
					if a, b := fmt.Sprint(full.Curve.Column(col)), fmt.Sprint(res.Curve.Column(col)); a != b {
						t.Errorf("%s: %s, uninterrupted %s", col, b, a)
					}
				}
				t.Logf("backend %s: outputs compared bit for bit only on %s, where the checkpoints were written", kernel.Name(), recorded)
				return
			}
			if !slices.Equal(params(full.Trainer), params(res.Trainer)) || res.Summary.Resumed != full.Summary.Resumed+1 {
				t.Errorf("migrated run: other parameters, or resumed %d", res.Summary.Resumed)
			}
			if c.name == "prt-evalfailed" {
				// Format 1 kept the evaluation stream where the failed
				// evaluation left it: training resumes exactly, the
				// evaluations draw other samples (format 2 restores it).
				for _, col := range []string{"round", "reward_calls", "student_loss", "teacher_loss", "modes_seen", "samples"} {
					if a, b := fmt.Sprint(full.Curve.Column(col)), fmt.Sprint(res.Curve.Column(col)); a != b {
						t.Errorf("%s: %s, uninterrupted %s", col, b, a)
					}
				}
				return
			}
			sameCurve(t, full.Curve, res.Curve)
			a, b := full.Summary, res.Summary
			a.Summary, b.Summary = run.Summary{}, run.Summary{}
			if ja, jb := mustJSON(t, a), mustJSON(t, b); ja != jb {
				t.Errorf("summary %s, uninterrupted %s", jb, ja)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	es, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		src, err := os.Open(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(to, e.Name()))
		if err == nil {
			_, err = io.Copy(dst, src)
		}
		src.Close()
		if err != nil || dst.Close() != nil {
			t.Fatal(err)
		}
	}
}

// legacyToy is the toy task as the format-1 fixtures were written: one
// that does not know its log Z (no target.LogZer).
type legacyToy struct{ k toyTask }

func (l legacyToy) Length() int        { return l.k.Length() }
func (l legacyToy) Alphabet() []string { return l.k.Alphabet() }
func (l legacyToy) LogReward(xs []int32, n int, out []float64) error {
	return l.k.LogReward(xs, n, out)
}
func (l legacyToy) IsMode(x []int32) bool { return l.k.IsMode(x) }
func (l legacyToy) NumModes() int         { return l.k.NumModes() }
func (l legacyToy) TargetSamples(n int, rng *rand.Rand) ([]int32, error) {
	return l.k.TargetSamples(n, rng)
}
