package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/objective"
	"github.com/gfngo/gfn/rewardcmd"
	gfnrun "github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/seqtrain"
	"github.com/gfngo/gfn/teacher"
)

// seqFamily is the family of sequence design (package seqtrain).
var seqFamily = &family{
	name: "the sequence tasks", kind: "sequence", legacy: "gfn_seq_state",
	tasks: biochem.Names, program: rewardcmd.Sequence,
	setup: setupSeq, open: openSeq, evalSamples: 2048,
}

// seqTask is a sequence task of the CLI: a biochemical task, or a reward
// program's sequences.
type seqTask interface {
	seqtrain.Task
	Name() string
}

// setupSeq defines a sequence run's flags, with the task's defaults.
func setupSeq(c *trainCmd) error {
	u, fs := c.u, c.fs
	var stored seqtrain.Stored
	if c.resume != "" {
		var err error
		if stored, err = seqtrain.ReadCheckpoint(c.resume); err != nil {
			return usageError{err}
		}
		c.task, c.budgetNow = stored.Task, stored.Config.Rounds
		c.stored = fmt.Sprintf("%s, method %s, seed %d", stored.Task, stored.Config.Method, stored.Config.Seed)
	}
	var task seqTask
	var d seqtrain.Config
	var set biochem.Settings
	c.synopsis = "Train a GFlowNet sampler of sequences on a biochemical task (" + strings.Join(biochem.Names, ", ") + "),\nwith an adaptive Teacher and PER by default, in the prepend-append MDP with the SSR policy.\nDefaults shown are the reference code's settings for tfbind8 (each task has its own rounds,\nepsilon and width). Writes metrics.csv, summary.json, checkpoint.safetensors + config.json and\ncurves.png (modes, ELBO, EUBO against rounds) to --out."
	taskHelp := "task: " + strings.Join(biochem.Names, ", ")
	if u == nil {
		bt, err := biochem.Named(c.task)
		if err != nil {
			return usageError{err}
		}
		task, d, set = bt, seqtrain.ForTask(bt), bt.Settings()
	} else {
		task, d = userSeqTask{u}, seqtrain.DefaultConfig()
		set = biochem.Settings{EvalEvery: 100, EvalSamples: 512}
		c.synopsis, taskHelp = u.synopsis(), "seq: sequences scored by the --reward-cmd program"
	}
	c.unit, c.budget, c.ckEvery = "round", "rounds", 100
	c.outName = "<task>-<method>-seed<seed>"
	c.addTaskFlag(taskHelp)
	method := fs.String("method", string(d.Method), "training method: "+joinMethods(seqtrain.Methods)+" (teacher: teacher-per)")
	fs.StringVar(&d.Objective, "objective", "tb", "the Student's training objective: "+strings.Join(seqtrain.Objectives, ", ")+" (db and subtb learn state flows, with a flow head on the policy); the Teacher trains with TB on the Student's per-object loss")
	fs.Float64Var(&d.Lambda, "lambda", objective.DefaultLambda, "subtb: weight lambda^(j-i) of each sub-trajectory i..j")
	fs.IntVar(&d.Rounds, "rounds", d.Rounds, "training rounds (one online batch, and one replay batch for the buffer methods)")
	fs.IntVar(&d.OnlineBatch, "batch", d.OnlineBatch, "online samples (reward calls) per round")
	fs.IntVar(&d.OfflineBatch, "offline-batch", d.OfflineBatch, "replayed objects per round")
	fs.Float64Var(&d.Epsilon, "epsilon", d.Epsilon, "probability of a uniform step over unique children (every method but tb)")
	fs.IntVar(&d.Buffer, "buffer-size", d.Buffer, "replay buffer capacity")
	fs.StringVar(&d.MDP, "mdp", d.MDP, "MDP: pa (prepend-append) or append (autoregressive)")
	fs.StringVar(&d.Policy.Kind, "policy", d.Policy.Kind, "policy network: ssr (state x state -> R) or mlp (one-hot MLP)")
	fs.IntVar(&d.Policy.Hidden, "hidden", d.Policy.Hidden, "hidden width of the policy networks")
	fs.IntVar(&d.Policy.Embed, "embed", d.Policy.Embed, "embedding width of the SSR encoder")
	c.addPrecisionFlag(&d.Precision, "ssr: the encoder's second layer and the scorer's first; mlp: the layers between two hidden layers; the one-hot input, the edge score and the logits stay fp32")
	fs.Float64Var(&d.Student.LR, "lr", d.Student.LR, "Student policy learning rate")
	fs.Float64Var(&d.Student.LogZLR, "logz-lr", d.Student.LogZLR, "Student log Z learning rate")
	fs.Float64Var(&d.Teacher.LR, "teacher-lr", d.Teacher.LR, "Teacher policy learning rate")
	fs.Float64Var(&d.Teacher.LogZLR, "teacher-logz-lr", d.Teacher.LogZLR, "Teacher log Z learning rate")
	treward := fs.String("teacher-reward", "reference", "Teacher reward form: reference (log of a log, the released code) or paper")
	fs.Float64Var(&d.Reward.C, "C", d.Reward.C, "extra weight C of under-sampled objects (delta > 0)")
	fs.Float64Var(&d.Reward.Alpha, "alpha", d.Reward.Alpha, "weight alpha of log R in the Teacher reward")
	ls := fs.Bool("ls", false, "back-and-forth local search of the online batch (the reference's TFbind8 appendix: --ls-rounds 7, --ls-back 3)")
	fs.IntVar(&d.LS.Rounds, "ls-rounds", 7, "local search: rounds of proposals per online batch (the batch must be a multiple of rounds+1)")
	fs.IntVar(&d.LS.Back, "ls-back", 3, "local search: steps back and forth")
	fs.BoolVar(&d.LS.Greedy, "ls-greedy", false, "local search: accept a proposal when its reward is higher (the paper's rule) instead of the code's Metropolis-Hastings coin")
	fs.BoolVar(&d.LS.Teacher, "ls-teacher", false, "local search: the Teacher's rounds search with the Teacher's policy, scored by the Teacher's reward (the paper's appendix); off, every online batch is the Student's search, as in the authors' code")
	schedule := fs.String("schedule", string(d.Schedule), "who draws each round's online batch: a cycle of S (Student) and T (Teacher)")
	fs.Uint64Var(&d.Seed, "seed", 0, "random seed; the same seed gives the same run")
	fs.IntVar(&c.evalEvery, "eval-every", set.EvalEvery, "rounds between evaluations")
	evalSamples := fs.Int("eval-samples", set.EvalSamples, "Student samples (and target samples) per evaluation")
	c.summary = func(w io.Writer, s any) { printSeqSummary(w, s.(*seqtrain.Summary)) }
	if c.resume != "" {
		c.resumed = func(ctx context.Context, from string, opt gfnrun.Options) (any, error) {
			ro := seqtrain.RunOptions{Options: opt}
			if flagGiven(fs, "rounds") {
				ro.Budget = d.Rounds
			}
			res, err := seqtrain.Resume(ctx, from, task, ro)
			if err != nil {
				return nil, err
			}
			return &res.Summary, nil
		}
		return nil
	}
	c.check = func() (string, error) {
		if c.evalEvery < 1 || *evalSamples < 1 {
			return "", usagef("eval-every %d and eval-samples %d must be >= 1", c.evalEvery, *evalSamples)
		}
		var err error
		if d.Method, err = seqtrain.ParseMethod(*method); err != nil {
			return "", usageError{err}
		}
		if flagGiven(fs, "lambda") && d.Objective != "subtb" {
			return "", usagef("--lambda %v weighs subtb's sub-trajectories; objective %q has none", d.Lambda, d.Objective)
		}
		if d.Objective != "subtb" {
			d.Lambda = 0
		}
		if d.Objective == "tb" {
			d.Objective = "" // the reference's, as earlier runs' config.json says
		}
		d.Schedule = teacher.Schedule(*schedule)
		if !*ls {
			if d.LS.Teacher {
				return "", usagef("--ls-teacher needs --ls")
			}
			d.LS = seqtrain.LocalSearch{}
		}
		switch *treward {
		case "reference":
			d.Reward.Form = teacher.Sequence
		case "paper":
			d.Reward.Form = teacher.Paper
		default:
			return "", usagef("teacher reward %q is unknown (allowed: reference, paper)", *treward)
		}
		if err := d.Validate(); err != nil {
			return "", usageError{err}
		}
		return fmt.Sprintf("%s-%s-seed%d", task.Name(), d.Method, d.Seed), nil
	}
	c.header = func() string {
		return fmt.Sprintf("%s (length %d, %d tokens), method %s, seed %d, %d rounds of %d samples",
			task.Name(), task.Length(), len(task.Alphabet()), d.Method, d.Seed, d.Rounds, d.OnlineBatch)
	}
	c.start = func(ctx context.Context, opt gfnrun.Options) (any, error) {
		res, err := seqtrain.Run(ctx, task, d, seqtrain.RunOptions{Options: opt, Task: task.Name(), EvalSamples: *evalSamples})
		if err != nil {
			return nil, err
		}
		return &res.Summary, nil
	}
	return nil
}

func joinMethods(ms []seqtrain.Method) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

func printSeqSummary(w io.Writer, s *seqtrain.Summary) {
	fmt.Fprintf(w, "  rounds %d, reward calls %d, distinct sequences seen %d\n", s.Steps, s.RewardCalls, s.Seen)
	if s.ModesTotal > 0 {
		fmt.Fprintf(w, "  modes found %d of %d (%d among the final %d samples)\n", s.ModesFound, s.ModesTotal, s.ModesEval, s.Samples)
	}
	fmt.Fprintf(w, "  final: ELBO %.4f, EUBO %.4f, log Z estimate %.4f", s.ELBO, s.EUBO, s.LogZEst)
	if !math.IsNaN(s.TrueLogZ) {
		fmt.Fprintf(w, " (true %.4f)", s.TrueLogZ)
	}
	fmt.Fprintf(w, ", learned log Z %.4f, correlation %.3f\n", s.LogZ, s.Pearson)
}

// seqRun is a loaded sequence run.
type seqRun struct {
	t    *seqtrain.Trainer
	task seqTask
}

func openSeq(dir string, u *userReward) (opened, error) {
	st, err := seqtrain.ReadCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	var task seqTask = userSeqTask{u}
	if u == nil {
		if task, err = biochem.Named(st.Task); err != nil {
			return nil, err
		}
	}
	t, err := seqtrain.Load(dir, task)
	return seqRun{t, task}, err
}

// report prints the run's evaluation (seqtrain.Trainer.Evaluate) as
// JSON; with weights != "", it first writes every sample's log weight
// there (writeSeqLogWeights).
func (r seqRun) report(n int, seed uint64, weights string, w io.Writer) error {
	ev, err := r.t.Evaluate(n, rand.New(rand.NewPCG(seed, 0x5a)))
	if err != nil {
		return err
	}
	if weights != "" {
		if err := safefile.Write(weights, func(w io.Writer) error { return writeSeqLogWeights(w, r.task, ev.Weights) }); err != nil {
			return err
		}
	}
	return printJSON(w, struct {
		Task string `json:"task"`
		seqtrain.Evaluation
	}{r.task.Name(), ev})
}

// writeSeqLogWeights writes the sets as CSV: agent, set, log_w, sequence,
// a row per sequence (every digit of log w: readers sum them).
func writeSeqLogWeights(w io.Writer, task seqtrain.Task, sets []seqtrain.Weights) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"agent", "set", "log_w", "sequence"})
	alphabet, L := task.Alphabet(), task.Length()
	var sb strings.Builder
	for _, s := range sets {
		for r, lw := range s.LogW {
			cw.Write([]string{"student", s.Set, strconv.FormatFloat(lw, 'g', -1, 64), seqString(&sb, alphabet, s.X[r*L:(r+1)*L])})
		}
	}
	cw.Flush()
	return cw.Error()
}

// seqString spells the tokens x with alphabet, reusing sb.
func seqString(sb *strings.Builder, alphabet []string, x []int32) string {
	sb.Reset()
	for _, tok := range x {
		sb.WriteString(alphabet[tok])
	}
	return sb.String()
}

// scoredTask is a sequence task with raw scores and modes, as the
// built-in ones.
type scoredTask interface {
	Score(xs []int32, n int, out []float64) error
	Decode(x []int32) string
	IsMode(x []int32) bool
}

// samples writes the sequences, their raw scores, log R and whether
// each is a mode, or for a task that is not a scoredTask (a reward
// program's) the sequences and log R.
func (r seqRun) samples(n int, seed uint64) (func(io.Writer) error, error) {
	t, task := r.t, r.task
	xs := t.Sample(n, rand.New(rand.NewPCG(seed, 0x5a)))
	L := task.Length()
	score, logR := make([]float64, n), make([]float64, n)
	scored, _ := task.(scoredTask)
	if scored != nil {
		if err := scored.Score(xs, n, score); err != nil {
			return nil, err
		}
	}
	if err := task.LogReward(xs, n, logR); err != nil {
		return nil, err
	}
	alphabet := task.Alphabet()
	return func(wr io.Writer) error {
		cw := csv.NewWriter(wr)
		if scored != nil {
			cw.Write([]string{"sequence", "score", "log_reward", "mode"})
		} else {
			cw.Write([]string{"sequence", "log_reward"})
		}
		var sb strings.Builder
		for r := range n {
			x := xs[r*L : (r+1)*L]
			lr := strconv.FormatFloat(logR[r], 'g', -1, 64)
			if scored != nil {
				cw.Write([]string{scored.Decode(x), strconv.FormatFloat(score[r], 'g', -1, 64), lr, strconv.FormatBool(scored.IsMode(x))})
				continue
			}
			cw.Write([]string{seqString(&sb, alphabet, x), lr})
		}
		cw.Flush()
		return cw.Error()
	}, nil
}

// runReward prints the raw score and the reward of sequences of a task.
func runReward(args []string, stdout io.Writer) error {
	fs := newFlagSet("reward", "Print the raw score, the reward R and log R of sequences of a sequence-design task, and\nwhether each is one of the task's modes: gfn reward --task tfbind8 --seq ACGTACGT [--seq ...]\nor gfn reward --task tfbind8 ACGTACGT [...].")
	name := fs.String("task", "tfbind8", "task: "+strings.Join(biochem.Names, ", "))
	var seqs stringList
	fs.Var(&seqs, "seq", "a sequence to score (repeatable; sequences may also follow as arguments)")
	err := parseWithArgs(fs, args, stdout, func(s string) { seqs = append(seqs, s) })
	if err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	task, err := biochem.Named(*name)
	if err != nil {
		return usageError{err}
	}
	if len(seqs) == 0 {
		return usagef("no sequence given (use --seq, e.g. --seq %s)", strings.Repeat(task.Alphabet()[0], task.Length()))
	}
	xs := make([]int32, 0, len(seqs)*task.Length())
	for _, s := range seqs {
		x, err := task.Encode(s)
		if err != nil {
			return usageError{err}
		}
		xs = append(xs, x...)
	}
	n := len(seqs)
	score, logR := make([]float64, n), make([]float64, n)
	if err := task.Score(xs, n, score); err != nil {
		return err
	}
	if err := task.LogReward(xs, n, logR); err != nil {
		return err
	}
	cw := csv.NewWriter(stdout)
	cw.Write([]string{"sequence", "score", "reward", "log_reward", "mode"})
	L := task.Length()
	for i := range n {
		x := xs[i*L : (i+1)*L]
		cw.Write([]string{task.Decode(x), strconv.FormatFloat(score[i], 'g', 10, 64), strconv.FormatFloat(math.Exp(logR[i]), 'g', 10, 64),
			strconv.FormatFloat(logR[i], 'g', 10, 64), strconv.FormatBool(task.IsMode(x))})
	}
	cw.Flush()
	return cw.Error()
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
