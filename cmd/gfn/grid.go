package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/objective"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/rewardcmd"
	gfnrun "github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/task"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/train"
)

// objectiveDefaultLambda is SubTB's λ shown in --help.
const objectiveDefaultLambda = objective.DefaultLambda

// gridFamily is the family of discrete environments: the deceptive
// hypergrid (package train).
var gridFamily = &family{
	name: "the grid", kind: "grid", legacy: "gfn_train_state",
	tasks: task.Names, program: rewardcmd.Grid,
	setup: setupGrid, open: openGrid, evalSamples: 100000,
}

func setupGrid(c *trainCmd) error {
	u := c.u
	d := train.DefaultConfig()
	spec := task.Spec{}
	c.synopsis = "Train a Student GFlowNet, with an adaptive Teacher by default, on the deceptive hypergrid.\nWrites metrics.csv, summary.json, checkpoint.safetensors + config.json and PNG figures to --out."
	c.unit, c.budget, c.ckEvery = "iteration", "reward-calls", 500 // Ctrl-C and crashes lose at most that (Ctrl-C nothing: it checkpoints)
	c.outName = "<task>-d<dim>-H<side>-<method>-seed<seed>"
	fs := c.fs
	help := "environment: " + strings.Join(task.Names, ", ")
	if u != nil {
		c.ckEvery = 100 // a failing program then costs at most 100 iterations
		help = "hypergrid: a grid rewarded by the --reward-cmd program"
	}
	c.addTaskFlag(help)
	fs.IntVar(&spec.Dim, "dim", 2, "hypergrid dimension d (>= 1)")
	fs.IntVar(&spec.Side, "side", 128, "hypergrid side length H (>= 2)")
	fs.StringVar(&spec.Reward, "reward", string(hypergrid.Deceptive), "hypergrid reward: deceptive (reference code), deceptive-paper (paper's equation), original (Bengio et al. 2021)")
	method := fs.String("method", string(d.Method), "training method: tb (on-policy Student), teacher, or gafn (TB with RND intrinsic rewards)")
	fs.Float64Var(&d.GAFNScale, "gafn-scale", d.GAFNScale, "scale of GAFN's intrinsic rewards")
	objective := fs.String("objective", string(d.Objective), "the Student's training objective: tb (trajectory balance), db (detailed balance; the Teacher trains with DB too), subtb (sub-trajectory balance, --lambda), vargrad (log-partition variance), fm (flow matching on the outputs as log edge flows), mdb (modified DB: every visited state scored as if it stopped there, a reward call each), fl-db or fl-subtb (forward-looking flows, log F(s) = log R(s) + the flow head, a reward call per visited state); the Teacher of all but db trains with TB on the Student's per-object loss")
	fs.Float64Var(&d.Lambda, "lambda", objectiveDefaultLambda, "subtb, fl-subtb: weight lambda^(j-i) of each sub-trajectory i..j")
	fs.BoolVar(&d.FreeStateRewards, "free-state-rewards", false, "mdb, fl-db, fl-subtb: the visited states' rewards do not count toward --reward-calls (reported apart as state_reward_calls), so these objectives take as many trajectories as the others")
	calls := fs.Int("reward-calls", 0, "reward-call budget; 0 = the paper's (96000, or 384000 for d=4 H=32)")
	fs.IntVar(&d.Batch, "batch", d.Batch, "trajectories per batch (>= 1)")
	hidden := intList(d.Hidden)
	fs.Var(&hidden, "hidden", "hidden layer widths of the policy MLPs")
	c.addPrecisionFlag(&d.Precision, "the policies' layers between two hidden layers, the 256x256 one by default; the one-hot input layer and the logits stay fp32")
	fs.Float64Var(&d.Student.LR, "lr", d.Student.LR, "Adam learning rate of the Student policy")
	fs.Float64Var(&d.Teacher.LR, "teacher-lr", d.Teacher.LR, "Adam learning rate of the Teacher policy")
	logZLR := fs.Float64("logz-lr", d.Student.LogZLR, "Adam learning rate of log Z (Student and Teacher)")
	fs.Float64Var(&d.LogZInit, "logz-init", d.LogZInit, "initial log Z")
	clip := fs.Float64("clip", d.Student.Clip, "gradient-norm clipping of each agent's policy and log Z (0 = off)")
	fs.Float64Var(&d.Eps, "eps", d.Eps, "eps-uniform exploration mixed into the behaviour policies, in [0,1]")
	fs.Float64Var(&d.Temperature, "temperature", d.Temperature, "logit temperature of the behaviour policies (> 0)")
	treward := fs.String("teacher-reward", string(train.RewardReference), "Teacher reward form: reference (authors' code) or paper")
	fs.Float64Var(&d.Reward.C, "C", d.Reward.C, "extra weight C of under-sampled trajectories (delta > 0) in the Teacher reward")
	fs.Float64Var(&d.Reward.Alpha, "alpha", d.Reward.Alpha, "reward mixing: weight alpha of log R in the Teacher reward")
	fs.Float64Var(&d.Reward.Eps, "teacher-eps", d.Reward.Eps, "smoothing eps of the paper-form Teacher reward")
	fs.IntVar(&d.NMC, "n-mc", d.NMC, "backward trajectories per x averaged in the Teacher reward (>= 1)")
	fs.IntVar(&d.Teachers, "teachers", 1, "number of Teachers K of method teacher; K > 1 take the T slots in turn and share the Teacher reward by --teacher-split")
	split := fs.String("teacher-split", string(teacher.Share), "how K > 1 Teachers share the reward: share (R_T times Teacher k's share of the Teachers' probability of x) or none (each the whole R_T)")
	fs.StringVar(&d.Schedule, "schedule", "", "behaviour-policy cycle of S (Student), T (Teacher) and B (buffer replay); empty = SSTT for teacher, S for tb, SBTB and SB with --buffer")
	ratio := fs.String("ratio", "", "behaviour ratio Student:Teacher:Buffer, like 1:1:2 (SBTB) or 2:1:3; an alternative to --schedule")
	buffer := fs.String("buffer", "", "replay buffer priority: uniform, reward (PRT), loss (delta^2) or teacher (PER); empty = no buffer")
	ties := fs.String("buffer-ties", "oldest", "order of buffer entries of equal priority for the rank weights: oldest (first stored first) or hash (a fixed pseudo-random order, as the reference's unstable sort scatters them)")
	fs.StringVar(&d.Buffer.Pairing, "buffer-pairing", "batch", "batch (correct) or completion: the reference code before commit 77091bf, which stored terminal states with other trajectories' rewards (the paper's PRT/PER rows)")
	fs.IntVar(&d.Buffer.Cap, "buffer-size", 0, "replay buffer capacity (0 = the reference's int(0.1*(H-1+d)*(H-1)^(d-1)))")
	fs.BoolVar(&d.LS.On, "ls", false, "back-and-forth local search on 1 in 8 Student (tb) or 1 in 4 Teacher batches")
	fs.IntVar(&d.LS.Iterations, "ls-iterations", d.LS.Iterations, "local search rounds per batch")
	fs.Float64Var(&d.LS.BackRatio, "ls-back-ratio", d.LS.BackRatio, "fraction of a trajectory's states that local search backtracks, in (0,1]")
	fs.Uint64Var(&d.Seed, "seed", 0, "random seed; the same seed gives the same run")
	fs.IntVar(&c.evalEvery, "eval-every", 0, "iterations between curve points (0 = 50 points per run)")
	evalSamples := fs.Int("eval-samples", 100000, "fresh Student samples for the final empirical L1 (0 = skip)")
	c.summary = func(w io.Writer, s any) { printGridSummary(w, s.(*train.Summary)) }

	if c.resume != "" {
		st, err := train.ReadCheckpoint(c.resume)
		if err != nil {
			return usageError{err}
		}
		c.task, c.budgetNow = "hypergrid", st.Train.RewardCalls
		c.stored = fmt.Sprintf("%s, method %s, seed %d, %d reward calls", st.EnvName, st.Train.Method, st.Train.Seed, st.Train.RewardCalls)
		c.resumed = func(ctx context.Context, from string, opt gfnrun.Options) (any, error) {
			build := task.BuildJSON
			if u != nil {
				build = programGrid(u.client) // reward.json records the command in use
			}
			env, err := build(st.Env)
			if err != nil {
				return nil, usageError{err}
			}
			res, err := train.Resume(ctx, from, env, train.RunOptions{Options: opt, Budget: *calls})
			if err != nil {
				return nil, err
			}
			return &res.Summary, nil
		}
		return nil
	}
	var env discrete.Env
	c.check = func() (string, error) {
		if u != nil {
			if flagGiven(fs, "reward") {
				return "", usagef("--reward %q and --reward-cmd: give one of them", spec.Reward)
			}
			u.rec.Dim, u.rec.Side = spec.Dim, spec.Side
		}
		d.Method, d.Hidden = train.Method(*method), hidden
		d.Student.LogZLR, d.Teacher.LogZLR, d.Student.Clip, d.Teacher.Clip = *logZLR, *logZLR, *clip, *clip
		switch train.TeacherReward(*treward) {
		case train.RewardReference:
			d.Reward.Form = teacher.GridReference
		case train.RewardPaper:
			d.Reward.Form = teacher.Paper
		default:
			return "", usagef("teacher reward %q is unknown (allowed: reference, paper)", *treward)
		}
		d.Buffer.Priority = replay.Priority(*buffer)
		if *ties != "oldest" {
			d.Buffer.Ties = *ties // empty, the default, keeps older runs' config.json as it was
		}
		if d.Teachers > 1 {
			d.TeacherSplit = teacher.Split(*split)
		} else if flagGiven(fs, "teacher-split") {
			return "", usagef("--teacher-split %q needs --teachers > 1 (got %d)", *split, d.Teachers)
		}
		d.Objective = train.Objective(*objective)
		subtb := d.Objective == train.ObjectiveSubTB || d.Objective == train.ObjectiveFLSubTB
		if flagGiven(fs, "lambda") && !subtb {
			return "", usagef("--lambda %v weighs subtb's sub-trajectories; objective %q has none", d.Lambda, d.Objective)
		}
		if !subtb {
			d.Lambda = 0
		}
		if *ratio != "" {
			if d.Schedule != "" {
				return "", usagef("--ratio %q and --schedule %q: give one of them", *ratio, d.Schedule)
			}
			sched, err := teacher.FromRatio(*ratio)
			if err != nil {
				return "", usageError{err}
			}
			d.Schedule = string(sched)
		}
		if *calls < 0 || *evalSamples < 0 {
			return "", usagef("reward-calls %d and eval-samples %d must be >= 0", *calls, *evalSamples)
		}
		d.RewardCalls = *calls
		if *calls == 0 {
			d.RewardCalls = task.RewardCalls(spec)
		}
		spec.Task = c.task
		var err error
		if u == nil {
			env, err = task.Build(spec)
		} else {
			spec.Reward = string(hypergrid.Custom)
			// The program starts later; until then the grid checks the sizes.
			env, err = task.BuildFunc(spec, func([]int32, int, []float64) error { return nil })
		}
		if err != nil {
			return "", usageError{err}
		}
		if err := d.Validate(); err != nil {
			return "", usageError{err}
		}
		name := spec.Task
		if u != nil {
			name += "-cmd"
		}
		return fmt.Sprintf("%s-d%d-H%d-%s-seed%d", name, spec.Dim, spec.Side, d.Method, d.Seed), nil
	}
	c.header = func() string {
		if u != nil {
			spec.RewardCmd = u.rec.Command
			env, _ = task.BuildFunc(spec, u.client.Cells) // the sizes were checked
		}
		m := string(d.Method)
		if d.Teachers > 1 {
			m = fmt.Sprintf("%s (%d Teachers, split %s)", d.Method, d.Teachers, d.TeacherSplit)
		}
		return fmt.Sprintf("%v, method %s, seed %d, %d reward calls in %d steps of %d", env, m, d.Seed, d.RewardCalls, d.Steps(), d.Batch)
	}
	c.start = func(ctx context.Context, opt gfnrun.Options) (any, error) {
		res, err := train.Run(ctx, env, d, train.RunOptions{Options: opt, EnvSpec: spec, EvalSamples: *evalSamples})
		if err != nil {
			return nil, err
		}
		return &res.Summary, nil
	}
	return nil
}

func printGridSummary(w io.Writer, s *train.Summary) {
	fmt.Fprintf(w, "  steps %d (gradient steps %d), reward calls %d", s.Steps, s.GradSteps, s.RewardCalls)
	if s.StateRewardCalls > 0 {
		fmt.Fprintf(w, " (and %d of visited states, outside the budget)", s.StateRewardCalls)
	}
	fmt.Fprintln(w)
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
	if s.PeakRSSMiB > 0 {
		mem := fmt.Sprintf("  peak memory %.0f MiB", s.PeakRSSMiB)
		if s.BufferEntries > 0 {
			mem += fmt.Sprintf(" (replay buffer: %d entries)", s.BufferEntries)
		}
		fmt.Fprintln(w, mem)
	}
}

// programGrid builds a grid run's environment from its stored spec with
// the log-rewards of the program c: the spec keeps the command the run
// started with, the program is the one running now.
func programGrid(c *rewardcmd.Client) func(json.RawMessage) (discrete.Env, error) {
	return func(raw json.RawMessage) (discrete.Env, error) {
		var s task.Spec
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("environment spec: %w", err)
		}
		return task.BuildFunc(s, c.Cells)
	}
}

// gridRun is a loaded grid run.
type gridRun struct{ t *train.Trainer }

func openGrid(dir string, u *userReward) (opened, error) {
	st, err := train.ReadCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	build := task.BuildJSON
	if u != nil {
		build = programGrid(u.client)
	}
	env, err := build(st.Env)
	if err != nil {
		return nil, err
	}
	t, err := train.Load(dir, env)
	return gridRun{t}, err
}

// samples writes the terminal states' coordinates and log-rewards.
func (g gridRun) samples(n int, seed uint64) (func(io.Writer) error, error) {
	t := g.t
	t.Reseed(seed)
	xs := t.Sample(n, nil)
	logR := make([]float64, n)
	if err := t.Env.LogReward(xs, n, logR); err != nil {
		return nil, err
	}
	return func(w io.Writer) error {
		cw := csv.NewWriter(w)
		k := t.Env.StateLen()
		cols := k
		if g, ok := t.Env.(*hypergrid.Grid); ok {
			cols = g.D // the stop flag is not part of x
		}
		head := make([]string, 0, cols+1)
		for i := range cols {
			head = append(head, fmt.Sprintf("x%d", i+1))
		}
		cw.Write(append(head, "log_reward"))
		row := make([]string, cols+1)
		for i := range logR {
			for j := range cols {
				row[j] = strconv.Itoa(int(xs[i*k+j]))
			}
			row[cols] = strconv.FormatFloat(logR[i], 'g', -1, 64)
			cw.Write(row)
		}
		cw.Flush()
		return cw.Error()
	}, nil
}

// report prints the run's evaluation (train.Trainer.Evaluate).
func (g gridRun) report(n int, seed uint64, weights string, w io.Writer) error {
	if weights != "" {
		return usagef("--weights writes the log weights of diffusion and sequence runs; this is a grid run")
	}
	r, err := g.t.Evaluate(n, rand.New(rand.NewPCG(seed, 0x5a)))
	if err != nil {
		return err
	}
	return printJSON(w, r)
}

// printJSON prints v as indented JSON.
func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
