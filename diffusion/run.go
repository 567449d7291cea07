package diffusion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safetensors"
	"github.com/gfngo/gfn/samplemetric"
	"github.com/gfngo/gfn/target"
)

// RunOptions control Run and Resume: the driver's outputs, checkpoints and
// progress (run.Options; the curve's default EvalEvery is 100, and the
// point taken after the 0-based iteration i, when i mod EvalEvery = 0, is
// labelled i), the evaluations, and the names stored with the run. The
// zero value evaluates as the reference code does and writes nothing.
type RunOptions struct {
	run.Options
	// Task names the energy in the outputs and the checkpoint (e.g.
	// "25gmm"); Preset the configuration's origin. Resume takes the
	// checkpoint's.
	Task, Preset string
	// EvalSamples is the number of fresh and exact samples of a curve
	// point (0: 2,000); FinalSamples of the final evaluation (0: 10,000).
	// Resume keeps the run's (0, or the run's own value).
	EvalSamples, FinalSamples int
	// W2Every, if > 0, takes W2 only at the curve points whose iteration
	// is a multiple of it (the others' W2 is NaN, an empty cell of
	// metrics.csv), and at the final evaluation; 0 takes it at every
	// point. Resume keeps the run's (0, or the run's own value).
	W2Every int
	// ResumeDriftClip, if > 0, is the drift bound of a resumed run from
	// its checkpoint's iteration on (Config.DriftClip): a run whose
	// samples overflowed continues with a bound. The checkpoint records
	// it. Run ignores it.
	ResumeDriftClip float64
	// Budget, read by Resume only, is the run's number of iterations
	// (0: the checkpoint's). A larger one extends the run, a finished one
	// included; the learning-rate milestones stay at the iterations the
	// run had them (those counted from the end are resolved against the
	// old length first).
	Budget int
}

func (o RunOptions) withDefaults() RunOptions {
	if o.EvalSamples <= 0 {
		o.EvalSamples = 2000
	}
	if o.FinalSamples <= 0 {
		o.FinalSamples = 10000
	}
	return o
}

// Summary is summary.json: the driver's fields (run.Summary: steps,
// timings, resumes, kernel) and the final evaluation's.
type Summary struct {
	run.Summary
	Task        string  `json:"task"`
	Preset      string  `json:"preset,omitempty"`
	Method      Method  `json:"method"`
	LocalSearch bool    `json:"local_search,omitempty"`
	Seed        uint64  `json:"seed"`
	RewardCalls int     `json:"reward_calls"`
	Threshold   float64 `json:"threshold"`
	// The final evaluation (FinalSamples samples).
	ELBO     float64  `json:"elbo"`
	ELBOIS   float64  `json:"elbo_is"`
	EUBO     *float64 `json:"eubo"`
	W2       *float64 `json:"w2"`
	LogZ     float64  `json:"log_z"`
	TrueLogZ *float64 `json:"true_log_z"`
	Samples  int      `json:"eval_samples"`
	// The final evaluation's suite metrics of the Student.
	SuiteMetrics
	Notes []string `json:"notes,omitempty"`
}

// SuiteMetrics are the suite's metrics of a sampler's samples (package
// samplemetric), null where they do not apply. EMC is the entropic mode
// coverage of the samples over the components of a mixture energy
// (energy.Mixture). DeltaLogZ is |Δ log Z| = |ELBO-IS − log Z| where log Z
// is known (Blessing et al.'s Δ log Z, Sendera et al.'s Δ log Z^RW). MMD
// is the maximum mean discrepancy (√MMD², unbiased, Gaussian kernel of
// bandwidth MMDBandwidth from the median heuristic) between the first
// MMDSamples samples and as many exact ones (at most 2,000: Blessing et
// al.'s evaluation size; the cost grows as its square).
type SuiteMetrics struct {
	EMC          *float64 `json:"emc"`
	DeltaLogZ    *float64 `json:"delta_log_z"`
	MMD          *float64 `json:"mmd"`
	MMDBandwidth *float64 `json:"mmd_bandwidth"`
	MMDSamples   int      `json:"mmd_samples,omitempty"`
}

// MMDSamples caps the samples of each set that the final evaluation's
// MMD compares (Summary.MMD).
const MMDSamples = 2000

// suiteMetrics returns the suite metrics of the samples x (n×d), their
// log weights and the exact samples (nil without a sampler), and a note
// for each metric that failed (left null). It draws nothing: the run's
// streams are untouched.
func suiteMetrics(e energy.Energy, x, exact []float32, logW []float64, d int) (s SuiteMetrics, notes []string) {
	note := func(what string, err error) { notes = append(notes, fmt.Sprintf("%s not computed: %v", what, err)) }
	if m, ok := e.(energy.Mixture); ok {
		if v, err := samplemetric.EMC(m, x); err != nil {
			note("EMC", err)
		} else {
			s.EMC = &v
		}
	}
	if lz, ok := e.(target.LogZer); ok && logW != nil && !math.IsNaN(lz.LogZ()) && !math.IsInf(lz.LogZ(), 0) {
		if v, err := samplemetric.LogZError(logW, lz.LogZ()); err != nil {
			note("|delta log Z|", err)
		} else {
			s.DeltaLogZ = &v
		}
	}
	if exact != nil {
		n := min(len(x), len(exact)) / d
		k := min(n, MMDSamples)
		if r, err := samplemetric.MMD(x[:k*d], exact[:k*d], d, 0); err != nil {
			note("MMD", err)
		} else {
			v, h := r.MMD(), r.Bandwidth
			s.MMD, s.MMDBandwidth, s.MMDSamples = &v, &h, k
		}
	}
	return s, notes
}

// SamplesSuiteMetrics returns the suite metrics of equally weighted
// samples x (n×d) of e from a sampler without a density (SMC, GGNS): EMC
// for a mixture and MMD against the exact samples (nil without an exact
// sampler); DeltaLogZ, which needs log-weights, is left null for the
// caller's own log Z estimate. The notes name metrics that failed.
func SamplesSuiteMetrics(e energy.Energy, x, exact []float32, d int) (SuiteMetrics, []string) {
	return suiteMetrics(e, x, exact, nil, d)
}

// Result is what Run and Resume return besides the files they write.
type Result struct {
	Summary Summary
	// Curve is metrics.csv's content.
	Curve   *run.Curve
	Trainer *Trainer
	// Student, Teacher and Exact are the final evaluation's samples (n×d;
	// Teacher nil without one, Exact nil without an exact sampler).
	Student, Teacher, Exact []float32
}

// Stored is what a checkpoint records of its run besides its state: the
// names, the dimension, the evaluation settings and the configuration
// (the checkpoint header's config, run.Layout.Config, and config.json's;
// the configuration's fields inline).
type Stored struct {
	Task         string `json:"task"`
	Preset       string `json:"preset,omitempty"`
	Dim          int    `json:"dim"`
	EvalSamples  int    `json:"eval_samples"`
	FinalSamples int    `json:"final_samples"`
	W2Every      int    `json:"w2_every,omitempty"`
	Config
	// Done is the iterations done (the checkpoint header's; not part of
	// the configuration).
	Done int `json:"-"`
}

// curveColumns are metrics.csv's columns. student_loss, teacher_loss and
// the gradient norms (before clipping, log Z excluded) are means over
// the iterations since the last point; the Teacher's are empty without
// one. A run migrated from a checkpoint older than the gradient-norm
// columns has them empty in its earlier rows and in the first row after.
var curveColumns = []string{"step", "reward_calls", "student_loss", "teacher_loss", "student_logz", "teacher_logz",
	"elbo", "elbo_is", "eubo", "w2", "samples", "student_grad_norm", "teacher_grad_norm", "wall_seconds"}

// The positions in curveColumns of the columns Point fills.
const (
	colRewardCalls = 1
	colStudentLogZ = 4
	colTeacherLogZ = 5
	colELBO        = 6
	colSamples     = 10
)

// means are the curve's mean columns, in the order of Step's values.
var means = []string{"student_loss", "teacher_loss", "student_grad_norm", "teacher_grad_norm"}

// family is a run as package run drives it.
type family struct {
	t  *Trainer
	st Stored
	ev Evaluator
	// The evaluation streams: the curve's and final evaluations' fresh
	// samples, and the exact samples.
	evalSrc, exactSrc *rand.PCG
	evalRNG, exactRNG *rand.Rand
	exact             []float32 // the curve's fixed exact samples
	vals              [4]float64
	// nanMeans marks (bit j) the means whose point must be NaN: a
	// Student value since the last point was NaN (a plain sum of all
	// values, as the curve's means were taken before the driver, is NaN
	// then), or a migrated checkpoint lacks the gradient norms' sums.
	nanMeans uint8
	last     Iteration
	lastELBO float64
	res      Result
}

// newFamily wraps t; the curve's exact samples are the exact stream's
// first, drawn here (a resume restores the stream after them).
func newFamily(t *Trainer, st Stored) *family {
	f := &family{t: t, st: st, lastELBO: math.NaN()}
	f.evalSrc, f.evalRNG = run.NewStream(t.cfg.Seed, 0xe7a1)
	f.exactSrc, f.exactRNG = run.NewStream(t.cfg.Seed, 0xe8ac7)
	f.exact = ExactSamples(t.Energy, st.EvalSamples, f.exactRNG)
	return f
}

// Run trains cfg on e until its iterations are done, evaluates and writes
// the outputs (run.Drive). A cancelled ctx stops it with *run.Interrupted,
// after a checkpoint when opt.OutDir is set.
func Run(ctx context.Context, e energy.Energy, cfg Config, opt RunOptions) (*Result, error) {
	if opt.W2Every < 0 {
		return nil, fmt.Errorf("diffusion: W2 every %d iterations: must be >= 0 (0: at every curve point)", opt.W2Every)
	}
	t, err := New(e, cfg)
	if err != nil {
		return nil, err
	}
	return drive(ctx, t, opt)
}

// drive runs the trainer t, in its current state, to the end.
func drive(ctx context.Context, t *Trainer, opt RunOptions) (*Result, error) {
	opt = opt.withDefaults()
	f := newFamily(t, Stored{Task: opt.Task, Preset: opt.Preset, Dim: t.Proc.Dim, EvalSamples: opt.EvalSamples,
		FinalSamples: opt.FinalSamples, W2Every: opt.W2Every, Config: t.cfg})
	out, err := run.Drive(ctx, f, opt.Options)
	return f.result(out, err)
}

func (f *family) result(out *run.Outcome, err error) (*Result, error) {
	if err != nil {
		return nil, err
	}
	f.res.Curve = out.Curve
	return &f.res, nil
}

// Resume continues the run whose checkpoint is in dir (run.Resume),
// writing into opt.OutDir (dir if empty), with the run's own settings but
// opt.Budget and opt.ResumeDriftClip. A run resumed from a periodic
// checkpoint ends with the same parameters, metrics and samples as one
// never interrupted (wall-clock columns aside).
func Resume(ctx context.Context, dir string, e energy.Energy, opt RunOptions) (*Result, error) {
	ck, st, err := open(dir)
	if err != nil {
		return nil, err
	}
	if (opt.EvalSamples != 0 && opt.EvalSamples != st.EvalSamples) || (opt.FinalSamples != 0 && opt.FinalSamples != st.FinalSamples) {
		return nil, fmt.Errorf("diffusion: resume from %s: evaluation samples %d, %d (final) differ from the run's %d, %d (0 keeps the run's)",
			dir, opt.EvalSamples, opt.FinalSamples, st.EvalSamples, st.FinalSamples)
	}
	if opt.W2Every != 0 && opt.W2Every != st.W2Every {
		return nil, fmt.Errorf("diffusion: resume from %s: W2 every %d iterations differs from the run's %d (0 keeps the run's)", dir, opt.W2Every, st.W2Every)
	}
	if c := opt.ResumeDriftClip; c != 0 {
		if !(c > 0) || math.IsInf(c, 0) {
			return nil, fmt.Errorf("diffusion: resume drift clip %v must be finite and > 0", c)
		}
		st.Config.DriftClip = c
	}
	if b := opt.Budget; b != 0 && b != st.Config.Iterations {
		if b < st.Config.Iterations {
			return nil, fmt.Errorf("diffusion: budget %d iterations is below the %d of the run in %s (a run is extended, not shortened)", b, st.Config.Iterations, dir)
		}
		var ms []int
		for _, m := range st.Config.milestones() {
			if m >= 0 {
				ms = append(ms, m)
			}
		}
		st.Config.Milestones, st.Config.Iterations = ms, b
	}
	t, err := trainerOf(ck, st, e)
	if err != nil {
		return nil, err
	}
	f := newFamily(t, st)
	out, err := run.Resume(ctx, ck, f, opt.Options)
	return f.result(out, err)
}

// Layout is the run's checkpoint kind, unit, curve and cadence.
func (f *family) Layout() run.Layout {
	cols := make([]run.Column, len(curveColumns))
	for i, c := range curveColumns {
		cols[i] = run.Column{Name: c, Int: i == 0 || i == colRewardCalls || i == colSamples}
	}
	return run.Layout{Kind: "diffusion", Unit: "iteration", Columns: cols, Means: means,
		Cadence: run.Cadence{Every: 100, Base: 1}, Config: &f.st}
}

// Done reports whether the iterations are done.
func (f *family) Done() bool { return f.t.Done() }

// Progress is the iterations done and planned.
func (f *family) Progress() (done, total int) { return f.t.Step, f.t.cfg.Iterations }

// Step runs one iteration. The Teacher's undefined loss (no state above
// the threshold) counts as 0 in its mean, as it always did.
func (f *family) Step() ([]float64, error) {
	it, err := f.t.Iterate()
	if err != nil {
		return nil, err
	}
	f.last = it
	f.vals = [4]float64{it.StudentLoss, it.TeacherLoss, it.StudentGradNorm, it.TeacherGradNorm}
	for j, v := range f.vals {
		switch {
		case !math.IsNaN(v):
		case j%2 == 0:
			f.nanMeans |= 1 << j
		case f.t.Teacher != nil:
			f.vals[j] = 0
		}
	}
	return f.vals[:], nil
}

// Point evaluates the Student after the current iteration.
func (f *family) Point(row []float64) error {
	t := f.t
	f.ev.SkipW2 = f.st.W2Every > 0 && (t.Step-1)%f.st.W2Every != 0
	m, _, err := f.ev.Evaluate(t.Energy, t.Proc, t.Student, f.st.EvalSamples, f.exact, f.evalRNG)
	f.ev.SkipW2 = false
	if err != nil {
		return fmt.Errorf("diffusion: evaluation after iteration %d: %w", t.Step-1, err)
	}
	row[colRewardCalls], row[colStudentLogZ], row[colTeacherLogZ] = float64(t.RewardCalls), m.LogZ, math.NaN()
	if t.Teacher != nil {
		row[colTeacherLogZ] = t.Teacher.LogZValue()
	}
	copy(row[colELBO:], []float64{m.ELBO, m.ELBOIS, m.EUBO, m.W2, float64(m.Samples)})
	for j, name := range means {
		if f.nanMeans&(1<<j) != 0 {
			row[slices.Index(curveColumns, name)] = math.NaN()
		}
	}
	f.nanMeans, f.lastELBO = 0, m.ELBO
	return nil
}

// Finish runs the final evaluation on FinalSamples fresh and exact
// samples (and draws the Teacher's samples for the figures).
func (f *family) Finish(*run.Curve) (any, error) {
	t, n := f.t, f.st.FinalSamples
	exact := ExactSamples(t.Energy, n, f.exactRNG)
	m, x, err := f.ev.Evaluate(t.Energy, t.Proc, t.Student, n, exact, f.evalRNG)
	if err != nil {
		return nil, fmt.Errorf("diffusion: final evaluation: %w", err)
	}
	res := &f.res
	res.Trainer, res.Student, res.Exact = t, slices.Clone(x), exact
	if t.Teacher != nil {
		res.Teacher = t.Teacher.sample(t.Proc, min(n, 2000), f.evalRNG)
	}
	s := &res.Summary
	s.Task, s.Preset, s.Method, s.LocalSearch, s.Seed = f.st.Task, f.st.Preset, t.cfg.Method, t.cfg.LocalSearch, t.cfg.Seed
	s.RewardCalls, s.Threshold = t.RewardCalls, t.Threshold
	s.SetPrecision(t.cfg.Precision)
	s.ELBO, s.ELBOIS, s.LogZ, s.Samples = m.ELBO, m.ELBOIS, m.LogZ, m.Samples
	if !math.IsNaN(m.EUBO) {
		s.EUBO, s.W2 = &m.EUBO, &m.W2
	}
	if lz, ok := t.Energy.(target.LogZer); ok {
		s.TrueLogZ = run.Nullable(lz.LogZ()) // null where unknown (LGCP's NaN)
	}
	if exact == nil {
		s.Notes = append(s.Notes, "EUBO, W2 and MMD skipped: the energy has no exact sampler")
	}
	logW, _ := f.ev.LogWeights()
	var notes []string
	s.SuiteMetrics, notes = suiteMetrics(t.Energy, x, exact, logW, t.Proc.Dim)
	s.Notes = append(s.Notes, notes...)
	return s, nil
}

// Status is the progress bar's words: the last point's ELBO, the last
// iteration's loss and log Z.
func (f *family) Status() string {
	return fmt.Sprintf("ELBO %.3f | loss %.3g | logZ %.3f", f.lastELBO, f.last.StudentLoss, f.last.StudentLogZ)
}

// Recoverable reports the failures of the run's state (a non-finite
// value, an overflow, a failing energy) that a resume can continue from:
// the checkpoint holds the state before the failing iteration, or before
// the failed evaluation, which the resume does first.
func (f *family) Recoverable(err error) bool {
	var nf *NonFiniteError
	var re *RewardError
	var ge *GradientError
	var oe *OverflowError
	return errors.As(err, &nf) || errors.As(err, &re) || errors.As(err, &ge) || errors.As(err, &oe)
}

// Figures draws samples.png and curves.png.
func (f *family) Figures(dir string, c *run.Curve) error { return writeFigures(dir, f.t, &f.res, c) }

// Agents are the Student and, with the teacher method, the Teacher, their
// parameters under the reference state_dict's names (so {k[8:]: v for k
// in f if k.startswith("student.")} minus logZ loads into the reference
// GFN's networks).
func (f *family) Agents() []run.Agent {
	a := []run.Agent{f.t.Student.Checkpointed("student")}
	if f.t.Teacher != nil {
		a = append(a, f.t.Teacher.Checkpointed("teacher"))
	}
	return a
}

// Streams are the training streams (the main one and the Teacher step's)
// and the evaluations'.
func (f *family) Streams() []run.Stream {
	return []run.Stream{{Name: "train", Src: f.t.src}, {Name: "teacher", Src: f.t.teacherSrc},
		{Name: "eval", Src: f.evalSrc}, {Name: "exact", Src: f.exactSrc}}
}

// counters are the family's state besides the agents, the streams and the
// buffer.
type counters struct {
	Step        int      `json:"step"`
	RewardCalls int      `json:"reward_calls"`
	Threshold   float64  `json:"threshold"`
	NaNMeans    uint8    `json:"nan_means,omitempty"`
	LastELBO    *float64 `json:"last_elbo"`
}

// Save returns the counters and the replay buffer (tensors buffer.*).
func (f *family) Save() (run.State, error) {
	t := f.t
	js, err := json.Marshal(counters{t.Step, t.RewardCalls, t.Threshold, f.nanMeans, run.Nullable(f.lastELBO)})
	if err != nil {
		return run.State{}, fmt.Errorf("diffusion: checkpoint: %w", err)
	}
	var ts []safetensors.Tensor
	if t.buffer != nil {
		ts = t.buffer.Tensors("buffer.")
	}
	return run.State{JSON: js, Tensors: ts}, nil
}

// Restore sets what Save saved.
func (f *family) Restore(s run.State) error {
	var c counters
	if err := json.Unmarshal(s.JSON, &c); err != nil {
		return fmt.Errorf("diffusion: checkpoint state: %w", err)
	}
	t := f.t
	t.Step, t.RewardCalls, t.Threshold, f.nanMeans = c.Step, c.RewardCalls, c.Threshold, c.NaNMeans
	if c.LastELBO != nil {
		f.lastELBO = *c.LastELBO
	}
	if t.buffer != nil {
		if err := t.buffer.Restore("buffer.", s.Tensors); err != nil {
			return fmt.Errorf("diffusion: checkpoint: %w", err)
		}
	}
	return nil
}
