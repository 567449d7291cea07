package train

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/metrics"
	"github.com/gfngo/gfn/progress"
	"github.com/gfngo/gfn/safefile"
)

// RunOptions control Run's evaluation and outputs.
type RunOptions struct {
	// OutDir receives metrics.csv, summary.json and the checkpoint; empty
	// writes nothing.
	OutDir string
	// EnvSpec is stored in the checkpoint to rebuild the environment.
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
	// Progress, if set, receives a progress bar.
	Progress    io.Writer
	ProgressTTY bool
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
	ModesTotal     float64            `json:"modes_total,omitempty"`
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

// NumModeser is implemented by environments that know their mode count.
type NumModeser interface{ NumModes() float64 }

// Run trains until the budget is spent (or ctx is cancelled, which returns
// ctx's error after saving nothing), evaluates, and writes the outputs.
func Run(ctx context.Context, env discrete.Env, cfg Config, opt RunOptions) (*Result, error) {
	t, err := New(env, cfg)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	steps := cfg.Steps()
	every := opt.EvalEvery
	if every <= 0 {
		every = max(steps/50, 1)
	}
	limit := opt.CurveExactLimit
	if limit == 0 {
		limit = 200_000
	}
	enum, _ := env.(metrics.Enumerable)
	res := &Result{Trainer: t}
	var notes []string
	if enum != nil {
		if n := enum.NumStates(); n >= 0 && n <= metrics.MaxExactStates {
			p, logZ, err := metrics.Target(enum)
			if err != nil {
				return nil, err
			}
			res.Target = p
			res.Summary.TrueLogZ = &logZ
		} else {
			notes = append(notes, fmt.Sprintf("exact metrics skipped: %v terminal states exceed the enumeration limit", enum.NumTerminals()))
		}
	} else {
		notes = append(notes, "exact metrics skipped: the environment cannot be enumerated")
	}
	curveExact := res.Target != nil && enum.NumStates() <= limit
	curveSamples := opt.CurveSamples
	if curveSamples == 0 {
		curveSamples = 5000
	}
	if res.Target != nil && !curveExact {
		notes = append(notes, fmt.Sprintf("exact metrics computed only at the end: %d states exceed the per-point limit %d; curves use the empirical L1 of %d samples", enum.NumStates(), limit, max(curveSamples, 0)))
	}

	evalRNG := rand.New(rand.NewPCG(cfg.Seed, 0xe7a1))
	var bar *progress.Bar
	if opt.Progress != nil {
		bar = progress.New(opt.Progress, "train", steps, opt.ProgressTTY)
	}
	iterDur := make([]time.Duration, 0, steps)
	var trainTime time.Duration
	var sLoss, tLoss float64
	var nLoss int
	lastLoss := math.NaN()
	point := func() {
		p := Point{Step: t.Step, RewardCalls: t.RewardCalls, GradSteps: t.GradSteps, Modes: len(t.ModesFound),
			StudentLoss: sLoss / float64(max(nLoss, 1)), TeacherLoss: math.NaN(),
			StudentLogZ: t.Student.LogZEstimate(env), TeacherLogZ: math.NaN(), WallSeconds: time.Since(start).Seconds()}
		if t.Teacher != nil {
			p.TeacherLoss = tLoss / float64(max(nLoss, 1))
			p.TeacherLogZ = t.Teacher.LogZEstimate(env)
		}
		if nLoss == 0 {
			p.StudentLoss, p.TeacherLoss = math.NaN(), math.NaN()
		}
		p.StudentEmpiricalL1 = math.NaN()
		switch {
		case curveExact:
			p.StudentExact, p.TeacherExact = bothExact(enum, t, res.Target)
		case res.Target != nil && curveSamples > 0:
			// Evaluation samples use their own stream, so curves do not
			// change the training run.
			if emp, err := metrics.Empirical(enum, sampleTerminalsRNG(t, curveSamples, evalRNG), curveSamples); err == nil {
				p.StudentEmpiricalL1 = metrics.Compare(emp, res.Target).L1
			}
		}
		res.Curve = append(res.Curve, p)
		sLoss, tLoss, nLoss = 0, 0, 0
	}
	point()
	for !t.Done() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		it, err := t.Iterate()
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", t.Step, err)
		}
		d := time.Since(t0)
		iterDur = append(iterDur, d)
		trainTime += d
		sLoss += it.StudentLoss
		if t.Teacher != nil {
			tLoss += it.TeacherLoss
		}
		nLoss++
		lastLoss = it.StudentLoss
		if t.Step%every == 0 || t.Done() {
			point()
		}
		if bar != nil {
			bar.Update(t.Step, fmt.Sprintf("modes %d | loss %.3g | logZ %.3f", len(t.ModesFound), lastLoss, it.StudentLogZ))
		}
	}
	if bar != nil {
		bar.Finish()
	}

	s := &res.Summary
	s.Env, s.Method, s.Seed = fmt.Sprint(env), cfg.Method, cfg.Seed
	s.Steps, s.GradSteps, s.RewardCalls, s.ModesFound = t.Step, t.GradSteps, t.RewardCalls, len(t.ModesFound)
	if nm, ok := env.(NumModeser); ok {
		s.ModesTotal = nm.NumModes()
	}
	s.TrainSeconds = trainTime.Seconds()
	s.MsPerIterEarly, s.MsPerIterLate, s.MsPerIterMean = iterStats(iterDur)
	s.StudentLogZ = t.Student.LogZEstimate(env)
	s.Kernel = string(kernel.Name())

	// Final evaluation.
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
	s.Notes = notes
	s.WallSeconds = time.Since(start).Seconds()
	if opt.OutDir != "" {
		if err := writeOutputs(opt.OutDir, res, t, opt.EnvSpec); err != nil {
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

func iterStats(d []time.Duration) (early, late, mean float64) {
	if len(d) == 0 {
		return
	}
	avg := func(s []time.Duration) float64 {
		var t time.Duration
		for _, x := range s {
			t += x
		}
		return t.Seconds() * 1000 / float64(len(s))
	}
	k := max(len(d)/10, 1)
	return avg(d[:k]), avg(d[len(d)-k:]), avg(d)
}

// CurveHeader is the header of metrics.csv.
var CurveHeader = []string{"step", "reward_calls", "grad_steps", "modes", "student_loss", "teacher_loss",
	"student_logz", "teacher_logz", "student_l1", "student_tv", "student_kl", "teacher_l1", "teacher_tv", "teacher_kl",
	"student_empirical_l1", "wall_seconds"}

func fmtF(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 8, 64)
}

func distCols(d *metrics.Distances) []string {
	if d == nil {
		return []string{"", "", ""}
	}
	return []string{fmtF(d.L1), fmtF(d.TV), fmtF(d.KL)}
}

// WriteCurve writes the curve as CSV (empty cells for missing values).
func WriteCurve(w io.Writer, curve []Point) error {
	cw := csv.NewWriter(w)
	cw.Write(CurveHeader)
	for _, p := range curve {
		row := []string{strconv.Itoa(p.Step), strconv.Itoa(p.RewardCalls), strconv.Itoa(p.GradSteps), strconv.Itoa(p.Modes),
			fmtF(p.StudentLoss), fmtF(p.TeacherLoss), fmtF(p.StudentLogZ), fmtF(p.TeacherLogZ)}
		row = append(row, distCols(p.StudentExact)...)
		row = append(row, distCols(p.TeacherExact)...)
		row = append(row, fmtF(p.StudentEmpiricalL1), fmtF(p.WallSeconds))
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

func writeOutputs(dir string, res *Result, t *Trainer, envSpec any) error {
	if err := safefile.Write(filepath.Join(dir, "metrics.csv"), func(w io.Writer) error { return WriteCurve(w, res.Curve) }); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res.Summary, "", "  ")
	if err != nil {
		return err
	}
	if err := safefile.WriteBytes(filepath.Join(dir, "summary.json"), append(b, '\n')); err != nil {
		return err
	}
	return t.Save(dir, envSpec)
}
