package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
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

// diffusionFamily is the family of diffusion samplers over R^d (package
// diffusion); its tasks are the built-in energies.
var diffusionFamily = &family{
	name: "the diffusion samplers", kind: "diffusion", legacy: "gfn_state",
	tasks: energy.Names, program: rewardcmd.Points,
	setup: setupDiffusion, open: openDiffusion, evalSamples: 10000,
}

// setupDiffusion defines a diffusion run's flags, with the defaults of
// the preset (on --resume, the run's preset) for the task.
func setupDiffusion(c *trainCmd) error {
	u, fs := c.u, c.fs
	preset := flagValue(c.args, "preset")
	var stored diffusion.Stored
	if c.resume != "" {
		var err error
		if stored, err = diffusion.ReadCheckpoint(c.resume); err != nil {
			return usageError{err}
		}
		if preset != "" && preset != stored.Preset {
			return usagef("--preset %q: the run in %s was started with preset %q", preset, c.resume, stored.Preset)
		}
		c.task, preset, c.budgetNow = stored.Task, stored.Preset, stored.Iterations
		c.stored = fmt.Sprintf("%s, method %s, seed %d", stored.Task, stored.Method, stored.Seed)
	}
	c.unit, c.budget, c.ckEvery = "iteration", "iterations", 500
	c.outName = "<task>-<method>[-ls]-seed<seed>"
	c.also = []string{"preset", "drift-clip"}
	c.synopsis = "Train a diffusion sampler (a GFlowNet over R^d), with an adaptive Teacher by default, on\n" + strings.Join(energy.Names, ", ") + ". Defaults shown are the task's default preset's:\npaper on 25gmm and manywell (it reproduces the paper's table; --preset reference switches to the\nreleased code's settings), sendera (Sendera et al. 2024) on funnel and lgcp, blessing (Blessing et\nal. 2024's budget) on gmm40, gmm40-50d and mos; gfn train --task lgcp --help shows a task's.\nWrites metrics.csv, summary.json (with EMC, |delta log Z| and MMD where they apply),\ncheckpoint.safetensors + config.json, samples.png and curves.png to --out."
	presetTask, taskHelp := c.task, "target: "+strings.Join(energy.Names, ", ")
	m := flagValue(c.args, "method")
	if m == "" {
		m = string(diffusion.MethodTeacher)
	}
	if u != nil {
		presetTask, c.synopsis, taskHelp = "25gmm", u.synopsis(), "points: the density of the --reward-cmd program"
		switch diffusion.Method(m) {
		case diffusion.MethodPIS, "smc", "ggns":
			return usagef("method %s needs the gradient of log R, which a reward program does not give (allowed: tb, eps, prt, per, teacher)", m)
		}
	}
	if preset == "" {
		preset = diffusion.DefaultPreset(presetTask)
	}
	d, err := diffusion.PresetFor(preset, presetTask, diffusion.Method(m))
	if err != nil {
		return usageError{err}
	}
	c.addTaskFlag(taskHelp)
	fs.String("preset", preset, "settings: paper (the paper's text, which reproduces its table) or reference (the released code) for 25gmm and manywell; sendera (Sendera et al. 2024) for funnel and lgcp, and for 25gmm and manywell at their settings; blessing (Blessing et al. 2024's budget on this library's process) for gmm40, gmm40-50d and mos")
	method := fs.String("method", string(d.Method), "training method: tb, eps (exploration noise), prt, per, teacher, pis (path integral sampler: gradients through the trajectory), smc (sequential Monte Carlo) and ggns (gradient-guided nested sampling): no training, see --method smc --help")
	fs.StringVar(&d.Objective, "objective", "tb", "the Student's training objective: "+strings.Join(diffusion.Objectives, ", ")+" (vargrad: the batch variance of log R + sum log P_B - sum log P_F, no log Z learned; db and subtb: with a flow network of (x, t); fl-db and fl-subtb: forward-looking flows, t log R(x_t) + (1-t) log p_ref(x_t) + the network, T-1 energy evaluations per trajectory); the Teacher trains with TB on the Student's per-object loss")
	fs.Float64Var(&d.Lambda, "lambda", diffusion.DefaultLambda, "subtb, fl-subtb: weight lambda^(j-i) of each sub-trajectory i..j (gfn-diffusion's default 2)")
	fs.Float64Var(&d.Student.FlowLR, "flow-lr", diffusion.DefaultFlowLR, "db, subtb, fl-db, fl-subtb: the flow network's learning rate (gfn-diffusion's --lr_flow)")
	fs.BoolVar(&d.LocalSearch, "ls", false, "MALA local search from the buffer every --ls-every iterations (per and teacher)")
	fs.IntVar(&d.LSEvery, "ls-every", d.LSEvery, "iterations between local searches (on Student slots)")
	fs.IntVar(&d.Iterations, "iterations", d.Iterations, "training iterations")
	fs.IntVar(&d.Batch, "batch", d.Batch, "trajectories per batch (>= 2)")
	fs.IntVar(&d.Steps, "steps", d.Steps, "time steps T of a trajectory")
	fs.Float64Var(&d.Sigma2, "sigma2", d.Sigma2, "diffusion coefficient sigma^2 (t_scale)")
	fs.BoolVar(&d.LearnedVariance, "learned-variance", d.LearnedVariance, "learn the log-variance (log sigma^2 + 4 tanh v) instead of fixing it")
	fs.Float64Var(&d.DriftClip, "drift-clip", d.DriftClip, "bound of the network's drift output |u| (0 = none; gfn-diffusion's --clipping is 1e4); with --resume, the bound from the checkpoint's iteration on (a run whose samples overflowed continues with one)")
	fs.StringVar(&d.Net.Arch, "arch", d.Net.Arch, "network: "+timenet.Reference+" (Fourier-feature MLP) or "+timenet.PIS)
	fs.IntVar(&d.Net.Hidden, "hidden", d.Net.Hidden, "network width")
	c.addPrecisionFlag(&d.Precision, "the state branch's second layer and the joint layers; the input and output layers and the time branch stay fp32")
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
	fs.IntVar(&c.evalEvery, "eval-every", 100, "iterations between curve points")
	evalSamples := fs.Int("eval-samples", 2000, "fresh and exact samples of a curve point")
	finalSamples := fs.Int("final-samples", 10000, "fresh and exact samples of the final evaluation")
	w2Every := fs.Int("w2-every", 0, "take W2 (an exact optimal transport: seconds at 2,000 heavy-tailed samples) only at the curve points whose iteration is a multiple of this, and at the final evaluation; 0 = at every point")
	c.summary = func(w io.Writer, s any) { printDiffusionSummary(w, s.(*diffusion.Summary)) }
	c.explain = overflowHint
	var e energy.Energy
	problem := func() energy.Energy {
		if u != nil {
			return rewardcmd.Energy{C: u.client}
		}
		return e
	}
	if u == nil {
		if e, err = energy.Named(c.task); err != nil {
			return usageError{err}
		}
	}
	if c.resume != "" {
		c.resumed = func(ctx context.Context, from string, opt gfnrun.Options) (any, error) {
			ro := diffusion.RunOptions{Options: opt}
			if flagGiven(fs, "iterations") {
				ro.Budget = d.Iterations
			}
			if flagGiven(fs, "drift-clip") {
				if !(d.DriftClip > 0) || math.IsInf(d.DriftClip, 0) {
					return nil, usagef("--drift-clip %v: a resumed run's drift bound must be finite and > 0", d.DriftClip)
				}
				ro.ResumeDriftClip = d.DriftClip
			}
			res, err := diffusion.Resume(ctx, from, problem(), ro)
			if err != nil {
				return nil, err
			}
			return &res.Summary, nil
		}
		return nil
	}
	c.check = func() (string, error) {
		if u != nil && d.LocalSearch {
			return "", usagef("--ls needs the gradient of log R, which a reward program does not give")
		}
		if c.evalEvery < 1 || *evalSamples < 1 || *finalSamples < 1 {
			return "", usagef("eval-every %d, eval-samples %d and final-samples %d must be >= 1", c.evalEvery, *evalSamples, *finalSamples)
		}
		if *w2Every < 0 {
			return "", usagef("w2-every %d must be >= 0 (0: W2 at every curve point)", *w2Every)
		}
		d.Method = diffusion.Method(*method)
		if flagGiven(fs, "lambda") && d.Objective != "subtb" && d.Objective != "fl-subtb" {
			return "", usagef("--lambda %v weighs subtb's sub-trajectories; objective %q has none", d.Lambda, d.Objective)
		}
		if d.Objective != "subtb" && d.Objective != "fl-subtb" {
			d.Lambda = 0
		}
		if !slices.Contains([]string{"db", "subtb", "fl-db", "fl-subtb"}, d.Objective) {
			if flagGiven(fs, "flow-lr") {
				return "", usagef("--flow-lr %v: objective %q learns no flow network (db, subtb, fl-db and fl-subtb do)", d.Student.FlowLR, d.Objective)
			}
			d.Student.FlowLR = 0
		}
		if d.Objective == "tb" {
			d.Objective = "" // as earlier runs' config.json says
		}
		if d.Milestones, err = parseInts(*milestones); err != nil {
			return "", usagef("milestones %q: %v", *milestones, err)
		}
		d.Student.WeightDecay, d.Teacher.WeightDecay = *wd, *wd
		switch *treward {
		case "reference":
			d.Reward.Form = teacher.LogLog
		case "paper":
			d.Reward.Form = teacher.Paper
		default:
			return "", usagef("teacher reward %q is unknown (allowed: reference, paper)", *treward)
		}
		if !slices.Contains([]string{timenet.Reference, timenet.PIS}, d.Net.Arch) {
			return "", usagef("arch %q is unknown (allowed: %s, %s)", d.Net.Arch, timenet.Reference, timenet.PIS)
		}
		if *ratio != "" {
			s, err := teacher.FromRatio(*ratio)
			if err != nil {
				return "", usageError{err}
			}
			d.Schedule = string(s)
		}
		if err := d.Validate(); err != nil {
			return "", usageError{err}
		}
		ls := ""
		if d.LocalSearch {
			ls = "-ls"
		}
		return fmt.Sprintf("%s-%s%s-seed%d", c.task, d.Method, ls, d.Seed), nil
	}
	c.header = func() string {
		return fmt.Sprintf("%s (d = %d), method %s, preset %s, seed %d, %d iterations of %d trajectories (T = %d)",
			c.task, problem().Dim(), d.Method, preset, d.Seed, d.Iterations, d.Batch, d.Steps)
	}
	c.start = func(ctx context.Context, opt gfnrun.Options) (any, error) {
		opt.NoFigures = u != nil && !u.figures
		res, err := diffusion.Run(ctx, problem(), d, diffusion.RunOptions{Options: opt, Task: c.task, Preset: preset, EvalSamples: *evalSamples, FinalSamples: *finalSamples, W2Every: *w2Every})
		if err != nil {
			return nil, err
		}
		return &res.Summary, nil
	}
	return nil
}

func printDiffusionSummary(w io.Writer, s *diffusion.Summary) {
	fmt.Fprintf(w, "  iterations %d, reward calls %d, threshold log R > %.4f\n", s.Steps, s.RewardCalls, s.Threshold)
	fmt.Fprintf(w, "  final (%d samples): ELBO %.4f, ELBO-IS %.4f", s.Samples, s.ELBO, s.ELBOIS)
	if s.EUBO != nil {
		fmt.Fprintf(w, ", EUBO %.4f, W2 %.4f", *s.EUBO, *s.W2)
	}
	var suite []string
	if s.EMC != nil {
		suite = append(suite, fmt.Sprintf("EMC %.4f", *s.EMC))
	}
	if s.DeltaLogZ != nil {
		suite = append(suite, fmt.Sprintf("|delta log Z| %.4f", *s.DeltaLogZ))
	}
	if s.MMD != nil {
		suite = append(suite, fmt.Sprintf("MMD %.4f (%d samples, bandwidth %.3g)", *s.MMD, s.MMDSamples, *s.MMDBandwidth))
	}
	if len(suite) > 0 {
		fmt.Fprintf(w, "\n  %s", strings.Join(suite, ", "))
	}
	fmt.Fprintf(w, "\n  learned log Z %.4f", s.LogZ)
	if s.TrueLogZ != nil {
		fmt.Fprintf(w, " (true %.4f)", *s.TrueLogZ)
	}
	fmt.Fprintln(w)
	for _, n := range s.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// diffusionRun is a loaded diffusion run.
type diffusionRun struct {
	dir, task string
	t         *diffusion.Trainer
	e         energy.Energy
	program   bool
}

func openDiffusion(dir string, u *userReward) (opened, error) {
	st, err := diffusion.ReadCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	r := diffusionRun{dir: dir, task: st.Task, program: u != nil}
	if u != nil {
		r.e, r.task = rewardcmd.Energy{C: u.client}, "points"
	} else if r.e, err = energy.Named(st.Task); err != nil {
		return nil, err
	}
	r.t, err = diffusion.Load(dir, r.e)
	return r, err
}

// redraw draws the run's figures again from its checkpoint.
func (r diffusionRun) redraw(seed uint64) error {
	if r.program {
		return usagef("--figures does not run reward programs: the run's own figures are in %s", r.dir)
	}
	return diffusion.Redraw(r.dir, r.e, 2000, seed)
}

// samples writes x1..xd and log_reward.
func (r diffusionRun) samples(n int, seed uint64) (func(io.Writer) error, error) {
	x := r.t.Sample(n, rand.New(rand.NewPCG(seed, 0x5a)))
	logR := make([]float64, n)
	if err := r.e.LogReward(x, logR); err != nil {
		return nil, err
	}
	return func(w io.Writer) error {
		cw := csv.NewWriter(w)
		d := r.e.Dim()
		row := make([]string, d+1)
		for i := range d {
			row[i] = fmt.Sprintf("x%d", i+1)
		}
		row[d] = "log_reward"
		cw.Write(row)
		for k := range n {
			for i := range d {
				row[i] = strconv.FormatFloat(float64(x[k*d+i]), 'g', -1, 32)
			}
			row[d] = strconv.FormatFloat(logR[k], 'g', -1, 64)
			cw.Write(row)
		}
		cw.Flush()
		return cw.Error()
	}, nil
}

// report prints the run's evaluation (diffusion.Trainer.Evaluate) as
// JSON; with weights != "", it first writes every sample's log weight
// there.
func (r diffusionRun) report(n int, seed uint64, weights string, w io.Writer) error {
	ev, err := r.t.Evaluate(n, rand.New(rand.NewPCG(seed, 0xe7a1)))
	if err != nil {
		return err
	}
	if weights != "" {
		if err := safefile.Write(weights, func(w io.Writer) error { return writeLogWeights(w, r.e.Dim(), ev.Weights) }); err != nil {
			return err
		}
	}
	return printJSON(w, struct {
		Task string `json:"task"`
		diffusion.Evaluation
	}{r.task, ev})
}

// writeLogWeights writes the sets as CSV: agent, set, log_w, x1..xd, a row
// per sample. Log weights keep every digit (they are summed by readers).
func writeLogWeights(w io.Writer, d int, sets []diffusion.Weights) error {
	head := []byte("agent,set,log_w")
	for j := 1; j <= d; j++ {
		head = fmt.Appendf(head, ",x%d", j)
	}
	if _, err := w.Write(append(head, '\n')); err != nil {
		return err
	}
	var line []byte
	for _, s := range sets {
		for r, lw := range s.LogW {
			line = append(append(append(line[:0], s.Agent...), ','), s.Set...)
			line = strconv.AppendFloat(append(line, ','), lw, 'g', -1, 64)
			for _, v := range s.X[r*d : (r+1)*d] {
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
