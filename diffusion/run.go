package diffusion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gfngo/gfn/target"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/progress"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
)

// RunOptions control Run's evaluation, checkpoints and outputs. The zero
// value evaluates as the reference code does and writes nothing.
type RunOptions struct {
	// OutDir receives metrics.csv, summary.json, the checkpoint and the
	// figures; empty writes nothing.
	OutDir string
	// Task names the energy in the outputs and the checkpoint (e.g.
	// "25gmm"); Preset the configuration's origin.
	Task, Preset string
	// EvalEvery is the number of iterations between curve points (0: 100);
	// a point is taken after iteration i when i mod EvalEvery = 0.
	EvalEvery int
	// EvalSamples is the number of fresh and exact samples of a curve
	// point (0: 2,000); FinalSamples of the final evaluation (0: 10,000).
	EvalSamples, FinalSamples int
	// CheckpointEvery writes a checkpoint every that many iterations
	// (0: only at the end); Resume continues from one.
	CheckpointEvery int
	// NoFigures skips the PNG figures.
	NoFigures bool
	// Progress, if set, receives a progress bar.
	Progress    io.Writer
	ProgressTTY bool
	// ResumeDriftClip, if > 0, is the drift bound of a resumed run from
	// its checkpoint's iteration on (Config.DriftClip): a run whose
	// samples overflowed continues with a bound. The checkpoint records
	// it. Run ignores it.
	ResumeDriftClip float64
	// afterCheckpoint, if set, is called after each periodic checkpoint
	// (tests stop a run there).
	afterCheckpoint func(step int) error
}

func (o RunOptions) withDefaults() RunOptions {
	if o.EvalEvery <= 0 {
		o.EvalEvery = 100
	}
	if o.EvalSamples <= 0 {
		o.EvalSamples = 2000
	}
	if o.FinalSamples <= 0 {
		o.FinalSamples = 10000
	}
	return o
}

// Point is one row of metrics.csv: the Student after iteration Step.
type Point struct {
	Step        int     `json:"step"`
	RewardCalls int     `json:"reward_calls"`
	StudentLoss float64 `json:"student_loss"` // mean over the iterations since the last point
	TeacherLoss float64 `json:"teacher_loss"`
	TeacherLogZ float64 `json:"teacher_logz"`
	Metrics
	WallSeconds float64 `json:"wall_seconds"`
	// StudentGradNorm and TeacherGradNorm are the means, over the
	// iterations since the last point, of each network's gradient norm
	// before any clipping (Iteration's; log Z excluded). They make an
	// agent's divergence visible in metrics.csv before its loss settles:
	// a step that moves the weights far shows here first. The Teacher's is
	// NaN without a Teacher. A run resumed from a checkpoint older than
	// these columns has NaN in its earlier rows, and the first row after
	// the resume averages only the iterations since the resume.
	StudentGradNorm float64 `json:"student_grad_norm"`
	TeacherGradNorm float64 `json:"teacher_grad_norm"`
}

// Summary is summary.json.
type Summary struct {
	Task        string  `json:"task"`
	Preset      string  `json:"preset,omitempty"`
	Method      Method  `json:"method"`
	LocalSearch bool    `json:"local_search,omitempty"`
	Seed        uint64  `json:"seed"`
	Steps       int     `json:"steps"`
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
	// Timings (seconds; per iteration in ms): training only, without the
	// curve's evaluations.
	WallSeconds    float64  `json:"wall_seconds"`
	TrainSeconds   float64  `json:"train_seconds"`
	EvalSeconds    float64  `json:"eval_seconds"`
	MsPerIterMean  float64  `json:"ms_per_iter_mean"`
	MsPerIterEarly float64  `json:"ms_per_iter_early"`
	MsPerIterLate  float64  `json:"ms_per_iter_late"`
	Resumed        int      `json:"resumed,omitempty"` // times the run was resumed
	Kernel         string   `json:"kernel"`
	Notes          []string `json:"notes,omitempty"`
}

// Result is what Run returns besides the files it writes.
type Result struct {
	Summary Summary
	Curve   []Point
	Trainer *Trainer
	// Student, Teacher and Exact are the final evaluation's samples (n×d;
	// Teacher nil without one, Exact nil without an exact sampler).
	Student, Teacher, Exact []float32
}

// runState is what a checkpoint holds besides tensors: enough to continue
// the run exactly.
type runState struct {
	Config      Config     `json:"config"`
	Task        string     `json:"task"`
	Preset      string     `json:"preset,omitempty"`
	Dim         int        `json:"dim"`
	Step        int        `json:"step"`
	RewardCalls int        `json:"reward_calls"`
	Threshold   float64    `json:"threshold"`
	RNG         []byte     `json:"rng"`
	TeacherRNG  []byte     `json:"teacher_rng"`
	EvalRNG     []byte     `json:"eval_rng"`
	ExactRNG    []byte     `json:"exact_rng"`
	Curve       []Point    `json:"-"` // tensor run.curve (NaN cells are not JSON)
	IterMs      []float64  `json:"-"` // tensor run.iter_ms
	EvalSeconds float64    `json:"eval_seconds"`
	WallSeconds float64    `json:"wall_seconds"`
	LossSums    [3]float64 `json:"loss_sums"` // Student, Teacher, count since the last point
	GradSums    [3]float64 `json:"grad_sums"` // Student's and Teacher's gradient norms, count since the last point
	Resumed     int        `json:"resumed"`
	// The evaluation and checkpoint settings, which a resumed run keeps.
	EvalEvery       int    `json:"eval_every"`
	EvalSamples     int    `json:"eval_samples"`
	FinalSamples    int    `json:"final_samples"`
	CheckpointEvery int    `json:"checkpoint_every"`
	NoFigures       bool   `json:"no_figures,omitempty"`
	Failed          string `json:"failed,omitempty"`
	// EvalPending: the evaluation after iteration Step−1 failed (the
	// checkpoint holds the evaluation stream from before it); a resume
	// does it first, so that no metrics row is lost.
	EvalPending bool `json:"eval_pending,omitempty"`
}

// runner is one run in progress.
type runner struct {
	ctx               context.Context
	opt               RunOptions
	t                 *Trainer
	st                runState
	ev                Evaluator
	evalSrc, exactSrc *rand.PCG
	evalRNG, exactRNG *rand.Rand
	exact             []float32 // the curve's fixed exact samples
	clock             run.Clock
}

// Run trains cfg on e until its iterations are done (or ctx is
// cancelled: the error is ctx's, and the last periodic checkpoint
// remains), evaluates and writes the outputs.
func Run(ctx context.Context, e energy.Energy, cfg Config, opt RunOptions) (*Result, error) {
	t, err := New(e, cfg)
	if err != nil {
		return nil, err
	}
	r := newRunner(ctx, t, opt)
	return r.run()
}

func newRunner(ctx context.Context, t *Trainer, opt RunOptions) *runner {
	opt = opt.withDefaults()
	r := &runner{ctx: ctx, opt: opt, t: t, clock: run.Clock{Start: time.Now()}}
	seed := t.Cfg.Seed
	r.evalSrc, r.exactSrc = rand.NewPCG(seed, 0xe7a1), rand.NewPCG(seed, 0xe8ac7)
	r.evalRNG, r.exactRNG = rand.New(r.evalSrc), rand.New(r.exactSrc)
	r.exact = ExactSamples(t.Energy, opt.EvalSamples, r.exactRNG)
	r.st.Config, r.st.Task, r.st.Preset, r.st.Dim = t.Cfg, opt.Task, opt.Preset, t.Proc.Dim
	r.st.EvalEvery, r.st.EvalSamples, r.st.FinalSamples = opt.EvalEvery, opt.EvalSamples, opt.FinalSamples
	r.st.CheckpointEvery, r.st.NoFigures = opt.CheckpointEvery, opt.NoFigures
	return r
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
		bar = progress.New(opt.Progress, "train", t.Cfg.Iterations, opt.ProgressTTY)
		bar.From(t.Step)
	}
	lastELBO := math.NaN()
	if r.st.EvalPending {
		if _, err := r.point(); err != nil {
			return nil, r.failed(err)
		}
	}
	if n := len(r.st.Curve); n > 0 {
		lastELBO = r.st.Curve[n-1].ELBO
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
		r.st.IterMs = append(r.st.IterMs, float64(time.Since(t0).Microseconds())/1000)
		r.st.LossSums[0] += it.StudentLoss
		if !math.IsNaN(it.TeacherLoss) {
			r.st.LossSums[1] += it.TeacherLoss
		}
		r.st.LossSums[2]++
		r.st.GradSums[0] += it.StudentGradNorm
		if !math.IsNaN(it.TeacherGradNorm) {
			r.st.GradSums[1] += it.TeacherGradNorm
		}
		r.st.GradSums[2]++
		if (t.Step-1)%opt.EvalEvery == 0 {
			p, err := r.point()
			if err != nil {
				return nil, r.failed(err)
			}
			lastELBO = p.ELBO
		}
		if opt.OutDir != "" && opt.CheckpointEvery > 0 && t.Step%opt.CheckpointEvery == 0 && !t.Done() {
			if err := r.checkpoint(); err != nil {
				return nil, err
			}
			if opt.afterCheckpoint != nil {
				if err := opt.afterCheckpoint(t.Step); err != nil {
					return nil, err
				}
			}
		}
		if bar != nil {
			bar.Update(t.Step, fmt.Sprintf("ELBO %.3f | loss %.3g | logZ %.3f", lastELBO, it.StudentLoss, it.StudentLogZ))
		}
	}
	if bar != nil {
		bar.Finish()
		fmt.Fprintf(opt.Progress, "evaluating: %d fresh samples\n", opt.FinalSamples)
	}
	return r.finish()
}

// failed returns err, after a checkpoint when err is a failure of the
// run's state (a non-finite value, an overflow, a failing energy) that a
// resume can continue from: the checkpoint holds the state before the
// failing iteration, or, when an evaluation failed, before that
// evaluation (which the resume does first).
func (r *runner) failed(err error) error {
	var nf *NonFiniteError
	var re *RewardError
	var ge *GradientError
	var oe *OverflowError
	if (errors.As(err, &nf) || errors.As(err, &re) || errors.As(err, &ge) || errors.As(err, &oe)) && r.opt.OutDir != "" {
		r.st.Failed = err.Error()
		return run.SaveFailure(err, r.checkpoint, "iteration", r.t.Step, r.opt.OutDir)
	}
	return err
}

// point evaluates the Student after iteration t.Step-1 and appends a row.
// A failed evaluation leaves the evaluation stream as it was and marks
// itself pending for a resume.
func (r *runner) point() (Point, error) {
	t := r.t
	t0 := time.Now()
	before := *r.evalSrc
	m, _, err := r.ev.Evaluate(t.Energy, t.Proc, t.Student, r.opt.EvalSamples, r.exact, r.evalRNG)
	if err != nil {
		*r.evalSrc, r.st.EvalPending = before, true
		return Point{}, fmt.Errorf("diffusion: evaluation after iteration %d: %w", t.Step-1, err)
	}
	r.st.EvalPending = false
	r.st.EvalSeconds += time.Since(t0).Seconds()
	n := r.st.LossSums[2]
	g := r.st.GradSums[2]
	p := Point{Step: t.Step - 1, RewardCalls: t.RewardCalls, StudentLoss: r.st.LossSums[0] / n,
		TeacherLoss: math.NaN(), TeacherLogZ: math.NaN(), Metrics: m, WallSeconds: r.clock.Seconds(),
		StudentGradNorm: r.st.GradSums[0] / g, TeacherGradNorm: math.NaN()}
	if t.Teacher != nil {
		p.TeacherLoss = r.st.LossSums[1] / n
		p.TeacherLogZ = float64(t.Teacher.LogZ.Value[0])
		p.TeacherGradNorm = r.st.GradSums[1] / g
	}
	r.st.LossSums, r.st.GradSums = [3]float64{}, [3]float64{}
	r.st.Curve = append(r.st.Curve, p)
	return p, nil
}

// finish runs the final evaluation and writes the outputs.
func (r *runner) finish() (*Result, error) {
	t, opt := r.t, r.opt
	res := &Result{Trainer: t, Curve: r.st.Curve}
	evalBefore, exactBefore := *r.evalSrc, *r.exactSrc
	exact := ExactSamples(t.Energy, opt.FinalSamples, r.exactRNG)
	m, x, err := r.ev.Evaluate(t.Energy, t.Proc, t.Student, opt.FinalSamples, exact, r.evalRNG)
	if err != nil {
		// A resume redoes the final evaluation from the same streams.
		*r.evalSrc, *r.exactSrc = evalBefore, exactBefore
		return nil, r.failed(fmt.Errorf("diffusion: final evaluation: %w", err))
	}
	res.Student, res.Exact = append([]float32(nil), x...), exact
	if t.Teacher != nil {
		var s Sampler
		var b Batch
		s.Forward(t.Proc, t.Teacher.Net, min(opt.FinalSamples, 2000), SampleOptions{}, r.evalRNG, &b)
		res.Teacher = append([]float32(nil), b.Final()...)
	}
	s := &res.Summary
	s.Task, s.Preset, s.Method, s.LocalSearch, s.Seed = opt.Task, opt.Preset, t.Cfg.Method, t.Cfg.LocalSearch, t.Cfg.Seed
	s.Steps, s.RewardCalls, s.Threshold = t.Step, t.RewardCalls, t.Threshold
	s.ELBO, s.ELBOIS, s.LogZ, s.Samples = m.ELBO, m.ELBOIS, m.LogZ, m.Samples
	if !math.IsNaN(m.EUBO) {
		s.EUBO, s.W2 = &m.EUBO, &m.W2
	}
	if lz, ok := t.Energy.(target.LogZer); ok {
		v := lz.LogZ()
		s.TrueLogZ = &v
	}
	s.MsPerIterEarly, s.MsPerIterLate, s.MsPerIterMean = run.IterStats(r.st.IterMs)
	for _, ms := range r.st.IterMs {
		s.TrainSeconds += ms / 1000
	}
	s.EvalSeconds, s.Resumed, s.Kernel = r.st.EvalSeconds, r.st.Resumed, string(kernel.Name())
	if exact == nil {
		s.Notes = append(s.Notes, "EUBO and W2 skipped: the energy has no exact sampler")
	}
	s.WallSeconds = r.clock.Seconds()
	if opt.OutDir != "" {
		if err := r.writeOutputs(res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// CurveHeader is the header of metrics.csv.
var CurveHeader = []string{"step", "reward_calls", "student_loss", "teacher_loss", "student_logz", "teacher_logz",
	"elbo", "elbo_is", "eubo", "w2", "samples", "student_grad_norm", "teacher_grad_norm", "wall_seconds"}

// WriteCurve writes the curve as CSV (empty cells for missing values;
// numbers to 10 significant digits).
func WriteCurve(w io.Writer, curve []Point) error {
	f := func(v float64) string { return run.Cell(v, 10) }
	rows := make([][]string, len(curve))
	for i, p := range curve {
		rows[i] = []string{strconv.Itoa(p.Step), strconv.Itoa(p.RewardCalls), f(p.StudentLoss), f(p.TeacherLoss),
			f(p.LogZ), f(p.TeacherLogZ), f(p.ELBO), f(p.ELBOIS), f(p.EUBO), f(p.W2),
			strconv.Itoa(p.Samples), f(p.StudentGradNorm), f(p.TeacherGradNorm), f(p.WallSeconds)}
	}
	return run.WriteCSV(w, CurveHeader, rows)
}

// writeOutputs writes metrics.csv, summary.json and the final checkpoint
// (run.WriteOutputs), then the figures.
func (r *runner) writeOutputs(res *Result) error {
	dir := r.opt.OutDir
	if err := run.WriteOutputs(dir, func(w io.Writer) error { return WriteCurve(w, res.Curve) }, res.Summary, r.checkpoint); err != nil {
		return err
	}
	if !r.opt.NoFigures {
		if err := writeFigures(dir, r.t, res); err != nil {
			return err
		}
	}
	return nil
}

// curveRow and pointOf convert a Point to and from a row of float64s (the
// checkpoint's run.curve tensor).
func curveRow(p Point) []float64 {
	return []float64{float64(p.Step), float64(p.RewardCalls), p.StudentLoss, p.TeacherLoss, p.TeacherLogZ,
		p.ELBO, p.ELBOIS, p.EUBO, p.W2, p.LogZ, float64(p.Samples), p.WallSeconds, p.StudentGradNorm, p.TeacherGradNorm}
}

// curveCols is the width of a run.curve row; oldCurveCols that of
// checkpoints written before the gradient-norm columns, which still resume.
const (
	curveCols    = 14
	oldCurveCols = 12
)

func pointOf(r []float64) Point {
	p := Point{Step: int(r[0]), RewardCalls: int(r[1]), StudentLoss: r[2], TeacherLoss: r[3], TeacherLogZ: r[4],
		Metrics: Metrics{ELBO: r[5], ELBOIS: r[6], EUBO: r[7], W2: r[8], LogZ: r[9], Samples: int(r[10])}, WallSeconds: r[11],
		StudentGradNorm: math.NaN(), TeacherGradNorm: math.NaN()}
	if len(r) >= curveCols {
		p.StudentGradNorm, p.TeacherGradNorm = r[12], r[13]
	}
	return p
}

// MarshalJSON writes every field of the point (NaN as null); without it
// the embedded Metrics' method would stand for the whole point.
func (p Point) MarshalJSON() ([]byte, error) {
	m, err := json.Marshal(p.Metrics)
	if err != nil {
		return nil, err
	}
	f := run.Nullable
	head, err := json.Marshal(struct {
		Step        int      `json:"step"`
		RewardCalls int      `json:"reward_calls"`
		StudentLoss *float64 `json:"student_loss"`
		TeacherLoss *float64 `json:"teacher_loss"`
		TeacherLogZ *float64 `json:"teacher_logz"`
		WallSeconds float64  `json:"wall_seconds"`
		StudentGrad *float64 `json:"student_grad_norm"`
		TeacherGrad *float64 `json:"teacher_grad_norm"`
	}{p.Step, p.RewardCalls, f(p.StudentLoss), f(p.TeacherLoss), f(p.TeacherLogZ), p.WallSeconds,
		f(p.StudentGradNorm), f(p.TeacherGradNorm)})
	if err != nil {
		return nil, err
	}
	// Join the two objects: {head..., metrics...}.
	return append(append(head[:len(head)-1], ','), m[1:]...), nil
}
