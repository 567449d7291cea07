package seqtrain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gfngo/gfn/target"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/progress"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/safetensors"
)

// RunOptions control Run's evaluation, checkpoints and outputs. The zero
// value evaluates as the reference code does (every 50 rounds, 2,048
// samples) and writes nothing.
type RunOptions struct {
	// OutDir receives metrics.csv, summary.json, the checkpoint and the
	// figure; empty writes nothing.
	OutDir string
	// Task names the task in the outputs and the checkpoint.
	Task string
	// EvalEvery is the number of rounds between curve points (0: 50): a
	// point is taken after round r when r > 0 and r mod EvalEvery = 0,
	// and after the last round.
	EvalEvery int
	// EvalSamples is the number of Student samples (and target samples)
	// of an evaluation (0: 2,048).
	EvalSamples int
	// CheckpointEvery writes a checkpoint every that many rounds (0: only
	// at the end); Resume continues from one.
	CheckpointEvery int
	// NoFigures skips the PNG figure.
	NoFigures bool
	// Progress, if set, receives a progress bar.
	Progress    io.Writer
	ProgressTTY bool
	// afterCheckpoint, if set, is called after each periodic checkpoint
	// (tests stop a run there).
	afterCheckpoint func(round int) error
}

func (o RunOptions) withDefaults() RunOptions {
	if o.EvalEvery <= 0 {
		o.EvalEvery = 50
	}
	if o.EvalSamples <= 0 {
		o.EvalSamples = 2048
	}
	return o
}

// Point is one row of metrics.csv: the Student after round Round.
type Point struct {
	Round       int     `json:"round"`
	RewardCalls int     `json:"reward_calls"`
	StudentLoss float64 `json:"student_loss"` // mean over the rounds since the last point
	TeacherLoss float64 `json:"teacher_loss"`
	Metrics
	WallSeconds float64 `json:"wall_seconds"`
}

// Summary is summary.json.
type Summary struct {
	Task        string   `json:"task"`
	Method      Method   `json:"method"`
	Seed        uint64   `json:"seed"`
	Rounds      int      `json:"rounds"`
	RewardCalls int      `json:"reward_calls"`
	Seen        int      `json:"seen"` // distinct online objects
	NumModes    int      `json:"num_modes,omitempty"`
	Final       Metrics  `json:"final"`
	TrueLogZ    *float64 `json:"true_log_z"`
	// Timings: training only, without evaluations.
	WallSeconds    float64 `json:"wall_seconds"`
	TrainSeconds   float64 `json:"train_seconds"`
	EvalSeconds    float64 `json:"eval_seconds"`
	MsPerRoundMean float64 `json:"ms_per_round_mean"`
	Resumed        int     `json:"resumed,omitempty"`
	Kernel         string  `json:"kernel"`
}

// Result is what Run returns besides the files it writes.
type Result struct {
	Summary Summary
	Curve   []Point
	Trainer *Trainer
}

// runState is what a checkpoint holds besides tensors.
type runState struct {
	Config      Config     `json:"config"`
	Task        string     `json:"task"`
	Round       int        `json:"round"`
	RewardCalls int        `json:"reward_calls"`
	SeenModes   int        `json:"seen_modes"`
	RNG         []byte     `json:"rng"`
	EvalRNG     []byte     `json:"eval_rng"`
	Curve       []Point    `json:"curve"`
	TrainSecs   float64    `json:"train_seconds"`
	EvalSeconds float64    `json:"eval_seconds"`
	WallSeconds float64    `json:"wall_seconds"`
	LossSums    [3]float64 `json:"loss_sums"`
	Resumed     int        `json:"resumed"`
	EvalEvery   int        `json:"eval_every"`
	EvalSamples int        `json:"eval_samples"`
	CheckEvery  int        `json:"checkpoint_every"`
	NoFigures   bool       `json:"no_figures,omitempty"`
	Failed      string     `json:"failed,omitempty"`
}

// Checkpoint files of a run directory: CheckpointFile holds everything a
// resumed run needs (the run state is its "gfn_state" metadata entry).
const (
	CheckpointFile = run.CheckpointFile
	ConfigFile     = run.ConfigFile
	stateKey       = "gfn_seq_state"
)

type runner struct {
	ctx     context.Context
	opt     RunOptions
	t       *Trainer
	st      runState
	ev      Evaluator
	evalSrc *rand.PCG
	evalRNG *rand.Rand
	targets []int32
	clock   run.Clock
}

// Run trains task with cfg until every round is done (or ctx is
// cancelled: the error is ctx's, and the last periodic checkpoint
// remains), evaluates and writes the outputs. model builds the policy
// networks (nil: cfg.Policy's).
func Run(ctx context.Context, task Task, cfg Config, model ModelFunc, opt RunOptions) (*Result, error) {
	t, err := New(task, cfg, model)
	if err != nil {
		return nil, err
	}
	r, err := newRunner(ctx, t, opt)
	if err != nil {
		return nil, err
	}
	return r.run()
}

func newRunner(ctx context.Context, t *Trainer, opt RunOptions) (*runner, error) {
	opt = opt.withDefaults()
	r := &runner{ctx: ctx, opt: opt, t: t, clock: run.Clock{Start: time.Now()}}
	r.evalSrc = rand.NewPCG(t.Cfg.Seed, 0xe7a1)
	r.evalRNG = rand.New(r.evalSrc)
	// The target set is fixed for the run, as the reference's: drawn once
	// from its own stream, so a resumed run draws the same.
	if tg, ok := t.Task.(Targeter); ok {
		var err error
		if r.targets, err = tg.TargetSamples(opt.EvalSamples, rand.New(rand.NewPCG(t.Cfg.Seed, 0xe8ac7))); err != nil {
			return nil, fmt.Errorf("seqtrain: target samples: %w", err)
		}
	}
	r.st.Config, r.st.Task = t.Cfg, opt.Task
	r.st.EvalEvery, r.st.EvalSamples, r.st.CheckEvery, r.st.NoFigures = opt.EvalEvery, opt.EvalSamples, opt.CheckpointEvery, opt.NoFigures
	return r, nil
}

func (r *runner) run() (*Result, error) {
	t, opt := r.t, r.opt
	// An unusable directory is reported now, not at the first checkpoint.
	if opt.OutDir != "" {
		if err := safefile.CheckDir(opt.OutDir); err != nil {
			return nil, err
		}
	}
	var bar *progress.Bar
	if opt.Progress != nil {
		bar = progress.New(opt.Progress, "train", t.Cfg.Rounds, opt.ProgressTTY)
		bar.From(t.Round)
	}
	for !t.Done() {
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		it, err := t.Iterate()
		if err != nil {
			return nil, r.failed(err)
		}
		r.st.TrainSecs += time.Since(t0).Seconds()
		r.st.LossSums[0] += it.StudentLoss
		r.st.LossSums[1] += it.TeacherLoss
		r.st.LossSums[2]++
		if it.Round > 0 && it.Round%opt.EvalEvery == 0 && !t.Done() {
			if err := r.point(); err != nil {
				return nil, r.failed(err)
			}
		}
		if opt.OutDir != "" && opt.CheckpointEvery > 0 && t.Round%opt.CheckpointEvery == 0 && !t.Done() {
			if err := r.checkpoint(); err != nil {
				return nil, err
			}
			if opt.afterCheckpoint != nil {
				if err := opt.afterCheckpoint(t.Round); err != nil {
					return nil, err
				}
			}
		}
		if bar != nil {
			fields := fmt.Sprintf("modes %d | loss %.3g | logZ %.3f", t.seenModes, it.StudentLoss, t.Student.LogZ.Value[0])
			if n := len(r.st.Curve); n > 0 {
				fields += fmt.Sprintf(" | ELBO %.3f", r.st.Curve[n-1].ELBO)
			}
			bar.Update(t.Round, fields)
		}
	}
	if bar != nil {
		bar.Finish()
	}
	if err := r.point(); err != nil {
		return nil, r.failed(err)
	}
	return r.finish()
}

// failed writes a checkpoint after a round or an evaluation whose rewards
// failed (a *NonFiniteError; the state is between rounds, so resuming
// repeats nothing) and returns err saying where it went; other errors,
// and any without an OutDir, are returned as they are.
func (r *runner) failed(err error) error {
	var nf *NonFiniteError
	if !errors.As(err, &nf) || r.opt.OutDir == "" {
		return err
	}
	r.st.Failed = err.Error()
	return run.SaveFailure(err, r.checkpoint, "round", r.t.Round, r.opt.OutDir)
}

// point evaluates the Student after round t.Round-1 and appends a row.
func (r *runner) point() error {
	t := r.t
	t0 := time.Now()
	m, err := r.ev.Evaluate(t, r.opt.EvalSamples, r.targets, r.evalRNG)
	if err != nil {
		return fmt.Errorf("seqtrain: evaluation after round %d: %w", t.Round-1, err)
	}
	r.st.EvalSeconds += time.Since(t0).Seconds()
	n := max(r.st.LossSums[2], 1)
	p := Point{Round: t.Round - 1, RewardCalls: t.RewardCalls, StudentLoss: r.st.LossSums[0] / n,
		TeacherLoss: math.NaN(), Metrics: m, WallSeconds: r.clock.Seconds()}
	if t.Teacher != nil {
		p.TeacherLoss = r.st.LossSums[1] / n
	}
	r.st.LossSums = [3]float64{}
	r.st.Curve = append(r.st.Curve, p)
	return nil
}

func (r *runner) finish() (*Result, error) {
	t, opt := r.t, r.opt
	res := &Result{Trainer: t, Curve: r.st.Curve}
	s := &res.Summary
	s.Task, s.Method, s.Seed, s.Rounds, s.RewardCalls = opt.Task, t.Cfg.Method, t.Cfg.Seed, t.Round, t.RewardCalls
	s.Seen = len(t.seen)
	if m, ok := t.Task.(target.Moder); ok {
		s.NumModes = m.NumModes()
	}
	if n := len(r.st.Curve); n > 0 {
		s.Final = r.st.Curve[n-1].Metrics
	}
	if lz, ok := t.Task.(target.LogZer); ok {
		if z := lz.LogZ(); !math.IsNaN(z) {
			s.TrueLogZ = &z
		}
	}
	s.TrainSeconds, s.EvalSeconds = r.st.TrainSecs, r.st.EvalSeconds
	if t.Round > 0 {
		s.MsPerRoundMean = 1000 * r.st.TrainSecs / float64(t.Round)
	}
	s.Resumed, s.Kernel = r.st.Resumed, string(kernel.Name())
	s.WallSeconds = r.clock.Seconds()
	if opt.OutDir != "" {
		if err := r.writeOutputs(res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// CurveHeader is the header of metrics.csv.
var CurveHeader = []string{"round", "reward_calls", "student_loss", "teacher_loss", "modes_seen", "modes_eval",
	"elbo", "eubo", "log_z", "log_z_est", "log_z_err", "pearson", "samples", "wall_seconds"}

// WriteCurve writes the curve as CSV (empty cells for missing values;
// numbers to 10 significant digits).
func WriteCurve(w io.Writer, curve []Point) error {
	f := func(v float64) string { return run.Cell(v, 10) }
	rows := make([][]string, len(curve))
	for i, p := range curve {
		rows[i] = []string{strconv.Itoa(p.Round), strconv.Itoa(p.RewardCalls), f(p.StudentLoss), f(p.TeacherLoss),
			strconv.Itoa(p.ModesSeen), strconv.Itoa(p.ModesEval), f(p.ELBO), f(p.EUBO), f(p.LogZ),
			f(p.LogZEst), f(p.LogZErr), f(p.Pearson), strconv.Itoa(p.Samples), f(p.WallSeconds)}
	}
	return run.WriteCSV(w, CurveHeader, rows)
}

// writeOutputs writes metrics.csv, summary.json and the final checkpoint
// (run.WriteOutputs), then the figure.
func (r *runner) writeOutputs(res *Result) error {
	dir := r.opt.OutDir
	if err := run.WriteOutputs(dir, func(w io.Writer) error { return WriteCurve(w, res.Curve) }, res.Summary, r.checkpoint); err != nil {
		return err
	}
	if !r.opt.NoFigures {
		if err := WriteFigure(filepath.Join(dir, "curves.png"), r.opt.Task+" "+string(r.t.Cfg.Method), res.Curve); err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON writes every field of the point (NaN as null).
func (p Point) MarshalJSON() ([]byte, error) {
	m, err := json.Marshal(p.Metrics)
	if err != nil {
		return nil, err
	}
	var tl *float64
	if !math.IsNaN(p.TeacherLoss) {
		tl = &p.TeacherLoss
	}
	head, err := json.Marshal(struct {
		Round       int      `json:"round"`
		RewardCalls int      `json:"reward_calls"`
		StudentLoss float64  `json:"student_loss"`
		TeacherLoss *float64 `json:"teacher_loss"`
		WallSeconds float64  `json:"wall_seconds"`
	}{p.Round, p.RewardCalls, p.StudentLoss, tl, p.WallSeconds})
	if err != nil {
		return nil, err
	}
	return append(append(head[:len(head)-1], ','), m[1:]...), nil
}

// UnmarshalJSON reads what MarshalJSON wrote (null as NaN).
func (p *Point) UnmarshalJSON(b []byte) error {
	var v struct {
		Round       int      `json:"round"`
		RewardCalls int      `json:"reward_calls"`
		StudentLoss float64  `json:"student_loss"`
		TeacherLoss *float64 `json:"teacher_loss"`
		WallSeconds float64  `json:"wall_seconds"`
		ModesSeen   int      `json:"modes_seen"`
		ModesEval   int      `json:"modes_eval"`
		ELBO        *float64 `json:"elbo"`
		LogZEst     *float64 `json:"log_z_est"`
		LogZErr     *float64 `json:"log_z_err"`
		EUBO        *float64 `json:"eubo"`
		Pearson     *float64 `json:"pearson"`
		LogZ        *float64 `json:"log_z"`
		Samples     int      `json:"samples"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	f := func(x *float64) float64 {
		if x == nil {
			return math.NaN()
		}
		return *x
	}
	*p = Point{Round: v.Round, RewardCalls: v.RewardCalls, StudentLoss: v.StudentLoss, TeacherLoss: f(v.TeacherLoss),
		WallSeconds: v.WallSeconds, Metrics: Metrics{ModesSeen: v.ModesSeen, ModesEval: v.ModesEval, ELBO: f(v.ELBO),
			LogZEst: f(v.LogZEst), LogZErr: f(v.LogZErr), EUBO: f(v.EUBO), Pearson: f(v.Pearson), LogZ: f(v.LogZ), Samples: v.Samples}}
	return nil
}

// agents yields the named agents in checkpoint order.
func (t *Trainer) agents() []struct {
	name string
	a    *Agent
} {
	out := []struct {
		name string
		a    *Agent
	}{{"student", t.Student}}
	if t.Teacher != nil {
		out = append(out, struct {
			name string
			a    *Agent
		}{"teacher", t.Teacher})
	}
	return out
}

// tensors lists the checkpoint's tensors: each agent's parameters (policy.
// and logZ) and Adam state under student. and teacher., the seen objects
// and the replay buffer, oldest first.
func (t *Trainer) tensors() []safetensors.Tensor {
	var ts []safetensors.Tensor
	for _, ag := range t.agents() {
		ps := append(append([]*nn.Param(nil), ag.a.Model.Params()...), ag.a.LogZ)
		ts = append(ts, nn.ParamTensors(ag.name+".", ps)...)
		ts = append(ts, ag.a.Opt.StateTensors(ag.name+".optim.")...)
	}
	w := t.Env.StateLen()
	// Seen objects: the keys rebuild the set; their log-rewards feed PRT.
	keys := make([]int64, len(t.seenOrder))
	lr := make([]float64, len(t.seenOrder))
	for i, k := range t.seenOrder {
		keys[i], lr[i] = int64(k), t.seen[k]
	}
	ts = append(ts, safetensors.I64("seen.key", []int{len(keys)}, keys), safetensors.F64("seen.log_r", []int{len(lr)}, lr))
	if buf := t.buffer(); buf != nil {
		var xs, bk []int64
		var blr, pr []float64
		buf.Each(func(key uint64, x []int32, logR, p float64) {
			for _, v := range x {
				xs = append(xs, int64(v))
			}
			bk, blr, pr = append(bk, int64(key)), append(blr, logR), append(pr, p)
		})
		ts = append(ts, safetensors.I64("buffer.x", []int{len(bk), w}, xs), safetensors.I64("buffer.key", []int{len(bk)}, bk),
			safetensors.F64("buffer.log_r", []int{len(bk)}, blr), safetensors.F64("buffer.priority", []int{len(bk)}, pr))
	}
	return ts
}

// checkpoint writes the run's state atomically.
func (r *runner) checkpoint() error {
	t, st := r.t, &r.st
	st.Round, st.RewardCalls, st.SeenModes = t.Round, t.RewardCalls, t.seenModes
	st.WallSeconds = r.clock.Seconds()
	var err error
	if st.RNG, err = t.src.MarshalBinary(); err != nil {
		return err
	}
	if st.EvalRNG, err = r.evalSrc.MarshalBinary(); err != nil {
		return err
	}
	state, err := json.Marshal(st)
	if err != nil {
		return err
	}
	dir := r.opt.OutDir
	if err := run.WriteCheckpoint(filepath.Join(dir, CheckpointFile), t.tensors(), stateKey, state); err != nil {
		return fmt.Errorf("seqtrain: checkpoint: %w", err)
	}
	if err := safefile.Write(filepath.Join(dir, run.MetricsFile), func(w io.Writer) error { return WriteCurve(w, st.Curve) }); err != nil {
		return err
	}
	return run.WriteJSON(filepath.Join(dir, ConfigFile), struct {
		Task   string `json:"task"`
		Round  int    `json:"round"`
		Config Config `json:"config"`
	}{st.Task, st.Round, st.Config})
}

func readCheckpoint(dir string) (*runState, []safetensors.Tensor, error) {
	f, err := os.Open(filepath.Join(dir, CheckpointFile))
	if err != nil {
		return nil, nil, fmt.Errorf("seqtrain: %w", err)
	}
	defer f.Close()
	ts, meta, err := safetensors.Read(f)
	if err != nil {
		return nil, nil, fmt.Errorf("seqtrain: checkpoint in %s: %w", dir, err)
	}
	raw, ok := meta[stateKey]
	if !ok {
		return nil, nil, fmt.Errorf("seqtrain: %s in %s is not a sequence-training checkpoint (no %s metadata)", CheckpointFile, dir, stateKey)
	}
	var st runState
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return nil, nil, fmt.Errorf("seqtrain: checkpoint state in %s: %w", dir, err)
	}
	return &st, ts, nil
}

// ReadState returns the task name, configuration and round of the
// checkpoint in dir.
func ReadState(dir string) (task string, cfg Config, round int, err error) {
	st, _, err := readCheckpoint(dir)
	if err != nil {
		return "", Config{}, 0, err
	}
	return st.Task, st.Config, st.Round, nil
}

// Load rebuilds the trainer of the checkpoint in dir for task (model as
// for New: the same network the run was trained with).
func Load(dir string, task Task, model ModelFunc) (*Trainer, error) {
	t, _, err := load(dir, task, model)
	return t, err
}

func load(dir string, task Task, model ModelFunc) (*Trainer, *runState, error) {
	st, ts, err := readCheckpoint(dir)
	if err != nil {
		return nil, nil, err
	}
	if model == nil {
		// The widths come from the file: a corrupt one must not build a
		// network larger than the parameters the file holds.
		have := 0.0
		for _, x := range ts {
			if x.DType == "F32" {
				have += float64(x.NumElements())
			}
		}
		if need := policyWeights(st.Config, task.Length(), len(task.Alphabet())); need > have {
			return nil, nil, fmt.Errorf("seqtrain: the checkpoint in %s: its policy %+v needs %.4g weights, the file holds %.4g float32 values", dir, st.Config.Policy, need, have)
		}
	}
	t, err := New(task, st.Config, model)
	if err != nil {
		return nil, nil, err
	}
	for _, ag := range t.agents() {
		ps := append(append([]*nn.Param(nil), ag.a.Model.Params()...), ag.a.LogZ)
		if err := nn.LoadParams(ag.name+".", ps, ts); err != nil {
			return nil, nil, fmt.Errorf("seqtrain: %w", err)
		}
		if err := ag.a.Opt.LoadState(ag.name+".optim.", ts); err != nil {
			return nil, nil, fmt.Errorf("seqtrain: %w", err)
		}
	}
	if err := t.src.UnmarshalBinary(st.RNG); err != nil {
		return nil, nil, fmt.Errorf("seqtrain: checkpoint random stream: %w", err)
	}
	t.Round, t.RewardCalls, t.seenModes = st.Round, st.RewardCalls, st.SeenModes
	byName := map[string]safetensors.Tensor{}
	for _, x := range ts {
		byName[x.Name] = x
	}
	bad := func(what string) error {
		return fmt.Errorf("seqtrain: the checkpoint in %s has no valid %s", dir, what)
	}
	keys, err1 := byName["seen.key"].Int64s()
	lr, err2 := byName["seen.log_r"].Float64s()
	if err1 != nil || err2 != nil || len(keys) != len(lr) {
		return nil, nil, bad("set of seen objects")
	}
	for i, k := range keys {
		t.seen[uint64(k)] = lr[i]
		t.seenOrder = append(t.seenOrder, uint64(k))
	}
	if buf := t.buffer(); buf != nil {
		w := t.Env.StateLen()
		xs, err1 := byName["buffer.x"].Int64s()
		bk, err2 := byName["buffer.key"].Int64s()
		blr, err3 := byName["buffer.log_r"].Float64s()
		pr, err4 := byName["buffer.priority"].Float64s()
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(xs) != len(bk)*w || len(blr) != len(bk) || len(pr) != len(bk) {
			return nil, nil, bad("replay buffer")
		}
		x := make([]int32, w)
		for i := range bk {
			for j := range w {
				x[j] = int32(xs[i*w+j])
			}
			buf.Set(uint64(bk[i]), x, blr[i], pr[i])
		}
	}
	return t, st, nil
}

// policyWeights is the number of weights of one agent's network that
// cfg.Policy builds for strings of n tokens over a symbols (a float64, so
// that corrupt widths cannot overflow).
func policyWeights(cfg Config, n, a int) float64 {
	features, actions := float64(n)*float64(a), 1+2*float64(a)
	if cfg.MDP == "append" {
		actions = 1 + float64(a)
	}
	// A dense layer from x to y has (x+1)·y weights with its bias.
	dense := func(x, y float64) float64 { return (x + 1) * y }
	h, e := float64(cfg.Policy.Hidden), float64(cfg.Policy.Embed)
	if cfg.Policy.Kind == "ssr" {
		return dense(features, h) + dense(h, e) + dense(2*e, h) + dense(h, 1)
	}
	layers := float64(cfg.Policy.Layers)
	if layers <= 0 {
		layers = 2
	}
	return dense(features, h) + (layers-1)*dense(h, h) + dense(h, actions)
}

// Resume continues the run whose checkpoint is in dir, writing into
// opt.OutDir (dir if empty), with the run's own evaluation and checkpoint
// settings (opt's are ignored but for OutDir and the progress bar). A run
// resumed from a periodic checkpoint ends with the same parameters and
// metrics as one never interrupted (wall-clock columns aside).
func Resume(ctx context.Context, dir string, task Task, model ModelFunc, opt RunOptions) (*Result, error) {
	t, st, err := load(dir, task, model)
	if err != nil {
		return nil, err
	}
	if t.Done() && st.Failed == "" {
		return nil, fmt.Errorf("seqtrain: the run in %s is finished (%d of %d rounds)", dir, t.Round, t.Cfg.Rounds)
	}
	if opt.OutDir == "" {
		opt.OutDir = dir
	}
	opt.Task = st.Task
	opt.EvalEvery, opt.EvalSamples, opt.CheckpointEvery, opt.NoFigures = st.EvalEvery, st.EvalSamples, st.CheckEvery, st.NoFigures
	r, err := newRunner(ctx, t, opt)
	if err != nil {
		return nil, err
	}
	if err := r.evalSrc.UnmarshalBinary(st.EvalRNG); err != nil {
		return nil, fmt.Errorf("seqtrain: checkpoint random stream: %w", err)
	}
	st.Resumed++
	failed := st.Failed != ""
	st.Failed = ""
	r.st = *st
	r.clock = run.Clock{Start: time.Now(), Before: st.WallSeconds}
	// An evaluation that failed after round t.Round−1 is taken now.
	if last := t.Round - 1; failed && !t.Done() && last > 0 && last%opt.EvalEvery == 0 &&
		(len(r.st.Curve) == 0 || r.st.Curve[len(r.st.Curve)-1].Round != last) {
		if err := r.point(); err != nil {
			return nil, r.failed(err)
		}
	}
	return r.run()
}
