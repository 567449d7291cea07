package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/progress"
	gfnrun "github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/seqtrain"
	"github.com/gfngo/gfn/teacher"
)

// isSeqTask reports whether name is a sequence-design task.
func isSeqTask(name string) bool {
	_, err := biochem.Named(name)
	return err == nil
}

// isSeqCheckpoint reports whether dir holds a sequence-training checkpoint
// (or one of an earlier gfn, which seqtrain refuses naming gfn migrate).
func isSeqCheckpoint(dir string) bool {
	_, err := seqtrain.ReadCheckpoint(dir)
	var legacy *gfnrun.LegacyError
	return err == nil || errors.As(err, &legacy) && legacy.Key == "gfn_seq_state"
}

func runTrainSeq(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return trainSeq(ctx, args, stdout, stderr, nil)
}

// seqTask is a sequence task of the CLI: a biochemical task, or a reward
// program's sequences.
type seqTask interface {
	seqtrain.Task
	Name() string
}

// trainSeq trains on a biochemical task or, with u, on sequences that u's
// program scores.
func trainSeq(ctx context.Context, args []string, stdout, stderr io.Writer, u *userReward) error {
	taskName := flagValue(args, "task")
	resume := flagValue(args, "resume")
	var stored seqtrain.Stored
	if resume != "" {
		var err error
		if stored, err = seqtrain.ReadCheckpoint(resume); err != nil {
			return usageError{err}
		}
		taskName = stored.Task
	}
	var task seqTask
	var d seqtrain.Config
	var set biochem.Settings
	synopsis := "Train a GFlowNet sampler of sequences on a biochemical task (tfbind8, qm9str, sehstr, rna),\nwith an adaptive Teacher and PER by default, in the prepend-append MDP with the SSR policy.\nDefaults shown are the reference code's settings for tfbind8 (each task has its own rounds,\nepsilon and width). Writes metrics.csv, summary.json, checkpoint.safetensors + config.json and\ncurves.png (modes, ELBO, EUBO against rounds) to --out."
	taskHelp := "task: " + strings.Join(biochem.Names, ", ") + " (see also gfn train --task hypergrid|25gmm --help)"
	if u == nil {
		bt, err := biochem.Named(taskName)
		if err != nil {
			return usageError{err}
		}
		task, d, set = bt, seqtrain.ForTask(bt), bt.Settings()
	} else {
		task, d = userSeqTask{u}, seqtrain.DefaultConfig()
		set = biochem.Settings{EvalEvery: 100, EvalSamples: 512}
		synopsis, taskHelp = u.synopsis(), "seq: sequences scored by the --reward-cmd program"
	}
	var err error
	fs := newFlagSet("train", synopsis)
	fs.String("task", task.Name(), taskHelp)
	u.addFlags(fs)
	method := fs.String("method", string(d.Method), "training method: "+joinMethods(seqtrain.Methods)+" (teacher: teacher-per)")
	fs.IntVar(&d.Rounds, "rounds", d.Rounds, "training rounds (one online batch, and one replay batch for the buffer methods); with --resume, a larger number extends the run")
	fs.IntVar(&d.OnlineBatch, "batch", d.OnlineBatch, "online samples (reward calls) per round")
	fs.IntVar(&d.OfflineBatch, "offline-batch", d.OfflineBatch, "replayed objects per round")
	fs.Float64Var(&d.Epsilon, "epsilon", d.Epsilon, "probability of a uniform step over unique children (every method but tb)")
	fs.IntVar(&d.Buffer, "buffer-size", d.Buffer, "replay buffer capacity")
	fs.StringVar(&d.MDP, "mdp", d.MDP, "MDP: pa (prepend-append) or append (autoregressive)")
	fs.StringVar(&d.Policy.Kind, "policy", d.Policy.Kind, "policy network: ssr (state x state -> R) or mlp (one-hot MLP)")
	fs.IntVar(&d.Policy.Hidden, "hidden", d.Policy.Hidden, "hidden width of the policy networks")
	fs.IntVar(&d.Policy.Embed, "embed", d.Policy.Embed, "embedding width of the SSR encoder")
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
	out := fs.String("out", "", "output directory (default runs/<task>-<method>-seed<seed>)")
	evalEvery := fs.Int("eval-every", set.EvalEvery, "rounds between evaluations")
	evalSamples := fs.Int("eval-samples", set.EvalSamples, "Student samples (and target samples) per evaluation")
	ckEvery := fs.Int("checkpoint-every", 100, "rounds between checkpoints (0 = only at the end)")
	fs.String("resume", "", "continue the run whose checkpoint is in this directory (other settings come from it)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (for go tool pprof)")
	if err := parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if *evalEvery < 1 || *evalSamples < 1 || *ckEvery < 0 {
		return usagef("eval-every %d and eval-samples %d must be >= 1 and checkpoint-every %d >= 0", *evalEvery, *evalSamples, *ckEvery)
	}
	if err := u.checkFlags(fs); err != nil {
		return err
	}
	if resume != "" {
		if err := checkResumeFlags(fs, resume, taskName, "rounds"); err != nil {
			return err
		}
	}
	opt := seqtrain.RunOptions{Task: task.Name()}
	if !*quiet {
		opt.Progress, opt.ProgressTTY = stderr, progress.IsTerminal(stderr)
	}
	stop, err := startCPUProfile(*cpuprofile)
	if err != nil {
		return err
	}
	defer stop()
	var res *seqtrain.Result
	if resume != "" {
		var err error
		if opt.OutDir, err = resumeOut(resume, *out); err != nil {
			return err
		}
		cfg := stored.Config
		if flagGiven(fs, "rounds") {
			opt.Budget = d.Rounds
		} else {
			d.Rounds = cfg.Rounds
		}
		if err := u.start(ctx, opt.OutDir); err != nil {
			return err
		}
		defer u.close()
		fmt.Fprintf(stdout, "gfn train: resuming %s (%s, method %s, seed %d) at round %d of %d\n", resume, task.Name(), cfg.Method, cfg.Seed, stored.Done, d.Rounds)
		if res, err = seqtrain.Resume(ctx, resume, task, opt); err != nil {
			return u.failed(err, opt.OutDir)
		}
	} else {
		if d.Method, err = seqtrain.ParseMethod(*method); err != nil {
			return usageError{err}
		}
		opt.EvalEvery, opt.EvalSamples, opt.CheckpointEvery = *evalEvery, *evalSamples, *ckEvery
		d.Schedule = teacher.Schedule(*schedule)
		if !*ls {
			if d.LS.Teacher {
				return usagef("--ls-teacher needs --ls")
			}
			d.LS = seqtrain.LocalSearch{}
		}
		switch *treward {
		case "reference":
			d.Reward.Form = teacher.Sequence
		case "paper":
			d.Reward.Form = teacher.Paper
		default:
			return usagef("teacher reward %q is unknown (allowed: reference, paper)", *treward)
		}
		if err := d.Validate(); err != nil {
			return usageError{err}
		}
		opt.OutDir = *out
		if opt.OutDir == "" {
			opt.OutDir = filepath.Join("runs", fmt.Sprintf("%s-%s-seed%d", task.Name(), d.Method, d.Seed))
		}
		if err := safefile.CheckDir(opt.OutDir); err != nil {
			return usageError{err}
		}
		if err := checkFreshOut(opt.OutDir); err != nil {
			return err
		}
		if err := u.start(ctx, opt.OutDir); err != nil {
			return err
		}
		defer u.close()
		fmt.Fprintf(stdout, "gfn train: %s (length %d, %d tokens), method %s, seed %d, %d rounds of %d samples\n",
			task.Name(), task.Length(), len(task.Alphabet()), d.Method, d.Seed, d.Rounds, d.OnlineBatch)
		if res, err = seqtrain.Run(ctx, task, d, opt); err != nil {
			return u.failed(err, opt.OutDir)
		}
	}
	printSeqSummary(stdout, &res.Summary, opt.OutDir)
	return nil
}

func joinMethods(ms []seqtrain.Method) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

func printSeqSummary(w io.Writer, s *seqtrain.Summary, dir string) {
	fmt.Fprintf(w, "  rounds %d, reward calls %d, distinct sequences seen %d\n", s.Steps, s.RewardCalls, s.Seen)
	if s.ModesTotal > 0 {
		fmt.Fprintf(w, "  modes found %d of %d (%d among the final %d samples)\n", s.ModesFound, s.ModesTotal, s.ModesEval, s.Samples)
	}
	fmt.Fprintf(w, "  final: ELBO %.4f, EUBO %.4f, log Z estimate %.4f", s.ELBO, s.EUBO, s.LogZEst)
	if !math.IsNaN(s.TrueLogZ) {
		fmt.Fprintf(w, " (true %.4f)", s.TrueLogZ)
	}
	fmt.Fprintf(w, ", learned log Z %.4f, correlation %.3f\n", s.LogZ, s.Pearson)
	fmt.Fprintf(w, "  wall %s (training %s, %.1f ms/round; evaluation %s; %s kernels)\n",
		progress.Duration(time.Duration(s.WallSeconds*float64(time.Second))), progress.Duration(time.Duration(s.TrainSeconds*float64(time.Second))),
		s.MsPerStepMean, progress.Duration(time.Duration(s.EvalSeconds*float64(time.Second))), s.Kernel)
	reward := ""
	if _, err := os.Stat(filepath.Join(dir, rewardFile)); err == nil {
		reward = rewardFile + ", "
	}
	fmt.Fprintf(w, "  wrote %s: metrics.csv, summary.json, %s, %s, %scurves.png\n", dir, gfnrun.CheckpointFile, gfnrun.ConfigFile, reward)
}

// loadSeq loads the sequence-training checkpoint in dir with its task.
func loadSeq(dir string) (*biochem.Task, *seqtrain.Trainer, error) {
	st, err := seqtrain.ReadCheckpoint(dir)
	if err != nil {
		return nil, nil, err
	}
	task, err := biochem.Named(st.Task)
	if err != nil {
		return nil, nil, err
	}
	t, err := seqtrain.Load(dir, task)
	return task, t, err
}

// evalSeq prints the evaluation of training (modes, ELBO, log Z estimate,
// EUBO, correlation) of a sequence checkpoint's Student on n fresh samples
// and n target samples, as JSON; with weights != "", it also writes the
// log weights of both sets there.
func evalSeq(dir string, n int, seed uint64, weights string, stdout io.Writer) error {
	task, t, err := loadSeq(dir)
	if err != nil {
		return err
	}
	return reportSeq(t, task, task.Name(), n, seed, weights, stdout)
}

// reportSeq prints the evaluation of training of a sequence trainer on n
// fresh samples, and as many target samples if the task is a Targeter, as
// JSON. With weights != "", it first writes every sample's log weight there
// (writeSeqLogWeights).
func reportSeq(t *seqtrain.Trainer, task seqtrain.Task, name string, n int, seed uint64, weights string, stdout io.Writer) error {
	var targets []int32
	if tg, ok := task.(seqtrain.Targeter); ok {
		var err error
		if targets, err = tg.TargetSamples(n, rand.New(rand.NewPCG(seed, 0xe8ac7))); err != nil {
			return err
		}
	}
	var ev seqtrain.Evaluator
	m, err := ev.Evaluate(t, n, targets, rand.New(rand.NewPCG(seed, 0x5a)))
	if err != nil {
		return err
	}
	if weights != "" {
		fresh, target := ev.LogWeights()
		err := safefile.Write(weights, func(w io.Writer) error {
			return writeSeqLogWeights(w, task, []seqWeights{{"model", ev.Samples(), fresh}, {"target", targets, target}})
		})
		if err != nil {
			return err
		}
	}
	rep := struct {
		Task    string           `json:"task"`
		Round   int              `json:"round"`
		Student seqtrain.Metrics `json:"student"`
	}{name, t.Round, m}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// seqWeights is the Student's log weights on one set of sequences (rows
// of the task's Length tokens).
type seqWeights struct {
	set  string
	xs   []int32
	logW []float64
}

// writeSeqLogWeights writes the sets as CSV: agent, set, log_w, sequence,
// a row per sequence (every digit of log w: readers sum them).
func writeSeqLogWeights(w io.Writer, task seqtrain.Task, sets []seqWeights) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"agent", "set", "log_w", "sequence"})
	alphabet, L := task.Alphabet(), task.Length()
	var sb strings.Builder
	for _, s := range sets {
		for r, lw := range s.logW {
			cw.Write([]string{"student", s.set, strconv.FormatFloat(lw, 'g', -1, 64), seqString(&sb, alphabet, s.xs[r*L:(r+1)*L])})
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

func sampleSeq(dir string, n int, seed uint64, out string, stdout, stderr io.Writer) error {
	task, t, err := loadSeq(dir)
	if err != nil {
		return err
	}
	return writeSeqSamples(t, task, n, seed, out, stdout, stderr)
}

// scoredTask is a sequence task with raw scores and modes, as the
// built-in ones.
type scoredTask interface {
	Score(xs []int32, n int, out []float64) error
	Decode(x []int32) string
	IsMode(x []int32) bool
}

// writeSeqSamples writes n Student samples of t as CSV: the sequence, its
// raw score, log R and whether it is a mode, or for a task that is not a
// scoredTask (a reward program's) the sequence and log R.
func writeSeqSamples(t *seqtrain.Trainer, task seqtrain.Task, n int, seed uint64, out string, stdout, stderr io.Writer) error {
	xs := t.Sample(n, rand.New(rand.NewPCG(seed, 0x5a)))
	L := task.Length()
	score, logR := make([]float64, n), make([]float64, n)
	scored, _ := task.(scoredTask)
	if scored != nil {
		if err := scored.Score(xs, n, score); err != nil {
			return err
		}
	}
	if err := task.LogReward(xs, n, logR); err != nil {
		return err
	}
	alphabet := task.Alphabet()
	write := func(wr io.Writer) error {
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
	}
	return emitCSV(out, n, write, stdout, stderr)
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
