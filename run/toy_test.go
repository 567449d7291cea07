package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/run/runtest"
	"github.com/gfngo/gfn/safetensors"
)

// toy is the smallest honest fourth family: an agent that learns the
// mean of a normal distribution from batches drawn by its training
// stream, evaluated on draws of a stream of its own. It is all a family
// writes for the driver: its step, its point, its summary, its agents,
// streams and state.
type toy struct {
	cfg   toyConfig
	theta *nn.Param
	opt   *nn.Adam
	src   *rand.PCG
	rng   *rand.Rand
	esrc  *rand.PCG
	erng  *rand.Rand
	units int
	drawn []float64 // every training draw: state that is a list
	loss  [1]float64
}

type toyConfig struct {
	Mean   float64 `json:"mean"`
	Budget int     `json:"budget"`
	Seed   uint64  `json:"seed"`
}

func newToy(cfg toyConfig) *toy {
	t := &toy{cfg: cfg, theta: nn.NewParam("theta", 1)}
	t.opt = nn.NewAdam(nn.Group{Params: []*nn.Param{t.theta}, LR: 0.1})
	t.src, t.rng = run.NewStream(cfg.Seed, 1)
	t.esrc, t.erng = run.NewStream(cfg.Seed, 2)
	return t
}

func (t *toy) Layout() run.Layout {
	return run.Layout{Kind: "toy", Unit: "iteration", Config: t.cfg,
		Columns: []run.Column{{Name: "step", Int: true}, {Name: "loss"}, {Name: "error"}, {Name: "wall_seconds"}},
		Means:   []string{"loss"}, Cadence: run.Cadence{Every: 2, First: 1, AtStart: true, AtEnd: true}}
}

func (t *toy) Done() bool                  { return t.units >= t.cfg.Budget }
func (t *toy) Progress() (done, total int) { return t.units, t.cfg.Budget }

func (t *toy) Step() ([]float64, error) {
	th := float64(t.theta.Value[0])
	var loss, grad float64
	for range 8 {
		x := t.cfg.Mean + t.rng.NormFloat64()
		t.drawn = append(t.drawn, x)
		loss += (th - x) * (th - x) / 8
		grad += 2 * (th - x) / 8
	}
	t.theta.Grad[0] = float32(grad)
	t.opt.Step()
	t.units++
	t.loss[0] = loss
	return t.loss[:], nil
}

func (t *toy) Point(row []float64) error {
	var e float64
	for range 16 {
		e += math.Abs(float64(t.theta.Value[0]) - t.cfg.Mean - 0.01*t.erng.NormFloat64())
	}
	row[2] = e / 16
	return nil
}

type toySummary struct {
	run.Summary
	Theta float64 `json:"theta"`
	Error float64 `json:"error"`
}

func (t *toy) Finish(c *run.Curve) (any, error) {
	return &toySummary{Theta: float64(t.theta.Value[0]), Error: c.Last("error")}, nil
}

func (t *toy) Agents() []run.Agent { return []run.Agent{{Name: "student", Opt: t.opt}} }
func (t *toy) Streams() []run.Stream {
	return []run.Stream{{Name: "train", Src: t.src}, {Name: "eval", Src: t.esrc}}
}

func (t *toy) Save() (run.State, error) {
	js, err := json.Marshal(struct {
		Units int `json:"units"`
	}{t.units})
	return run.State{JSON: js, Tensors: []safetensors.Tensor{safetensors.F64("drawn", []int{len(t.drawn)}, t.drawn)}}, err
}

func (t *toy) Restore(s run.State) error {
	var v struct {
		Units int `json:"units"`
	}
	if err := json.Unmarshal(s.JSON, &v); err != nil {
		return err
	}
	x, ok := s.Tensor("drawn")
	if !ok {
		return fmt.Errorf("toy: no tensor drawn")
	}
	d, err := x.Float64s()
	t.units, t.drawn = v.Units, d
	return err
}

// toyResume is the toy's Resume: its configuration from the checkpoint,
// the budget raised by extra.
func toyResume(ctx context.Context, dir string, extra int, opt run.Options) error {
	c, err := run.Open(dir)
	if err != nil {
		return err
	}
	var cfg toyConfig
	if err := json.Unmarshal(c.Header.Config, &cfg); err != nil {
		return err
	}
	cfg.Budget += extra
	_, err = run.Resume(ctx, c, newToy(cfg), opt)
	return err
}

func TestToyConformance(t *testing.T) {
	cfg := toyConfig{Mean: 3, Budget: 9, Seed: 7}
	runtest.Check(t, runtest.Subject{
		Run: func(ctx context.Context, opt run.Options) error {
			_, err := run.Drive(ctx, newToy(cfg), opt)
			return err
		},
		Resume: toyResume,
		Units:  cfg.Budget,
		Seed:   1,
	})
}

// TestToyCurve pins the cadence and the means: points at 0, 2, 4, 6, 8
// and the end (9), each loss the mean of the steps since the last.
func TestToyCurve(t *testing.T) {
	cfg := toyConfig{Mean: 3, Budget: 9, Seed: 7}
	out, err := run.Drive(context.Background(), newToy(cfg), run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	steps := out.Curve.Column("step")
	if want := []float64{0, 2, 4, 6, 8, 9}; fmt.Sprint(steps) != fmt.Sprint(want) {
		t.Fatalf("points at %v, want %v", steps, want)
	}
	// The losses again, by an independent loop over the same draws.
	ref := newToy(cfg)
	var losses []float64
	for !ref.Done() {
		v, _ := ref.Step()
		losses = append(losses, v[0])
	}
	if l := out.Curve.Value(0, "loss"); !math.IsNaN(l) {
		t.Errorf("loss before any step %v, want NaN", l)
	}
	for i, span := range [][2]int{{0, 2}, {2, 4}, {4, 6}, {6, 8}, {8, 9}} {
		var s float64
		for _, l := range losses[span[0]:span[1]] {
			s += l
		}
		want := s / float64(span[1]-span[0])
		if got := out.Curve.Value(i+1, "loss"); got != want {
			t.Errorf("point %d: loss %v, want %v", i+1, got, want)
		}
	}
	sum := out.Summary.(*toySummary)
	if sum.Steps != 9 || sum.Family != "toy" || sum.Unit != "iteration" {
		t.Errorf("summary %+v", sum.Summary)
	}
}

// TestRestore loads a finished toy run without training: its parameter,
// streams and curve are the run's.
func TestRestore(t *testing.T) {
	dir := t.TempDir()
	cfg := toyConfig{Mean: 3, Budget: 5, Seed: 2}
	trained := newToy(cfg)
	out, err := run.Drive(context.Background(), trained, run.Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c, err := run.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	loaded := newToy(cfg)
	curve, err := run.Restore(c, loaded)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.theta.Value[0] != trained.theta.Value[0] || loaded.units != 5 || loaded.rng.Uint64() != trained.rng.Uint64() {
		t.Errorf("restored theta %v, units %d; trained %v", loaded.theta.Value[0], loaded.units, trained.theta.Value[0])
	}
	if fmt.Sprint(curve.Column("loss")) != fmt.Sprint(out.Curve.Column("loss")) {
		t.Errorf("restored curve %v, the run's %v", curve.Column("loss"), out.Curve.Column("loss"))
	}
	other := &otherKind{newToy(cfg)}
	if _, err := run.Restore(c, other); err == nil {
		t.Error("a checkpoint of another kind restored")
	}
}

// otherKind is the toy under another checkpoint kind.
type otherKind struct{ *toy }

func (o *otherKind) Layout() run.Layout {
	l := o.toy.Layout()
	l.Kind = "other"
	return l
}

// slowFinish is the toy with a final evaluation that takes 60 ms.
type slowFinish struct{ *toy }

func (s slowFinish) Finish(c *run.Curve) (any, error) {
	time.Sleep(60 * time.Millisecond)
	return s.toy.Finish(c)
}

// The summary's evaluation time includes the final evaluation, not only
// the curve's points.
func TestEvalSecondsIncludeFinish(t *testing.T) {
	out, err := run.Drive(context.Background(), slowFinish{newToy(toyConfig{Mean: 3, Budget: 3, Seed: 7})}, run.Options{NoFigures: true})
	if err != nil {
		t.Fatal(err)
	}
	s := out.Summary.(*toySummary)
	if !(s.EvalSeconds >= 0.06) || !(s.WallSeconds >= s.EvalSeconds) {
		t.Errorf("eval %v s, wall %v s: the final evaluation's 60 ms is not counted", s.EvalSeconds, s.WallSeconds)
	}
}
