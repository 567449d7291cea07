package train

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/gfngo/gfn/target"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/internal/procstat"
	"github.com/gfngo/gfn/metrics"
	"github.com/gfngo/gfn/progress"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/safetensors"
)

// RunOptions control Run's evaluation, checkpoints and outputs.
type RunOptions struct {
	// OutDir receives metrics.csv, summary.json and the checkpoint; empty
	// writes nothing.
	OutDir string
	// EnvSpec is stored in the checkpoint to rebuild the environment
	// (Load's and Resume's builder receives its JSON).
	EnvSpec any
	// EvalEvery is the number of iterations between curve points
	// (0: 50 points over the run).
	EvalEvery int
	// EvalSamples is the number of fresh Student samples for the final
	// empirical L1 (the paper uses 100,000); 0 skips it.
	EvalSamples int
	// CurveExactLimit is the largest number of states for which exact
	// distances are computed at every curve point (0: 200,000); the final
	// evaluation uses metrics.MaxExactStates.
	CurveExactLimit int
	// CurveSamples is the number of fresh Student samples for the
	// empirical L1 at each curve point when exact distances are not
	// computed there but the target is known (0: 5,000; <0: none).
	CurveSamples int
	// CheckpointEvery, if positive, writes a checkpoint into OutDir after
	// every that many iterations (and when ctx is cancelled), holding the
	// state after that iteration: Resume continues from it. 0 writes only
	// the final checkpoint, with the outputs.
	CheckpointEvery int
	// ResumeFrom, if set, is a run directory whose checkpoint Run
	// continues instead of starting afresh. The checkpoint must be of the
	// same environment (its String, and EnvSpec when both are set) and
	// settings (every Config field); errors name the first difference.
	// There, options left 0 take the checkpointed run's values: EvalEvery,
	// CurveExactLimit and CurveSamples may not differ from them (the curve
	// would change); EvalSamples may (it only affects the final
	// evaluation; <0 skips it), and so may CheckpointEvery. A nil EnvSpec
	// keeps the checkpoint's.
	ResumeFrom string
	// Progress, if set, receives a progress bar.
	Progress    io.Writer
	ProgressTTY bool

	// afterCheckpoint, if set, is called after each periodic checkpoint;
	// an error stops the run there (tests simulate a kill with it).
	afterCheckpoint func(step int) error
}

// Point is one row of the training curve.
type Point struct {
	Step         int                `json:"step"`
	RewardCalls  int                `json:"reward_calls"`
	GradSteps    int                `json:"grad_steps"`
	Modes        int                `json:"modes"`
	StudentLoss  float64            `json:"student_loss"` // mean over the iterations since the last point
	TeacherLoss  float64            `json:"teacher_loss"`
	StudentLogZ  float64            `json:"student_logz"`
	TeacherLogZ  float64            `json:"teacher_logz"`
	StudentExact *metrics.Distances `json:"student_exact,omitempty"`
	TeacherExact *metrics.Distances `json:"teacher_exact,omitempty"`
	// StudentEmpiricalL1 is from RunOptions.CurveSamples fresh samples
	// (NaN where not computed).
	StudentEmpiricalL1 float64 `json:"student_empirical_l1"`
	WallSeconds        float64 `json:"wall_seconds"`
}

// Summary is summary.json.
type Summary struct {
	Env            string             `json:"env"`
	Method         Method             `json:"method"`
	Seed           uint64             `json:"seed"`
	Steps          int                `json:"steps"`
	GradSteps      int                `json:"grad_steps"`
	RewardCalls    int                `json:"reward_calls"`
	ModesFound     int                `json:"modes_found"`
	ModesTotal     int                `json:"modes_total,omitempty"`
	WallSeconds    float64            `json:"wall_seconds"`
	TrainSeconds   float64            `json:"train_seconds"`
	MsPerIterEarly float64            `json:"ms_per_iter_early"` // first 10% of iterations
	MsPerIterLate  float64            `json:"ms_per_iter_late"`  // last 10%
	MsPerIterMean  float64            `json:"ms_per_iter_mean"`
	StudentLogZ    float64            `json:"student_logz"`
	TrueLogZ       *float64           `json:"true_logz,omitempty"`
	EmpiricalL1    *float64           `json:"empirical_l1,omitempty"`
	EvalSamples    int                `json:"eval_samples"`
	StudentExact   *metrics.Distances `json:"student_exact,omitempty"`
	TeacherExact   *metrics.Distances `json:"teacher_exact,omitempty"`
	Notes          []string           `json:"notes,omitempty"`
	Kernel         string             `json:"kernel"`
	// With Teachers: the modes found by the Student's own samples, by
	// each Teacher's, and by each Teacher's and no other Teacher's — how
	// the Teachers divide the space. A run resumed from a checkpoint
	// written before these were recorded counts only the modes found
	// after it.
	StudentModes     int   `json:"student_modes,omitempty"`
	TeacherModes     []int `json:"teacher_modes,omitempty"`
	TeacherOnlyModes []int `json:"teacher_only_modes,omitempty"`
	// BufferEntries is what the replay buffer holds at the end (its
	// memory is bounded by this, not by its capacity).
	BufferEntries int `json:"buffer_entries,omitempty"`
	// PeakRSSMiB is the process's peak resident set at the end (Linux;
	// omitted elsewhere): a run's memory, buffer and evaluation included.
	PeakRSSMiB float64 `json:"peak_rss_mib,omitempty"`
}

// Result is what Run returns besides the files it writes.
type Result struct {
	Summary Summary
	Curve   []Point
	Trainer *Trainer
	// Target, StudentEmpirical and TeacherExact are distributions over
	// terminal indices (nil when the env is not enumerable or too large).
	Target, StudentEmpirical, StudentExact, TeacherExact []float64
}

// Run trains until the budget is spent, evaluates, and writes the outputs
// (metrics.csv, summary.json, then the final checkpoint). A cancelled ctx
// stops it between iterations with ctx's error; with CheckpointEvery > 0
// it first checkpoints the last iteration done. With opt.ResumeFrom it
// continues a checkpointed run, and ends with the same parameters,
// counters, metrics.csv and summary.json as the run never interrupted,
// wall-clock times aside (wall_seconds, train_seconds, ms_per_iter_*).
func Run(ctx context.Context, env discrete.Env, cfg Config, opt RunOptions) (*Result, error) {
	if opt.CheckpointEvery < 0 {
		return nil, fmt.Errorf("train: checkpoint interval %d must be >= 0 (0: only the final checkpoint)", opt.CheckpointEvery)
	}
	if opt.CheckpointEvery > 0 && opt.OutDir == "" {
		return nil, fmt.Errorf("train: checkpoint interval %d needs an output directory", opt.CheckpointEvery)
	}
	// An unusable directory is reported now, not at the first checkpoint.
	if opt.OutDir != "" {
		if err := safefile.CheckDir(opt.OutDir); err != nil {
			return nil, err
		}
	}
	spec, err := json.Marshal(opt.EnvSpec)
	if err != nil {
		return nil, fmt.Errorf("train: environment spec %v cannot be stored: %w", opt.EnvSpec, err)
	}
	var st *trainState
	var ts []safetensors.Tensor
	if opt.ResumeFrom != "" {
		if st, ts, err = readResumable(opt.ResumeFrom); err != nil {
			return nil, err
		}
		if err := st.compatible(opt.ResumeFrom, env, cfg, spec); err != nil {
			return nil, err
		}
		if opt.EnvSpec == nil {
			spec = st.Env
		}
		if opt, err = resumeOptions(opt, st.Run); err != nil {
			return nil, err
		}
	}
	t, err := New(env, cfg)
	if err != nil {
		return nil, err
	}
	r := &runner{ctx: ctx, env: env, opt: opt, spec: spec, t: t, clock: run.Clock{Start: time.Now()}}
	if err := r.setup(); err != nil {
		return nil, err
	}
	if st != nil {
		if err := r.restore(st, ts); err != nil {
			return nil, err
		}
	}
	return r.run()
}

// Resume continues the run checkpointed in dir (written by Run with
// CheckpointEvery, or by a cancelled Run), with the environment build
// makes from the stored spec and the stored settings; opt's evaluation
// options follow RunOptions.ResumeFrom's rules, an empty opt.OutDir
// means dir, and a nil opt.EnvSpec the stored spec. The result equals the
// uninterrupted run's, wall-clock times aside. A finished run's
// checkpoint is an error saying so.
func Resume(ctx context.Context, dir string, build func(spec json.RawMessage) (discrete.Env, error), opt RunOptions) (*Result, error) {
	st, _, err := readResumable(dir)
	if err != nil {
		return nil, err
	}
	env, err := build(st.Env)
	if err != nil {
		return nil, err
	}
	if opt.OutDir == "" {
		opt.OutDir = dir
	}
	opt.ResumeFrom = dir
	return Run(ctx, env, st.Train, opt)
}

// readResumable reads dir's checkpoint and checks that a run can continue
// from it.
func readResumable(dir string) (*trainState, []safetensors.Tensor, error) {
	st, ts, err := readCheckpoint(dir)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case st.Finished:
		return nil, nil, fmt.Errorf("train: the run in %s is finished (%d iterations, %d of %d reward calls): nothing to resume", dir, st.Step, st.RewardCalls, st.Train.RewardCalls)
	case st.Run == nil:
		return nil, nil, fmt.Errorf("train: the checkpoint in %s has no run record (it was written by Trainer.Save or before checkpoints were resumable): it cannot be resumed", dir)
	}
	return st, ts, nil
}

// compatible reports the first difference between the checkpointed run
// and the one asked to continue it.
func (st *trainState) compatible(dir string, env discrete.Env, cfg Config, spec json.RawMessage) error {
	if name := fmt.Sprint(env); name != st.EnvName {
		return fmt.Errorf("train: resume from %s: the checkpoint is of environment %s, this run of %s", dir, st.EnvName, name)
	}
	if !jsonNull(spec) && !jsonNull(st.Env) {
		a, b := canonicalJSON(st.Env), canonicalJSON(spec)
		if !bytes.Equal(a, b) {
			return fmt.Errorf("train: resume from %s: the checkpoint's environment spec is %s, this run's %s", dir, a, b)
		}
	}
	if field, a, b := configDiff(st.Train, cfg); field != "" {
		return fmt.Errorf("train: resume from %s: setting %s is %s in the checkpoint and %s in this run", dir, field, a, b)
	}
	return nil
}

func jsonNull(b json.RawMessage) bool { return len(b) == 0 || string(b) == "null" }

// canonicalJSON re-encodes b with sorted keys and no spaces.
func canonicalJSON(b json.RawMessage) []byte {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	c, _ := json.Marshal(v)
	return c
}

// configDiff names the first setting (by its config.json name) in which a
// and b differ, with both values; "" if none.
func configDiff(a, b Config) (field, va, vb string) {
	var ma, mb map[string]json.RawMessage
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	json.Unmarshal(ja, &ma)
	json.Unmarshal(jb, &mb)
	keys := slices.Sorted(maps.Keys(ma))
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		x, y := string(ma[k]), string(mb[k])
		if x != y {
			if x == "" {
				x = "unset"
			}
			if y == "" {
				y = "unset"
			}
			return k, x, y
		}
	}
	return "", "", ""
}

// resumeOptions applies the resumed run's evaluation settings to opt: 0
// takes them, another curve setting is an error.
func resumeOptions(opt RunOptions, rec *runRecord) (RunOptions, error) {
	if opt.EvalEvery < 0 {
		opt.EvalEvery = 0 // the default, as in a fresh run
	}
	for _, o := range []struct {
		name     string
		v        *int
		resolved int
		had      int
	}{
		{"eval-every", &opt.EvalEvery, opt.EvalEvery, rec.EvalEvery},
		{"curve exact limit", &opt.CurveExactLimit, opt.CurveExactLimit, rec.CurveExactLimit},
		{"curve samples", &opt.CurveSamples, resolveCurveSamples(opt.CurveSamples), rec.CurveSamples},
	} {
		if *o.v != 0 && o.resolved != o.had {
			return opt, fmt.Errorf("train: resume from %s: %s %d differs from the run's %d (the curve would change; 0 keeps the run's)", opt.ResumeFrom, o.name, *o.v, o.had)
		}
		*o.v = o.had
	}
	if opt.EvalSamples == 0 {
		opt.EvalSamples = rec.EvalSamples
	}
	if opt.CheckpointEvery == 0 && opt.OutDir != "" {
		opt.CheckpointEvery = rec.CheckpointEvery
	}
	return opt, nil
}

// resolveCurveSamples applies CurveSamples' default (0: 5,000) and
// writes "none" as -1.
func resolveCurveSamples(n int) int {
	switch {
	case n == 0:
		return 5000
	case n < 0:
		return -1
	}
	return n
}

// runner is one run in progress: the trainer and everything besides it
// that the outputs depend on, all of which a checkpoint stores.
type runner struct {
	ctx  context.Context
	env  discrete.Env
	opt  RunOptions
	spec json.RawMessage
	t    *Trainer
	res  *Result

	enum         metrics.Enumerable
	notes        []string
	every        int
	limit        int
	curveExact   bool
	curveSamples int

	evalSrc *rand.PCG
	evalRNG *rand.Rand // the curve's samples: a stream apart from training

	iterDur      []time.Duration
	sLoss, tLoss float64 // loss sums since the last curve point
	nLoss        int
	clock        run.Clock // Before: wall-clock seconds before a resume
	resumed      int
	checkpointed int // the step of the last checkpoint written
}

// setup resolves the evaluation settings and computes the target.
func (r *runner) setup() error {
	t, env, opt := r.t, r.env, r.opt
	steps := t.Cfg.Steps()
	r.every = opt.EvalEvery
	if r.every <= 0 {
		r.every = max(steps/50, 1)
	}
	r.limit = opt.CurveExactLimit
	if r.limit == 0 {
		r.limit = 200_000
	}
	r.enum, _ = env.(metrics.Enumerable)
	r.res = &Result{Trainer: t}
	if r.enum != nil {
		if n := r.enum.NumStates(); n >= 0 && n <= metrics.MaxExactStates {
			p, logZ, err := metrics.Target(r.enum)
			if err != nil {
				return err
			}
			r.res.Target = p
			r.res.Summary.TrueLogZ = &logZ
		} else {
			r.notes = append(r.notes, fmt.Sprintf("exact metrics skipped: %v terminal states exceed the enumeration limit", r.enum.NumTerminals()))
		}
	} else {
		r.notes = append(r.notes, "exact metrics skipped: the environment cannot be enumerated")
	}
	r.curveExact = r.res.Target != nil && r.enum.NumStates() <= r.limit
	r.curveSamples = resolveCurveSamples(opt.CurveSamples)
	if r.res.Target != nil && !r.curveExact {
		r.notes = append(r.notes, fmt.Sprintf("exact metrics computed only at the end: %d states exceed the per-point limit %d; curves use the empirical L1 of %d samples", r.enum.NumStates(), r.limit, max(r.curveSamples, 0)))
	}
	r.evalSrc = rand.NewPCG(t.Cfg.Seed, evalStream)
	r.evalRNG = rand.New(r.evalSrc)
	r.iterDur = make([]time.Duration, 0, steps)
	return nil
}

// point appends the curve point after the current iteration.
func (r *runner) point() {
	t, env, res := r.t, r.env, r.res
	p := Point{Step: t.Step, RewardCalls: t.RewardCalls, GradSteps: t.GradSteps, Modes: len(t.ModesFound),
		StudentLoss: r.sLoss / float64(max(r.nLoss, 1)), TeacherLoss: math.NaN(),
		StudentLogZ: t.Student.LogZEstimate(env), TeacherLogZ: math.NaN(), WallSeconds: r.clock.Seconds()}
	if t.Teacher != nil {
		p.TeacherLoss = r.tLoss / float64(max(r.nLoss, 1))
		p.TeacherLogZ = t.Teacher.LogZEstimate(env)
	}
	if r.nLoss == 0 {
		p.StudentLoss, p.TeacherLoss = math.NaN(), math.NaN()
	}
	p.StudentEmpiricalL1 = math.NaN()
	switch {
	case r.curveExact:
		p.StudentExact, p.TeacherExact = bothExact(r.enum, t, res.Target)
	case res.Target != nil && r.curveSamples > 0:
		// Evaluation samples use their own stream, so curves do not
		// change the training run.
		if emp, err := metrics.Empirical(r.enum, sampleTerminalsRNG(t, r.curveSamples, r.evalRNG), r.curveSamples); err == nil {
			p.StudentEmpiricalL1 = metrics.Compare(emp, res.Target).L1
		}
	}
	res.Curve = append(res.Curve, p)
	r.sLoss, r.tLoss, r.nLoss = 0, 0, 0
}

// run trains to the end of the budget, evaluates and writes the outputs.
func (r *runner) run() (*Result, error) {
	t, env, opt, res := r.t, r.env, r.opt, r.res
	var bar *progress.Bar
	if opt.Progress != nil {
		bar = progress.New(opt.Progress, "train", t.Cfg.Steps(), opt.ProgressTTY)
		bar.From(t.Step)
	}
	if len(res.Curve) == 0 {
		r.point()
	}
	for !t.Done() {
		if err := r.ctx.Err(); err != nil {
			if opt.CheckpointEvery > 0 && r.checkpointed != t.Step {
				if cerr := r.checkpoint(false); cerr != nil {
					return nil, run.CheckpointFailed(err, cerr)
				}
			}
			return nil, err
		}
		t0 := time.Now()
		it, err := t.Iterate()
		if err != nil {
			return nil, fmt.Errorf("train: step %d: %w", t.Step, err)
		}
		d := time.Since(t0)
		r.iterDur = append(r.iterDur, d)
		r.sLoss += it.StudentLoss
		if t.Teacher != nil {
			r.tLoss += it.TeacherLoss
		}
		r.nLoss++
		if t.Step%r.every == 0 || t.Done() {
			r.point()
		}
		if opt.CheckpointEvery > 0 && t.Step%opt.CheckpointEvery == 0 && !t.Done() {
			if err := r.checkpoint(false); err != nil {
				return nil, err
			}
			if opt.afterCheckpoint != nil {
				if err := opt.afterCheckpoint(t.Step); err != nil {
					return nil, err
				}
			}
		}
		if bar != nil {
			bar.Update(t.Step, fmt.Sprintf("modes %d | loss %.3g | logZ %.3f", len(t.ModesFound), it.StudentLoss, it.StudentLogZ))
		}
	}
	if bar != nil {
		bar.Finish()
	}

	s := &res.Summary
	s.Env, s.Method, s.Seed = fmt.Sprint(env), t.Cfg.Method, t.Cfg.Seed
	s.Steps, s.GradSteps, s.RewardCalls, s.ModesFound = t.Step, t.GradSteps, t.RewardCalls, len(t.ModesFound)
	if t.ModesBy != nil {
		s.StudentModes, s.TeacherModes, s.TeacherOnlyModes = modeShares(t.ModesBy, len(t.Teachers))
	}
	if nm, ok := env.(target.Moder); ok {
		s.ModesTotal = nm.NumModes()
	}
	var trainTime time.Duration
	for _, d := range r.iterDur {
		trainTime += d
	}
	s.TrainSeconds = trainTime.Seconds()
	s.MsPerIterEarly, s.MsPerIterLate, s.MsPerIterMean = run.IterStats(r.iterDur)
	s.StudentLogZ = t.Student.LogZEstimate(env)
	s.Kernel = string(kernel.Name())

	// Final evaluation.
	enum := r.enum
	if res.Target != nil {
		var wg sync.WaitGroup
		if t.Teacher != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res.TeacherExact = mustTerminating(enum, t.Teacher)
			}()
		}
		res.StudentExact = mustTerminating(enum, t.Student)
		wg.Wait()
		d := metrics.Compare(res.StudentExact, res.Target)
		s.StudentExact = &d
		if t.Teacher != nil {
			d := metrics.Compare(res.TeacherExact, res.Target)
			s.TeacherExact = &d
		}
	}
	if opt.EvalSamples > 0 && res.Target != nil {
		if bar != nil {
			fmt.Fprintf(opt.Progress, "evaluating: %d fresh Student samples\n", opt.EvalSamples)
		}
		xs := sampleTerminals(t, opt.EvalSamples)
		emp, err := metrics.Empirical(enum, xs, opt.EvalSamples)
		if err != nil {
			return nil, err
		}
		res.StudentEmpirical = emp
		l1 := metrics.Compare(emp, res.Target).L1
		s.EmpiricalL1 = &l1
		s.EvalSamples = opt.EvalSamples
	}
	s.Notes = r.notes
	s.WallSeconds = r.clock.Seconds()
	if t.buffer != nil {
		s.BufferEntries = t.buffer.Len()
	}
	if m := procstat.PeakRSSMiB(); !math.IsNaN(m) {
		s.PeakRSSMiB = m
	}
	if opt.OutDir != "" {
		if err := r.writeOutputs(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// sampleTerminals draws n fresh Student samples (no exploration) in batches
// of 1000, returning their terminal states.
func sampleTerminals(t *Trainer, n int) []int32 { return sampleTerminalsRNG(t, n, t.rng) }

// sampleTerminalsRNG draws the batches on up to GOMAXPROCS goroutines, each
// with its own copy of the Student's buffers. Batch i uses its own random
// stream, seeded from rng in batch order, and lands at its own place, so
// the result does not depend on the number of goroutines.
func sampleTerminalsRNG(t *Trainer, n int, rng *rand.Rand) []int32 {
	return sampleTerminalsWorkers(t, n, rng, runtime.GOMAXPROCS(0))
}

func sampleTerminalsWorkers(t *Trainer, n int, rng *rand.Rand, workers int) []int32 {
	const batch = 1000
	w := t.Env.StateLen()
	xs := make([]int32, n*w)
	batches := (n + batch - 1) / batch
	seeds := make([]uint64, batches)
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}
	model := t.Student.Model
	mlp, ok := model.(*discrete.MLPModel)
	if !ok {
		workers = 1 // no way to copy the model's buffers
	}
	workers = max(min(workers, batches), 1)
	var wg sync.WaitGroup
	for k := range workers {
		m := model
		if k > 0 {
			m = mlp.Clone()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := discrete.NewSampler(t.Env)
			var tr discrete.Trajectories
			for i := k; i < batches; i += workers {
				b := min(batch, n-i*batch)
				s.Forward(m, b, discrete.SampleOptions{}, rand.New(rand.NewPCG(seeds[i], uint64(i))), &tr)
				copy(xs[i*batch*w:], tr.Final[:b*w])
			}
		}()
	}
	wg.Wait()
	return xs
}

// Sample draws n terminal states from the Student (no exploration).
func (t *Trainer) Sample(n int) []int32 { return sampleTerminals(t, n) }

func mustTerminating(env metrics.Enumerable, a *Agent) []float64 {
	p, err := metrics.Terminating(env, a.Model)
	if err != nil { // sizes were checked by Target
		panic(err)
	}
	return p
}

func exactDistances(env metrics.Enumerable, a *Agent, target []float64) *metrics.Distances {
	d := metrics.Compare(mustTerminating(env, a), target)
	return &d
}

// bothExact computes the Student's and (if any) the Teacher's exact
// distances, side by side: the two models share nothing.
func bothExact(env metrics.Enumerable, t *Trainer, target []float64) (student, teacher *metrics.Distances) {
	var wg sync.WaitGroup
	if t.Teacher != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			teacher = exactDistances(env, t.Teacher, target)
		}()
	}
	student = exactDistances(env, t.Student, target)
	wg.Wait()
	return student, teacher
}

// CurveHeader is the header of metrics.csv.
var CurveHeader = []string{"step", "reward_calls", "grad_steps", "modes", "student_loss", "teacher_loss",
	"student_logz", "teacher_logz", "student_l1", "student_tv", "student_kl", "teacher_l1", "teacher_tv", "teacher_kl",
	"student_empirical_l1", "wall_seconds"}

// fmtF formats a curve number: 8 significant digits, empty for NaN.
func fmtF(v float64) string { return run.Cell(v, 8) }

func distCols(d *metrics.Distances) []string {
	if d == nil {
		return []string{"", "", ""}
	}
	return []string{fmtF(d.L1), fmtF(d.TV), fmtF(d.KL)}
}

// WriteCurve writes the curve as CSV (empty cells for missing values;
// numbers to 8 significant digits).
func WriteCurve(w io.Writer, curve []Point) error {
	rows := make([][]string, len(curve))
	for i, p := range curve {
		row := []string{strconv.Itoa(p.Step), strconv.Itoa(p.RewardCalls), strconv.Itoa(p.GradSteps), strconv.Itoa(p.Modes),
			fmtF(p.StudentLoss), fmtF(p.TeacherLoss), fmtF(p.StudentLogZ), fmtF(p.TeacherLogZ)}
		row = append(row, distCols(p.StudentExact)...)
		row = append(row, distCols(p.TeacherExact)...)
		rows[i] = append(row, fmtF(p.StudentEmpiricalL1), fmtF(p.WallSeconds))
	}
	return run.WriteCSV(w, CurveHeader, rows)
}

// modeShares counts, from the agent bits of each mode (bit 0 the Student,
// bit 1+k Teacher k), the modes the Student's samples found, those each
// Teacher's found, and those each Teacher's found and no other Teacher's.
func modeShares(by map[uint64]uint64, K int) (student int, teacher, only []int) {
	teacher, only = make([]int, K), make([]int, K)
	for _, bits := range by {
		if bits&1 != 0 {
			student++
		}
		ts := bits >> 1
		for k := range K {
			if ts&(1<<k) != 0 {
				teacher[k]++
				if ts == 1<<k {
					only[k]++
				}
			}
		}
	}
	return student, teacher, only
}
