package train

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/internal/procstat"
	"github.com/gfngo/gfn/metrics"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/target"
)

// RunOptions control Run's and Resume's evaluation, checkpoints and
// outputs: the driver's options (package run) and the grid's own.
type RunOptions struct {
	run.Options
	// EnvSpec is stored with the run (Stored.Env) for a CLI to rebuild
	// the environment from. Resume keeps the checkpoint's; a different
	// one is an error.
	EnvSpec any
	// EvalSamples is the number of fresh Student samples for the final
	// empirical L1 (the paper uses 100,000); 0 skips it. Resume: 0 keeps
	// the run's, < 0 skips it, another value replaces it (it changes only
	// the final evaluation).
	EvalSamples int
	// CurveExactLimit is the largest number of states for which exact
	// distances are computed at every curve point (0: 200,000); the final
	// evaluation uses metrics.MaxExactStates.
	CurveExactLimit int
	// CurveSamples is the number of fresh Student samples for the
	// empirical L1 at each curve point when exact distances are not
	// computed there but the target is known (0: 5,000; < 0: none).
	// Resume: 0 keeps the run's curve settings; others must equal them.
	CurveSamples int
	// Budget, read by Resume only, is the run's new reward-call budget
	// (0 keeps the checkpoint's): a larger one extends a finished run.
	Budget int
}

// Stored is what a run stores of itself in its checkpoint (the
// checkpoint header's configuration): what rebuilds its environment and
// trainer, and the settings that a resume keeps.
type Stored struct {
	// Env is RunOptions.EnvSpec as JSON; EnvName the environment's
	// fmt.Sprint, compared on resume and load.
	Env     json.RawMessage `json:"env"`
	EnvName string          `json:"env_name"`
	// Train is the training configuration.
	Train Config `json:"train"`
	// The evaluation settings, resolved (CurveSamples < 0: none).
	EvalSamples     int `json:"eval_samples"`
	CurveExactLimit int `json:"curve_exact_limit"`
	CurveSamples    int `json:"curve_samples"`
}

// Summary is summary.json: the driver's fields and the grid's.
type Summary struct {
	run.Summary
	// Task is the environment's fmt.Sprint.
	Task        string `json:"task"`
	Method      Method `json:"method"`
	Seed        uint64 `json:"seed"`
	GradSteps   int    `json:"grad_steps"`
	RewardCalls int    `json:"reward_calls"`
	// StateRewardCalls are the visited states' rewards kept out of the
	// budget (Config.FreeStateRewards).
	StateRewardCalls int      `json:"state_reward_calls,omitempty"`
	ModesFound       int      `json:"modes_found"`
	ModesTotal       int      `json:"modes_total,omitempty"`
	LogZ             float64  `json:"log_z"` // the Student's estimate
	TrueLogZ         *float64 `json:"true_log_z,omitempty"`
	EmpiricalL1      *float64 `json:"empirical_l1,omitempty"`
	EvalSamples      int      `json:"eval_samples"`
	// StudentExact and TeacherExact are the final exact distances to the
	// target (where the state space can be enumerated).
	StudentExact *metrics.Distances `json:"student_exact,omitempty"`
	TeacherExact *metrics.Distances `json:"teacher_exact,omitempty"`
	Notes        []string           `json:"notes,omitempty"`
	// With Teachers: the modes found by the Student's own samples, by
	// each Teacher's, and by each Teacher's and no other Teacher's — how
	// the Teachers divide the space.
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

// Result is what Run and Resume return besides the files they write.
type Result struct {
	Summary Summary
	// Curve is the training curve (the columns of metrics.csv).
	Curve   *run.Curve
	Trainer *Trainer
	// Target, StudentEmpirical, StudentExact and TeacherExact are
	// distributions over terminal indices (nil when the env is not
	// enumerable or too large).
	Target, StudentEmpirical, StudentExact, TeacherExact []float64
	// Figures names the PNG files drawn into the output directory.
	Figures []string
}

// columns are the curve's columns (metrics.csv), in order.
var columns = []run.Column{{Name: "step", Int: true}, {Name: "reward_calls", Int: true}, {Name: "grad_steps", Int: true},
	{Name: "modes", Int: true}, {Name: "student_loss"}, {Name: "teacher_loss"}, {Name: "student_logz"}, {Name: "teacher_logz"},
	{Name: "student_l1"}, {Name: "student_tv"}, {Name: "student_kl"}, {Name: "teacher_l1"}, {Name: "teacher_tv"},
	{Name: "teacher_kl"}, {Name: "student_empirical_l1"}, {Name: "wall_seconds"}}

// Run trains env with cfg until the budget is spent, evaluates, and
// writes the outputs (metrics.csv, summary.json, the final checkpoint,
// the figures) into opt.OutDir if set. A cancelled ctx stops it between
// iterations with a *run.Interrupted error, after a checkpoint when
// opt.OutDir is set; Resume continues it.
func Run(ctx context.Context, env discrete.Env, cfg Config, opt RunOptions) (*Result, error) {
	spec, err := json.Marshal(opt.EnvSpec)
	if err != nil {
		return nil, fmt.Errorf("train: environment spec %v cannot be stored: %w", opt.EnvSpec, err)
	}
	st := Stored{Env: spec, EnvName: fmt.Sprint(env), Train: cfg, EvalSamples: max(opt.EvalSamples, 0),
		CurveExactLimit: opt.CurveExactLimit, CurveSamples: resolveCurveSamples(opt.CurveSamples)}
	if st.CurveExactLimit == 0 {
		st.CurveExactLimit = 200_000
	}
	f, err := newFamily(env, st)
	if err != nil {
		return nil, err
	}
	if err := f.prepare(); err != nil {
		return nil, err
	}
	out, err := run.Drive(ctx, f, opt.Options)
	return f.result(out, err)
}

// Resume continues the run checkpointed in dir (periodically, on
// cancellation, or at its end) on env, which must be the checkpoint's
// environment; the settings come from the checkpoint, and opt's outputs
// go to dir unless opt.OutDir is set. It ends with the same outputs as
// the run never interrupted, wall-clock times aside. A finished run is
// an error matching run.ErrFinished unless opt.Budget raises its budget:
// then it is extended, and its curve continues.
func Resume(ctx context.Context, dir string, env discrete.Env, opt RunOptions) (*Result, error) {
	ck, st, err := openRun(dir, env)
	if err != nil {
		return nil, err
	}
	if opt.EnvSpec != nil {
		spec, err := json.Marshal(opt.EnvSpec)
		if err != nil {
			return nil, fmt.Errorf("train: environment spec %v cannot be stored: %w", opt.EnvSpec, err)
		}
		if a, b := canonicalJSON(st.Env), canonicalJSON(spec); !bytes.Equal(a, b) {
			return nil, fmt.Errorf("train: resume from %s: the checkpoint's environment spec is %s, this run's %s", dir, a, b)
		}
	}
	for _, o := range []struct {
		name                    string
		given, resolved, stored int
	}{
		{"curve exact limit", opt.CurveExactLimit, opt.CurveExactLimit, st.CurveExactLimit},
		{"curve samples", opt.CurveSamples, resolveCurveSamples(opt.CurveSamples), st.CurveSamples},
	} {
		if o.given != 0 && o.resolved != o.stored {
			return nil, fmt.Errorf("train: resume from %s: %s %d differs from the run's %d (the curve would change; 0 keeps the run's)", dir, o.name, o.given, o.stored)
		}
	}
	switch {
	case opt.EvalSamples < 0:
		st.EvalSamples = 0
	case opt.EvalSamples > 0:
		st.EvalSamples = opt.EvalSamples
	}
	if opt.Budget != 0 {
		var c trainerState
		if err := json.Unmarshal(ck.Header.State, &c); err != nil {
			return nil, fmt.Errorf("train: checkpoint %s: state: %w", ck.Path, err)
		}
		if opt.Budget < c.RewardCalls {
			return nil, fmt.Errorf("train: resume from %s: budget %d is below the %d reward calls done", dir, opt.Budget, c.RewardCalls)
		}
		st.Train.RewardCalls = opt.Budget
	}
	f, err := newFamily(env, st)
	if err != nil {
		return nil, err
	}
	if err := f.prepare(); err != nil {
		return nil, err
	}
	out, err := run.Resume(ctx, ck, f, opt.Options)
	return f.result(out, err)
}

// result completes the Result of a finished run.
func (f *family) result(out *run.Outcome, err error) (*Result, error) {
	if err != nil {
		return nil, err
	}
	f.res.Curve = out.Curve
	return f.res, nil
}

// canonicalJSON re-encodes b with sorted keys and no spaces.
func canonicalJSON(b json.RawMessage) []byte {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	c, _ := json.Marshal(v)
	return c
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

// family is a grid run as the driver sees it (run.Family): the trainer,
// its evaluation and the evaluation's random stream.
type family struct {
	t   *Trainer
	st  Stored
	res *Result

	enum       metrics.Enumerable
	notes      []string
	curveExact bool

	evalSrc *rand.PCG
	evalRNG *rand.Rand // the curve's samples: a stream apart from training

	loss   [2]float64 // Step's values: the Student's and the Teacher's loss
	status string
}

// newFamily builds the run of st on env.
func newFamily(env discrete.Env, st Stored) (*family, error) {
	t, err := New(env, st.Train)
	if err != nil {
		return nil, err
	}
	f := &family{t: t, st: st, res: &Result{Trainer: t}}
	f.evalSrc, f.evalRNG = run.NewStream(st.Train.Seed, evalStream)
	return f, nil
}

// prepare computes the target and decides how the curve evaluates.
func (f *family) prepare() error {
	f.enum, _ = f.t.Env.(metrics.Enumerable)
	res := f.res
	if f.enum == nil {
		f.notes = append(f.notes, "exact metrics skipped: the environment cannot be enumerated")
		return nil
	}
	if n := f.enum.NumStates(); n < 0 || n > metrics.MaxExactStates {
		f.notes = append(f.notes, fmt.Sprintf("exact metrics skipped: %v terminal states exceed the enumeration limit", f.enum.NumTerminals()))
		return nil
	}
	p, logZ, err := metrics.Target(f.enum)
	if err != nil {
		return err
	}
	res.Target, res.Summary.TrueLogZ = p, &logZ
	f.curveExact = f.enum.NumStates() <= f.st.CurveExactLimit
	if !f.curveExact {
		f.notes = append(f.notes, fmt.Sprintf("exact metrics computed only at the end: %d states exceed the per-point limit %d; curves use the empirical L1 of %d samples", f.enum.NumStates(), f.st.CurveExactLimit, max(f.st.CurveSamples, 0)))
	}
	return nil
}

// Layout: the grid's curve, points at 0, every steps/50 iterations and
// the end.
func (f *family) Layout() run.Layout {
	return run.Layout{Kind: "grid", Unit: "iteration", Columns: columns, Means: []string{"student_loss", "teacher_loss"},
		Digits: 8, Cadence: run.Cadence{Every: max(f.t.cfg.Steps()/50, 1), First: 1, AtStart: true, AtEnd: true}, Config: f.st}
}

func (f *family) Done() bool { return f.t.Done() }

func (f *family) Progress() (done, total int) { return f.t.Step, f.t.cfg.Steps() }

func (f *family) Step() ([]float64, error) {
	t := f.t
	it, err := t.Iterate()
	if err != nil {
		return nil, fmt.Errorf("train: step %d: %w", t.Step, err)
	}
	f.loss = [2]float64{it.StudentLoss, math.NaN()}
	if t.Teacher != nil {
		f.loss[1] = it.TeacherLoss
	}
	f.status = fmt.Sprintf("modes %d | loss %.3g | logZ %.3f", len(t.ModesFound), it.StudentLoss, it.StudentLogZ)
	return f.loss[:], nil
}

func (f *family) Status() string { return f.status }

// Point fills the counters, log Z's and distances of a curve point.
func (f *family) Point(row []float64) error {
	t, env := f.t, f.t.Env
	row[1], row[2], row[3] = float64(t.RewardCalls), float64(t.GradSteps), float64(len(t.ModesFound))
	row[6] = t.StudentLogZ()
	if t.Teacher != nil {
		row[7] = t.Teacher.LogZEstimate(env)
	}
	switch target := f.res.Target; {
	case f.curveExact:
		s, tt := bothExact(f.enum, t, target)
		putDistances(row[8:11], s)
		putDistances(row[11:14], tt)
	case target != nil && f.st.CurveSamples > 0:
		// Evaluation samples use their own stream, so curves do not
		// change the training run.
		n := f.st.CurveSamples
		if emp, err := metrics.Empirical(f.enum, sampleTerminals(t, n, f.evalRNG), n); err == nil {
			row[14] = metrics.Compare(emp, target).L1
		}
	}
	return nil
}

func putDistances(row []float64, d *metrics.Distances) {
	if d != nil {
		row[0], row[1], row[2] = d.L1, d.TV, d.KL
	}
}

// Finish runs the final evaluation: exact distances where the target is
// known, and the empirical L1 of EvalSamples fresh Student samples drawn
// from the training stream.
func (f *family) Finish(*run.Curve) (any, error) {
	t, env, res := f.t, f.t.Env, f.res
	s := &res.Summary
	s.Task, s.Method, s.Seed = fmt.Sprint(env), t.cfg.Method, t.cfg.Seed
	s.SetPrecision(t.cfg.Precision)
	s.GradSteps, s.RewardCalls, s.ModesFound = t.GradSteps, t.RewardCalls, len(t.ModesFound)
	s.StateRewardCalls = t.StateRewardCalls
	if t.ModesBy != nil {
		s.StudentModes, s.TeacherModes, s.TeacherOnlyModes = modeShares(t.ModesBy, len(t.Teachers))
	}
	if nm, ok := env.(target.Moder); ok {
		s.ModesTotal = nm.NumModes()
	}
	s.LogZ = t.StudentLogZ()
	if res.Target != nil {
		var wg sync.WaitGroup
		if t.Teacher != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res.TeacherExact = mustTerminating(f.enum, t.Teacher)
			}()
		}
		res.StudentExact = mustTerminating(f.enum, t.Student)
		wg.Wait()
		d := metrics.Compare(res.StudentExact, res.Target)
		s.StudentExact = &d
		if t.Teacher != nil {
			d := metrics.Compare(res.TeacherExact, res.Target)
			s.TeacherExact = &d
		}
	}
	if n := f.st.EvalSamples; n > 0 && res.Target != nil {
		emp, err := metrics.Empirical(f.enum, sampleTerminals(t, n, t.rng), n)
		if err != nil {
			return nil, err
		}
		res.StudentEmpirical = emp
		l1 := metrics.Compare(emp, res.Target).L1
		s.EmpiricalL1, s.EvalSamples = &l1, n
	}
	s.Notes = f.notes
	if t.buffer != nil {
		s.BufferEntries = t.buffer.Len()
	}
	if m := procstat.PeakRSSMiB(); !math.IsNaN(m) {
		s.PeakRSSMiB = m
	}
	return s, nil
}

func (f *family) Agents() []run.Agent { return f.t.runAgents() }

func (f *family) Streams() []run.Stream {
	return []run.Stream{{Name: "train", Src: f.t.src}, {Name: "eval", Src: f.evalSrc}}
}

func (f *family) Save() (run.State, error) { return f.t.state() }

func (f *family) Restore(s run.State) error { return f.t.setState(s) }

// Sample draws n terminal states from the Student (no exploration), from
// rng or, if it is nil, the training stream (after Reseed: a stream of
// the seed).
func (t *Trainer) Sample(n int, rng *rand.Rand) []int32 {
	if rng == nil {
		rng = t.rng
	}
	return sampleTerminals(t, n, rng)
}

// sampleTerminals draws n fresh Student samples in batches of 1000 on up
// to GOMAXPROCS goroutines, each with its own copy of the Student's
// buffers, returning their terminal states. Batch i uses its own random
// stream, seeded from rng in batch order, and lands at its own place, so
// the result does not depend on the number of goroutines.
func sampleTerminals(t *Trainer, n int, rng *rand.Rand) []int32 {
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
