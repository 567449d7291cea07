package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/progress"
	"github.com/gfngo/gfn/replay"
	gfnrun "github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/task"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/train"
)

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// So do reward programs (rewardprog.go), whose tasks share names.
	if wantsRewardCmd(args) {
		return runTrainRewardCmd(ctx, args, stdout, stderr)
	}
	// A directory without a checkpoint cannot say which family's flags to
	// parse: say what is missing rather than misname a flag.
	if r := flagValue(args, "resume"); r != "" {
		if err := checkpointPresent(r); err != nil {
			return err
		}
	}
	// Diffusion samplers have their own flags.
	if t := flagValue(args, "task"); t == "25gmm" || t == "manywell" {
		return runTrainDiffusion(ctx, args, stdout, stderr)
	}
	if r := flagValue(args, "resume"); r != "" && isDiffusionCheckpoint(r) {
		return runTrainDiffusion(ctx, args, stdout, stderr)
	}
	// So have the sequence-design tasks.
	if t := flagValue(args, "task"); isSeqTask(t) {
		return runTrainSeq(ctx, args, stdout, stderr)
	}
	if r := flagValue(args, "resume"); r != "" && isSeqCheckpoint(r) {
		return runTrainSeq(ctx, args, stdout, stderr)
	}
	return trainGrid(ctx, args, stdout, stderr, nil)
}

// trainGrid trains on the hypergrid, with u's program as its reward if u
// is not nil.
func trainGrid(ctx context.Context, args []string, stdout, stderr io.Writer, u *userReward) error {
	fs := newFlagSet("train", "Train a Student GFlowNet, with an adaptive Teacher by default, on the deceptive hypergrid.\nWrites metrics.csv, summary.json, checkpoint.safetensors + config.json and PNG figures to --out.")
	d := train.DefaultConfig()
	spec := task.Spec{}
	fs.StringVar(&spec.Task, "task", "hypergrid", "environment: "+strings.Join(task.Names, ", ")+"; diffusion samplers: 25gmm, manywell (see gfn train --task 25gmm --help); sequences: tfbind8, qm9str, sehstr, rna (see gfn train --task tfbind8 --help); a reward program's: seq, points, hypergrid (see gfn train --reward-cmd CMD --task seq --help)")
	u.addFlags(fs)
	fs.IntVar(&spec.Dim, "dim", 2, "hypergrid dimension d (>= 1)")
	fs.IntVar(&spec.Side, "side", 128, "hypergrid side length H (>= 2)")
	fs.StringVar(&spec.Reward, "reward", string(hypergrid.Deceptive), "hypergrid reward: deceptive (reference code), deceptive-paper (paper's equation), original (Bengio et al. 2021)")
	method := fs.String("method", string(d.Method), "training method: tb (on-policy Student), teacher, or gafn (TB with RND intrinsic rewards)")
	fs.Float64Var(&d.GAFNScale, "gafn-scale", d.GAFNScale, "scale of GAFN's intrinsic rewards")
	objective := fs.String("objective", string(d.Objective), "training objective of Student and Teacher: tb (trajectory balance) or db (detailed balance)")
	calls := fs.Int("reward-calls", 0, "reward-call budget; 0 = the paper's (96000, or 384000 for d=4 H=32); with --resume, a larger one extends the run, a finished one included")
	fs.IntVar(&d.Batch, "batch", d.Batch, "trajectories per batch (>= 1)")
	hidden := intList(d.Hidden)
	fs.Var(&hidden, "hidden", "hidden layer widths of the policy MLPs")
	fs.Float64Var(&d.LR, "lr", d.LR, "Adam learning rate of the Student policy")
	fs.Float64Var(&d.TeacherLR, "teacher-lr", d.TeacherLR, "Adam learning rate of the Teacher policy")
	fs.Float64Var(&d.LogZLR, "logz-lr", d.LogZLR, "Adam learning rate of log Z")
	fs.Float64Var(&d.LogZInit, "logz-init", d.LogZInit, "initial log Z")
	fs.Float64Var(&d.ClipNorm, "clip", d.ClipNorm, "gradient-norm clipping (0 = off)")
	fs.Float64Var(&d.Eps, "eps", d.Eps, "eps-uniform exploration mixed into the behaviour policies, in [0,1]")
	fs.Float64Var(&d.Temperature, "temperature", d.Temperature, "logit temperature of the behaviour policies (> 0)")
	treward := fs.String("teacher-reward", string(d.TeacherReward), "Teacher reward form: reference (authors' code) or paper")
	fs.Float64Var(&d.C, "C", d.C, "extra weight C of under-sampled trajectories (delta > 0) in the Teacher reward")
	fs.Float64Var(&d.Alpha, "alpha", d.Alpha, "reward mixing: weight alpha of log R in the Teacher reward")
	fs.Float64Var(&d.TeacherEps, "teacher-eps", d.TeacherEps, "smoothing eps of the paper-form Teacher reward")
	fs.IntVar(&d.NMC, "n-mc", d.NMC, "backward trajectories per x averaged in the Teacher reward (>= 1)")
	fs.IntVar(&d.Teachers, "teachers", 1, "number of Teachers K of method teacher; K > 1 take the T slots in turn and share the Teacher reward by --teacher-split")
	split := fs.String("teacher-split", string(teacher.Share), "how K > 1 Teachers share the reward: share (R_T times Teacher k's share of the Teachers' probability of x) or none (each the whole R_T)")
	fs.StringVar(&d.Schedule, "schedule", "", "behaviour-policy cycle of S (Student), T (Teacher) and B (buffer replay); empty = SSTT for teacher, S for tb, SBTB and SB with --buffer")
	ratio := fs.String("ratio", "", "behaviour ratio Student:Teacher:Buffer, like 1:1:2 (SBTB) or 2:1:3; an alternative to --schedule")
	buffer := fs.String("buffer", "", "replay buffer priority: uniform, reward (PRT), loss (delta^2) or teacher (PER); empty = no buffer")
	ties := fs.String("buffer-ties", "oldest", "order of buffer entries of equal priority for the rank weights: oldest (first stored first) or hash (a fixed pseudo-random order, as the reference's unstable sort scatters them)")
	fs.StringVar(&d.BufferPairing, "buffer-pairing", "batch", "batch (correct) or completion: the reference code before commit 77091bf, which stored terminal states with other trajectories' rewards (the paper's PRT/PER rows)")
	fs.IntVar(&d.BufferCap, "buffer-size", 0, "replay buffer capacity (0 = the reference's int(0.1*(H-1+d)*(H-1)^(d-1)))")
	fs.BoolVar(&d.LocalSearch, "ls", false, "back-and-forth local search on 1 in 8 Student (tb) or 1 in 4 Teacher batches")
	fs.IntVar(&d.LSIterations, "ls-iterations", d.LSIterations, "local search rounds per batch")
	fs.Float64Var(&d.LSBackRatio, "ls-back-ratio", d.LSBackRatio, "fraction of a trajectory's states that local search backtracks, in (0,1]")
	fs.Uint64Var(&d.Seed, "seed", 0, "random seed; the same seed gives the same run")
	out := fs.String("out", "", "output directory (default runs/<task>-d<dim>-H<side>-<method>-seed<seed>)")
	evalEvery := fs.Int("eval-every", 0, "iterations between curve points (0 = 50 points per run)")
	evalSamples := fs.Int("eval-samples", 100000, "fresh Student samples for the final empirical L1 (0 = skip)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (for go tool pprof)")
	ckDefault := 500 // Ctrl-C and crashes lose at most that (and Ctrl-C nothing: it checkpoints)
	if u != nil {
		ckDefault = 100 // a failing program then costs at most 100 iterations
	}
	ckEvery := fs.Int("checkpoint-every", ckDefault, "iterations between checkpoints that --resume continues (0 = at the end and on Ctrl-C only)")
	resume := fs.String("resume", "", "continue the run checkpointed in this directory (its settings come from the checkpoint)")
	if err := parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if *ckEvery < 0 {
		return usagef("checkpoint-every %d must be >= 0", *ckEvery)
	}
	if u != nil && *resume == "" {
		if flagGiven(fs, "reward") {
			return usagef("--reward %q and --reward-cmd: give one of them", spec.Reward)
		}
		u.rec.Dim, u.rec.Side = spec.Dim, spec.Side
	}
	if err := u.checkFlags(fs); err != nil {
		return err
	}
	if *resume != "" {
		if err := checkResumeFlags(fs, *resume, "hypergrid", "checkpoint-every", "reward-calls"); err != nil {
			return err
		}
		if !flagGiven(fs, "checkpoint-every") {
			*ckEvery = 0 // the run's own
		}
		stop, err := startCPUProfile(*cpuprofile)
		if err != nil {
			return err
		}
		defer stop()
		return resumeGrid(ctx, *resume, *out, *ckEvery, *calls, *quiet, stdout, stderr, u)
	}
	d.Method, d.TeacherReward, d.Hidden = train.Method(*method), train.TeacherReward(*treward), hidden
	d.Buffer = replay.Priority(*buffer)
	if *ties != "oldest" {
		d.BufferTies = *ties // empty, the default, keeps older runs' config.json as it was
	}
	if d.Teachers > 1 {
		d.TeacherSplit = teacher.Split(*split)
	} else if flagGiven(fs, "teacher-split") {
		return usagef("--teacher-split %q needs --teachers > 1 (got %d)", *split, d.Teachers)
	}
	d.Objective = train.Objective(*objective)
	if *ratio != "" {
		if d.Schedule != "" {
			return usagef("--ratio %q and --schedule %q: give one of them", *ratio, d.Schedule)
		}
		sched, err := teacher.FromRatio(*ratio)
		if err != nil {
			return usageError{err}
		}
		d.Schedule = string(sched)
	}
	d.RewardCalls = *calls
	if *calls == 0 {
		d.RewardCalls = task.RewardCalls(spec)
	}
	if *calls < 0 {
		return usagef("reward calls %d must be >= 0", *calls)
	}
	if *evalSamples < 0 || *evalEvery < 0 {
		return usagef("eval-samples %d and eval-every %d must be >= 0", *evalSamples, *evalEvery)
	}
	var env discrete.Env
	var err error
	if u == nil && !slices.Contains(task.Names, spec.Task) {
		// The other tasks were dispatched before this flag set was built.
		all := slices.Concat(task.Names, energy.Names, biochem.Names)
		return usagef("task %q is unknown (allowed: %s)", spec.Task, strings.Join(all, ", "))
	}
	if u == nil {
		env, err = task.Build(spec)
	} else {
		if spec.Task != "hypergrid" {
			return usagef("--reward-cmd: task %q cannot take a reward program (allowed: seq, points, hypergrid)", spec.Task)
		}
		spec.Reward, spec.RewardCmd = string(hypergrid.Custom), u.rec.Command
		// The program starts below; until then the grid checks the sizes.
		env, err = task.BuildFunc(spec, func([]int32, int, []float64) error { return nil })
	}
	if err != nil {
		return usageError{err}
	}
	if err := d.Validate(); err != nil {
		return usageError{err}
	}
	dir := *out
	if dir == "" {
		name := spec.Task
		if u != nil {
			name += "-cmd"
		}
		dir = filepath.Join("runs", fmt.Sprintf("%s-d%d-H%d-%s-seed%d", name, spec.Dim, spec.Side, d.Method, d.Seed))
	}
	if err := safefile.CheckDir(dir); err != nil {
		return usageError{err}
	}
	if err := checkFreshOut(dir); err != nil {
		return err
	}
	if u != nil {
		if err := u.start(ctx, dir); err != nil {
			return err
		}
		defer u.close()
		if env, err = task.BuildFunc(spec, u.client.Cells); err != nil {
			return err
		}
	}
	opt := train.RunOptions{Options: gfnrun.Options{OutDir: dir, EvalEvery: *evalEvery, CheckpointEvery: *ckEvery}, EnvSpec: spec, EvalSamples: *evalSamples}
	if !*quiet {
		opt.Progress, opt.ProgressTTY = stderr, progress.IsTerminal(stderr)
	}
	methodName := string(d.Method)
	if d.Teachers > 1 {
		methodName = fmt.Sprintf("%s (%d Teachers, split %s)", d.Method, d.Teachers, d.TeacherSplit)
	}
	fmt.Fprintf(stdout, "gfn train: %v, method %s, seed %d, %d reward calls in %d steps of %d\n", env, methodName, d.Seed, d.RewardCalls, d.Steps(), d.Batch)
	stop, err := startCPUProfile(*cpuprofile)
	if err != nil {
		return err
	}
	defer stop()
	res, err := train.Run(ctx, env, d, opt)
	if err != nil {
		return u.failed(err, dir)
	}
	return gridOutputs(stdout, env, dir, res)
}

// resumeGrid continues a checkpointed grid run (calls > 0: to that
// reward-call budget, which extends a finished run).
func resumeGrid(ctx context.Context, from, out string, ckEvery, calls int, quiet bool, stdout, stderr io.Writer, u *userReward) error {
	st, err := train.ReadCheckpoint(from)
	if err != nil {
		return usageError{err}
	}
	ck, err := gfnrun.Open(from)
	if err != nil {
		return usageError{err}
	}
	dir, err := resumeOut(from, out)
	if err != nil {
		return err
	}
	build := task.BuildJSON
	if u != nil {
		if err := u.start(ctx, dir); err != nil {
			return err
		}
		defer u.close()
		build = programGrid(u.client) // reward.json records the command in use
	}
	env, err := build(st.Env)
	if err != nil {
		return usageError{err}
	}
	opt := train.RunOptions{Options: gfnrun.Options{OutDir: dir, CheckpointEvery: ckEvery}, Budget: calls}
	if !quiet {
		opt.Progress, opt.ProgressTTY = stderr, progress.IsTerminal(stderr)
	}
	fmt.Fprintf(stdout, "gfn train: resuming %s (%s, method %s, seed %d) at iteration %d of %d, %d reward calls\n",
		from, st.EnvName, st.Train.Method, st.Train.Seed, ck.Header.Done, ck.Header.Total, st.Train.RewardCalls)
	res, err := train.Resume(ctx, from, env, opt)
	if err != nil {
		return u.failed(err, dir)
	}
	return gridOutputs(stdout, res.Trainer.Env, dir, res)
}

// gridOutputs prints the summary of a grid run and the files it wrote.
func gridOutputs(stdout io.Writer, env discrete.Env, dir string, res *train.Result) error {
	files := []string{"metrics.csv", "summary.json", gfnrun.CheckpointFile, gfnrun.ConfigFile}
	if g, ok := env.(*hypergrid.Grid); ok && g.Reward == hypergrid.Custom {
		files = append(files, rewardFile)
	}
	printSummary(stdout, &res.Summary, dir, append(files, res.Figures...))
	return nil
}

func printSummary(w io.Writer, s *train.Summary, dir string, files []string) {
	fmt.Fprintf(w, "  steps %d (gradient steps %d), reward calls %d\n", s.Steps, s.GradSteps, s.RewardCalls)
	if s.ModesTotal > 0 {
		fmt.Fprintf(w, "  modes found %d of %d\n", s.ModesFound, s.ModesTotal)
	}
	switch {
	case s.ModesTotal == 0: // modes unknown: nothing to attribute
	case len(s.TeacherModes) > 1:
		fmt.Fprintf(w, "  modes found by the Student's samples %d, by each Teacher's %v (by no other Teacher's %v)\n",
			s.StudentModes, s.TeacherModes, s.TeacherOnlyModes)
	case len(s.TeacherModes) == 1:
		fmt.Fprintf(w, "  modes found by the Student's samples %d, by the Teacher's %d\n", s.StudentModes, s.TeacherModes[0])
	}
	if s.TrueLogZ != nil {
		fmt.Fprintf(w, "  Student log Z %.4f (true %.4f)\n", s.LogZ, *s.TrueLogZ)
	} else {
		fmt.Fprintf(w, "  Student log Z %.4f\n", s.LogZ)
	}
	if d := s.StudentExact; d != nil {
		fmt.Fprintf(w, "  Student exact: L1 %.4g, TV %.4f, KL %.4f\n", d.L1, d.TV, d.KL)
	}
	if d := s.TeacherExact; d != nil {
		fmt.Fprintf(w, "  Teacher exact: L1 %.4g, TV %.4f\n", d.L1, d.TV)
	}
	if s.EmpiricalL1 != nil {
		fmt.Fprintf(w, "  Student empirical L1 (%d samples) %.4g\n", s.EvalSamples, *s.EmpiricalL1)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintf(w, "  wall %s (training %s; %.1f ms/iteration early, %.1f late, %s kernels)\n",
		progress.Duration(time.Duration(s.WallSeconds*float64(time.Second))), progress.Duration(time.Duration(s.TrainSeconds*float64(time.Second))),
		s.MsPerStepEarly, s.MsPerStepLate, s.Kernel)
	if s.PeakRSSMiB > 0 {
		mem := fmt.Sprintf("  peak memory %.0f MiB", s.PeakRSSMiB)
		if s.BufferEntries > 0 {
			mem += fmt.Sprintf(" (replay buffer: %d entries)", s.BufferEntries)
		}
		fmt.Fprintln(w, mem)
	}
	fmt.Fprintf(w, "  wrote %s: %s\n", dir, strings.Join(files, ", "))
}
