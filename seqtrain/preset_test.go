package seqtrain

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/teacher"
)

// TestReferenceSettings pins the settings to the authors' code
// (discovery/exps/<task>/settings.yaml at 8cfcb22, and the loop constants
// of shared/reference/biochem.md): a change to a default must be a
// decision, not an accident.
func TestReferenceSettings(t *testing.T) {
	d := DefaultConfig()
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"method", d.Method, TeacherPER},
		{"MDP", d.MDP, "pa"},
		{"online batch (num_samples_per_online_batch)", d.OnlineBatch, 32},
		{"offline batch (num_samples_per_offline_batch)", d.OfflineBatch, 32},
		{"buffer (replay_buffer_size)", d.Buffer, 1000},
		{"top percentile of the replay portions", d.TopPercentile, 90.0},
		{"schedule (Teacher samples when round mod 3 = 2)", d.Schedule, teacher.Schedule("SST")},
		{"Student lr (lr_policy)", d.Student.LR, 1e-4},
		{"Student log Z lr (lr_z)", d.Student.LogZLR, 1e-2},
		{"Teacher lr (the paper's 5e-4)", d.Teacher.LR, 5e-4},
		{"Teacher log Z lr", d.Teacher.LogZLR, 1e-2},
		{"log Z init", d.LogZInit, 5.0},
		{"log Z floor", d.LogZMin, 0.0},
		{"loss cap", d.LossCap, 5000.0},
		{"gradient clip (clip_grad_norm)", d.ClipNorm, 10.0},
		{"Teacher reward", d.Reward, teacher.Reward{Form: teacher.Sequence, C: 19, Alpha: 0.5, Eps: 1e-3}},
		{"policy", d.Policy.Kind, "ssr"},
	} {
		if c.got != c.want {
			t.Errorf("DefaultConfig %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct {
		task          string
		rounds, width int
		eps           float64
		every         int
	}{
		{"tfbind8", 2000, 128, 0.01, 50},
		{"qm9str", 1000, 1024, 0.01, 20},
		{"sehstr", 2000, 1024, 0.05, 50},
		{"rna", 2000, 128, 0.01, 50},
	} {
		task, err := biochem.Named(c.task)
		if err != nil {
			t.Fatal(err)
		}
		cfg := ForTask(task)
		s := task.Settings()
		if cfg.Rounds != c.rounds || cfg.Policy.Hidden != c.width || cfg.Policy.Embed != c.width || cfg.Epsilon != c.eps ||
			s.EvalEvery != c.every || s.EvalSamples != 2048 {
			t.Errorf("%s: rounds %d, width %d/%d, ε %v, evaluation every %d on %d samples; want %d, %d, %v, %d on 2048",
				c.task, cfg.Rounds, cfg.Policy.Hidden, cfg.Policy.Embed, cfg.Epsilon, s.EvalEvery, s.EvalSamples, c.rounds, c.width, c.eps, c.every)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: %v", c.task, err)
		}
	}
}

// TestModesAmongEvaluationSamples: the evaluation counts each distinct
// mode among its samples once. On a task whose modes are the sequences
// starting with token 0, the count equals the number of distinct such
// sequences among the same samples, drawn again here from the same stream.
func TestModesAmongEvaluationSamples(t *testing.T) {
	task := firstTokenModes{toyTask{A: 3, L: 3}}
	tr, err := New(task, toyConfig(TB))
	if err != nil {
		t.Fatal(err)
	}
	var ev Evaluator
	const n = 12 // few enough that not every mode is drawn
	m, err := ev.Evaluate(tr, n, nil, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	// The same draws: evaluation samples come in chunks from the stream.
	var s discrete.Sampler
	s.Env = tr.env
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	w := tr.env.StateLen()
	var trs discrete.Trajectories
	for done := 0; done < n; done += evalChunk {
		k := min(evalChunk, n-done)
		s.Forward(tr.Student.Model, k, discrete.SampleOptions{}, rng, &trs)
		for b := range k {
			x := tr.env.Tokens(trs.Final[b*w : (b+1)*w])
			if x[0] == 0 {
				seen[fmt.Sprint(x)] = true
			}
		}
	}
	if len(seen) < 2 || len(seen) == 9 {
		t.Fatalf("%d distinct modes drawn: the test needs some but not all 9", len(seen))
	}
	if m.ModesEval != len(seen) {
		t.Errorf("modes among the evaluation's samples %d, want %d", m.ModesEval, len(seen))
	}
}

type firstTokenModes struct{ toyTask }

func (firstTokenModes) IsMode(x []int32) bool { return x[0] == 0 }
