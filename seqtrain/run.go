package seqtrain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safetensors"
	"github.com/gfngo/gfn/target"
)

// kind names sequence runs in checkpoints (run.Layout.Kind).
const kind = "sequence"

// RunOptions control a run's outputs, checkpoints and evaluations (the
// driver's run.Options, and the family's own). The zero value evaluates
// as the reference code does (every 50 rounds, 2,048 samples) and writes
// nothing.
type RunOptions struct {
	// Options: the output directory, the evaluation and checkpoint
	// intervals (EvalEvery 0: 50; a point is taken after round r when
	// r > 0 and r mod EvalEvery = 0, and after the last round), figures
	// and progress.
	run.Options
	// EvalSamples is the number of Student samples (and target samples)
	// of an evaluation (0: 2,048). A resumed run keeps its own.
	EvalSamples int
	// Task names the task in the outputs and the checkpoint (a resumed
	// run keeps its own).
	Task string
	// Budget, read by Resume only, is the run's new number of rounds (0:
	// the checkpoint's); a larger one extends a finished run.
	Budget int
	// Model, read by Resume only, is the Config.Model the run was trained
	// with (a function is not stored with it; nil: the stored Policy's).
	Model ModelFunc
}

// Summary is summary.json: the driver's fields and the final evaluation.
type Summary struct {
	run.Summary
	Task        string `json:"task"`
	Method      Method `json:"method"`
	Seed        uint64 `json:"seed"`
	RewardCalls int    `json:"reward_calls"`
	Seen        int    `json:"seen"` // distinct online objects
	// ModesTotal is the task's number of modes (0: not known).
	ModesTotal int `json:"modes_total,omitempty"`
	// The final evaluation's Metrics: ModesFound is Metrics.ModesSeen,
	// the distinct modes among all online samples. NaN (not computed) is
	// written as null.
	ModesFound int     `json:"modes_found"`
	ModesEval  int     `json:"modes_eval"`
	ELBO       float64 `json:"elbo"`
	EUBO       float64 `json:"eubo"`
	LogZ       float64 `json:"log_z"`
	LogZEst    float64 `json:"log_z_est"`
	LogZErr    float64 `json:"log_z_err"`
	Pearson    float64 `json:"pearson"`
	Samples    int     `json:"samples"`
	// TrueLogZ is the task's log Z (NaN: not known).
	TrueLogZ float64 `json:"true_log_z"`
}

// MarshalJSON writes the summary with NaN values as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	f := run.Nullable
	return json.Marshal(struct {
		plain
		ELBO     *float64 `json:"elbo"`
		EUBO     *float64 `json:"eubo"`
		LogZ     *float64 `json:"log_z"`
		LogZEst  *float64 `json:"log_z_est"`
		LogZErr  *float64 `json:"log_z_err"`
		Pearson  *float64 `json:"pearson"`
		TrueLogZ *float64 `json:"true_log_z"`
	}{plain(s), f(s.ELBO), f(s.EUBO), f(s.LogZ), f(s.LogZEst), f(s.LogZErr), f(s.Pearson), f(s.TrueLogZ)})
}

// Result is what Run and Resume return besides the files they write.
type Result struct {
	Summary Summary
	// Curve has the columns of metrics.csv (round, reward_calls,
	// student_loss, teacher_loss, modes_seen, modes_eval, elbo, eubo,
	// log_z, log_z_est, log_z_err, pearson, samples, wall_seconds).
	Curve   *run.Curve
	Trainer *Trainer
}

// Stored is what a checkpoint records of its run besides its state: what
// a command needs to rebuild the task (ReadCheckpoint).
type Stored struct {
	Task        string `json:"task"`
	EvalSamples int    `json:"eval_samples"`
	Config      Config `json:"config"`
	// Done is the rounds done and Finished whether the run wrote its
	// final outputs (the checkpoint header's).
	Done     int  `json:"-"`
	Finished bool `json:"-"`
}

// The curve's columns, in metrics.csv's order.
const (
	colRound = iota
	colRewardCalls
	colStudentLoss
	colTeacherLoss
	colModesSeen
	colModesEval
	colELBO
	colEUBO
	colLogZ
	colLogZEst
	colLogZErr
	colPearson
	colSamples
)

var columns = []run.Column{{Name: "round", Int: true}, {Name: "reward_calls", Int: true}, {Name: "student_loss"},
	{Name: "teacher_loss"}, {Name: "modes_seen", Int: true}, {Name: "modes_eval", Int: true}, {Name: "elbo"},
	{Name: "eubo"}, {Name: "log_z"}, {Name: "log_z_est"}, {Name: "log_z_err"}, {Name: "pearson"},
	{Name: "samples", Int: true}, {Name: "wall_seconds"}}

// family is a Trainer's run as the driver sees it (run.Family): the
// Trainer's rounds, evaluated on the evaluation stream against target
// samples drawn once.
type family struct {
	t           *Trainer
	task        string
	evalSamples int
	ev          Evaluator
	evalSrc     *rand.PCG
	evalRNG     *rand.Rand
	targets     []int32
	loss        [2]float64 // Step's values
	elbo        float64    // the last point's, for the progress bar
}

func newFamily(task Task, cfg Config, name string, evalSamples int) (*family, error) {
	t, err := New(task, cfg)
	if err != nil {
		return nil, err
	}
	if evalSamples <= 0 {
		evalSamples = 2048
	}
	f := &family{t: t, task: name, evalSamples: evalSamples, elbo: math.NaN()}
	f.evalSrc, f.evalRNG = run.NewStream(t.cfg.Seed, 0xe7a1)
	return f, nil
}

// drawTargets draws the run's target set, fixed for the run as the
// reference's: from a stream of its own, so that a resumed run draws the
// same.
func (f *family) drawTargets() error {
	tg, ok := f.t.task.(Targeter)
	if !ok {
		return nil
	}
	var err error
	if f.targets, err = tg.TargetSamples(f.evalSamples, rand.New(rand.NewPCG(f.t.cfg.Seed, 0xe8ac7))); err != nil {
		return fmt.Errorf("seqtrain: target samples: %w", err)
	}
	return nil
}

func (f *family) Layout() run.Layout {
	return run.Layout{Kind: kind, Unit: "round", Columns: columns, Means: []string{"student_loss", "teacher_loss"},
		Cadence: run.Cadence{Every: 50, Base: 1, First: 1, AtEnd: true},
		Config:  Stored{Task: f.task, EvalSamples: f.evalSamples, Config: f.t.cfg}}
}

func (f *family) Done() bool                  { return f.t.Done() }
func (f *family) Progress() (done, total int) { return f.t.Round, f.t.cfg.Rounds }

func (f *family) Step() ([]float64, error) {
	it, err := f.t.Iterate()
	if err != nil {
		return nil, err
	}
	f.loss = [2]float64{it.StudentLoss, math.NaN()}
	if f.t.Teacher != nil {
		f.loss[1] = it.TeacherLoss
	}
	return f.loss[:], nil
}

// Point evaluates the Student after round t.Round−1.
func (f *family) Point(row []float64) error {
	t := f.t
	m, err := f.ev.Evaluate(t, f.evalSamples, f.targets, f.evalRNG)
	if err != nil {
		return fmt.Errorf("seqtrain: evaluation after round %d: %w", t.Round-1, err)
	}
	row[colRewardCalls], row[colModesSeen], row[colModesEval] = float64(t.RewardCalls), float64(m.ModesSeen), float64(m.ModesEval)
	row[colELBO], row[colEUBO], row[colLogZ], row[colLogZEst] = m.ELBO, m.EUBO, m.LogZ, m.LogZEst
	row[colLogZErr], row[colPearson], row[colSamples] = m.LogZErr, m.Pearson, float64(m.Samples)
	f.elbo = m.ELBO
	return nil
}

func (f *family) Status() string {
	t := f.t
	s := fmt.Sprintf("modes %d | loss %.3g | logZ %.3f", t.seenModes, f.loss[0], t.Student.LogZ.Value[0])
	if !math.IsNaN(f.elbo) {
		s += fmt.Sprintf(" | ELBO %.3f", f.elbo)
	}
	return s
}

// Finish summarises the run: its counters and the last point's metrics.
func (f *family) Finish(c *run.Curve) (any, error) {
	t := f.t
	s := &Summary{Task: f.task, Method: t.cfg.Method, Seed: t.cfg.Seed, RewardCalls: t.RewardCalls, Seen: len(t.seen),
		ELBO: math.NaN(), EUBO: math.NaN(), LogZ: math.NaN(), LogZEst: math.NaN(), LogZErr: math.NaN(), Pearson: math.NaN(), TrueLogZ: math.NaN()}
	s.SetPrecision(t.cfg.Precision)
	if m, ok := t.task.(target.Moder); ok {
		s.ModesTotal = m.NumModes()
	}
	if n := c.Len(); n > 0 {
		r := c.Rows[n-1]
		s.ModesFound, s.ModesEval, s.Samples = int(r[colModesSeen]), int(r[colModesEval]), int(r[colSamples])
		s.ELBO, s.EUBO, s.LogZ, s.LogZEst, s.LogZErr, s.Pearson = r[colELBO], r[colEUBO], r[colLogZ], r[colLogZEst], r[colLogZErr], r[colPearson]
	}
	if lz, ok := t.task.(target.LogZer); ok {
		s.TrueLogZ = lz.LogZ()
	}
	return s, nil
}

func (f *family) Agents() []run.Agent {
	as := []run.Agent{f.t.Student.Checkpointed("student")}
	if f.t.Teacher != nil {
		as = append(as, f.t.Teacher.Checkpointed("teacher"))
	}
	return as
}

func (f *family) Streams() []run.Stream {
	return []run.Stream{{Name: "train", Src: f.t.src}, {Name: "eval", Src: f.evalSrc}}
}

// Recoverable: a reward that failed (in a round or an evaluation) leaves
// the state between rounds, worth a checkpoint to resume from.
func (f *family) Recoverable(err error) bool {
	var nf *NonFiniteError
	return errors.As(err, &nf)
}

func (f *family) Figures(dir string, c *run.Curve) error {
	return writeFigure(filepath.Join(dir, "curves.png"), f.task+" "+string(f.t.cfg.Method), c)
}

// counters is the family's state besides tensors.
type counters struct {
	Round       int `json:"round"`
	RewardCalls int `json:"reward_calls"`
	SeenModes   int `json:"seen_modes"`
}

// Save stores the counters, the seen objects (their keys rebuild the set,
// their log-rewards feed PRT) in first-seen order, and the replay buffer.
func (f *family) Save() (run.State, error) {
	t := f.t
	js, err := json.Marshal(counters{t.Round, t.RewardCalls, t.seenModes})
	keys := make([]int64, len(t.seenOrder))
	lr := make([]float64, len(t.seenOrder))
	for i, k := range t.seenOrder {
		keys[i], lr[i] = int64(k), t.seen[k]
	}
	ts := []safetensors.Tensor{safetensors.I64("seen.key", []int{len(keys)}, keys), safetensors.F64("seen.log_r", []int{len(lr)}, lr)}
	if buf := t.buffer(); buf != nil {
		ts = append(ts, buf.Tensors("buffer.")...)
	}
	return run.State{JSON: js, Tensors: ts}, err
}

func (f *family) Restore(s run.State) error {
	if err := f.restoreCounters(s); err != nil {
		return err
	}
	if buf := f.t.buffer(); buf != nil {
		if err := buf.Restore("buffer.", s.Tensors); err != nil {
			return fmt.Errorf("seqtrain: the checkpoint's replay buffer: %w", err)
		}
	}
	return nil
}

// restoreCounters restores the counters and the seen objects.
func (f *family) restoreCounters(s run.State) error {
	t := f.t
	var c counters
	if err := json.Unmarshal(s.JSON, &c); err != nil {
		return fmt.Errorf("seqtrain: checkpoint state: %w", err)
	}
	if c.Round < 0 || c.RewardCalls < 0 || c.SeenModes < 0 {
		return fmt.Errorf("seqtrain: checkpoint state: negative counters %+v", c)
	}
	t.Round, t.RewardCalls, t.seenModes = c.Round, c.RewardCalls, c.SeenModes
	kt, _ := s.Tensor("seen.key")
	lt, _ := s.Tensor("seen.log_r")
	keys, err1 := kt.Int64s()
	lr, err2 := lt.Float64s()
	if err1 != nil || err2 != nil || len(keys) != len(lr) {
		return errors.New("seqtrain: the checkpoint has no valid set of seen objects")
	}
	for i, k := range keys {
		t.seen[uint64(k)] = lr[i]
		t.seenOrder = append(t.seenOrder, uint64(k))
	}
	return nil
}

// Run trains task with cfg until every round is done, evaluates and
// writes the outputs (run.Drive): metrics.csv, summary.json, the
// checkpoint and curves.png. A cancelled ctx stops it with a
// *run.Interrupted after a checkpoint (when opt.OutDir is set); a reward
// that fails stops it after one too.
func Run(ctx context.Context, task Task, cfg Config, opt RunOptions) (*Result, error) {
	f, err := newFamily(task, cfg, opt.Task, opt.EvalSamples)
	if err != nil {
		return nil, err
	}
	if err := f.drawTargets(); err != nil {
		return nil, err
	}
	return f.result(run.Drive(ctx, f, opt.Options))
}

func (f *family) result(out *run.Outcome, err error) (*Result, error) {
	if err != nil {
		return nil, err
	}
	return &Result{Summary: *out.Summary.(*Summary), Curve: out.Curve, Trainer: f.t}, nil
}

// Resume continues the run whose checkpoint is in dir, writing into
// opt.OutDir (dir if empty), with the run's own settings: its evaluation
// (opt's EvalEvery and EvalSamples must be 0 or the run's) and, if
// opt.CheckpointEvery is 0, its checkpoint interval. opt.Budget > 0 sets
// the number of rounds: a larger one extends a finished run, whose curve
// continues. A run resumed from any checkpoint ends with the bits of one
// never interrupted, wall-clock times aside.
func Resume(ctx context.Context, dir string, task Task, opt RunOptions) (*Result, error) {
	c, st, err := open(dir)
	if err != nil {
		return nil, err
	}
	if opt.EvalSamples != 0 && opt.EvalSamples != st.EvalSamples {
		return nil, fmt.Errorf("seqtrain: resume from %s: %d evaluation samples differ from the run's %d (0 keeps the run's)", dir, opt.EvalSamples, st.EvalSamples)
	}
	cfg := st.Config
	if opt.Budget > 0 {
		if opt.Budget < st.Done {
			return nil, fmt.Errorf("seqtrain: resume from %s: a budget of %d rounds is below the %d done", dir, opt.Budget, st.Done)
		}
		cfg.Rounds = opt.Budget
	}
	cfg.Model = opt.Model
	f, err := build(c, st, task, cfg)
	if err != nil {
		return nil, err
	}
	if err := f.drawTargets(); err != nil {
		return nil, err
	}
	return f.result(run.Resume(ctx, c, f, opt.Options))
}

// ReadCheckpoint returns what the checkpoint in dir records of its run
// (its task's name, settings and progress) without rebuilding it.
func ReadCheckpoint(dir string) (Stored, error) {
	_, st, err := open(dir)
	return st, err
}

// open reads and verifies the checkpoint in dir, a sequence run's.
func open(dir string) (*run.Checkpoint, Stored, error) {
	c, err := run.Open(dir)
	if err != nil {
		return nil, Stored{}, err
	}
	if c.Header.Kind != kind {
		return nil, Stored{}, fmt.Errorf("seqtrain: %s is a %s checkpoint, not a sequence run's", c.Path, c.Header.Kind)
	}
	var st Stored
	if err := json.Unmarshal(c.Header.Config, &st); err != nil {
		return nil, Stored{}, fmt.Errorf("seqtrain: checkpoint %s: configuration: %w", c.Path, err)
	}
	st.Done, st.Finished = c.Header.Done, c.Header.Finished
	return c, st, nil
}

// build makes the family of checkpoint c for task with cfg (c's own,
// budget and model set), refusing a network larger than c holds.
func build(c *run.Checkpoint, st Stored, task Task, cfg Config) (*family, error) {
	if cfg.Model == nil {
		if err := checkNetworkSize(c.Tensors, cfg, task, c.Path); err != nil {
			return nil, err
		}
	}
	return newFamily(task, cfg, st.Task, st.EvalSamples)
}

// Load rebuilds the trainer of the checkpoint in dir for task, every
// state restored, with the policy network the run's Config.Policy names.
func Load(dir string, task Task) (*Trainer, error) { return LoadModel(dir, task, nil) }

// LoadModel is Load for a run trained with Config.Model = model (nil:
// Load).
func LoadModel(dir string, task Task, model ModelFunc) (*Trainer, error) {
	c, st, err := open(dir)
	if err != nil {
		return nil, err
	}
	cfg := st.Config
	cfg.Model = model
	f, err := build(c, st, task, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := run.Restore(c, f); err != nil {
		return nil, err
	}
	return f.t, nil
}

// checkNetworkSize refuses a configuration whose policy needs more
// weights than the checkpoint's tensors hold: the widths come from the
// file, and a corrupt one must not build a network larger than it.
func checkNetworkSize(ts []safetensors.Tensor, cfg Config, task Task, path string) error {
	have := 0.0
	for _, x := range ts {
		if x.DType == "F32" {
			have += float64(x.NumElements())
		}
	}
	if need := policyWeights(cfg, task.Length(), len(task.Alphabet())); need > have {
		return fmt.Errorf("seqtrain: the checkpoint %s: its policy %+v needs %.4g weights, the file holds %.4g float32 values", path, cfg.Policy, need, have)
	}
	return nil
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
