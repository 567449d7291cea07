package train_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/metrics"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/train"
)

func trainSmall(t *testing.T, method train.Method, steps int, seed uint64) (*train.Trainer, metrics.Distances) {
	return trainSmallObj(t, method, train.ObjectiveTB, steps, seed)
}

func trainSmallObj(t *testing.T, method train.Method, obj train.Objective, steps int, seed uint64) (*train.Trainer, metrics.Distances) {
	t.Helper()
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	cfg := train.DefaultConfig()
	cfg.Method, cfg.Objective = method, obj
	cfg.Hidden = []int{64, 64}
	cfg.RewardCalls = steps * cfg.Batch
	cfg.Seed = seed
	tr, err := train.New(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for !tr.Done() {
		it, err := tr.Iterate()
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(it.StudentLoss) || (method == train.MethodTeacher && math.IsNaN(it.TeacherLoss)) {
			t.Fatalf("step %d: NaN loss %+v", tr.Step, it)
		}
	}
	target, _, _ := metrics.Target(g)
	p, err := metrics.Terminating(g, tr.Student.Model)
	if err != nil {
		t.Fatal(err)
	}
	return tr, metrics.Compare(p, target)
}

func TestStudentLearnsSmallGrid(t *testing.T) {
	for _, m := range []train.Method{train.MethodTB, train.MethodTeacher} {
		tr, d := trainSmall(t, m, 1500, 1)
		t.Logf("%s: TV %.4f L1 %.2e KL %.4f logZ %.3f modes %d", m, d.TV, d.L1, d.KL, tr.Student.LogZ.Value[0], len(tr.ModesFound))
		if d.TV > 0.05 {
			t.Errorf("%s: exact TV %.4f after %d steps, want < 0.05", m, d.TV, tr.Step)
		}
		if tr.RewardCalls != 1500*16 || tr.Step != 1500 {
			t.Errorf("%s: %d reward calls in %d steps", m, tr.RewardCalls, tr.Step)
		}
	}
}

func TestDBStudentLearnsSmallGrid(t *testing.T) {
	for _, m := range []train.Method{train.MethodTB, train.MethodTeacher} {
		tr, d := trainSmallObj(t, m, train.ObjectiveDB, 1500, 1)
		t.Logf("db %s: TV %.4f L1 %.2e modes %d", m, d.TV, d.L1, len(tr.ModesFound))
		if d.TV > 0.1 {
			t.Errorf("db %s: exact TV %.4f after %d steps, want < 0.1", m, d.TV, tr.Step)
		}
	}
}

func TestDeterministicFromSeed(t *testing.T) {
	a, da := trainSmall(t, train.MethodTeacher, 50, 7)
	b, db := trainSmall(t, train.MethodTeacher, 50, 7)
	if da != db || a.Student.LogZ.Value[0] != b.Student.LogZ.Value[0] {
		t.Errorf("same seed, different runs: %+v vs %+v", da, db)
	}
	_, dc := trainSmall(t, train.MethodTeacher, 50, 8)
	if dc == da {
		t.Errorf("different seeds gave identical runs")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		mod  func(*train.Config)
		want string
	}{
		{func(c *train.Config) { c.Method = "ppo" }, `method "ppo" is unknown`},
		{func(c *train.Config) { c.Batch = 0 }, "batch 0"},
		{func(c *train.Config) { c.Schedule = "SXT" }, `schedule "SXT"`},
		{func(c *train.Config) { c.Method = train.MethodTB; c.Schedule = "ST" }, "does not have"},
		{func(c *train.Config) { c.NMC = 0 }, "n-mc 0"},
		{func(c *train.Config) { c.Eps = 2 }, "eps 2"},
		{func(c *train.Config) { c.Reward.Form = "x" }, `teacher reward form "x"`},
		{func(c *train.Config) { c.Teachers = -1 }, "teachers -1"},
		{func(c *train.Config) { c.Teachers, c.Method = 2, train.MethodTB }, `teachers 2 need method "teacher"`},
		{func(c *train.Config) { c.Teachers, c.Objective = 3, train.ObjectiveDB }, `objective "db" has one Teacher`},
		{func(c *train.Config) { c.Teachers, c.TeacherSplit = 2, "vote" }, `split "vote" is unknown`},
	} {
		cfg := train.DefaultConfig()
		c.mod(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	if err := train.DefaultConfig().Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
}

// badEnv wraps a grid with a reward that turns invalid.
type badEnv struct {
	*hypergrid.Grid
	value float64
}

func (b badEnv) LogReward(xs []int32, n int, out []float64) error {
	r := b.value
	if !(r > 0) || math.IsInf(r, 0) {
		return fmt.Errorf("reward %v at %v is invalid: rewards must be finite and > 0", r, xs[:b.D])
	}
	for i := range n {
		out[i] = math.Log(r)
	}
	return nil
}

func TestInvalidRewardStopsTraining(t *testing.T) {
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	for _, v := range []float64{math.NaN(), math.Inf(1), 0, -1} {
		cfg := train.DefaultConfig()
		cfg.Hidden = []int{8}
		tr, err := train.New(badEnv{g, v}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Iterate(); err == nil || !strings.Contains(err.Error(), fmt.Sprint(v)) {
			t.Errorf("reward %v: error %v", v, err)
		}
		if tr.Step != 0 {
			t.Errorf("reward %v: a step was counted", v)
		}
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	g, _ := hypergrid.New(2, 6, hypergrid.Deceptive)
	cfg := train.DefaultConfig()
	cfg.Hidden = []int{16}
	cfg.RewardCalls = 40 * 16
	dir := t.TempDir()
	opt := train.RunOptions{EnvSpec: map[string]any{"d": 2, "h": 6}}
	opt.OutDir = dir
	res, err := train.Run(context.Background(), g, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.Load(dir, g)
	if err != nil {
		t.Fatal(err)
	}
	st, err := train.ReadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sp map[string]int
	if json.Unmarshal(st.Env, &sp); sp["h"] != 6 || st.EnvName != g.String() || !reflect.DeepEqual(st.Train, cfg) {
		t.Errorf("stored %+v", st)
	}
	if tr.Step != 40 || tr.RewardCalls != 640 || len(tr.ModesFound) != len(res.Trainer.ModesFound) {
		t.Errorf("counters %d %d %d", tr.Step, tr.RewardCalls, len(tr.ModesFound))
	}
	// Same weights: same exact distribution; same optimiser state: the
	// next iteration gives the same loss.
	orig := res.Trainer
	p1, _ := metrics.Terminating(g, orig.Student.Model)
	p2, _ := metrics.Terminating(g, tr.Student.Model)
	if metrics.Compare(p1, p2).TV != 0 {
		t.Error("loaded Student differs")
	}
	orig.Reseed(5)
	tr.Reseed(5)
	a, _ := orig.Iterate()
	b, _ := tr.Iterate()
	if a.StudentLoss != b.StudentLoss || a.TeacherLoss != b.TeacherLoss || a.StudentLogZ != b.StudentLogZ {
		t.Errorf("resumed iteration differs: %+v vs %+v", a, b)
	}
	// Another environment, and a corrupt checkpoint, are clear errors.
	g8, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	if _, err := train.Load(dir, g8); err == nil || !strings.Contains(err.Error(), "is of environment "+g.String()) {
		t.Errorf("another environment: %v", err)
	}
	os.WriteFile(filepath.Join(dir, train.CheckpointFile), []byte("garbage"), 0o644)
	if _, err := train.Load(dir, g); err == nil || !strings.Contains(err.Error(), train.CheckpointFile) {
		t.Errorf("corrupt checkpoint: %v", err)
	}
}

// On the scaling grids nothing may enumerate the state space: exact
// metrics are skipped with a note, modes are counted by testing visited
// states, and the run stays small in memory.
func TestLargeGridRunsWithoutEnumeration(t *testing.T) {
	g, _ := hypergrid.New(6, 64, hypergrid.Deceptive) // 6.85e10 terminal states
	cfg := train.DefaultConfig()
	cfg.Hidden = []int{32}
	cfg.RewardCalls = 20 * 16
	cfg.Buffer.Priority = "teacher" // the reference capacity formula gives 6.9e9: storage must grow lazily
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := train.Run(context.Background(), g, cfg, train.RunOptions{EvalSamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 200<<20 {
		t.Errorf("heap grew by %d MiB", grown>>20)
	}
	s := res.Summary
	if s.StudentExact != nil || s.EmpiricalL1 != nil || res.Target != nil {
		t.Error("exact or empirical metrics were computed on a 6.85e10-state grid")
	}
	if len(s.Notes) == 0 || !strings.Contains(s.Notes[0], "skipped") {
		t.Errorf("no note about skipped metrics: %v", s.Notes)
	}
	if s.ModesTotal != 2985984 { // 12 mode values per axis, to the 6th
		t.Errorf("modes total %v", s.ModesTotal)
	}
}

func TestCurveEmpiricalL1(t *testing.T) {
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	cfg := train.DefaultConfig()
	cfg.Hidden = []int{16}
	cfg.RewardCalls = 100 * 16
	a, err := train.Run(context.Background(), g, cfg, train.RunOptions{Options: run.Options{EvalEvery: 25}, CurveExactLimit: 10, CurveSamples: 500})
	if err != nil {
		t.Fatal(err)
	}
	b, err := train.Run(context.Background(), g, cfg, train.RunOptions{Options: run.Options{EvalEvery: 25}, CurveSamples: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Curve.Len() {
		exact, emp := a.Curve.Value(i, "student_l1"), a.Curve.Value(i, "student_empirical_l1")
		if !math.IsNaN(exact) || math.IsNaN(emp) || emp <= 0 {
			t.Errorf("point %d: exact %v, empirical L1 %v", i, exact, emp)
		}
	}
	if a.Summary.LogZ != b.Summary.LogZ || a.Summary.ModesFound != b.Summary.ModesFound {
		t.Errorf("curve sampling changed the run: log Z %v vs %v", a.Summary.LogZ, b.Summary.LogZ)
	}
}

// noFeatures hides the grid's one-hot features: only the MDP is left.
type noFeatures struct{ discrete.Env }

// An environment without features cannot train the MLP policies: New says
// so, naming the environment and the interface to implement.
func TestEnvWithoutFeatures(t *testing.T) {
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	_, err := train.New(noFeatures{g}, train.DefaultConfig())
	if err == nil || !strings.Contains(err.Error(), "discrete.Featurizer") || !strings.Contains(err.Error(), "train: environment") {
		t.Errorf("New on an environment without features: %v", err)
	}
}
