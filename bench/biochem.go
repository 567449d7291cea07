package bench

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/seqtrain"
)

// BiochemMethods are the methods of the paper's sequence-design figure in
// its order (seqtrain.Methods): on-policy TB, ε-exploration, PRT, PER and
// the Teacher with PRT and with PER. Tables and figures keep this order.
var BiochemMethods = func() []string {
	ms := make([]string, len(seqtrain.Methods))
	for i, m := range seqtrain.Methods {
		ms[i] = string(m)
	}
	return ms
}()

// BiochemRows are the rows of the sequence-design tables as gfn train
// flags (the task, seed and output flags are added per run): the six
// methods of the paper's figure, and the appendix's variants on TFbind8.
var BiochemRows = func() map[string][]string {
	rows := map[string][]string{
		// The α ablation (α = 0.5 is the main rows' default: its row
		// has the main teacher-per runs' bits).
		"teacher-per-alpha0":   {"--method", "teacher-per", "--alpha", "0"},
		"teacher-per-alpha0.5": {"--method", "teacher-per", "--alpha", "0.5"},
		"teacher-per-alpha1":   {"--method", "teacher-per", "--alpha", "1"},
		// Back-and-forth local search, accepting a proposal when its
		// reward is higher, as the paper states.
		"per-ls":         {"--method", "per", "--ls", "--ls-greedy"},
		"teacher-per-ls": {"--method", "teacher-per", "--ls", "--ls-greedy"},
		// The Teacher's rounds search with the Teacher, scored by its
		// reward, as the paper's appendix describes; in the row above (the
		// authors' code) only the Student searches and samples.
		"teacher-per-tls": {"--method", "teacher-per", "--ls", "--ls-greedy", "--ls-teacher"},
	}
	for _, m := range seqtrain.Methods {
		rows[string(m)] = []string{"--method", string(m)}
	}
	return rows
}()

// BiochemTable is one sequence-design experiment: its rows (BiochemRows
// keys), its tasks and the paper's claims on it.
type BiochemTable struct {
	Name    string
	Methods []string
	Tasks   []string
	Claims  []Claim
	// About introduces the table in results.md.
	About string
}

// BiochemTables are the experiments `gfn bench biochem --table` runs: the
// paper's figure (main: every method on every task) and its two TFbind8
// appendix figures, the α ablation of Teacher + PER (α = 0, 0.5, 1; the
// paper does not give its values) and local search with PER and
// Teacher + PER.
var BiochemTables = []BiochemTable{
	{"main", BiochemMethods, BiochemTasks, BiochemClaims, "Biological and chemical sequence design (the paper's §5.3 and its figure of training curves, " +
		"fig:tfbind8_l14_rna1_metrics_over_rounds; the paper reports only curves, drawn here in figure.png)."},
	{"alpha", []string{"teacher-per-alpha0", "teacher-per-alpha0.5", "teacher-per-alpha1"}, []string{"tfbind8"}, biochemAlphaClaims,
		"The α ablation of the appendix (fig:tfbind8_alpha_ablation): Teacher + PER whose Teacher reward weighs the " +
			"Student's log R by α = 0 (loss only), 0.5 (the main runs' setting) or 1. The paper's figure has no image " +
			"in its source and its text names only α = 0.5, so α = 0 and 1 bracket it."},
	{"local-search", []string{"per", "per-ls", "teacher-per", "teacher-per-ls", "teacher-per-tls"}, []string{"tfbind8"}, biochemLSClaims,
		"Local search in the appendix (fig:tfbind8_metrics_over_rounds_ls): PER and Teacher + PER, each with and " +
			"without the back-and-forth local search of Kim et al. (2024) on the online batch (4 fresh Student samples, " +
			"then 7 rounds of 3 steps back with P_B and 3 forward with the Student; a proposal replaces its chain's " +
			"object when its reward is higher, the paper's rule). In the Teacher + PER + LS row, as in the authors' code, " +
			"every online batch is the Student's search and the Teacher never samples, so its Student trains exactly as " +
			"PER + LS's does (the same bits); the row Teacher + PER + LS (Teacher's search) is the paper's description: " +
			"the Teacher's rounds (every third) search with the Teacher's policy and keep a proposal when its Teacher " +
			"reward is higher."},
}

// BiochemTableByName finds a sequence-design table.
func BiochemTableByName(name string) (BiochemTable, error) {
	return tableByName(BiochemTables, name, func(t BiochemTable) string { return t.Name })
}

// biochemRowNames are the appendix rows as the paper names them.
var biochemRowNames = map[string]string{
	"teacher-per-alpha0": "Teacher + PER, α = 0", "teacher-per-alpha0.5": "Teacher + PER, α = 0.5", "teacher-per-alpha1": "Teacher + PER, α = 1",
	"per-ls": "PER + LS", "teacher-per-ls": "Teacher + PER + LS", "teacher-per-tls": "Teacher + PER + LS (Teacher's search)",
}

// BiochemTasks are the sequence-design tasks in the order they run: the
// cheap ones (TFbind8 and L14-RNA1, width 128) first, then QM9str and
// sEHstr (width 1,024).
var BiochemTasks = []string{"tfbind8", "rna", "qm9str", "sehstr"}

// biochemPaperOrder is the paper's order of the tasks (its figure's rows:
// QM9, sEH, TFbind8, L14-RNA1), used by results.md and figure.png.
var biochemPaperOrder = []string{"qm9str", "sehstr", "tfbind8", "rna"}

// BiochemDefaultSeeds is the paper's number of runs per method and task.
const BiochemDefaultSeeds = 5

// BiochemCheckpointEvery is the default rounds between a run's
// checkpoints: an interrupted sEHstr run (the longest) loses at most 100
// of its 2,000 rounds.
const BiochemCheckpointEvery = 100

// quickEvalSamples is the evaluation size of a --quick run.
const quickEvalSamples = 256

// BiochemOptions shape a run of the sequence-design experiments.
type BiochemOptions struct {
	// Out is the root directory; the runs, logs and results go to
	// Out/biochem for the main table, Out/biochem-<table> for the others
	// (Dir).
	Out string
	// Table names the experiment (BiochemTables; "": main).
	Table string
	// Tasks and Methods select the runs (nil: the table's). Their order
	// does not matter: runs go in BiochemTasks order, results in the
	// table's order of methods.
	Tasks, Methods []string
	Seeds          int  // runs per method and task (0: BiochemDefaultSeeds)
	Jobs           int  // concurrent runs (0: 1)
	Quick          bool // a smoke run: 1 seed, 1/20 of each task's rounds, small evaluations
	// CheckpointEvery is the rounds between a run's checkpoints (0: only
	// at the end, so that an interrupted run starts again).
	CheckpointEvery int
	CollectOnly     bool // aggregate the finished runs, run nothing
}

// Dir is the directory of the runs and results.
func (o BiochemOptions) Dir() string {
	if o.Table == "" || o.Table == "main" {
		return filepath.Join(o.Out, "biochem")
	}
	return filepath.Join(o.Out, "biochem-"+o.Table)
}

// table returns the selected table (validate has checked its name).
func (o BiochemOptions) table() BiochemTable { return biochemTable(o.Table) }

// biochemTable is the table called name, or the main table for "" (or a
// name that is none).
func biochemTable(name string) BiochemTable {
	if t, err := BiochemTableByName(name); err == nil {
		return t
	}
	return BiochemTables[0]
}

// BiochemJob is one training run.
type BiochemJob struct {
	Table string
	// Method is the job's row (a BiochemRows key): a seqtrain method, or
	// one with the flags of an appendix variant.
	Task, Method string
	Seed         int
	Dir          string
	// Args are the gfn train arguments of a fresh start.
	Args []string
	// Rounds is the run's length, which a finished run must have.
	Rounds int
}

// biochemQuick returns the settings of a --quick run of a task with
// settings s: 1/20 of its rounds, an evaluation every quarter of those,
// and 256 evaluation samples.
func biochemQuick(s biochem.Settings) (rounds, evalEvery, evalSamples int) {
	rounds = max(s.Rounds/20, 4)
	return rounds, max(rounds/4, 1), quickEvalSamples
}

// validate checks the selection, naming a bad value and what is allowed.
func (o BiochemOptions) validate() error {
	if o.Table != "" {
		if _, err := BiochemTableByName(o.Table); err != nil {
			return err
		}
	}
	for _, t := range o.Tasks {
		if !slices.Contains(BiochemTasks, t) {
			return fmt.Errorf("bench: task %q is unknown (allowed: %s)", t, strings.Join(BiochemTasks, ", "))
		}
	}
	for _, m := range o.Methods {
		if rows := o.table().Methods; !slices.Contains(rows, m) {
			return fmt.Errorf("bench: method %q is not a row of table %s (allowed: %s)", m, o.table().Name, strings.Join(rows, ", "))
		}
	}
	if o.Seeds < 0 || o.Jobs < 0 || o.CheckpointEvery < 0 {
		return fmt.Errorf("bench: seeds %d, jobs %d and checkpoint-every %d must be >= 0", o.Seeds, o.Jobs, o.CheckpointEvery)
	}
	return nil
}

// methods returns the selected methods in the table's order.
func (o BiochemOptions) methods() []string {
	rows := o.table().Methods
	if len(o.Methods) == 0 {
		return rows
	}
	var ms []string
	for _, m := range rows {
		if slices.Contains(o.Methods, m) {
			ms = append(ms, m)
		}
	}
	return ms
}

// tasks returns the selected tasks in BiochemTasks order.
func (o BiochemOptions) tasks() []string {
	if len(o.Tasks) == 0 {
		return o.table().Tasks
	}
	var ts []string
	for _, t := range BiochemTasks {
		if slices.Contains(o.Tasks, t) {
			ts = append(ts, t)
		}
	}
	return ts
}

// BiochemJobs lists the runs of o: task by task in BiochemTasks order (the cheap
// tasks first), and within a task seed by seed, every method at a seed
// before the next seed, so that an interrupted table has every method's
// first seeds rather than all seeds of a few.
func BiochemJobs(o BiochemOptions) ([]BiochemJob, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	seeds := o.Seeds
	switch {
	case seeds == 0 && o.Quick:
		seeds = 1 // a smoke run, as every table's --quick
	case seeds == 0:
		seeds = BiochemDefaultSeeds
	}
	var jobs []BiochemJob
	for _, name := range o.tasks() {
		task, err := biochem.Named(name)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		set := task.Settings()
		rounds := set.Rounds
		var quick []string
		if o.Quick {
			r, every, samples := biochemQuick(set)
			rounds = r
			quick = []string{"--rounds", strconv.Itoa(r), "--eval-every", strconv.Itoa(every), "--eval-samples", strconv.Itoa(samples)}
		}
		for s := range seeds {
			for _, m := range o.methods() {
				dir := filepath.Join(o.Dir(), fmt.Sprintf("%s-%s-seed%d", name, m, s))
				args := append([]string{"train", "--task", name}, BiochemRows[m]...)
				args = append(args, "--seed", strconv.Itoa(s), "--out", dir, "--quiet",
					"--checkpoint-every", strconv.Itoa(o.CheckpointEvery))
				args = append(args, quick...)
				jobs = append(jobs, BiochemJob{Table: o.table().Name, Task: name, Method: m, Seed: s, Dir: dir, Args: args, Rounds: rounds})
			}
		}
	}
	return jobs, nil
}

// trainMethod is the seqtrain method of the job's row.
func (j BiochemJob) trainMethod() string { return flagValue(BiochemRows[j.Method], "--method") }

// matches reports whether a run's configuration is the job's row: its
// method, α and local search.
func (j BiochemJob) matches(cfg seqtrain.Config) bool {
	row := BiochemRows[j.Method]
	alpha := 0.5
	if a := flagValue(row, "--alpha"); a != "" {
		alpha, _ = strconv.ParseFloat(a, 64)
	}
	ls, tls := slices.Contains(row, "--ls"), slices.Contains(row, "--ls-teacher")
	return string(cfg.Method) == j.trainMethod() && (!cfg.Method.HasTeacher() || cfg.Reward.Alpha == alpha) &&
		(cfg.LS.Rounds > 0) == ls && cfg.LS.Teacher == tls
}

// flagValue returns the value after flag in args, or "".
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// allBiochemJobs returns the jobs of every run in o's directory: each task
// and method with as many seeds as o or the default asks, and the jobs of
// o it lacks.
func allBiochemJobs(o BiochemOptions, jobs []BiochemJob) ([]BiochemJob, error) {
	whole := o
	whole.Methods, whole.Tasks, whole.Seeds = nil, nil, max(o.Seeds, BiochemDefaultSeeds)
	if o.table().Name != "main" {
		whole.Tasks = BiochemTasks // an appendix table may be run on other tasks too
	}
	all, err := BiochemJobs(whole)
	if err != nil {
		return nil, err
	}
	return collected(all, jobs, func(j BiochemJob) string { return j.Dir }), nil
}

// checkResume reports whether the checkpoint in the job's directory is a
// run of this job (its task, method, seed and length), which resuming
// would finish; a run of another length (a --quick run, say) must not be
// continued into this table.
func (j BiochemJob) checkResume() error {
	st, err := seqtrain.ReadCheckpoint(j.Dir)
	if err != nil {
		return fmt.Errorf("bench: %w (remove %s to start the run afresh)", err, j.Dir)
	}
	task, cfg, round := st.Task, st.Config, st.Done
	if task != j.Task || !j.matches(cfg) || cfg.Seed != uint64(j.Seed) || cfg.Rounds != j.Rounds {
		return fmt.Errorf("bench: the checkpoint in %s (round %d) is of %s %s seed %d with %d rounds, but the run wants %s %s seed %d with %d rounds (a --quick run? use another --out)",
			j.Dir, round, task, cfg.Method, cfg.Seed, cfg.Rounds, j.Task, j.Method, j.Seed, j.Rounds)
	}
	return nil
}

// BiochemResult is one finished run (a row of results.csv): its final
// evaluation. Metrics a run did not compute are NaN.
type BiochemResult struct {
	Task, Method string
	Seed         int
	Rounds       int
	RewardCalls  int
	// ModesSeen counts the distinct modes among all samples drawn in
	// training (of NumModes); ModesEval those among the final evaluation's.
	ModesSeen, NumModes, ModesEval int
	ELBO, EUBO                     float64
	LogZEst, TrueLogZ, LogZErr     float64
	Pearson                        float64
	WallSeconds                    float64
	MsPerRound                     float64 // training only, without evaluations
}

// collectBiochem reads the summaries of the jobs that have finished. A
// run of another task, method, seed or length than its job's (a --quick
// run left in the same directory, say) is an error: it must not be
// averaged in.
func collectBiochem(jobs []BiochemJob) ([]BiochemResult, error) {
	var rs []BiochemResult
	for _, j := range jobs {
		path := filepath.Join(j.Dir, "summary.json")
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		// The final evaluation: at the top level (modes_found), or in
		// "final" (modes_seen) in the summaries of an earlier gfn, with
		// rounds, num_modes and ms_per_round_mean for steps, modes_total
		// and ms_per_step_mean.
		type final struct {
			ModesFound int      `json:"modes_found"`
			ModesSeen  int      `json:"modes_seen"`
			ModesEval  int      `json:"modes_eval"`
			ELBO       *float64 `json:"elbo"`
			LogZEst    *float64 `json:"log_z_est"`
			LogZErr    *float64 `json:"log_z_err"`
			EUBO       *float64 `json:"eubo"`
			Pearson    *float64 `json:"pearson"`
		}
		var s struct {
			final
			Task        string   `json:"task"`
			Method      string   `json:"method"`
			Seed        int      `json:"seed"`
			Rounds      int      `json:"steps"`
			OldRounds   int      `json:"rounds"`
			RewardCalls int      `json:"reward_calls"`
			NumModes    int      `json:"modes_total"`
			OldNumModes int      `json:"num_modes"`
			Final       *final   `json:"final"`
			TrueLogZ    *float64 `json:"true_log_z"`
			WallSeconds float64  `json:"wall_seconds"`
			MsPerRound  float64  `json:"ms_per_step_mean"`
			OldMsPer    float64  `json:"ms_per_round_mean"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("bench: %s: %w", path, err)
		}
		if s.Final != nil {
			s.final, s.ModesFound = *s.Final, s.Final.ModesSeen
			s.Rounds, s.NumModes, s.MsPerRound = s.OldRounds, s.OldNumModes, s.OldMsPer
		}
		if s.Task != j.Task || s.Method != j.trainMethod() || s.Seed != j.Seed || s.Rounds != j.Rounds {
			return nil, fmt.Errorf("bench: %s: a run of %s %s seed %d with %d rounds, but the table wants %s %s seed %d with %d (a --quick run? use another --out)",
				path, s.Task, s.Method, s.Seed, s.Rounds, j.Task, j.trainMethod(), j.Seed, j.Rounds)
		}
		f := func(p *float64) float64 {
			if p == nil {
				return math.NaN()
			}
			return *p
		}
		fn := s.final
		rs = append(rs, BiochemResult{Task: j.Task, Method: j.Method, Seed: j.Seed, Rounds: s.Rounds, RewardCalls: s.RewardCalls,
			ModesSeen: fn.ModesFound, NumModes: s.NumModes, ModesEval: fn.ModesEval, ELBO: f(fn.ELBO), EUBO: f(fn.EUBO),
			LogZEst: f(fn.LogZEst), TrueLogZ: f(s.TrueLogZ), LogZErr: f(fn.LogZErr), Pearson: f(fn.Pearson),
			WallSeconds: s.WallSeconds, MsPerRound: s.MsPerRound})
	}
	return rs, nil
}

var biochemHeader = []string{"task", "method", "seed", "rounds", "reward_calls", "modes_seen", "num_modes", "modes_eval",
	"elbo", "eubo", "log_z_est", "true_log_z", "log_z_err", "pearson", "wall_seconds", "ms_per_round"}

// WriteBiochemCSV writes results.csv, one row per run (empty cells for
// missing values).
func WriteBiochemCSV(w io.Writer, rs []BiochemResult) error {
	cw := csv.NewWriter(w)
	cw.Write(biochemHeader)
	f := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 10, 64)
	}
	i := strconv.Itoa
	for _, r := range rs {
		cw.Write([]string{r.Task, r.Method, i(r.Seed), i(r.Rounds), i(r.RewardCalls), i(r.ModesSeen), i(r.NumModes), i(r.ModesEval),
			f(r.ELBO), f(r.EUBO), f(r.LogZEst), f(r.TrueLogZ), f(r.LogZErr), f(r.Pearson), f(r.WallSeconds), f(r.MsPerRound)})
	}
	cw.Flush()
	return cw.Error()
}

// ReadBiochemCSV reads what WriteBiochemCSV wrote.
func ReadBiochemCSV(r io.Reader) ([]BiochemResult, error) {
	return readResults(r, biochemHeader, func(row []string, c *cells) BiochemResult {
		return BiochemResult{Task: row[0], Method: row[1], Seed: c.int(row[2]), Rounds: c.int(row[3]), RewardCalls: c.int(row[4]),
			ModesSeen: c.int(row[5]), NumModes: c.int(row[6]), ModesEval: c.int(row[7]), ELBO: c.float(row[8]), EUBO: c.float(row[9]),
			LogZEst: c.float(row[10]), TrueLogZ: c.float(row[11]), LogZErr: c.float(row[12]), Pearson: c.float(row[13]),
			WallSeconds: c.float(row[14]), MsPerRound: c.float(row[15])}
	})
}

// BiochemReport says how the results were produced, for results.md.
type BiochemReport struct {
	Table   string // "": main
	Quick   bool
	Jobs    int    // runs at a time
	Command string // the command line that produced the results
}

// biochemMethodNames are the methods as the paper names them.
var biochemMethodNames = map[string]string{
	"tb": "TB", "eps": "ε-exploration", "prt": "PRT", "per": "PER", "teacher-prt": "Teacher + PRT", "teacher-per": "Teacher + PER",
}

// methodName is the paper's name of method (or row) m.
func methodName(m string) string {
	if n, ok := biochemMethodNames[m]; ok {
		return n
	}
	if n, ok := biochemRowNames[m]; ok {
		return n
	}
	return m
}

// byTaskMethod groups results by task and method.
func byTaskMethod(rs []BiochemResult) map[string]map[string][]BiochemResult {
	g := map[string]map[string][]BiochemResult{}
	for _, r := range rs {
		if g[r.Task] == nil {
			g[r.Task] = map[string][]BiochemResult{}
		}
		g[r.Task][r.Method] = append(g[r.Task][r.Method], r)
	}
	return g
}

// orderedTasks lists the tasks of g in the paper's order, then any others
// by name.
func orderedTasks[T any](g map[string]T) []string {
	var ts []string
	for _, t := range biochemPaperOrder {
		if _, ok := g[t]; ok {
			ts = append(ts, t)
		}
	}
	var rest []string
	for t := range g {
		if !slices.Contains(biochemPaperOrder, t) {
			rest = append(rest, t)
		}
	}
	sort.Strings(rest)
	return append(ts, rest...)
}

// orderedMethods lists the methods of g in the order of rows, then any
// others by name.
func orderedMethods[T any](g map[string]T, rows []string) []string {
	var ms []string
	for _, m := range rows {
		if _, ok := g[m]; ok {
			ms = append(ms, m)
		}
	}
	var rest []string
	for m := range g {
		if !slices.Contains(rows, m) {
			rest = append(rest, m)
		}
	}
	sort.Strings(rest)
	return append(ms, rest...)
}

// values returns metric of each result, NaNs left out.
func values(rs []BiochemResult, metric func(BiochemResult) float64) []float64 {
	var v []float64
	for _, r := range rs {
		if x := metric(r); !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	return v
}

// pmCell formats mean ± std of v, "–" when empty.
func pmCell(v []float64, prec int) string {
	if len(v) == 0 {
		return "–"
	}
	m, s := meanStd(v)
	return fmt.Sprintf("%.*f ± %.*f", prec, m, prec, s)
}

// WriteBiochemMarkdown writes results.md: per task (in the paper's order)
// a table of the methods' mean ± population std over seeds of the final
// modes found, ELBO, EUBO and log Z error, with the number of runs and
// their wall times; then the paper's claims checked against these numbers
// (CheckClaims with BiochemClaims), the run times and the command.
func WriteBiochemMarkdown(w io.Writer, rep BiochemReport, rs []BiochemResult) {
	g := byTaskMethod(rs)
	tasks := orderedTasks(g)
	table := biochemTable(rep.Table)
	title := "# gfn bench biochem"
	if table.Name != "main" {
		title += " --table " + table.Name
	}
	fmt.Fprintln(w, title)
	if rep.Quick {
		quickNote(w, "1/20 of each task's rounds and small evaluations")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, table.About+" "+
		"Mean ± population std over a method's runs (one per seed; \"runs\" counts them) of each run's final evaluation: "+
		"modes found (distinct modes among all samples drawn in training), modes among the final evaluation's Student "+
		"samples, ELBO (a lower bound of log Z: higher is better), EUBO (an upper bound: lower is better) and the error "+
		"|log Z estimate − log Z| of the importance-sampled estimate.")
	for _, task := range tasks {
		byM := g[task]
		methods := orderedMethods(byM, table.Methods)
		first := byM[methods[0]][0]
		var about []string
		if t, err := biochem.Named(task); err == nil {
			about = append(about, fmt.Sprintf("length %d, %d tokens", t.Length(), len(t.Alphabet())))
		}
		if first.NumModes > 0 {
			about = append(about, fmt.Sprintf("%d modes", first.NumModes))
		}
		if !math.IsNaN(first.TrueLogZ) {
			about = append(about, fmt.Sprintf("log Z = %.4f", first.TrueLogZ))
		}
		about = append(about, fmt.Sprintf("%d rounds", first.Rounds))
		fmt.Fprintf(w, "\n## %s (%s)\n\n", task, strings.Join(about, ", "))
		fmt.Fprintln(w, "| method | runs | modes found | modes in final samples | ELBO | EUBO | log Z error | wall per run (mean) | ms per round (mean) |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
		for _, m := range methods {
			got := byM[m]
			wall, _ := meanStd(values(got, func(r BiochemResult) float64 { return r.WallSeconds }))
			ms, _ := meanStd(values(got, func(r BiochemResult) float64 { return r.MsPerRound }))
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %.1f |\n", m, len(got),
				pmCell(values(got, func(r BiochemResult) float64 { return float64(r.ModesSeen) }), 1),
				pmCell(values(got, func(r BiochemResult) float64 { return float64(r.ModesEval) }), 1),
				pmCell(values(got, func(r BiochemResult) float64 { return r.ELBO }), 3),
				pmCell(values(got, func(r BiochemResult) float64 { return r.EUBO }), 3),
				pmCell(values(got, func(r BiochemResult) float64 { return r.LogZErr }), 3),
				fmtDuration(wall), ms)
		}
	}
	writeClaims(w, CheckClaims(table.Claims, rs), tasks)
	fmt.Fprintf(w, "\n## Run time\n\nSum of the runs' wall times (%d at a time, so the runs took about this sum / %d).\n\n",
		max(rep.Jobs, 1), max(rep.Jobs, 1))
	fmt.Fprintln(w, "| task | runs | wall per run (mean) | sum of wall times |")
	fmt.Fprintln(w, "|---|---|---|---|")
	var total float64
	for _, task := range tasks {
		var wall []float64
		for _, m := range orderedMethods(g[task], table.Methods) {
			wall = append(wall, values(g[task][m], func(r BiochemResult) float64 { return r.WallSeconds })...)
		}
		var sum float64
		for _, x := range wall {
			sum += x
		}
		mean, _ := meanStd(wall)
		total += sum
		fmt.Fprintf(w, "| %s | %d | %s | %s |\n", task, len(wall), fmtDuration(mean), fmtDuration(sum))
	}
	fmt.Fprintf(w, "| all | %d | | %s |\n", len(rs), fmtDuration(total))
	if rep.Command != "" {
		fmt.Fprintf(w, "\nCommand:\n\n    %s\n", rep.Command)
	}
}
