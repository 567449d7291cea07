package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gfngo/gfn/target"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/progress"
	"github.com/gfngo/gfn/rewardcmd"
	gfnrun "github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/timenet"
)

// flagValue returns the value of --name (or -name) in args, or "".
func flagValue(args []string, name string) string {
	for i, a := range args {
		for _, p := range []string{"--" + name, "-" + name} {
			if a == p && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v
			}
		}
	}
	return ""
}

// isDiffusionCheckpoint reports whether dir holds a diffusion checkpoint,
// also one of an earlier gfn (whose reading then says to migrate it).
func isDiffusionCheckpoint(dir string) bool {
	_, err := diffusion.ReadCheckpoint(dir)
	var le *gfnrun.LegacyError
	return err == nil || errors.As(err, &le) && le.Key == "gfn_state"
}

func runTrainDiffusion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch flagValue(args, "method") {
	case "smc":
		return runTrainSMC(ctx, args, stdout, stderr)
	case "ggns":
		return runTrainGGNS(ctx, args, stdout, stderr)
	}
	return trainDiffusion(ctx, args, stdout, stderr, nil)
}

// trainDiffusion trains on a built-in energy or, with u, on the density
// u's program computes (with the 25gmm preset's settings).
func trainDiffusion(ctx context.Context, args []string, stdout, stderr io.Writer, u *userReward) error {
	taskName := flagValue(args, "task")
	resume := flagValue(args, "resume")
	preset := flagValue(args, "preset")
	var stored diffusion.Stored
	if resume != "" {
		var err error
		if stored, err = diffusion.ReadCheckpoint(resume); err != nil {
			return usageError{err}
		}
		taskName = stored.Task
		if preset != "" && preset != stored.Preset {
			return usagef("--preset %q: the run in %s was started with preset %q", preset, resume, stored.Preset)
		}
		preset = stored.Preset
	}
	if preset == "" {
		preset = "paper"
	}
	m := flagValue(args, "method")
	if m == "" {
		m = string(diffusion.MethodTeacher)
	}
	presetTask := taskName
	synopsis := "Train a diffusion sampler (a GFlowNet over R^d) on 25gmm (d = 2) or manywell (d = 32), with an\nadaptive Teacher by default. Defaults shown are the paper preset's on 25gmm (it reproduces the\npaper's table); --preset reference switches to the released code's settings. Writes\nmetrics.csv, summary.json, checkpoint.safetensors + config.json, samples.png and curves.png\nto --out."
	taskHelp := "target: 25gmm or manywell (hypergrid: see gfn train --task hypergrid --help)"
	if u != nil {
		presetTask, synopsis, taskHelp = "25gmm", u.synopsis(), "points: the density of the --reward-cmd program"
		switch diffusion.Method(m) {
		case diffusion.MethodPIS, "smc", "ggns":
			return usagef("method %s needs the gradient of log R, which a reward program does not give (allowed: tb, eps, prt, per, teacher)", m)
		}
	}
	d, err := diffusion.PresetFor(preset, presetTask, diffusion.Method(m))
	if err != nil {
		return usageError{err}
	}
	fs := newFlagSet("train", synopsis)
	fs.String("task", taskName, taskHelp)
	u.addFlags(fs)
	fs.String("preset", preset, "settings: paper (the paper's text, which reproduces its table) or reference (the released code)")
	method := fs.String("method", string(d.Method), "training method: tb, eps (exploration noise), prt, per, teacher, pis (path integral sampler: gradients through the trajectory), smc (sequential Monte Carlo) and ggns (gradient-guided nested sampling): no training, see --method smc --help")
	fs.BoolVar(&d.LocalSearch, "ls", false, "MALA local search from the buffer every --ls-every iterations (per and teacher)")
	fs.IntVar(&d.LSEvery, "ls-every", d.LSEvery, "iterations between local searches (on Student slots)")
	fs.IntVar(&d.Iterations, "iterations", d.Iterations, "training iterations (with --resume, a larger number extends the run, a finished one included)")
	fs.IntVar(&d.Batch, "batch", d.Batch, "trajectories per batch (>= 2)")
	fs.IntVar(&d.Steps, "steps", d.Steps, "time steps T of a trajectory")
	fs.Float64Var(&d.Sigma2, "sigma2", d.Sigma2, "diffusion coefficient sigma^2 (t_scale)")
	fs.BoolVar(&d.LearnedVariance, "learned-variance", d.LearnedVariance, "learn the log-variance (log sigma^2 + 4 tanh v) instead of fixing it")
	fs.Float64Var(&d.DriftClip, "drift-clip", d.DriftClip, "bound of the network's drift output |u| (0 = none; gfn-diffusion's --clipping is 1e4); with --resume, the bound from the checkpoint's iteration on (a run whose samples overflowed continues with one)")
	fs.StringVar(&d.Net.Arch, "arch", d.Net.Arch, "network: reference (Fourier-feature MLP) or pis")
	fs.IntVar(&d.Net.Hidden, "hidden", d.Net.Hidden, "network width")
	fs.IntVar(&d.Net.Harmonics, "harmonics", d.Net.Harmonics, "Fourier frequencies of the time features (0 = the network width; the released code's --harmonics_dim is 256 whatever the width)")
	fs.Float64Var(&d.Student.LR, "lr", d.Student.LR, "Student policy learning rate")
	fs.Float64Var(&d.Student.LogZLR, "logz-lr", d.Student.LogZLR, "Student log Z learning rate")
	fs.Float64Var(&d.Teacher.LR, "teacher-lr", d.Teacher.LR, "Teacher policy learning rate")
	fs.Float64Var(&d.Teacher.LogZLR, "teacher-logz-lr", d.Teacher.LogZLR, "Teacher log Z learning rate")
	milestones := fs.String("milestones", joinInts(d.Milestones), "comma-separated iterations at which every learning rate is multiplied by --gamma; negative ones count from the end (-6000 = iterations-1-6000); none = no decay")
	fs.Float64Var(&d.Gamma, "gamma", d.Gamma, "learning-rate factor at each milestone")
	wd := fs.Float64("weight-decay", d.Student.WeightDecay, "Adam's coupled L2 weight decay of both agents")
	fs.Float64Var(&d.Teacher.ClipTime, "teacher-clip", d.Teacher.ClipTime, "gradient-norm clip of the Teacher's time encoder (0 = off)")
	fs.Float64Var(&d.Student.Clip, "grad-clip", d.Student.Clip, "gradient-norm clip of the Student's whole network, not log Z (0 = off; neither code base clips it)")
	fs.Float64Var(&d.Teacher.Clip, "teacher-grad-clip", d.Teacher.Clip, "gradient-norm clip of the Teacher's whole network, not log Z, after --teacher-clip (0 = off; neither code base sets it: a guard against the Teacher's loss spikes)")
	fs.Float64Var(&d.Explore, "explore", d.Explore, "exploration std f of method eps")
	fs.BoolVar(&d.ExploreAll, "explore-all", d.ExploreAll, "explore on the Student batches of every method, not only eps")
	fs.BoolVar(&d.BufferPasses, "buffer-passes", d.BufferPasses, "draw from the replay buffer as the authors' code: positions drawn once per pass of N/batch batches with that moment's priorities, shifted onto newer entries by FIFO evictions")
	fs.IntVar(&d.ExploreDecay, "explore-decay", d.ExploreDecay, "iteration at which the exploration has decayed linearly to 0 (0 = constant)")
	fs.IntVar(&d.BufferCap, "buffer-size", d.BufferCap, "replay buffer capacity (prt, per, teacher)")
	treward := fs.String("teacher-reward", "reference", "Teacher reward form: reference (log of a log, the released code) or paper")
	fs.Float64Var(&d.Reward.C, "C", d.Reward.C, "extra weight C of under-sampled objects (delta > 0)")
	fs.Float64Var(&d.Reward.Alpha, "alpha", d.Reward.Alpha, "weight alpha of log R in the Teacher reward")
	fs.Float64Var(&d.Percentile, "percentile", d.Percentile, "percentile of the untrained Student's log R that fixes the threshold")
	fs.StringVar(&d.Schedule, "schedule", d.Schedule, "cycle of S (Student), T (Teacher explores into the buffer) and B (replay); empty = the preset's for teacher (paper STSBSB, the 3:1:2 ratio as --adv_freq 3; reference STSB), SB for prt/per, S otherwise")
	ratio := fs.String("ratio", "", "Student:Teacher:Buffer ratio such as 3:1:2 (the paper's), an alternative to --schedule")
	fs.Uint64Var(&d.Seed, "seed", 0, "random seed; the same seed gives the same run")
	out := fs.String("out", "", "output directory (default runs/<task>-<method>[-ls]-seed<seed>)")
	evalEvery := fs.Int("eval-every", 100, "iterations between curve points")
	evalSamples := fs.Int("eval-samples", 2000, "fresh and exact samples of a curve point")
	finalSamples := fs.Int("final-samples", 10000, "fresh and exact samples of the final evaluation")
	ckEvery := fs.Int("checkpoint-every", 500, "iterations between checkpoints (0 = only at the end)")
	fs.String("resume", "", "continue the run whose checkpoint is in this directory (other settings come from it)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	if err := parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if resume != "" {
		if err := checkResumeFlags(fs, resume, taskName, "preset", "drift-clip", "iterations"); err != nil {
			return err
		}
	}
	var e energy.Energy
	if u == nil {
		if e, err = energy.Named(taskName); err != nil {
			return usageError{err}
		}
	} else {
		if d.LocalSearch {
			return usagef("--ls needs the gradient of log R, which a reward program does not give")
		}
		if err := u.checkFlags(fs); err != nil {
			return err
		}
	}
	if *evalEvery < 1 || *evalSamples < 1 || *finalSamples < 1 || *ckEvery < 0 {
		return usagef("eval-every %d, eval-samples %d, final-samples %d must be >= 1 and checkpoint-every %d >= 0", *evalEvery, *evalSamples, *finalSamples, *ckEvery)
	}
	opt := diffusion.RunOptions{Options: gfnrun.Options{EvalEvery: *evalEvery, CheckpointEvery: *ckEvery, NoFigures: u != nil && !u.figures},
		Task: taskName, Preset: preset, EvalSamples: *evalSamples, FinalSamples: *finalSamples}
	if !*quiet {
		opt.Progress, opt.ProgressTTY = stderr, progress.IsTerminal(stderr)
	}
	stop, err := startCPUProfile(*cpuprofile)
	if err != nil {
		return err
	}
	defer stop()
	var res *diffusion.Result
	if resume != "" {
		dir, err := resumeOut(resume, *out)
		if err != nil {
			return err
		}
		// A resumed run keeps its evaluation and checkpoint settings.
		opt = diffusion.RunOptions{Options: gfnrun.Options{OutDir: dir, Progress: opt.Progress, ProgressTTY: opt.ProgressTTY}}
		if flagGiven(fs, "iterations") {
			opt.Budget = d.Iterations
		}
		if flagGiven(fs, "drift-clip") {
			if !(d.DriftClip > 0) || math.IsInf(d.DriftClip, 0) {
				return usagef("--drift-clip %v: a resumed run's drift bound must be finite and > 0", d.DriftClip)
			}
			opt.ResumeDriftClip = d.DriftClip
		}
		if u != nil {
			if err := u.start(ctx, dir); err != nil {
				return err
			}
			defer u.close()
			e = rewardcmd.Energy{C: u.client}
		}
		cfg := stored.Config
		total := max(cfg.Iterations, opt.Budget)
		fmt.Fprintf(stdout, "gfn train: resuming %s (%s, method %s, seed %d) at iteration %d of %d\n", resume, taskName, cfg.Method, cfg.Seed, stored.Done, total)
		if res, err = diffusion.Resume(ctx, resume, e, opt); err != nil {
			if errors.Is(err, gfnrun.ErrFinished) {
				return fmt.Errorf("%w\n  gfn train --resume %s --iterations N (N > %d) extends it", err, resume, total)
			}
			return overflowHint(u.failed(err, dir), dir)
		}
	} else {
		d.Method = diffusion.Method(*method)
		if d.Milestones, err = parseInts(*milestones); err != nil {
			return usagef("milestones %q: %v", *milestones, err)
		}
		d.Student.WeightDecay, d.Teacher.WeightDecay = *wd, *wd
		switch *treward {
		case "reference":
			d.Reward.Form = teacher.LogLog
		case "paper":
			d.Reward.Form = teacher.Paper
		default:
			return usagef("teacher reward %q is unknown (allowed: reference, paper)", *treward)
		}
		if !slices.Contains([]string{timenet.Reference, timenet.PIS}, d.Net.Arch) {
			return usagef("arch %q is unknown (allowed: %s, %s)", d.Net.Arch, timenet.Reference, timenet.PIS)
		}
		if *ratio != "" {
			s, err := teacher.FromRatio(*ratio)
			if err != nil {
				return usageError{err}
			}
			d.Schedule = string(s)
		}
		if err := d.Validate(); err != nil {
			return usageError{err}
		}
		dir := *out
		if dir == "" {
			ls := ""
			if d.LocalSearch {
				ls = "-ls"
			}
			dir = filepath.Join("runs", fmt.Sprintf("%s-%s%s-seed%d", taskName, d.Method, ls, d.Seed))
		}
		if err := safefile.CheckDir(dir); err != nil {
			return usageError{err}
		}
		if err := checkFreshOut(dir); err != nil {
			return err
		}
		opt.OutDir = dir
		if u != nil {
			if err := u.start(ctx, dir); err != nil {
				return err
			}
			defer u.close()
			e = rewardcmd.Energy{C: u.client}
		}
		fmt.Fprintf(stdout, "gfn train: %s (d = %d), method %s, preset %s, seed %d, %d iterations of %d trajectories (T = %d)\n",
			taskName, e.Dim(), d.Method, preset, d.Seed, d.Iterations, d.Batch, d.Steps)
		if res, err = diffusion.Run(ctx, e, d, opt); err != nil {
			return overflowHint(u.failed(err, dir), dir)
		}
	}
	printDiffusionSummary(stdout, &res.Summary, opt.OutDir)
	return nil
}

func printDiffusionSummary(w io.Writer, s *diffusion.Summary, dir string) {
	fmt.Fprintf(w, "  iterations %d, reward calls %d, threshold log R > %.4f\n", s.Steps, s.RewardCalls, s.Threshold)
	fmt.Fprintf(w, "  final (%d samples): ELBO %.4f, ELBO-IS %.4f", s.Samples, s.ELBO, s.ELBOIS)
	if s.EUBO != nil {
		fmt.Fprintf(w, ", EUBO %.4f, W2 %.4f", *s.EUBO, *s.W2)
	}
	fmt.Fprintf(w, "\n  learned log Z %.4f", s.LogZ)
	if s.TrueLogZ != nil {
		fmt.Fprintf(w, " (true %.4f)", *s.TrueLogZ)
	}
	fmt.Fprintln(w)
	for _, n := range s.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintf(w, "  wall %s (training %s, %.3g ms/iteration; evaluation %s; %s kernels)\n",
		progress.Duration(time.Duration(s.WallSeconds*float64(time.Second))), progress.Duration(time.Duration(s.TrainSeconds*float64(time.Second))),
		s.MsPerStepMean, progress.Duration(time.Duration(s.EvalSeconds*float64(time.Second))), s.Kernel)
	files := []string{gfnrun.MetricsFile, gfnrun.SummaryFile, gfnrun.CheckpointFile, gfnrun.ConfigFile}
	for _, f := range []string{rewardFile, "samples.png", "curves.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			files = append(files, f)
		}
	}
	fmt.Fprintf(w, "  wrote %s: %s\n", dir, strings.Join(files, ", "))
}

// loadDiffusion loads a diffusion checkpoint with its energy.
func loadDiffusion(dir string) (*diffusion.Trainer, energy.Energy, error) {
	st, err := diffusion.ReadCheckpoint(dir)
	if err != nil {
		return nil, nil, err
	}
	e, err := energy.Named(st.Task)
	if err != nil {
		return nil, nil, err
	}
	t, err := diffusion.Load(dir, e)
	return t, e, err
}

// sampleDiffusion writes n Student samples of a diffusion checkpoint as
// CSV: x1..xd, log_reward.
func sampleDiffusion(dir string, n int, seed uint64, out string, stdout, stderr io.Writer) error {
	t, e, err := loadDiffusion(dir)
	if err != nil {
		return err
	}
	return writeDiffusionSamples(t, e, n, seed, out, stdout, stderr)
}

// writeDiffusionSamples writes n Student samples of t as CSV: x1..xd,
// log_reward.
func writeDiffusionSamples(t *diffusion.Trainer, e energy.Energy, n int, seed uint64, out string, stdout, stderr io.Writer) error {
	x := t.Sample(n, rand.New(rand.NewPCG(seed, 0x5a)))
	logR := make([]float64, n)
	if err := e.LogReward(x, logR); err != nil {
		return err
	}
	write := func(w io.Writer) error {
		cw := csv.NewWriter(w)
		d := e.Dim()
		row := make([]string, d+1)
		for i := range d {
			row[i] = fmt.Sprintf("x%d", i+1)
		}
		row[d] = "log_reward"
		cw.Write(row)
		for r := range n {
			for i := range d {
				row[i] = strconv.FormatFloat(float64(x[r*d+i]), 'g', -1, 32)
			}
			row[d] = strconv.FormatFloat(logR[r], 'g', -1, 64)
			cw.Write(row)
		}
		cw.Flush()
		return cw.Error()
	}
	return emitCSV(out, n, write, stdout, stderr)
}

// evalDiffusion prints the Student's (and Teacher's) ELBO, ELBO-IS, EUBO
// and W2 on n fresh and n exact samples as JSON.
func evalDiffusion(dir string, n int, seed uint64, weights string, stdout io.Writer) error {
	t, e, err := loadDiffusion(dir)
	if err != nil {
		return err
	}
	st, err := diffusion.ReadCheckpoint(dir)
	if err != nil {
		return err
	}
	return reportDiffusion(st.Task, t, e, n, seed, weights, stdout)
}

// reportDiffusion prints the Student's (and Teacher's) ELBO, ELBO-IS,
// EUBO and W2 on n fresh and n exact samples as JSON; without exact
// samples (an energy that is not an energy.Sampler), EUBO and W2 are null.
// task names the run as its summary.json does. With weights != "", it
// first writes every sample's log weight there (writeLogWeights).
func reportDiffusion(task string, t *diffusion.Trainer, e energy.Energy, n int, seed uint64, weights string, stdout io.Writer) error {
	rng := rand.New(rand.NewPCG(seed, 0xe7a1))
	exact := diffusion.ExactSamples(e, n, rng)
	var ev diffusion.Evaluator
	rep := struct {
		Task     string             `json:"task"`
		Step     int                `json:"step"`
		Student  diffusion.Metrics  `json:"student"`
		Teacher  *diffusion.Metrics `json:"teacher,omitempty"`
		TrueLogZ *float64           `json:"true_log_z,omitempty"`
	}{Task: task, Step: t.Step}
	var sets []weightSet
	keep := func(agent string, fresh []float32) {
		if weights == "" {
			return
		}
		wf, wx := ev.LogWeights()
		sets = append(sets, weightSet{agent, "model", slices.Clone(fresh), slices.Clone(wf)})
		if wx != nil {
			sets = append(sets, weightSet{agent, "exact", exact, slices.Clone(wx)})
		}
	}
	m, fresh, err := ev.Evaluate(e, t.Proc, t.Student, n, exact, rng)
	if err != nil {
		return err
	}
	rep.Student = m
	keep("student", fresh)
	if t.Teacher != nil {
		m, fresh, err := ev.Evaluate(e, t.Proc, t.Teacher, n, exact, rng)
		if err != nil {
			return err
		}
		rep.Teacher = &m
		keep("teacher", fresh)
	}
	if lz, ok := e.(target.LogZer); ok {
		v := lz.LogZ()
		rep.TrueLogZ = &v
	}
	if weights != "" {
		if err := safefile.Write(weights, func(w io.Writer) error { return writeLogWeights(w, e.Dim(), sets) }); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// weightSet is one agent's log weights on one set of samples (rows of x).
type weightSet struct {
	agent, set string
	x          []float32
	logW       []float64
}

// writeLogWeights writes the sets as CSV: agent, set, log_w, x1..xd, a row
// per sample. Log weights keep every digit (they are summed by readers).
func writeLogWeights(w io.Writer, d int, sets []weightSet) error {
	head := []byte("agent,set,log_w")
	for j := 1; j <= d; j++ {
		head = fmt.Appendf(head, ",x%d", j)
	}
	if _, err := w.Write(append(head, '\n')); err != nil {
		return err
	}
	var line []byte
	for _, s := range sets {
		for r, lw := range s.logW {
			line = append(append(append(line[:0], s.agent...), ','), s.set...)
			line = strconv.AppendFloat(append(line, ','), lw, 'g', -1, 64)
			for _, v := range s.x[r*d : (r+1)*d] {
				line = strconv.AppendFloat(append(line, ','), float64(v), 'g', -1, 32)
			}
			if _, err := w.Write(append(line, '\n')); err != nil {
				return err
			}
		}
	}
	return nil
}

// joinInts writes a milestone list for a flag default ("none" if empty).
func joinInts(v []int) string {
	if len(v) == 0 {
		return "none"
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// parseInts reads what joinInts writes.
func parseInts(s string) ([]int, error) {
	if s == "none" || s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer (allowed: comma-separated integers, or none)", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// overflowHint adds to a diffusion run's overflow the command that
// continues it with the drift bounded.
func overflowHint(err error, dir string) error {
	var oe *diffusion.OverflowError
	if !errors.As(err, &oe) || oe.Clip > 0 {
		return err // with a bound already, NaN parameters: no flag helps
	}
	if st, e := diffusion.ReadCheckpoint(dir); e == nil {
		return fmt.Errorf("%w\n  gfn train --resume %s --drift-clip 1e4 continues from iteration %d with the drift bounded", err, dir, st.Done)
	}
	return err
}
