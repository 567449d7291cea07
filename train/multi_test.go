package train

import (
	"math"
	"slices"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/teacher"
)

// allParams concatenates the values of every agent's parameters.
func allParams(tr *Trainer) []float32 {
	var all []float32
	for _, a := range tr.runAgents() {
		for _, p := range a.Opt.Params() {
			all = append(all, p.Value...)
		}
	}
	return all
}

// The K-Teacher step with K = 1 is the single Teacher's step, bit for bit:
// its split gives r = 1 and its δ is discrete.TB's.
func TestOneTeacherOnMultiPathIsSingle(t *testing.T) {
	g, _ := hypergrid.New(3, 12, hypergrid.Deceptive)
	for _, buf := range []replay.Priority{"", replay.Teacher} {
		run := func(multi bool) []float32 {
			cfg := DefaultConfig()
			cfg.Hidden, cfg.Batch = []int{32, 32}, 32
			cfg.Buffer.Priority = buf
			tr, err := New(g, cfg)
			if err != nil {
				t.Fatal(err)
			}
			tr.multiPath = multi
			for range 24 {
				if _, err := tr.Iterate(); err != nil {
					t.Fatal(err)
				}
			}
			return allParams(tr)
		}
		if !slices.Equal(run(false), run(true)) {
			t.Errorf("buffer %q: one Teacher on the K-Teacher path ends with other parameters", buf)
		}
	}
}

// Each of K Teachers takes, on every batch, the TB step of a single
// Teacher whose targets are the split of R_T: checked against a twin
// trainer whose Teachers take discrete.TB's step on targets computed here
// from their own log P_F.
func TestTeachersStepIsSplitTB(t *testing.T) {
	g, _ := hypergrid.New(2, 10, hypergrid.Deceptive)
	for _, split := range teacher.Splits {
		cfg := DefaultConfig()
		cfg.Hidden, cfg.Batch, cfg.Teachers, cfg.TeacherSplit = []int{32}, 24, 3, split
		a, err := New(g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		twin, _ := New(g, cfg)
		for i := range 8 { // SSTT twice: each Teacher samples at least once
			before := allParams(a)
			if _, err := a.Iterate(); err != nil {
				t.Fatal(err)
			}
			n := a.batch.Len()
			var tb discrete.TB
			logP := make([][]float64, 3)
			for k, tk := range twin.Teachers {
				logP[k] = make([]float64, n)
				tb.LogPF(g, tk.Model, &a.batch, logP[k])
				for b := range n {
					logP[k][b] -= a.batch.LogPB[b]
				}
			}
			for k, tk := range twin.Teachers {
				want := make([]float64, n)
				for b := range n {
					want[b] = a.logRT[b]
					if split == teacher.Share {
						var sum float64
						for j := range 3 {
							sum += math.Exp(logP[j][b])
						}
						want[b] += logP[k][b] - math.Log(sum)
					}
				}
				for b := range n {
					if d := math.Abs(a.multi[k].target[b] - want[b]); d > 1e-9 {
						t.Fatalf("%s, iteration %d, Teacher %d, x%d: target %v, want %v", split, i, k, b, a.multi[k].target[b], want[b])
					}
				}
				delta := make([]float64, n)
				nn.ZeroGrad(tk.Params())
				tb.Loss(g, tk.Model, tk.LogZ, &a.batch, a.multi[k].target, delta, true)
				tk.update(cfg.Teacher.Clip)
			}
			for k := range 3 {
				x, y := paramsOf(a.Teachers[k]), paramsOf(twin.Teachers[k])
				for j := range x {
					if x[j] != y[j] {
						t.Fatalf("%s, iteration %d, Teacher %d: parameter %d is %v, the split TB step gives %v", split, i, k, j, x[j], y[j])
					}
				}
			}
			if slices.Equal(before, allParams(a)) {
				t.Fatalf("%s, iteration %d: nothing trained", split, i)
			}
		}
	}
}

func paramsOf(a *Agent) []float32 {
	var v []float32
	for _, p := range a.Params() {
		v = append(v, p.Value...)
	}
	return v
}

func TestModeShares(t *testing.T) {
	by := map[uint64]uint64{
		1: 0b0001, // Student only
		2: 0b0011, // Student and Teacher 0
		3: 0b0010, // Teacher 0 only
		4: 0b0110, // Teachers 0 and 1
		5: 0b1000, // Teacher 2 only
		6: 0b1001, // Student and Teacher 2
	}
	s, tm, only := modeShares(by, 3)
	if s != 3 || !slices.Equal(tm, []int{3, 1, 2}) || !slices.Equal(only, []int{2, 0, 2}) {
		t.Errorf("student %d, teachers %v, only %v; want 3, [3 1 2], [2 0 2]", s, tm, only)
	}
}

// Every mode of a freshly sampled batch is attributed to the agent that
// sampled it: the Student on S iterations, Teacher k on its T slots.
func TestModesByAttribution(t *testing.T) {
	for _, K := range []int{1, 3} {
		testModesByAttribution(t, K)
	}
}

func testModesByAttribution(t *testing.T, K int) {
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	cfg := DefaultConfig()
	cfg.Hidden, cfg.Batch, cfg.Teachers = []int{16}, 32, K
	tr, err := New(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		agent := 0
		if tr.schedule.Role(i) == teacher.Teacher {
			agent = 1 + tr.schedule.TeacherIndex(i, K)
		}
		if _, err := tr.Iterate(); err != nil {
			t.Fatal(err)
		}
		for b := range tr.batch.Len() {
			x := tr.batch.FinalState(b)
			if g.IsMode(x) && tr.ModesBy[g.TerminalKey(x)]&(1<<agent) == 0 {
				t.Fatalf("iteration %d: mode %v of agent %d's batch not attributed to it (bits %b)", i, x, agent, tr.ModesBy[g.TerminalKey(x)])
			}
		}
	}
	if len(tr.ModesBy) != len(tr.ModesFound) || len(tr.ModesFound) == 0 {
		t.Errorf("%d attributed modes, %d found", len(tr.ModesBy), len(tr.ModesFound))
	}
}
