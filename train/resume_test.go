package train_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/run/runtest"
	"github.com/gfngo/gfn/safetensors"
	"github.com/gfngo/gfn/task"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/train"
)

// The driver's suite (package run/runtest) covers a grid run: stopped
// after a periodic checkpoint, killed with SIGKILL at a random moment,
// cancelled, extended and corrupted. The tests below cover what is the
// grid's own: every method's state (buffers, RND networks, several
// Teachers, mode attribution) across a resume, cancellation within an
// iteration, Load, the resume settings, the checkpoint's layout and the
// conversion of format-1 checkpoints.

// resumeGrid is the small grid of the resume tests, with its spec.
func resumeGrid(t testing.TB, h int) (discrete.Env, task.Spec) {
	t.Helper()
	spec := task.Spec{Task: "hypergrid", Dim: 2, Side: h, Reward: string(hypergrid.Deceptive)}
	g, err := task.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	return g, spec
}

func resumeConfig(iterations int, edit func(*train.Config)) train.Config {
	cfg := train.DefaultConfig()
	cfg.Hidden = []int{64, 64}
	cfg.RewardCalls = iterations * cfg.Batch
	cfg.Seed = 3
	if edit != nil {
		edit(&cfg)
	}
	return cfg
}

// copyDir snapshots a run directory, as a kill would leave it.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sameRun fails unless the runs in dirs a and b ended identically: the
// final trainers' parameters and counters, every checkpoint tensor, the
// state and the random streams, metrics.csv and summary.json, wall-clock
// values aside.
func sameRun(t *testing.T, what string, a, b *train.Result, dirA, dirB string) {
	t.Helper()
	if ha, hb := paramHash(a.Trainer), paramHash(b.Trainer); ha != hb {
		t.Errorf("%s: parameters and counters %s, uninterrupted %s", what, hb, ha)
	}
	runtest.Same(t, runtest.Outputs(t, dirA), runtest.Outputs(t, dirB))
	ca, err := run.Open(dirA)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := run.Open(dirB)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ca.Header.Streams, cb.Header.Streams) {
		t.Errorf("%s: the final random streams differ", what)
	}
}

// TestResumeIsBitIdentical: for each method and variant, a run
// checkpointed every 7 iterations and one resumed from its checkpoint of
// about half-way (as a kill right after it would leave the directory)
// end exactly as the uninterrupted run: parameters of every agent, Adam
// and RND states, buffer, random streams, counters, metrics.csv and
// summary.json, wall-clock values aside. The checkpoints fall between
// curve points (every 10), so the loss sums in between are carried over
// too; the "empirical" cases draw their curve points from the evaluation
// stream.
func TestResumeIsBitIdentical(t *testing.T) {
	cases := []struct {
		name      string
		edit      func(*train.Config)
		empirical bool
	}{
		{"teacher", nil, false},
		{"tb", func(c *train.Config) { c.Method = train.MethodTB }, true},
		// Buffers of 30 of the 64 terminal states (the default holds 6,
		// which one batch replaces entirely).
		{"per", func(c *train.Config) { c.Buffer.Priority, c.Buffer.Cap = replay.Teacher, 30 }, true},
		{"per-default-cap", func(c *train.Config) { c.Buffer.Priority = replay.Teacher }, false},
		{"prt-tb", func(c *train.Config) { c.Method, c.Buffer.Priority, c.Buffer.Cap = train.MethodTB, replay.Reward, 30 }, false},
		{"prt-hash-tb", func(c *train.Config) {
			c.Method, c.Buffer.Priority, c.Buffer.Cap, c.Buffer.Ties = train.MethodTB, replay.Reward, 30, "hash"
		}, false},
		{"uniform-tb", func(c *train.Config) { c.Method, c.Buffer.Priority, c.Buffer.Cap = train.MethodTB, replay.Uniform, 30 }, false},
		{"ls-teacher", func(c *train.Config) { c.LS.On = true }, false},
		{"ls-per-tb", func(c *train.Config) {
			c.Method, c.LS.On, c.Buffer.Priority, c.Buffer.Cap = train.MethodTB, true, replay.Teacher, 30
		}, true},
		{"db", func(c *train.Config) { c.Objective = train.ObjectiveDB }, false},
		{"db-per", func(c *train.Config) { c.Objective, c.Buffer.Priority = train.ObjectiveDB, replay.Teacher }, true},
		{"gafn", func(c *train.Config) { c.Method = train.MethodGAFN }, false},
		{"nmc-eps", func(c *train.Config) { c.NMC, c.Eps = 2, 0.05 }, true},
		{"teachers-3", func(c *train.Config) { c.Teachers = 3 }, false},
		{"teachers-2-none-per", func(c *train.Config) {
			c.Teachers, c.TeacherSplit, c.Buffer.Priority, c.Buffer.Cap = 2, teacher.None, replay.Teacher, 30
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each waits on its checkpoints' fsyncs
			g, spec := resumeGrid(t, 8)
			cfg := resumeConfig(64, c.edit)
			opt := train.RunOptions{EnvSpec: spec, EvalSamples: 1000, CurveSamples: 300}
			opt.EvalEvery = 10
			if c.empirical {
				opt.CurveExactLimit = 10 // fewer than the grid's states: the curve samples
			}
			ctx := context.Background()
			root := t.TempDir()
			dirA, dirB, dirC := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")

			oa := opt
			oa.OutDir = dirA
			a, err := train.Run(ctx, g, cfg, oa)
			if err != nil {
				t.Fatal(err)
			}

			// B checkpoints every 7 iterations; C is B's directory right
			// after the checkpoint of about half-way, at an odd iteration,
			// so that with a buffer the next one replays.
			ob := opt
			ob.OutDir, ob.CheckpointEvery = dirB, 7
			half := a.Trainer.Step / 2
			snap := 0
			ob.AfterCheckpoint = func(step int) error {
				if snap == 0 && step >= half && step%2 == 1 {
					copyDir(t, dirB, dirC)
					snap = step
				}
				return nil
			}
			b, err := train.Run(ctx, g, cfg, ob)
			if err != nil {
				t.Fatal(err)
			}
			sameRun(t, "checkpointed", a, b, dirA, dirB)

			ck, err := run.Open(dirC)
			if err != nil {
				t.Fatal(err)
			}
			if ck.Header.Done != snap || ck.Header.Finished {
				t.Fatalf("snapshot checkpoint: step %d (want %d), finished %v", ck.Header.Done, snap, ck.Header.Finished)
			}
			c, err := train.Resume(ctx, dirC, g, train.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sameRun(t, fmt.Sprintf("resumed at %d", snap), a, c, dirA, dirC)
			if ck, _ := run.Open(dirC); !ck.Header.Finished || ck.Header.Resumed != 1 {
				t.Errorf("final checkpoint: finished %v, resumed %d", ck.Header.Finished, ck.Header.Resumed)
			}
		})
	}
}

// cancelEnv cancels a context at its reward call number at (mid-way
// through an iteration).
type cancelEnv struct {
	*hypergrid.Grid
	calls  *int
	at     int
	cancel context.CancelFunc
}

func (e cancelEnv) LogReward(xs []int32, n int, out []float64) error {
	*e.calls += n
	if *e.calls >= e.at {
		e.cancel()
	}
	return e.Grid.LogReward(xs, n, out)
}

// TestCancelledRunCheckpointsAndResumes: a run without periodic
// checkpoints, cancelled mid-iteration (Ctrl-C), finishes the iteration,
// checkpoints it and returns a *run.Interrupted naming it; resumed, it
// ends as the uninterrupted run, also with another number of final
// samples (which changes the final evaluation alone). A Loaded
// checkpoint iterated to the end gives the same parameters too.
func TestCancelledRunCheckpointsAndResumes(t *testing.T) {
	g, spec := resumeGrid(t, 8)
	cfg := resumeConfig(80, func(c *train.Config) { c.Buffer.Priority = replay.Teacher })
	opt := train.RunOptions{EnvSpec: spec, EvalSamples: 1000}
	opt.EvalEvery = 10
	root := t.TempDir()
	dirA, dirB, dirC := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
	oa := opt
	oa.OutDir = dirA
	a, err := train.Run(context.Background(), g, cfg, oa)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	ob := opt
	ob.OutDir = dirB
	_, err = train.Run(ctx, cancelEnv{g.(*hypergrid.Grid), &calls, 40*cfg.Batch + 1, cancel}, cfg, ob)
	e, ok := run.IsInterrupted(err)
	if !ok || !errors.Is(err, context.Canceled) || e.Dir != dirB {
		t.Fatalf("cancelled run: error %v, want *run.Interrupted with a checkpoint in %s", err, dirB)
	}
	ck, err := run.Open(dirB)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Header.Done != e.Done || e.Done == 0 || ck.Header.Finished {
		t.Fatalf("cancelled run's checkpoint: step %d, finished %v", ck.Header.Done, ck.Header.Finished)
	}
	copyDir(t, dirB, dirC)

	// Load continues the training exactly.
	tr, err := train.Load(dirB, g)
	if err != nil {
		t.Fatal(err)
	}
	for !tr.Done() {
		if _, err := tr.Iterate(); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := paramHash(tr), paramHash(a.Trainer); got != want {
		t.Errorf("loaded and iterated: %s, uninterrupted %s", got, want)
	}

	b, err := train.Resume(context.Background(), dirB, g, train.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, fmt.Sprintf("cancelled at %d and resumed", e.Done), a, b, dirA, dirB)

	c, err := train.Resume(context.Background(), dirC, g, train.RunOptions{EvalSamples: 500})
	if err != nil {
		t.Fatal(err)
	}
	if c.Summary.EvalSamples != 500 || *c.Summary.EmpiricalL1 == *a.Summary.EmpiricalL1 {
		t.Errorf("resumed with 500 final samples: %d samples, empirical L1 %v (uninterrupted %v)", c.Summary.EvalSamples, *c.Summary.EmpiricalL1, *a.Summary.EmpiricalL1)
	}
	wa, wc := runtest.Outputs(t, dirA), runtest.Outputs(t, dirC)
	if wa["metrics.csv"] != wc["metrics.csv"] || paramHash(a.Trainer) != paramHash(c.Trainer) {
		t.Errorf("another number of final samples changed the training")
	}
}

// TestExtendFinishedRun: a finished run resumed without a larger budget
// is refused with run.ErrFinished; with one it continues, keeping its
// curve's points, and ends at the new budget.
func TestExtendFinishedRun(t *testing.T) {
	g, spec := resumeGrid(t, 8)
	cfg := resumeConfig(40, func(c *train.Config) { c.Buffer.Priority = replay.Teacher })
	dir := t.TempDir()
	opt := train.RunOptions{EnvSpec: spec, EvalSamples: 500}
	opt.OutDir, opt.EvalEvery = dir, 10
	a, err := train.Run(context.Background(), g, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := train.Resume(context.Background(), dir, g, train.RunOptions{}); !errors.Is(err, run.ErrFinished) {
		t.Fatalf("resuming a finished run: %v, want run.ErrFinished", err)
	}
	if _, err := train.Resume(context.Background(), dir, g, train.RunOptions{Budget: 100}); err == nil || !strings.Contains(err.Error(), "below the") {
		t.Errorf("a budget below the reward calls done: %v", err)
	}
	b, err := train.Resume(context.Background(), dir, g, train.RunOptions{Budget: 2 * cfg.RewardCalls})
	if err != nil {
		t.Fatal(err)
	}
	if b.Summary.RewardCalls != 2*cfg.RewardCalls || b.Trainer.Step != 2*a.Trainer.Step || b.Summary.Resumed != 1 {
		t.Errorf("extended run: %d reward calls, %d steps, resumed %d", b.Summary.RewardCalls, b.Trainer.Step, b.Summary.Resumed)
	}
	if !reflect.DeepEqual(b.Curve.Rows[:a.Curve.Len()], a.Curve.Rows) && !sameRows(b.Curve.Rows[:a.Curve.Len()], a.Curve.Rows) {
		t.Errorf("the extension changed the curve's points")
	}
	steps := b.Curve.Column("step")
	var want []float64
	for s := 0; s <= b.Trainer.Step; s += 10 {
		want = append(want, float64(s))
	}
	if !slices.Equal(steps, want) {
		t.Errorf("extended curve at steps %v, want %v", steps, want)
	}
	st, err := train.ReadCheckpoint(dir)
	if err != nil || st.Train.RewardCalls != 2*cfg.RewardCalls {
		t.Errorf("extended checkpoint's budget %d, %v", st.Train.RewardCalls, err)
	}
}

// sameRows compares curve rows with NaN equal to NaN.
func sameRows(a, b [][]float64) bool {
	return slices.EqualFunc(a, b, func(x, y []float64) bool {
		return slices.EqualFunc(x, y, func(u, v float64) bool { return u == v || u != u && v != v })
	})
}

// TestResumeAfterCrashInCheckpoint: a crash between the renames of
// checkpoint.safetensors and config.json leaves a new checkpoint with an
// old config.json (and temporary files); the checkpoint file is
// authoritative for ReadCheckpoint, Load and Resume, which removes the
// temporary files and ends as the uninterrupted run.
func TestResumeAfterCrashInCheckpoint(t *testing.T) {
	g, spec := resumeGrid(t, 8)
	cfg := resumeConfig(60, nil)
	opt := train.RunOptions{EnvSpec: spec, EvalSamples: 1000}
	opt.EvalEvery = 10
	root := t.TempDir()
	dirA, dirB := filepath.Join(root, "a"), filepath.Join(root, "b")
	snaps := map[int]string{}
	oa := opt
	oa.OutDir = dirA
	a, err := train.Run(context.Background(), g, cfg, oa)
	if err != nil {
		t.Fatal(err)
	}
	ob := opt
	ob.OutDir, ob.CheckpointEvery = dirB, 9
	ob.AfterCheckpoint = func(step int) error {
		if step == 18 || step == 27 {
			snaps[step] = filepath.Join(root, fmt.Sprint(step))
			copyDir(t, dirB, snaps[step])
		}
		if step == 27 {
			return errors.New("killed")
		}
		return nil
	}
	if _, err := train.Run(context.Background(), g, cfg, ob); err == nil || err.Error() != "killed" {
		t.Fatalf("stopped run: %v", err)
	}
	crashed := snaps[27]
	old, err := os.ReadFile(filepath.Join(snaps[18], train.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(crashed, train.ConfigFile), old, 0o644)
	os.WriteFile(filepath.Join(crashed, ".checkpoint.safetensors.tmp123"), []byte("partial"), 0o644)
	os.WriteFile(filepath.Join(crashed, ".config.json.tmp9"), []byte("{"), 0o644)

	if tr, err := train.Load(crashed, g); err != nil || tr.Step != 27 {
		t.Fatalf("Load after the crash: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stop at once: only the repair runs
	if _, err := train.Resume(ctx, crashed, g, train.RunOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("resume with a cancelled context: %v", err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(crashed, ".*.tmp*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	c, err := train.Resume(context.Background(), crashed, g, train.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "resumed after a crash", a, c, dirA, crashed)
	var cc struct {
		Done     int  `json:"done"`
		Finished bool `json:"finished"`
	}
	if b, err := os.ReadFile(filepath.Join(crashed, train.ConfigFile)); err != nil || json.Unmarshal(b, &cc) != nil || cc.Done != a.Trainer.Step || !cc.Finished {
		t.Errorf("config.json after the resume: %+v, %v", cc, err)
	}
}

// TestResumeRejectsMismatches: resuming on another environment, with
// another spec or other curve options names the difference; a
// checkpoint of an earlier layout says how to convert it.
func TestResumeRejectsMismatches(t *testing.T) {
	g, spec := resumeGrid(t, 8)
	cfg := resumeConfig(30, func(c *train.Config) { c.Hidden = []int{16} })
	part := t.TempDir()
	ctx := context.Background()
	opt := train.RunOptions{EnvSpec: spec}
	opt.OutDir, opt.EvalEvery, opt.CheckpointEvery = part, 5, 10
	opt.AfterCheckpoint = func(int) error { return errors.New("stop") }
	if _, err := train.Run(ctx, g, cfg, opt); err == nil {
		t.Fatal("the hook did not stop the run")
	}
	g16, spec16 := resumeGrid(t, 16)
	for _, c := range []struct {
		name string
		env  discrete.Env
		opt  train.RunOptions
		want string
	}{
		{"env", g16, train.RunOptions{}, "train: checkpoint " + filepath.Join(part, train.CheckpointFile) + " is of environment hypergrid(d=2, H=8"},
		{"spec", g, train.RunOptions{EnvSpec: spec16}, "train: resume from " + part + ": the checkpoint's environment spec"},
		{"eval-every", g, train.RunOptions{Options: run.Options{EvalEvery: 7}}, "evaluation interval 7 differs from the run's 5"},
		{"curve samples", g, train.RunOptions{CurveSamples: 100}, "train: resume from " + part + ": curve samples 100 differs from the run's 5000"},
		{"curve limit", g, train.RunOptions{CurveExactLimit: 3}, "curve exact limit 3 differs"},
		{"interval", g, train.RunOptions{Options: run.Options{CheckpointEvery: -1}}, "checkpoint interval -1"},
	} {
		_, err := train.Resume(ctx, part, c.env, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	legacy := t.TempDir()
	copyDir(t, filepath.Join("testdata", "legacy", "teachers2-per"), legacy)
	var le *run.LegacyError
	if _, err := train.Resume(ctx, legacy, g, train.RunOptions{}); !errors.As(err, &le) || !strings.Contains(err.Error(), "gfn migrate") {
		t.Errorf("format-1 checkpoint: error %v, want a run.LegacyError", err)
	}
}

// TestCheckpointLayout: the checkpoint keeps the tensor names and shapes
// Python and older readers use (PyTorch layout under student.model.*,
// Adam states, the Teachers', GAFN's RND networks), and config.json
// tells the counters.
func TestCheckpointLayout(t *testing.T) {
	g, spec := resumeGrid(t, 8)
	for _, c := range []struct {
		edit func(*train.Config)
		want map[string][]int
	}{
		{func(c *train.Config) { c.Teachers = 2 }, map[string][]int{"student.model.0.weight": {24, 16}, "student.model.0.bias": {24},
			"student.logZ": {}, "teacher.model.0.weight": {24, 16}, "teacher1.logZ": {}, "student.optim.step": {}, "teacher1.optim.step": {}}},
		{func(c *train.Config) { c.Method = train.MethodGAFN }, map[string][]int{"student.logZ": {}, "rnd.target.0.weight": {256, 16},
			"rnd.predictor.0.weight": {256, 16}, "rnd.optim.step": {}}},
	} {
		cfg := resumeConfig(20, func(c *train.Config) { c.Hidden = []int{24} })
		c.edit(&cfg)
		dir := t.TempDir()
		opt := train.RunOptions{EnvSpec: spec}
		opt.OutDir = dir
		res, err := train.Run(context.Background(), g, cfg, opt)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(dir, train.CheckpointFile))
		if err != nil {
			t.Fatal(err)
		}
		ts, _, err := safetensors.Read(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		shapes := map[string][]int{}
		for _, x := range ts {
			shapes[x.Name] = x.Shape
		}
		for name, want := range c.want {
			if got, ok := shapes[name]; !ok || !slices.Equal(got, want) {
				t.Errorf("%s: tensor %s: shape %v (present %v), want %v", cfg.Method, name, got, ok, want)
			}
		}
		var cc struct {
			Kind     string       `json:"kind"`
			Done     int          `json:"done"`
			Finished bool         `json:"finished"`
			Config   train.Stored `json:"config"`
		}
		b, _ := os.ReadFile(filepath.Join(dir, train.ConfigFile))
		if err := json.Unmarshal(b, &cc); err != nil || cc.Kind != "grid" || cc.Done != res.Trainer.Step || !cc.Finished || !reflect.DeepEqual(cc.Config.Train, cfg) {
			t.Errorf("config.json: %+v, %v", cc, err)
		}
	}
}

// TestMigrateLegacy: a format-1 checkpoint of a run stopped midway
// (testdata/legacy, written by the gfn before the driver: two Teachers
// with a PER buffer, and DB with a transition buffer), converted by
// Migrate and resumed, ends with the outputs of the run never
// interrupted.
func TestMigrateLegacy(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*train.Config)
	}{
		{"teachers2-per", func(c *train.Config) { c.Teachers, c.Buffer.Priority, c.Buffer.Cap = 2, replay.Teacher, 10 }},
		{"db-prt", func(c *train.Config) {
			c.Method, c.Objective, c.Buffer.Priority, c.Buffer.Cap = train.MethodTB, train.ObjectiveDB, replay.Reward, 12
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, spec := resumeGrid(t, 6)
			cfg := train.DefaultConfig()
			cfg.Hidden, cfg.Batch, cfg.RewardCalls, cfg.Seed = []int{6}, 4, 20*4, 5
			c.edit(&cfg)
			ref := t.TempDir()
			opt := train.RunOptions{EnvSpec: spec, EvalSamples: 200, CurveSamples: 100}
			opt.OutDir, opt.EvalEvery, opt.CheckpointEvery = ref, 4, 3
			a, err := train.Run(context.Background(), g, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			copyDir(t, filepath.Join("testdata", "legacy", c.name), dir)
			if err := train.Migrate(dir, g); err != nil {
				t.Fatal(err)
			}
			ck, err := run.Open(dir)
			if err != nil || ck.Header.Done != 9 || ck.Header.CheckpointEvery != 3 || ck.Header.Every != 4 {
				t.Fatalf("converted checkpoint: %v, %+v", err, ck.Header)
			}
			if err := train.Migrate(dir, g); err == nil || !strings.Contains(err.Error(), "not a format-1") {
				t.Errorf("migrating twice: %v", err)
			}
			b, err := train.Resume(context.Background(), dir, g, train.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sameRun(t, "migrated and resumed", a, b, ref, dir)
		})
	}
}

// TestUnusableOutDirBeforeTraining: an output directory that cannot be
// made is reported before the first iteration, not at the first
// checkpoint.
func TestUnusableOutDirBeforeTraining(t *testing.T) {
	g, spec := resumeGrid(t, 8)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	cfg := resumeConfig(80, func(*train.Config) {})
	opt := train.RunOptions{EnvSpec: spec, EvalSamples: 100}
	opt.OutDir, opt.CheckpointEvery = filepath.Join(file, "run"), 10
	res, err := train.Run(context.Background(), g, cfg, opt)
	if err == nil || !strings.Contains(err.Error(), "not usable") || res != nil {
		t.Errorf("result %v, err %v, want 'not usable' and no run", res, err)
	}
}

// TestDriverConformance runs the driver's suite on a short grid run with
// two Teachers and a PER buffer (every kind of the grid's state).
func TestDriverConformance(t *testing.T) {
	g, spec := resumeGrid(t, 6)
	cfg := train.DefaultConfig()
	cfg.Hidden, cfg.Batch, cfg.RewardCalls, cfg.Seed = []int{8}, 4, 24*4, 2
	cfg.Teachers, cfg.Buffer.Priority, cfg.Buffer.Cap = 2, replay.Teacher, 10
	opts := func(o run.Options) train.RunOptions {
		return train.RunOptions{Options: o, EnvSpec: spec, EvalSamples: 300, CurveSamples: 100}
	}
	runtest.Check(t, runtest.Subject{
		Run: func(ctx context.Context, o run.Options) error {
			_, err := train.Run(ctx, g, cfg, opts(o))
			return err
		},
		Resume: func(ctx context.Context, dir string, extra int, o run.Options) error {
			st, err := train.ReadCheckpoint(dir)
			if err != nil {
				return err
			}
			env, err := task.BuildJSON(st.Env)
			if err != nil {
				return err
			}
			ro := opts(o)
			ro.EnvSpec = nil
			if extra > 0 {
				// The suite counts iterations: a batch of reward calls each
				// (a buffer's replays are free, so this is more).
				ro.Budget = st.Train.RewardCalls + extra*st.Train.Batch
			}
			_, err = train.Resume(ctx, dir, env, ro)
			return err
		},
		Units: cfg.Steps(),
		Seed:  1,
	})
}
