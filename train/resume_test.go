package train_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/safetensors"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/train"
)

// resumeGrid is the small grid of the resume tests, with its spec.
func resumeGrid(t *testing.T, h int) (discrete.Env, map[string]int) {
	t.Helper()
	g, err := hypergrid.New(2, h, hypergrid.Deceptive)
	if err != nil {
		t.Fatal(err)
	}
	return g, map[string]int{"dim": 2, "side": h}
}

// buildGrid is Load's and Resume's builder for resumeGrid's spec.
func buildGrid(raw json.RawMessage) (discrete.Env, error) {
	var s map[string]int
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return hypergrid.New(s["dim"], s["side"], hypergrid.Deceptive)
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

// wallClock lists the outputs that measure time, and so differ between
// any two runs.
var wallClock = []string{"wall_seconds", "train_seconds", "ms_per_iter_early", "ms_per_iter_late", "ms_per_iter_mean", "peak_rss_mib"}

// curveWithoutWall reads metrics.csv without its wall-clock column.
func curveWithoutWall(t *testing.T, dir string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "wall_seconds")
	for i, r := range rows {
		rows[i] = slices.Delete(r, col, col+1)
	}
	return rows
}

// summaryWithoutWall reads summary.json without its wall-clock fields.
func summaryWithoutWall(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range wallClock {
		if _, ok := m[k]; !ok {
			t.Fatalf("summary.json has no %s", k)
		}
		delete(m, k)
	}
	return m
}

// checkpointState reads a checkpoint's tensors (all but the timings and
// the curve, whose wall-clock cells differ) and its state (the random
// streams included; not the wall-clock time, the number of resumptions or
// the checkpoint interval), for bit-for-bit comparison.
func checkpointState(t *testing.T, dir string) (map[string]safetensors.Tensor, map[string]any) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, train.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts, meta, err := safetensors.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]safetensors.Tensor{}
	for _, x := range ts {
		if x.Name != "run.iter_ns" && x.Name != "run.curve" {
			m[x.Name] = x
		}
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(meta["gfn_train_state"]), &st); err != nil {
		t.Fatalf("checkpoint state: %v", err)
	}
	run, _ := st["run"].(map[string]any)
	delete(run, "wall_seconds")
	delete(run, "checkpoint_every") // an option, not state
	delete(st, "resumed")
	return m, st
}

// sameRun fails unless the runs in dirs a and b ended identically: the
// final trainers' parameters and counters, every checkpoint tensor and
// state (Adam, RND, buffer, random streams), metrics.csv and summary.json,
// wall-clock values aside.
func sameRun(t *testing.T, what string, a, b *train.Result, dirA, dirB string) {
	t.Helper()
	if ha, hb := paramHash(a.Trainer), paramHash(b.Trainer); ha != hb {
		t.Errorf("%s: parameters and counters %s, uninterrupted %s", what, hb, ha)
	}
	if a.Trainer.GradSteps != b.Trainer.GradSteps || a.Trainer.RewardCalls != b.Trainer.RewardCalls || a.Trainer.Step != b.Trainer.Step {
		t.Errorf("%s: counters differ", what)
	}
	if ca, cb := curveWithoutWall(t, dirA), curveWithoutWall(t, dirB); !slices.EqualFunc(ca, cb, slices.Equal) {
		t.Errorf("%s: metrics.csv differs:\n%v\n%v", what, cb, ca)
	}
	sa, sb := summaryWithoutWall(t, dirA), summaryWithoutWall(t, dirB)
	ja, _ := json.Marshal(sa)
	jb, _ := json.Marshal(sb)
	if !bytes.Equal(ja, jb) {
		t.Errorf("%s: summary.json differs:\n%s\n%s", what, jb, ja)
	}
	ta, ma := checkpointState(t, dirA)
	tb, mb := checkpointState(t, dirB)
	for name, x := range ta {
		y, ok := tb[name]
		if !ok || x.DType != y.DType || !slices.Equal(x.Shape, y.Shape) || !bytes.Equal(x.Data, y.Data) {
			t.Errorf("%s: final checkpoint tensor %s differs", what, name)
		}
	}
	if len(ta) != len(tb) {
		t.Errorf("%s: %d checkpoint tensors, uninterrupted %d", what, len(tb), len(ta))
	}
	ja, _ = json.Marshal(ma)
	jb, _ = json.Marshal(mb)
	if !bytes.Equal(ja, jb) {
		t.Errorf("%s: final checkpoint state differs:\n%s\n%s", what, jb, ja)
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
		{"per", func(c *train.Config) { c.Buffer, c.BufferCap = replay.Teacher, 30 }, true},
		{"per-default-cap", func(c *train.Config) { c.Buffer = replay.Teacher }, false},
		{"prt-tb", func(c *train.Config) { c.Method, c.Buffer, c.BufferCap = train.MethodTB, replay.Reward, 30 }, false},
		{"prt-hash-tb", func(c *train.Config) {
			c.Method, c.Buffer, c.BufferCap, c.BufferTies = train.MethodTB, replay.Reward, 30, "hash"
		}, false},
		{"uniform-tb", func(c *train.Config) { c.Method, c.Buffer, c.BufferCap = train.MethodTB, replay.Uniform, 30 }, false},
		{"ls-teacher", func(c *train.Config) { c.LocalSearch = true }, false},
		{"ls-per-tb", func(c *train.Config) {
			c.Method, c.LocalSearch, c.Buffer, c.BufferCap = train.MethodTB, true, replay.Teacher, 30
		}, true},
		{"db", func(c *train.Config) { c.Objective = train.ObjectiveDB }, false},
		{"db-per", func(c *train.Config) { c.Objective, c.Buffer = train.ObjectiveDB, replay.Teacher }, true},
		{"gafn", func(c *train.Config) { c.Method = train.MethodGAFN }, false},
		{"nmc-eps", func(c *train.Config) { c.NMC, c.Eps = 2, 0.05 }, true},
		{"teachers-3", func(c *train.Config) { c.Teachers = 3 }, false},
		{"teachers-2-none-per", func(c *train.Config) {
			c.Teachers, c.TeacherSplit, c.Buffer, c.BufferCap = 2, teacher.None, replay.Teacher, 30
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each waits on its checkpoints' fsyncs
			g, spec := resumeGrid(t, 8)
			cfg := resumeConfig(64, c.edit)
			opt := train.RunOptions{EnvSpec: spec, EvalEvery: 10, EvalSamples: 1000, CurveSamples: 300}
			if c.empirical {
				opt.CurveExactLimit = 10 // fewer than the grid's states: the curve samples
			}
			ctx := context.Background()
			root := t.TempDir()
			dirA, dirB, dirC := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
			for _, d := range []string{dirA, dirB} {
				os.Mkdir(d, 0o755)
			}

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
			train.SetAfterCheckpoint(&ob, func(step int) error {
				if snap == 0 && step >= half && step%2 == 1 {
					copyDir(t, dirB, dirC)
					snap = step
				}
				return nil
			})
			b, err := train.Run(ctx, g, cfg, ob)
			if err != nil {
				t.Fatal(err)
			}
			sameRun(t, "checkpointed", a, b, dirA, dirB)

			cc, err := train.ReadCheckpoint(dirC)
			if err != nil {
				t.Fatal(err)
			}
			if cc.Step != snap || !cc.Resumable || cc.Finished {
				t.Fatalf("snapshot checkpoint: step %d (want %d), resumable %v, finished %v", cc.Step, snap, cc.Resumable, cc.Finished)
			}
			c, err := train.Resume(ctx, dirC, buildGrid, train.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sameRun(t, fmt.Sprintf("resumed at %d", snap), a, c, dirA, dirC)
			if cc, _ := train.ReadCheckpoint(dirC); !cc.Finished || cc.Resumed != 1 {
				t.Errorf("final checkpoint: finished %v, resumed %d", cc.Finished, cc.Resumed)
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

// TestCancelledRunCheckpointsAndResumes: a run cancelled mid-iteration
// finishes the iteration, checkpoints it (between the periodic ones) and
// returns the context's error; resumed, it ends as the uninterrupted run.
// A Loaded checkpoint iterated to the end gives the same parameters too.
func TestCancelledRunCheckpointsAndResumes(t *testing.T) {
	g, spec := resumeGrid(t, 8)
	cfg := resumeConfig(80, func(c *train.Config) { c.Buffer = replay.Teacher })
	opt := train.RunOptions{EnvSpec: spec, EvalEvery: 10, EvalSamples: 1000}
	root := t.TempDir()
	dirA, dirB := filepath.Join(root, "a"), filepath.Join(root, "b")
	os.Mkdir(dirA, 0o755)
	os.Mkdir(dirB, 0o755)
	oa := opt
	oa.OutDir = dirA
	a, err := train.Run(context.Background(), g, cfg, oa)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	grid := g.(*hypergrid.Grid)
	ob := opt
	ob.OutDir, ob.CheckpointEvery = dirB, 25
	_, err = train.Run(ctx, cancelEnv{grid, &calls, 40*cfg.Batch + 1, cancel}, cfg, ob)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: error %v", err)
	}
	cc, err := train.ReadCheckpoint(dirB)
	if err != nil {
		t.Fatal(err)
	}
	if cc.Step%25 == 0 || cc.Finished || !cc.Resumable {
		t.Fatalf("cancelled run's checkpoint: step %d, finished %v, resumable %v", cc.Step, cc.Finished, cc.Resumable)
	}

	// Load continues the training exactly.
	tr, _, err := train.Load(dirB, buildGrid)
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

	// Run with ResumeFrom, given the environment and settings.
	b, err := train.Run(context.Background(), g, cfg, train.RunOptions{OutDir: dirB, ResumeFrom: dirB, EvalSamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, fmt.Sprintf("cancelled at %d and resumed", cc.Step), a, b, dirA, dirB)
}

// TestResumeAfterCrashInCheckpoint: a crash between the renames of
// checkpoint.safetensors and config.json leaves a new checkpoint with an
// old config.json (and temporary files); the checkpoint file is
// authoritative, Resume repairs the directory and ends as the
// uninterrupted run.
func TestResumeAfterCrashInCheckpoint(t *testing.T) {
	g, spec := resumeGrid(t, 8)
	cfg := resumeConfig(60, nil)
	opt := train.RunOptions{EnvSpec: spec, EvalEvery: 10, EvalSamples: 1000}
	root := t.TempDir()
	dirA, dirB := filepath.Join(root, "a"), filepath.Join(root, "b")
	snaps := map[int]string{}
	os.Mkdir(dirA, 0o755)
	os.Mkdir(dirB, 0o755)
	oa := opt
	oa.OutDir = dirA
	a, err := train.Run(context.Background(), g, cfg, oa)
	if err != nil {
		t.Fatal(err)
	}
	ob := opt
	ob.OutDir, ob.CheckpointEvery = dirB, 9
	train.SetAfterCheckpoint(&ob, func(step int) error {
		if step == 18 || step == 27 {
			snaps[step] = filepath.Join(root, fmt.Sprint(step))
			copyDir(t, dirB, snaps[step])
		}
		if step == 27 {
			return errors.New("killed")
		}
		return nil
	})
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

	cc, err := train.ReadCheckpoint(crashed)
	if err != nil || cc.Step != 27 {
		t.Fatalf("ReadCheckpoint after the crash: step %d, %v", cc.Step, err)
	}
	if tr, _, err := train.Load(crashed, buildGrid); err != nil || tr.Step != 27 {
		t.Fatalf("Load after the crash: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stop at once: only the repair runs
	if _, err := train.Resume(ctx, crashed, buildGrid, train.RunOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("resume with a cancelled context: %v", err)
	}
	var fixed train.CheckpointConfig
	if b, err := os.ReadFile(filepath.Join(crashed, train.ConfigFile)); err != nil || json.Unmarshal(b, &fixed) != nil || fixed.Step != 27 {
		t.Errorf("config.json not repaired: step %d, %v", fixed.Step, err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(crashed, ".*.tmp*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	c, err := train.Resume(context.Background(), crashed, buildGrid, train.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "resumed after a crash", a, c, dirA, crashed)
}

// TestResumeRejectsMismatches: resuming with other settings, another
// environment or spec, or other curve options names the difference; a
// finished run, and a checkpoint without a run record, say so.
func TestResumeRejectsMismatches(t *testing.T) {
	g, spec := resumeGrid(t, 8)
	cfg := resumeConfig(30, func(c *train.Config) { c.Hidden = []int{16} })
	root := t.TempDir()
	done, part := filepath.Join(root, "done"), filepath.Join(root, "part")
	os.Mkdir(done, 0o755)
	os.Mkdir(part, 0o755)
	ctx := context.Background()
	if _, err := train.Run(ctx, g, cfg, train.RunOptions{OutDir: done, EnvSpec: spec, EvalEvery: 5}); err != nil {
		t.Fatal(err)
	}
	opt := train.RunOptions{OutDir: part, EnvSpec: spec, EvalEvery: 5, CheckpointEvery: 10}
	train.SetAfterCheckpoint(&opt, func(int) error { return errors.New("stop") })
	if _, err := train.Run(ctx, g, cfg, opt); err == nil {
		t.Fatal("the hook did not stop the run")
	}

	g16, spec16 := resumeGrid(t, 16)
	other := cfg
	other.LR = 2e-3
	hidden := cfg
	hidden.Hidden = []int{16, 16}
	for _, c := range []struct {
		name string
		env  discrete.Env
		cfg  train.Config
		opt  train.RunOptions
		want string
	}{
		{"lr", g, other, train.RunOptions{}, "setting lr is 0.001 in the checkpoint and 0.002"},
		{"hidden", g, hidden, train.RunOptions{}, "setting hidden is [16]"},
		{"env", g16, cfg, train.RunOptions{}, "environment hypergrid(d=2, H=8"},
		{"spec", g, cfg, train.RunOptions{EnvSpec: spec16}, "environment spec"},
		{"eval-every", g, cfg, train.RunOptions{EvalEvery: 7}, "eval-every 7 differs from the run's 5"},
		{"curve samples", g, cfg, train.RunOptions{CurveSamples: 100}, "curve samples 100"},
		{"interval", g, cfg, train.RunOptions{CheckpointEvery: -1}, "checkpoint interval -1"},
		{"no out dir", g, cfg, train.RunOptions{CheckpointEvery: 3, OutDir: "-"}, "needs an output directory"},
	} {
		o := c.opt
		o.ResumeFrom = part
		if c.name == "no out dir" {
			o.OutDir = ""
		}
		_, err := train.Run(ctx, c.env, c.cfg, o)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "train: ") {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := train.Resume(ctx, done, buildGrid, train.RunOptions{}); err == nil || !strings.Contains(err.Error(), "is finished") {
		t.Errorf("finished run: error %v", err)
	}
	if _, err := train.Run(ctx, g, cfg, train.RunOptions{ResumeFrom: done}); err == nil || !strings.Contains(err.Error(), "is finished") {
		t.Errorf("finished run (Run): error %v", err)
	}
	tr, _, err := train.Load(part, buildGrid)
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(root, "saved")
	os.Mkdir(saved, 0o755)
	if err := tr.Save(saved, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := train.Resume(ctx, saved, buildGrid, train.RunOptions{}); err == nil || !strings.Contains(err.Error(), "no run record") {
		t.Errorf("checkpoint of Save: error %v", err)
	}
}

// TestCheckpointStaysReadable: the final checkpoint keeps the layout older
// readers use (parameters in PyTorch layout under student.model.*, Adam
// states, config.json with the counters), and a checkpoint without the run
// state (as written before it existed) still loads.
func TestCheckpointStaysReadable(t *testing.T) {
	g, spec := resumeGrid(t, 8)
	cfg := resumeConfig(20, func(c *train.Config) { c.Hidden = []int{24} })
	dir := t.TempDir()
	res, err := train.Run(context.Background(), g, cfg, train.RunOptions{OutDir: dir, EnvSpec: spec})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, train.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	ts, meta, err := safetensors.Read(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	shapes := map[string][]int{}
	for _, x := range ts {
		shapes[x.Name] = x.Shape
	}
	for name, want := range map[string][]int{"student.model.0.weight": {24, 16}, "student.model.0.bias": {24},
		"student.logZ": {}, "teacher.model.0.weight": {24, 16}, "student.optim.step": {}} {
		if got, ok := shapes[name]; !ok || !slices.Equal(got, want) {
			t.Errorf("tensor %s: shape %v (present %v), want %v", name, got, ok, want)
		}
	}
	var cc train.CheckpointConfig
	b, _ := os.ReadFile(filepath.Join(dir, train.ConfigFile))
	if err := json.Unmarshal(b, &cc); err != nil || cc.Step != res.Trainer.Step || len(cc.ModesFound) != len(res.Trainer.ModesFound) || !cc.Finished {
		t.Errorf("config.json: %+v, %v", cc, err)
	}

	// Strip the run state, as an older writer would have left it out.
	delete(meta, "gfn_train_state")
	var keep []safetensors.Tensor
	for _, x := range ts {
		if !strings.HasPrefix(x.Name, "state.") && !strings.HasPrefix(x.Name, "run.") {
			keep = append(keep, x)
		}
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, keep, meta); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, train.CheckpointFile), buf.Bytes(), 0o644)
	tr, _, err := train.Load(dir, buildGrid)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Step != res.Trainer.Step || len(tr.ModesFound) != len(res.Trainer.ModesFound) || tr.Student.LogZ.Value[0] != res.Trainer.Student.LogZ.Value[0] {
		t.Errorf("old-format checkpoint: step %d, modes %d", tr.Step, len(tr.ModesFound))
	}
	if _, err := train.Resume(context.Background(), dir, buildGrid, train.RunOptions{}); err == nil || !strings.Contains(err.Error(), "is finished") {
		t.Errorf("old-format finished checkpoint: %v", err)
	}
}

// sigkillRun is the run of TestResumeAfterSIGKILL, in both processes.
func sigkillRun(t *testing.T, dir string, every int) *train.Result {
	t.Helper()
	g, spec := resumeGrid(t, 16)
	cfg := resumeConfig(300, func(c *train.Config) { c.Buffer, c.BufferCap = replay.Teacher, 100 })
	res, err := train.Run(context.Background(), g, cfg, train.RunOptions{OutDir: dir, EnvSpec: spec, EvalEvery: 25,
		EvalSamples: 1000, CheckpointEvery: every})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSIGKILLChild is the process TestResumeAfterSIGKILL kills.
func TestSIGKILLChild(t *testing.T) {
	dir := os.Getenv("GFN_TRAIN_SIGKILL_DIR")
	if dir == "" {
		t.Skip("run by TestResumeAfterSIGKILL")
	}
	sigkillRun(t, dir, 3)
}

// TestResumeAfterSIGKILL: a run checkpointing every 3 iterations, killed
// with SIGKILL at a random moment (possibly while writing a checkpoint)
// and resumed, ends bit for bit as the uninterrupted run.
func TestResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("short: trains twice and a killed process")
	}
	root := t.TempDir()
	dirA, dirB := filepath.Join(root, "a"), filepath.Join(root, "b")
	os.Mkdir(dirA, 0o755)
	os.Mkdir(dirB, 0o755)
	a := sigkillRun(t, dirA, 0)

	cmd := exec.Command(os.Args[0], "-test.run=^TestSIGKILLChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GFN_TRAIN_SIGKILL_DIR="+dirB)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dirB, train.ConfigFile)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no checkpoint after 30 s:\n%s", out.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	cc, err := train.ReadCheckpoint(dirB)
	if err != nil {
		t.Fatal(err)
	}
	if cc.Finished {
		t.Skipf("the child finished before the kill:\n%s", out.String())
	}
	t.Logf("killed after the checkpoint of iteration %d", cc.Step)
	b, err := train.Resume(context.Background(), dirB, buildGrid, train.RunOptions{CheckpointEvery: 100})
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, fmt.Sprintf("killed after %d, resumed", cc.Step), a, b, dirA, dirB)
}

// TestUnusableOutDirBeforeTraining: an output directory that cannot be
// made is reported before the first iteration, not at the first
// checkpoint.
func TestUnusableOutDirBeforeTraining(t *testing.T) {
	g, spec := resumeGrid(t, 8)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	cfg := resumeConfig(80, func(*train.Config) {})
	res, err := train.Run(context.Background(), g, cfg, train.RunOptions{EnvSpec: spec, OutDir: filepath.Join(file, "run"), CheckpointEvery: 10, EvalSamples: 100})
	if err == nil || !strings.Contains(err.Error(), "not usable") || res != nil {
		t.Errorf("result %v, err %v, want 'not usable' and no run", res, err)
	}
}
