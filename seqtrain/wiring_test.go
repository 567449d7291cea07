package seqtrain

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/sequence"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/teacher"
)

// TestLongSequencesRefused: a task whose sequences outnumber 64-bit keys
// is refused by New, naming the sizes and the longest usable length,
// instead of panicking in the first round; the longest usable length
// trains.
func TestLongSequencesRefused(t *testing.T) {
	for _, c := range []struct{ a, n, max int }{{4, 33, 32}, {4, 40, 32}, {3, 41, 40}, {5, 28, 27}} {
		_, err := New(toyTask{A: c.a, L: c.n}, toyConfig(TB))
		want := []string{"seqtrain:", "length must be at most " + strconv.Itoa(c.max), strconv.Itoa(c.a) + " letters and length " + strconv.Itoa(c.n)}
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%d letters, length %d: error %v, want one containing %q", c.a, c.n, err, w)
			}
		}
		// The bound is exact: a^max ≤ 2^64 < a^(max+1).
		if l := float64(c.max) * math.Log2(float64(c.a)); l > 64 || l+math.Log2(float64(c.a)) <= 64 {
			t.Errorf("test case %v: %d is not the largest length", c, c.max)
		}
		tr, err := New(toyTask{A: c.a, L: c.max}, toyConfig(TB))
		if err != nil {
			t.Errorf("%d letters, length %d: %v", c.a, c.max, err)
			continue
		}
		if _, err := tr.Iterate(); err != nil {
			t.Errorf("%d letters, length %d: %v", c.a, c.max, err)
		}
	}
	if got := sequence.MaxKeyLength(2); got != 64 {
		t.Errorf("MaxKeyLength(2) = %d, want 64 (2^64 keys fit exactly)", got)
	}
	if got := sequence.MaxKeyLength(16); got != 16 {
		t.Errorf("MaxKeyLength(16) = %d, want 16", got)
	}
}

// TestTeacherTargets: in every step of a Teacher's rounds (online and
// replayed batches, both Teacher methods, both sequence reward forms and
// a non-default α), the Teacher trains towards
// log R_T = log(log(1.001 + w·min(δ², 5000))) + α·log R (or the paper's
// log(ε + w·δ²) + α·log R), with δ the Student's residual on that batch
// before the Student's update. δ is recomputed here by a separate TB
// evaluation and the formula written out, so that a wrong δ (after the
// update, or of another batch), a dropped α or another form fails.
func TestTeacherTargets(t *testing.T) {
	for _, m := range []Method{TeacherPER, TeacherPRT} {
		for _, form := range []teacher.Form{teacher.Sequence, teacher.Paper} {
			cfg := toyConfig(m)
			cfg.Reward.Form, cfg.Reward.Alpha, cfg.Reward.Eps = form, 0.3, 1e-3
			tr, err := New(toyTask{A: 3, L: 4}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var want []float64
			delta := tr.update.Delta
			tr.update.Delta = func() float64 {
				n := tr.tr.Len()
				d := make([]float64, n)
				var tb discrete.TB
				tb.Eval(tr.env, tr.Student.Model, tr.Student.LogZ, &tr.tr, tr.logR, d)
				want = want[:0]
				for b := range n {
					w := 1.0
					if d[b] > 0 {
						w = 1 + cfg.Reward.C
					}
					term := math.Log(cfg.Reward.Eps + w*d[b]*d[b])
					if form == teacher.Sequence {
						term = math.Log(math.Log(1.001 + w*min(d[b]*d[b], 5000)))
					}
					want = append(want, term+0.3*tr.logR[b])
				}
				return delta()
			}
			steps := 0
			step := tr.update.TeacherStep
			tr.update.TeacherStep = func() float64 {
				steps++
				for b, v := range want {
					if got := tr.targets[b]; math.Abs(got-v) > 1e-9*math.Max(1, math.Abs(v)) {
						t.Errorf("%s, %s, step %d, row %d: Teacher target %v, want %v", m, form, steps, b, got, v)
					}
				}
				return step()
			}
			for range 6 {
				if _, err := tr.Iterate(); err != nil {
					t.Fatal(err)
				}
			}
			if steps < 11 { // rounds with a replay take two steps
				t.Errorf("%s, %s: %d Teacher steps in 6 rounds, want at least 11", m, form, steps)
			}
		}
	}
}

// linearModel is a user's own policy: logits = Σ W[feature] + b, a linear
// model of the one-hot state features. It is what a user would write to
// try another network; the trainer sees only discrete.Model.
type linearModel struct {
	feat   discrete.Featurizer
	na     int
	w, b   *nn.Param
	idx    []int32
	rows   int
	states []int32
	out    nn.Matrix
}

func newLinearModel(env discrete.Env, prefix string, rng *rand.Rand) (discrete.Model, error) {
	f := env.(discrete.Featurizer)
	m := &linearModel{feat: f, na: env.NumActions(),
		w: nn.NewParam(prefix+"w", f.FeatureLen(), env.NumActions()), b: nn.NewParam(prefix+"b", env.NumActions())}
	for i := range m.w.Value {
		m.w.Value[i] = float32(0.1 * rng.NormFloat64())
	}
	return m, nil
}

func (m *linearModel) Forward(states []int32, rows int) *nn.Matrix {
	k, sl := m.feat.FeaturesPerState(), len(states)/max(rows, 1)
	m.rows, m.states = rows, states
	m.idx = append(m.idx[:0], make([]int32, rows*k)...)
	m.out.Resize(rows, m.na)
	for r := range rows {
		ix := m.idx[r*k : (r+1)*k]
		m.feat.Features(states[r*sl:(r+1)*sl], ix)
		o := m.out.Data[r*m.na : (r+1)*m.na]
		copy(o, m.b.Value)
		for _, f := range ix {
			if f >= 0 {
				for a, v := range m.w.Value[int(f)*m.na : (int(f)+1)*m.na] {
					o[a] += v
				}
			}
		}
	}
	return &m.out
}

func (m *linearModel) Backward(d *nn.Matrix) {
	k := m.feat.FeaturesPerState()
	for r := range m.rows {
		g := d.Data[r*m.na : (r+1)*m.na]
		for a, v := range g {
			m.b.Grad[a] += v
		}
		for _, f := range m.idx[r*k : (r+1)*k] {
			if f >= 0 {
				for a, v := range g {
					m.w.Grad[int(f)*m.na+a] += v
				}
			}
		}
	}
}

func (m *linearModel) Params() []*nn.Param { return []*nn.Param{m.w, m.b} }

// TestOwnPolicyModel: the trainer takes a user's own policy model: a
// linear model trains with the Teacher towards the toy target (the gap
// between the EUBO and the ELBO closes), checkpoints its
// parameters under their names, and a run resumed with the same model
// function ends with the same bits as one never stopped.
func TestOwnPolicyModel(t *testing.T) {
	task := toyTask{A: 2, L: 4}
	cfg := toyConfig(TeacherPER)
	cfg.Rounds = 300
	cfg.Student.LR, cfg.Teacher.LR = 1e-2, 1e-2
	full := t.TempDir()
	o := RunOptions{Options: run.Options{EvalEvery: 100, OutDir: full}, EvalSamples: 512}
	cfg.Model = newLinearModel
	res, err := Run(context.Background(), task, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Trainer.Student.Model.(*linearModel); !ok {
		t.Fatalf("the Student's model is a %T, want the user's", res.Trainer.Student.Model)
	}
	// The bounds close only when the policy fits the target: 0.12 nat
	// here, against 1.2 with the model's gradient switched off.
	if s := res.Summary; !(s.EUBO-s.ELBO < 0.3) {
		t.Errorf("EUBO %v − ELBO %v = %v, want < 0.3: the user's model did not train", s.EUBO, s.ELBO, s.EUBO-s.ELBO)
	}
	for _, f := range []string{"student.policy.w", "teacher.policy.b"} {
		if !checkpointHas(t, filepath.Join(full, run.CheckpointFile), f) {
			t.Errorf("the checkpoint has no tensor %s", f)
		}
	}
	o.CheckpointEvery = 100
	got, _ := stopAndResume(t, task, cfg, o)
	if !slices.Equal(params(res.Trainer), params(got.Trainer)) {
		t.Error("the user's model ends with other parameters after a resume")
	}
}

// stopAndResume runs cfg with opt into a new directory, stops it after
// its first checkpoint and resumes it to the end, returning the result
// and the directory.
func stopAndResume(t *testing.T, task Task, cfg Config, opt RunOptions) (*Result, string) {
	t.Helper()
	opt.OutDir = t.TempDir()
	stop := errors.New("stop")
	opt.AfterCheckpoint = func(int) error { return stop }
	if _, err := Run(context.Background(), task, cfg, opt); !errors.Is(err, stop) {
		t.Fatalf("interrupted run: %v", err)
	}
	res, err := Resume(context.Background(), opt.OutDir, task, RunOptions{Model: cfg.Model})
	if err != nil {
		t.Fatal(err)
	}
	return res, opt.OutDir
}

// checkpointHas reports whether the safetensors file names tensor name in
// its header.
func checkpointHas(t *testing.T, path, name string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b[:min(len(b), 1<<16)]), `"`+name+`"`)
}
