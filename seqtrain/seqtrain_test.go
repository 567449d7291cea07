package seqtrain

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/agent"
	"github.com/gfngo/gfn/target"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/teacher"
)

// toyTask is a small enumerable task: sequences of L tokens over A
// symbols, log R = β·(fraction of token 0) + a bump on two sequences,
// which are the modes.
type toyTask struct {
	A, L int
	nan  string // a sequence whose reward is NaN
}

func (k toyTask) Length() int { return k.L }
func (k toyTask) Alphabet() []string {
	return []string{"a", "b", "c", "d", "e"}[:k.A]
}
func (k toyTask) str(x []int32) string {
	var b strings.Builder
	for _, v := range x {
		b.WriteString(k.Alphabet()[v])
	}
	return b.String()
}
func (k toyTask) logR(x []int32) float64 {
	s := k.str(x)
	if s == k.nan {
		return math.NaN()
	}
	v := 0.0
	for _, t := range x {
		if t == 0 {
			v += 2.0 / float64(k.L)
		}
	}
	if k.IsMode(x) {
		v += 3
	}
	return v
}
func (k toyTask) LogReward(xs []int32, n int, out []float64) error {
	for b := range n {
		out[b] = k.logR(xs[b*k.L : (b+1)*k.L])
	}
	return nil
}
func (k toyTask) IsMode(x []int32) bool {
	s := k.str(x)
	return s == strings.Repeat("b", k.L) || s == "c"+strings.Repeat("a", k.L-1)
}
func (k toyTask) NumModes() int { return 2 }

// all enumerates every sequence.
func (k toyTask) all() [][]int32 {
	var out [][]int32
	x := make([]int32, k.L)
	var rec func(i int)
	rec = func(i int) {
		if i == k.L {
			out = append(out, slices.Clone(x))
			return
		}
		for c := range k.A {
			x[i] = int32(c)
			rec(i + 1)
		}
	}
	rec(0)
	return out
}

func (k toyTask) LogZ() float64 {
	var s float64
	for _, x := range k.all() {
		s += math.Exp(k.logR(x))
	}
	return math.Log(s)
}

func (k toyTask) TargetSamples(n int, rng *rand.Rand) ([]int32, error) {
	all := k.all()
	z := k.LogZ()
	var out []int32
	for range n {
		u := rng.Float64()
		for i, x := range all {
			u -= math.Exp(k.logR(x) - z)
			if u <= 0 || i == len(all)-1 {
				out = append(out, x...)
				break
			}
		}
	}
	return out, nil
}

func toyConfig(m Method) Config {
	c := DefaultConfig()
	c.Method = m
	c.Rounds = 60
	c.OnlineBatch, c.OfflineBatch = 8, 8
	c.Buffer = 50
	c.Policy = Policy{Kind: "mlp", Hidden: 16, Layers: 2}
	c.Student = agent.Optim{LR: 1e-3, LogZLR: 1e-1}
	c.Teacher = agent.Optim{LR: 1e-3, LogZLR: 1e-1}
	c.Seed = 7
	return c
}

func params(t *Trainer) []float32 {
	var v []float32
	agents := []*Agent{t.Student}
	if t.Teacher != nil {
		agents = append(agents, t.Teacher)
	}
	for _, a := range agents {
		for _, p := range a.Opt.Params() {
			v = append(v, p.Value...)
		}
	}
	return v
}

func TestConfigValidateNamesValue(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Method = "ppo" }, `method "ppo"`},
		{func(c *Config) { c.Rounds = 0 }, "rounds 0"},
		{func(c *Config) { c.Epsilon = 2 }, "epsilon 2"},
		{func(c *Config) { c.Policy.Kind = "gnn" }, `policy "gnn"`},
		{func(c *Config) { c.Schedule = "SSX" }, `"SSX"`},
		{func(c *Config) { c.Teacher.LR = 0 }, "teacher learning rates 0"},
		{func(c *Config) { c.MDP = "insert" }, `mdp "insert"`},
	} {
		cfg := DefaultConfig()
		c.edit(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "seqtrain: ") {
			t.Errorf("error %v, want one naming %s", err, c.want)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestTeacherSamplesEveryThirdRound checks the reference's schedule: the
// Teacher draws the online batch when round mod 3 = 2.
func TestTeacherSamplesEveryThirdRound(t *testing.T) {
	tr, err := New(toyTask{A: 3, L: 3}, toyConfig(TeacherPRT))
	if err != nil {
		t.Fatal(err)
	}
	for r := range 9 {
		it, err := tr.Iterate()
		if err != nil {
			t.Fatal(err)
		}
		want := teacher.Student
		if r%3 == 2 {
			want = teacher.Teacher
		}
		// The offline batch needs 10 objects in the buffer.
		if it.Sampler != want || it.Replayed != (tr.prt.Len() >= 10) {
			t.Fatalf("round %d: sampler %c replayed %v with %d buffered, want %c", r, it.Sampler, it.Replayed, tr.prt.Len(), want)
		}
	}
	if tr.RewardCalls != 9*8 {
		t.Errorf("reward calls %d, want %d (online samples only)", tr.RewardCalls, 9*8)
	}
}

// TestCappedLossHasNoGradient: with log Z far from every log R each δ² is
// above the cap, the loss is exactly the cap and a step changes nothing.
func TestCappedLossHasNoGradient(t *testing.T) {
	cfg := toyConfig(TB)
	cfg.LogZInit = 500
	tr, err := New(toyTask{A: 3, L: 3}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	before := params(tr)
	it, err := tr.Iterate()
	if err != nil {
		t.Fatal(err)
	}
	if it.StudentLoss != cfg.LossCap {
		t.Errorf("loss %v, want the cap %v", it.StudentLoss, cfg.LossCap)
	}
	if !slices.Equal(before, params(tr)) {
		t.Error("a step on capped losses changed the parameters")
	}
	// Below the cap the same step does change them.
	cfg.LogZInit = 5
	tr, _ = New(toyTask{A: 3, L: 3}, cfg)
	before = params(tr)
	tr.Iterate()
	if slices.Equal(before, params(tr)) {
		t.Error("a step on uncapped losses changed nothing")
	}
}

// TestPERPrioritiesAreStudentAdvantages recomputes, for an online batch,
// the Student's residuals before its step and the priorities they give.
func TestPERPrioritiesAreStudentAdvantages(t *testing.T) {
	cfg := toyConfig(PER)
	cfg.Buffer = 1000
	task := toyTask{A: 3, L: 3}
	tr, err := New(task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr.Iterate() // fills the buffer
	// Score the next online batch by hand: copy the trainer, run its
	// sampler with the same stream state, and compute δ before the step.
	ref, _ := New(task, cfg)
	ref.Iterate()
	for i, p := range ref.Student.Opt.Params() {
		if !slices.Equal(p.Value, tr.Student.Opt.Params()[i].Value) {
			t.Fatal("same seed, different trainers")
		}
	}
	if _, err := tr.Iterate(); err != nil {
		t.Fatal(err)
	}
	// Replay the online half of the round on ref without its update.
	ref.sampler.Forward(ref.Student.Model, cfg.OnlineBatch, samplingOptions(ref), ref.rng, &ref.tr)
	logR := make([]float64, cfg.OnlineBatch)
	ref.rewards(ref.tr.Final, cfg.OnlineBatch, logR)
	ref.eval(ref.Student, logR)
	w := ref.env.StateLen()
	prio := map[uint64]float64{}
	tr.per.Each(func(key uint64, _ []int32, _, p float64) { prio[key] = p })
	replayed := map[uint64]bool{}
	for _, k := range tr.keys {
		replayed[k] = true
	}
	checked := 0
	for b := range cfg.OnlineBatch {
		key := ref.env.TerminalKey(ref.tr.Final[b*w : (b+1)*w])
		if replayed[key] {
			continue // its priority was refreshed by the replay step
		}
		d := ref.Student.delta[b]
		wgt := 1.0
		if d > 0 {
			wgt = 20
		}
		want := math.Log(1.001 + wgt*min(d*d, 5000))
		if got := prio[key]; math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Errorf("priority of %d: %v, want %v", key, got, want)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no online object was left unreplayed to check")
	}
}

func samplingOptions(t *Trainer) discrete.SampleOptions {
	return discrete.SampleOptions{Eps: t.cfg.epsilon()}
}

// TestModesCountedOnce: on a task where every sequence is a mode the
// count of modes seen equals the count of distinct online samples.
func TestModesCountedOnce(t *testing.T) {
	task := allModes{toyTask{A: 2, L: 3}}
	cfg := toyConfig(Eps)
	cfg.Epsilon = 0.5
	tr, err := New(task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		tr.Iterate()
	}
	if tr.SeenModes() != tr.Seen() || tr.Seen() != 8 {
		t.Errorf("modes seen %d, distinct seen %d, want both 8 (every string of 2 tokens, length 3)", tr.SeenModes(), tr.Seen())
	}
}

type allModes struct{ toyTask }

func (allModes) IsMode([]int32) bool { return true }

// TestTrainsTowardsTarget: Teacher + PER on the toy task brings the
// importance-sampled log Z estimate, the ELBO and the EUBO within a few
// tenths of the true log Z (the bounds from both sides).
func TestTrainsTowardsTarget(t *testing.T) {
	task := toyTask{A: 3, L: 3}
	cfg := toyConfig(TeacherPER)
	cfg.Rounds = 400
	cfg.OnlineBatch, cfg.OfflineBatch = 16, 16
	cfg.Student = agent.Optim{LR: 3e-3, LogZLR: 1e-1}
	res, err := Run(context.Background(), task, cfg, RunOptions{Options: run.Options{EvalEvery: 100}, EvalSamples: 1024})
	if err != nil {
		t.Fatal(err)
	}
	z := task.LogZ()
	m := res.Summary
	if m.ELBO > z+1e-9 || m.EUBO < z-0.05 {
		t.Errorf("ELBO %v and EUBO %v must bound log Z %v", m.ELBO, m.EUBO, z)
	}
	if z-m.ELBO > 0.3 || m.EUBO-z > 0.3 || m.LogZErr > 0.1 {
		t.Errorf("after %d rounds: ELBO %v, EUBO %v, estimate error %v for log Z %v", cfg.Rounds, m.ELBO, m.EUBO, m.LogZErr, z)
	}
	if m.ModesFound != 2 {
		t.Errorf("modes found %d, want both", m.ModesFound)
	}
	// A sampler near the target has Σlog P_F ≈ log R − log Z + log P_B:
	// the correlation with log R is strong.
	t.Logf("Pearson: first evaluation %.3f, final %.3f", res.Curve.Value(0, "pearson"), m.Pearson)
	if !(m.Pearson > 0.8) || !(m.Pearson <= 1) {
		t.Errorf("final correlation of log P_F with log R %v, want in (0.8, 1]", m.Pearson)
	}
	if r := res.Curve.Column("round"); !slices.Equal(r, []float64{100, 200, 300, 399}) {
		t.Errorf("curve rounds %v", r)
	}
}

// TestResumeIsBitIdentical stops runs at a periodic checkpoint, resumes
// them, and compares everything with uninterrupted runs.
func TestResumeIsBitIdentical(t *testing.T) {
	for _, m := range []Method{PRT, TeacherPER} {
		t.Run(string(m), func(t *testing.T) {
			task := toyTask{A: 3, L: 3}
			cfg := toyConfig(m)
			opt := RunOptions{Options: run.Options{EvalEvery: 10, NoFigures: true}, EvalSamples: 64}
			a := opt
			a.OutDir = t.TempDir()
			full, err := Run(context.Background(), task, cfg, a)
			if err != nil {
				t.Fatal(err)
			}
			b := opt
			b.CheckpointEvery = 25
			res, dir := stopAndResume(t, task, cfg, b)
			if !slices.Equal(params(full.Trainer), params(res.Trainer)) {
				t.Error("parameters differ after resuming")
			}
			sameCurve(t, full.Curve, res.Curve)
			if res.Summary.Resumed != 1 {
				t.Errorf("resumed %d, want 1", res.Summary.Resumed)
			}
			for _, f := range []string{"metrics.csv", "summary.json", run.CheckpointFile, run.ConfigFile} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
			if _, err := Resume(context.Background(), dir, task, RunOptions{}); err == nil || !strings.Contains(err.Error(), "finished") {
				t.Errorf("resuming a finished run: %v", err)
			}
		})
	}
}

// sameCurve reports the points where got differs from want, wall-clock
// times aside.
func sameCurve(t *testing.T, want, got *run.Curve) {
	t.Helper()
	if want.Len() != got.Len() || !slices.Equal(want.Names(), got.Names()) {
		t.Fatalf("curves of %d and %d points, columns %v and %v", want.Len(), got.Len(), want.Names(), got.Names())
	}
	wall := want.Index("wall_seconds")
	for i := range want.Rows {
		for j, w := range want.Rows[i] {
			if g := got.Rows[i][j]; j != wall && w != g && !(math.IsNaN(w) && math.IsNaN(g)) {
				t.Errorf("point %d, %s: %v, want %v", i, want.Columns[j].Name, g, w)
			}
		}
	}
}

// TestEvaluationDoesNotPerturbTraining: evaluations draw from their own
// stream, so how often they run does not change the trained parameters.
func TestEvaluationDoesNotPerturbTraining(t *testing.T) {
	task := toyTask{A: 3, L: 3}
	cfg := toyConfig(TeacherPRT)
	a, err := Run(context.Background(), task, cfg, RunOptions{Options: run.Options{EvalEvery: 5}, EvalSamples: 32})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), task, cfg, RunOptions{Options: run.Options{EvalEvery: 1000}, EvalSamples: 32})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(params(a.Trainer), params(b.Trainer)) {
		t.Error("evaluating more often changed the training")
	}
}

// TestTeacherDoesNotChangeStudentInit: each agent has its own
// initialisation stream.
func TestTeacherDoesNotChangeStudentInit(t *testing.T) {
	a, _ := New(toyTask{A: 3, L: 3}, toyConfig(PRT))
	b, _ := New(toyTask{A: 3, L: 3}, toyConfig(TeacherPRT))
	pa, pb := a.Student.Opt.Params(), b.Student.Opt.Params()
	for i := range pa {
		if !slices.Equal(pa[i].Value, pb[i].Value) {
			t.Fatalf("parameter %s differs", pa[i].Name)
		}
	}
}

// TestNaNRewardStopsWithCheckpoint: a NaN log-reward stops the run with an
// error naming the round and the sequence, after a checkpoint.
func TestNaNRewardStopsWithCheckpoint(t *testing.T) {
	task := toyTask{A: 2, L: 2, nan: "ab"}
	cfg := toyConfig(Eps)
	cfg.Epsilon = 1 // uniform: "ab" comes soon
	dir := t.TempDir()
	_, err := Run(context.Background(), task, cfg, RunOptions{Options: run.Options{OutDir: dir, NoFigures: true}})
	var nf *NonFiniteError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), `"ab"`) || !strings.Contains(err.Error(), "round ") {
		t.Fatalf("error %v, want a NonFiniteError naming \"ab\"", err)
	}
	if _, err := os.Stat(filepath.Join(dir, run.CheckpointFile)); err != nil {
		t.Errorf("no checkpoint after the failure: %v", err)
	}
}

// TestSamplerLogPFIsTBLogPF: the evaluation takes Σlog P_F of the Student's
// own samples from the sampler; it must agree with TB's recomputation.
func TestSamplerLogPFIsTBLogPF(t *testing.T) {
	for _, kind := range []string{"mlp", "ssr"} {
		cfg := toyConfig(TB)
		cfg.Policy = Policy{Kind: kind, Hidden: 16, Embed: 16, Layers: 2}
		tr, err := New(toyTask{A: 3, L: 4}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			tr.Iterate()
		}
		var s discrete.Sampler
		var traj discrete.Trajectories
		var tb discrete.TB
		s.Env = tr.env
		s.Forward(tr.Student.Model, 64, discrete.SampleOptions{}, rand.New(rand.NewPCG(1, 1)), &traj)
		got := make([]float64, 64)
		tb.LogPF(tr.env, tr.Student.Model, &traj, got)
		for b, want := range traj.LogPFBehaviour {
			if math.Abs(got[b]-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("%s: trajectory %d: TB log P_F %v, sampler %v", kind, b, got[b], want)
			}
		}
	}
}

// flaky fails its first evaluation-sized call (more rows than a training
// batch): a reward that breaks during an evaluation.
type flaky struct {
	toyTask
	failed *bool
}

func (k flaky) LogReward(xs []int32, n int, out []float64) error {
	if n > 8 && !*k.failed {
		*k.failed = true
		return errors.New("reward server down")
	}
	return k.toyTask.LogReward(xs, n, out)
}

// TestEvaluationFailureResumes: a reward failing during an evaluation
// stops the run after a checkpoint; resuming takes the missed point and
// ends with the curve of an uninterrupted run.
func TestEvaluationFailureResumes(t *testing.T) {
	cfg := toyConfig(PRT)
	opt := RunOptions{Options: run.Options{EvalEvery: 20, NoFigures: true}, EvalSamples: 64}
	full, err := Run(context.Background(), toyTask{A: 3, L: 3}, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	failed := false
	task := flaky{toyTask{A: 3, L: 3}, &failed}
	opt.OutDir = t.TempDir()
	_, err = Run(context.Background(), task, cfg, opt)
	if err == nil || !strings.Contains(err.Error(), "reward server down") || !strings.Contains(err.Error(), "checkpoint of round 21") {
		t.Fatalf("error %v", err)
	}
	res, err := Resume(context.Background(), opt.OutDir, task, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameCurve(t, full.Curve, res.Curve)
	if !slices.Equal(params(full.Trainer), params(res.Trainer)) {
		t.Error("parameters differ: the failure happened between rounds")
	}
}

// TestUnusableOutDirBeforeTraining: an output directory that cannot be
// made is reported before the first round, not at the first checkpoint.
func TestUnusableOutDirBeforeTraining(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	cfg := toyConfig(TB)
	cfg.Rounds = 5
	_, err := Run(context.Background(), toyTask{A: 3, L: 3}, cfg, RunOptions{Options: run.Options{OutDir: filepath.Join(file, "run"), CheckpointEvery: 1, EvalEvery: 100}, EvalSamples: 8})
	if err == nil || !strings.Contains(err.Error(), "not usable") {
		t.Errorf("err %v, want 'not usable'", err)
	}
}

// TestPearson checks the correlation against values computed by hand.
func TestPearson(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, 0.8}, // Σdadb 4 / √(5·5)
		{[]float64{1, 2, 3}, []float64{3, 5, 7}, 1},
		{[]float64{1, 2, 3}, []float64{-1, -2, -3}, -1},
		{[]float64{0, 1, 0, 1}, []float64{1, 1, 0, 0}, 0},
		{[]float64{2, 2, 2}, []float64{1, 2, 3}, math.NaN()}, // a constant
	} {
		got := pearson(c.a, c.b)
		if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(c.want) && math.Abs(got-c.want) > 1e-12 {
			t.Errorf("pearson(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// lowTask is toyTask with every log-reward lowered by 30: log Z < 0, so
// log Z's gradient pulls it below 0.
type lowTask struct{ toyTask }

func (k lowTask) LogReward(xs []int32, n int, out []float64) error {
	k.toyTask.LogReward(xs, n, out)
	for b := range n {
		out[b] -= 30
	}
	return nil
}

// TestLogZFloor: the reference floors log Z at 0 after every step; with a
// floor far below, the same run takes log Z under 0.
func TestLogZFloor(t *testing.T) {
	for _, floor := range []float64{0, -1000} {
		cfg := toyConfig(PRT)
		cfg.LogZInit, cfg.LogZMin = 0.5, floor
		tr, err := New(lowTask{toyTask{A: 3, L: 3}}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		lowest := math.Inf(1)
		for range 20 {
			if _, err := tr.Iterate(); err != nil {
				t.Fatal(err)
			}
			lowest = math.Min(lowest, float64(tr.Student.LogZ.Value[0]))
		}
		if floor == 0 && lowest != 0 {
			t.Errorf("floor 0: lowest log Z over 20 rounds %v, want exactly 0 (reached, never passed)", lowest)
		}
		if floor < 0 && !(lowest < 0) {
			t.Errorf("floor %v: lowest log Z %v, want below 0 (the test's premise)", floor, lowest)
		}
	}
}

// TestGradientClipEveryStep: both agents' policy gradients are clipped on
// the online step (round 0: the buffer is too small to replay) and on the
// offline step (round 1's last), where the reference clips only its first
// step; without the clip the same gradients are larger.
func TestGradientClipEveryStep(t *testing.T) {
	const clip = 1e-4
	for _, c := range []float64{clip, 0} {
		cfg := toyConfig(TeacherPRT)
		cfg.ClipNorm = c
		tr, err := New(toyTask{A: 3, L: 3}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			it, err := tr.Iterate()
			if err != nil {
				t.Fatal(err)
			}
			if it.Replayed != (round == 1) {
				t.Fatalf("round %d replayed %v: the test needs an online-only round, then a replaying one", round, it.Replayed)
			}
			for _, a := range []*Agent{tr.Student, tr.Teacher} {
				n := nn.GradNorm(a.Model.Params())
				if c > 0 && n > clip*(1+1e-4) {
					t.Errorf("round %d: gradient norm %v after clipping to %v", round, n, clip)
				}
				if c == 0 && !(n > 10*clip) {
					t.Errorf("round %d without a clip: gradient norm %v, want the test's premise > %v", round, n, 10*clip)
				}
			}
		}
	}
}

var _ target.LogZer = toyTask{}
