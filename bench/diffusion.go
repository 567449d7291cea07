package bench

import (
	"bytes"
	_ "embed"
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

	"github.com/gfngo/gfn/target"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
)

// paperDiffusion holds the paper's diffusion-sampler results (mean ± std
// per table, method and task), transcribed from the LaTeX source with each
// table's label.
//
//go:embed paper_diffusion.csv
var paperDiffusion string

// DiffusionMethods are the rows of the diffusion tables as gfn train flags
// (the task, preset, seed and output flags are added per run).
var DiffusionMethods = map[string][]string{
	"tb":               {"--method", "tb"},
	"eps":              {"--method", "eps"},
	"prt":              {"--method", "prt"},
	"per":              {"--method", "per"},
	"teacher":          {"--method", "teacher"},
	"pis":              {"--method", "pis"},
	"smc":              {"--method", "smc"},
	"ggns":             {"--method", "ggns"},
	"teacher-alpha0":   {"--method", "teacher", "--alpha", "0"},
	"teacher-alpha0.5": {"--method", "teacher", "--alpha", "0.5"},
	"per-ls":           {"--method", "per", "--ls"},
	"teacher-ls":       {"--method", "teacher", "--ls"},
	// The authors' buffer draws (replay.Buffer.Passes), not in the paper's
	// tables: do they explain its PER row?
	"per-passes":     {"--method", "per", "--buffer-passes"},
	"teacher-passes": {"--method", "teacher", "--buffer-passes"},
}

// DiffusionTasks are the targets, in the paper's column order.
var DiffusionTasks = []string{"25gmm", "manywell"}

// SuiteTasks are the targets of the suite table (issue 43): the
// diffusion-sampler benchmarks of Sendera et al. 2024 and Blessing et al.
// 2024 (energy.SuiteNames).
var SuiteTasks = energy.SuiteNames

// DiffusionTable is one diffusion table of the paper: its methods, tasks
// and seeds.
type DiffusionTable struct {
	Name    string
	Methods []string
	Tasks   []string
	Seeds   int
}

// DiffusionTables are the tables `gfn bench diffusion --table` reproduces:
// the paper's Table 2, its α appendix table and its local-search appendix
// table (Manywell only in the paper; --tasks 25gmm,manywell adds 25GMM).
var DiffusionTables = []DiffusionTable{
	{"main", []string{"smc", "ggns", "pis", "tb", "eps", "prt", "per", "teacher"}, DiffusionTasks, 5},
	{"alpha", []string{"teacher-alpha0", "teacher-alpha0.5"}, DiffusionTasks, 5},
	{"local-search", []string{"per-ls", "teacher-ls"}, []string{"manywell"}, 5},
	// Not in the paper: PER and the Teacher with the authors' stale buffer
	// draws, against the main table's rows.
	{"passes", []string{"per-passes", "teacher-passes"}, []string{"25gmm"}, 3},
	// Not in the paper: the suite's energies (issue 43), each at its
	// default preset (diffusion.DefaultPreset: sendera for funnel and
	// lgcp, blessing for gmm40, gmm40-50d and mos), with the published
	// numbers of paper_suite.csv beside ours. SMC runs with Blessing et
	// al.'s settings (gfn train --method smc); GGNS has settings for
	// 25gmm and manywell only (a box prior, which the suite's unbounded
	// targets lack).
	{"suite", []string{"smc", "tb", "eps", "prt", "per", "teacher", "pis"}, SuiteTasks, 3},
}

// DiffusionTableByName finds a diffusion table.
func DiffusionTableByName(name string) (DiffusionTable, error) {
	return tableByName(DiffusionTables, name, func(t DiffusionTable) string { return t.Name })
}

// quickDiffusionArgs make a run a smoke test of a few seconds: a small
// network, short trajectories, 40 iterations and small evaluations.
var quickDiffusionArgs = []string{"--iterations", "40", "--batch", "64", "--steps", "20", "--hidden", "64",
	"--eval-every", "20", "--eval-samples", "200", "--final-samples", "400"}

// quickDiffusionIterations is the --iterations of quickDiffusionArgs.
const quickDiffusionIterations = 40

// diffusionCheckpointEvery is the runs' --checkpoint-every: an interrupted
// reference run (about an hour) loses at most 500 of its 10,001
// iterations.
const diffusionCheckpointEvery = 500

// DiffusionOptions shape a diffusion table run.
type DiffusionOptions struct {
	// Out is the root directory; a table's runs, logs and results go to
	// Out/<table>.
	Out     string
	Seeds   int  // 0: the table's default
	Jobs    int  // concurrent runs (≥ 1)
	Quick   bool // 1 seed, a tiny network and budget: a smoke run
	Methods []string
	Tasks   []string
	// Preset is every task's preset; "": each task's default
	// (diffusion.DefaultPreset: paper for 25gmm and manywell, the one that
	// reproduces the paper's table).
	Preset      string
	CollectOnly bool // aggregate the finished runs, run nothing
	// Iterations and Batch, if positive, replace every preset's budget
	// (the suite's 2,000-wide batches at d = 50 cost days a run here);
	// the table's runs then go to their own directory,
	// Out/<table>-batch<B>-it<N>, beside the presets' runs.
	Iterations, Batch int
}

// presetFor returns the preset of task's runs.
func (o DiffusionOptions) presetFor(task string) string {
	if o.Preset == "" {
		return diffusion.DefaultPreset(task)
	}
	return o.Preset
}

// Dir is the directory of table t's runs and results.
func (o DiffusionOptions) Dir(t DiffusionTable) string {
	name := t.Name
	if o.Batch > 0 {
		name += fmt.Sprintf("-batch%d", o.Batch)
	}
	if o.Iterations > 0 {
		name += fmt.Sprintf("-it%d", o.Iterations)
	}
	return filepath.Join(o.Out, name)
}

// suiteW2Every is the suite's curve W2 cadence in iterations: an exact W2
// of 2,000 funnel samples took about 15 s in a one-core lane, twice a
// run's training time at every curve point (every 100 iterations).
const suiteW2Every = 1000

// suiteFinalSamples is the suite table's final evaluation size, Sendera
// et al.'s K (their Table 1: 2,000 samples for log Ẑ, log Ẑ^RW and W2).
const suiteFinalSamples = 2000

// DiffusionJob is one training run of a table.
type DiffusionJob struct {
	Task, Method string
	Preset       string // the run's --preset
	Seed         int
	Dir          string
	// Args are the gfn train arguments of a fresh start.
	Args []string
	// Iterations is the run's length, which a finished run must have.
	Iterations int
	// SameAs, if set, is the directory of another table's run with the
	// same command line; when it has finished, its files are copied
	// instead of training again.
	SameAs string
}

// Jobs lists the runs of table t, seed by seed, so that an interrupted
// table has every method's first seeds rather than all seeds of a few.
func (t DiffusionTable) Jobs(o DiffusionOptions) []DiffusionJob {
	seeds := t.Seeds
	if o.Seeds > 0 {
		seeds = o.Seeds
	}
	if o.Quick && o.Seeds == 0 {
		seeds = 1
	}
	methods, tasks := t.Methods, t.Tasks
	if len(o.Methods) > 0 {
		methods = o.Methods
	}
	if len(o.Tasks) > 0 {
		tasks = o.Tasks
	}
	var jobs []DiffusionJob
	for s := range seeds {
		for _, task := range tasks {
			preset := o.presetFor(task)
			iters := quickDiffusionIterations
			if !o.Quick {
				cfg, err := diffusion.Preset(preset, task)
				if err != nil {
					panic("bench: " + err.Error()) // RunDiffusion validates the preset and tasks first
				}
				iters = cfg.Iterations
			}
			for _, m := range methods {
				dir := filepath.Join(o.Dir(t), fmt.Sprintf("%s-%s-seed%d", task, m, s))
				args := []string{"train", "--task", task, "--preset", preset}
				args = append(args, DiffusionMethods[m]...)
				args = append(args, "--seed", strconv.Itoa(s), "--out", dir, "--quiet",
					"--checkpoint-every", strconv.Itoa(diffusionCheckpointEvery))
				its := iters
				switch {
				case m == "smc" || m == "ggns":
					its = 0 // no training: seconds, and no iterations to count
				case o.Quick:
					args = append(args, quickDiffusionArgs...)
				}
				if o.Batch > 0 && !o.Quick && m != "smc" && m != "ggns" {
					args = append(args, "--batch", strconv.Itoa(o.Batch))
				}
				if t.Name == "suite" && !o.Quick && m != "smc" && m != "ggns" {
					// Sendera et al.'s evaluation: K = 2,000 samples for
					// every metric. (An exact W2 between 10,000 funnel
					// samples, heavy-tailed, takes over ten minutes.)
					args = append(args, "--final-samples", strconv.Itoa(suiteFinalSamples), "--w2-every", strconv.Itoa(suiteW2Every))
				}
				if o.Iterations > 0 && !o.Quick && m != "smc" && m != "ggns" {
					args = append(args, "--iterations", strconv.Itoa(o.Iterations))
					its = o.Iterations
				}
				j := DiffusionJob{Task: task, Method: m, Preset: preset, Seed: s, Dir: dir, Args: args, Iterations: its}
				// α = 0.5 is the presets' default: the main table's
				// Teacher run is this run, bit for bit.
				if t.Name == "alpha" && m == "teacher-alpha0.5" {
					j.SameAs = filepath.Join(o.Out, "main", fmt.Sprintf("%s-teacher-seed%d", task, s))
				}
				jobs = append(jobs, j)
			}
		}
	}
	return jobs
}

// RunStatus is what a run directory calls for.
type RunStatus int

// The statuses of a run directory, from the files it holds.
const (
	RunFresh  RunStatus = iota // nothing usable: start the run
	RunResume                  // a checkpoint and no summary: continue it
	RunDone                    // summary.json: finished
)

// String returns fresh, resume or done.
func (s RunStatus) String() string {
	switch s {
	case RunFresh:
		return "fresh"
	case RunResume:
		return "resume"
	case RunDone:
		return "done"
	}
	return fmt.Sprintf("RunStatus(%d)", int(s))
}

// nextRun says what the run directory dir calls for and the gfn arguments
// that do it, for the runs of every table: nothing for a finished run
// (summary.json), `train --resume` for an interrupted one (a checkpoint
// and no summary: it continues where the checkpoint left off, with the
// run's own settings), else fresh, the fresh start's arguments.
func nextRun(dir string, fresh []string) (RunStatus, []string) {
	if exists(filepath.Join(dir, "summary.json")) {
		return RunDone, nil
	}
	if exists(filepath.Join(dir, run.CheckpointFile)) {
		return RunResume, []string{"train", "--resume", dir, "--quiet"}
	}
	return RunFresh, fresh
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// validate checks the preset, methods and tasks of o, naming a bad value
// and what is allowed.
func (o DiffusionOptions) validate(t DiffusionTable) error {
	if o.Preset != "" && !slices.Contains(diffusion.Presets, o.Preset) {
		return fmt.Errorf("bench: preset %q is unknown (allowed: %s)", o.Preset, strings.Join(diffusion.Presets, ", "))
	}
	for _, m := range o.Methods {
		if _, ok := DiffusionMethods[m]; !ok {
			return fmt.Errorf("bench: method %q is unknown (table %s has %s)", m, t.Name, strings.Join(t.Methods, ", "))
		}
	}
	tasks := t.Tasks
	for _, task := range o.Tasks {
		if !slices.Contains(DiffusionTasks, task) && !slices.Contains(SuiteTasks, task) {
			return fmt.Errorf("bench: task %q is unknown (allowed: %s)", task, strings.Join(slices.Concat(DiffusionTasks, SuiteTasks), ", "))
		}
		tasks = o.Tasks
	}
	for _, task := range tasks {
		if _, err := diffusion.Preset(o.presetFor(task), task); err != nil {
			return fmt.Errorf("bench: table %s: %w", t.Name, err)
		}
	}
	ms := t.Methods
	if len(o.Methods) > 0 {
		ms = o.Methods
	}
	for _, task := range tasks {
		if slices.Contains(SuiteTasks, task) && slices.Contains(ms, "ggns") {
			return fmt.Errorf("bench: task %s: method ggns has settings for %s only (a box prior)", task, strings.Join(DiffusionTasks, ", "))
		}
	}
	return nil
}

// allJobs returns the jobs of every run of the table in its directory: the
// table's methods and tasks with as many seeds as o or the table asks, and
// the jobs of o it lacks.
func (t DiffusionTable) allJobs(o DiffusionOptions, jobs []DiffusionJob) []DiffusionJob {
	whole := o
	whole.Methods, whole.Tasks, whole.Seeds = nil, nil, max(o.Seeds, t.Seeds)
	return collected(t.Jobs(whole), jobs, func(j DiffusionJob) string { return j.Dir })
}

// finished reports whether dir holds a finished run of the preset with
// the given number of iterations.
func finished(dir, preset string, iterations int) bool {
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return false
	}
	var s diffusion.Summary
	return json.Unmarshal(b, &s) == nil && s.Preset == preset && s.Steps == iterations
}

// copyRun copies the files of the finished run in src to dst (a run
// directory holds no subdirectories).
func copyRun(src, dst string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	// summary.json last: it marks the copy as finished.
	sort.SliceStable(ents, func(a, b int) bool { return ents[b].Name() == "summary.json" && ents[a].Name() != "summary.json" })
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := safefile.WriteBytes(filepath.Join(dst, e.Name()), b); err != nil {
			return err
		}
	}
	return nil
}

// DiffusionResult is one finished run (a row of results.csv). Metrics a
// run did not compute are NaN.
type DiffusionResult struct {
	Table, Task, Method, Preset string
	Seed                        int
	Steps, RewardCalls          int
	ELBO, ELBOIS, EUBO, W2      float64
	LogZ                        float64 // the Student's learned log Z
	Samples                     int     // of the final evaluation
	WallSeconds                 float64
	MsPerIterMean               float64
	// Last is the run's last periodic evaluation (the last row of its
	// metrics.csv; NaN metrics and zero counts for a run without curve).
	Last DiffusionEval
	// StartELBO is the ELBO of the run's first evaluation, after its
	// first iteration: the first row (step 0) of its metrics.csv; NaN for a
	// run without one (SMC, GGNS) and in a results.csv of a version
	// before this column.
	StartELBO float64
	// DivergedAt is the iteration a diverged run diverged at (see
	// Diverged), 0 for a run that did not diverge.
	DivergedAt int
	// EMC, MMD and DeltaLogZ are the final evaluation's suite metrics
	// (diffusion.Summary); NaN where they do not apply, and in a
	// results.csv of a version before these columns.
	EMC, MMD, DeltaLogZ float64
}

// orNaN returns *v, or NaN for nil.
func orNaN(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// Diverged reports whether the run diverged: the ELBO of its final
// evaluation is more than DivergenceMargin below StartELBO, its first
// evaluation's, so training made it worse than where it started (a Manywell
// PIS run whose loss blows up late in training ends at an ELBO of −71,207
// where converged seeds reach ~161). DivergedAt is then the step of the
// first metrics.csv row after which the ELBO stays below StartELBO −
// DivergenceMargin to the end (the row after the last one at or above it;
// a NaN ELBO counts as below), or the run's length when its last periodic
// evaluation was still at or above it.
// WriteDiffusionMarkdown leaves a diverged run out of the means and stds
// (of both tables) and names it below the table; DiffusionFigures leaves
// it out of the mean curves; results.csv keeps it.
func (r DiffusionResult) Diverged() bool { return r.DivergedAt > 0 }

// DiffusionEval is one evaluation of a Student: its metrics, the step it
// was taken at and its number of samples.
type DiffusionEval struct {
	ELBO, ELBOIS, EUBO, W2 float64
	Step, Samples          int
}

// lastEval reads the last row of the metrics.csv in dir, the run's last
// periodic evaluation; a run without one (SMC, GGNS) gives NaN metrics.
func lastEval(dir string) (DiffusionEval, error) {
	e := DiffusionEval{ELBO: math.NaN(), ELBOIS: math.NaN(), EUBO: math.NaN(), W2: math.NaN()}
	if !exists(filepath.Join(dir, "metrics.csv")) {
		return e, nil
	}
	c, err := readColumns(dir, []string{"step", "samples", "elbo", "elbo_is"}, []string{"eubo", "w2"})
	if err != nil {
		return e, err
	}
	n := len(c["step"]) - 1
	at := func(k string) float64 {
		if v, ok := c[k]; ok {
			return v[n]
		}
		return math.NaN()
	}
	e.ELBO, e.ELBOIS, e.EUBO, e.W2 = at("elbo"), at("elbo_is"), at("eubo"), at("w2")
	e.Step, e.Samples = int(at("step")), int(at("samples"))
	return e, nil
}

// collectDiffusion reads the summaries of the jobs that have finished, and
// judges whether each diverged (DiffusionResult.Diverged). A run of
// another preset or length than the table's (a --quick run left in the
// same directory, say) is an error: it must not be averaged in.
func collectDiffusion(table string, jobs []DiffusionJob) ([]DiffusionResult, error) {
	var rs []DiffusionResult
	for _, j := range jobs {
		path := filepath.Join(j.Dir, "summary.json")
		s, err := readDiffusionSummary(j.Dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if s.Preset != j.Preset || s.Steps != j.Iterations {
			return nil, fmt.Errorf("bench: %s: a run of preset %q with %d iterations, but the table wants preset %q with %d (a --quick run? use another --out)",
				path, s.Preset, s.Steps, j.Preset, j.Iterations)
		}
		r := DiffusionResult{Table: table, Task: j.Task, Method: j.Method, Preset: s.Preset, Seed: j.Seed, Steps: s.Steps,
			RewardCalls: s.RewardCalls, ELBO: s.ELBO, ELBOIS: s.ELBOIS, EUBO: math.NaN(), W2: math.NaN(), LogZ: s.LogZ,
			Samples: s.Samples, WallSeconds: s.WallSeconds, MsPerIterMean: s.MsPerStepMean}
		if s.EUBO != nil {
			r.EUBO = *s.EUBO
		}
		if s.W2 != nil {
			r.W2 = *s.W2
		}
		r.EMC, r.MMD, r.DeltaLogZ = orNaN(s.EMC), orNaN(s.MMD), orNaN(s.DeltaLogZ)
		if r.Last, err = lastEval(j.Dir); err != nil {
			return nil, err
		}
		if r.StartELBO, r.DivergedAt, err = runDivergence(j.Dir, s.ELBO, s.Steps); err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

var diffusionHeader = []string{"table", "task", "method", "preset", "seed", "steps", "reward_calls",
	"elbo", "elbo_is", "eubo", "w2", "log_z", "eval_samples", "wall_seconds", "ms_per_iter_mean",
	"last_step", "last_samples", "last_elbo", "last_elbo_is", "last_eubo", "last_w2",
	"start_elbo", "diverged_at", "emc", "mmd", "delta_log_z"}

// diffusionHeaderV1 is results.csv's header before the last-evaluation
// columns, diffusionHeaderV2 before the divergence columns and
// diffusionHeaderV3 before the suite metrics; all are still read.
var (
	diffusionHeaderV1 = diffusionHeader[:15]
	diffusionHeaderV2 = diffusionHeader[:21]
	diffusionHeaderV3 = diffusionHeader[:23]
)

// WriteDiffusionCSV writes results.csv, one row per run, diverged ones
// included (empty cells for missing values; diverged_at is empty for a run
// that did not diverge; emc, mmd and delta_log_z are empty where they do
// not apply).
func WriteDiffusionCSV(w io.Writer, rs []DiffusionResult) error {
	cw := csv.NewWriter(w)
	cw.Write(diffusionHeader)
	f := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 10, 64)
	}
	for _, r := range rs {
		divergedAt := ""
		if r.Diverged() {
			divergedAt = strconv.Itoa(r.DivergedAt)
		}
		cw.Write([]string{r.Table, r.Task, r.Method, r.Preset, strconv.Itoa(r.Seed), strconv.Itoa(r.Steps), strconv.Itoa(r.RewardCalls),
			f(r.ELBO), f(r.ELBOIS), f(r.EUBO), f(r.W2), f(r.LogZ), strconv.Itoa(r.Samples), f(r.WallSeconds), f(r.MsPerIterMean),
			strconv.Itoa(r.Last.Step), strconv.Itoa(r.Last.Samples), f(r.Last.ELBO), f(r.Last.ELBOIS), f(r.Last.EUBO), f(r.Last.W2),
			f(r.StartELBO), divergedAt, f(r.EMC), f(r.MMD), f(r.DeltaLogZ)})
	}
	cw.Flush()
	return cw.Error()
}

// ReadDiffusionCSV reads what WriteDiffusionCSV wrote, and the files of
// earlier versions without the last-evaluation columns (NaN there) or
// without the divergence columns (a NaN start ELBO; no run diverged).
func ReadDiffusionCSV(r io.Reader) ([]DiffusionResult, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) > 0 && slices.Equal(rows[0], diffusionHeaderV1) {
		rows[0] = diffusionHeaderV2
		for i := 1; i < len(rows); i++ {
			rows[i] = append(rows[i], "0", "0", "", "", "", "")
		}
	}
	if len(rows) > 0 && slices.Equal(rows[0], diffusionHeaderV2) {
		rows[0] = diffusionHeaderV3
		for i := 1; i < len(rows); i++ {
			rows[i] = append(rows[i], "", "")
		}
	}
	if len(rows) > 0 && slices.Equal(rows[0], diffusionHeaderV3) {
		rows[0] = diffusionHeader
		for i := 1; i < len(rows); i++ {
			rows[i] = append(rows[i], "", "", "")
		}
	}
	var buf bytes.Buffer
	csv.NewWriter(&buf).WriteAll(rows)
	return readResults(&buf, diffusionHeader, func(row []string, c *cells) DiffusionResult {
		return DiffusionResult{Table: row[0], Task: row[1], Method: row[2], Preset: row[3], Seed: c.int(row[4]), Steps: c.int(row[5]),
			RewardCalls: c.int(row[6]), ELBO: c.float(row[7]), ELBOIS: c.float(row[8]), EUBO: c.float(row[9]), W2: c.float(row[10]),
			LogZ: c.float(row[11]), Samples: c.int(row[12]), WallSeconds: c.float(row[13]), MsPerIterMean: c.float(row[14]),
			Last: DiffusionEval{Step: c.int(row[15]), Samples: c.int(row[16]), ELBO: c.float(row[17]), ELBOIS: c.float(row[18]),
				EUBO: c.float(row[19]), W2: c.float(row[20])},
			StartELBO: c.float(row[21]), DivergedAt: c.optionalInt(row[22]),
			EMC: c.float(row[23]), MMD: c.float(row[24]), DeltaLogZ: c.float(row[25])}
	})
}

// Stat is a mean ± std; Std is NaN when unknown (a misprint), Mean when
// not reported.
type Stat struct{ Mean, Std float64 }

// embeddedCSV parses an embedded table of published numbers, and returns
// its rows and a reader of a numeric cell (empty: NaN). A malformed file is
// a programmer error: it panics naming the file.
func embeddedCSV(name, text string) ([][]string, func(string) float64) {
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		panic("bench: embedded " + name + ": " + err.Error())
	}
	return rows, func(s string) float64 {
		if s == "" {
			return math.NaN()
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			panic("bench: embedded " + name + ": " + err.Error())
		}
		return v
	}
}

// PaperDiffusionRow is one row of the paper's diffusion tables for a task.
type PaperDiffusionRow struct {
	Table, Ref, Method, Task string
	ELBO, ELBOIS, EUBO, W2   Stat
	// Quoted rows are shown beside the table's runs without being run by
	// it (other samplers, or another table's runs).
	Quoted bool
	Note   string
}

// PaperDiffusion returns the paper's rows in the paper's order.
func PaperDiffusion() []PaperDiffusionRow {
	rows, f := embeddedCSV("paper_diffusion.csv", paperDiffusion)
	var ps []PaperDiffusionRow
	for _, r := range rows[1:] {
		ps = append(ps, PaperDiffusionRow{Table: r[0], Ref: r[1], Method: r[2], Task: r[3],
			ELBO: Stat{f(r[4]), f(r[5])}, ELBOIS: Stat{f(r[6]), f(r[7])}, EUBO: Stat{f(r[8]), f(r[9])}, W2: Stat{f(r[10]), f(r[11])},
			Quoted: r[12] == "yes", Note: r[13]})
	}
	return ps
}

// DiffusionReport says how a table was run, for results.md.
type DiffusionReport struct {
	Table   string
	Preset  string
	Quick   bool
	Jobs    int    // runs at a time
	Command string // the command line that produced the table
}

// paperW2Floor is the paper's header value of each task's W2 column: the
// distance between two exact sample sets.
var paperW2Floor = map[string]string{"25gmm": "0.29", "manywell": "5.36"}

// w2Sampler says which exact samples W2 (and the EUBO) compare with.
var w2Sampler = map[string]string{
	"25gmm": "exact samples drawn stratified, exactly n/25 per mode, as the reference code draws them (two such sets are " +
		"~0.29 apart; a perfect sampler's i.i.d. draws are ~0.86 from one, since their mode counts vary)",
	"manywell": "exact samples (each pair's first coordinate by rejection sampling, exact; the second N(0, 1))",
}

// WriteDiffusionMarkdown writes one table per task: mean ± population std
// over seeds of ELBO, ELBO-IS, EUBO and W2 next to the paper's numbers,
// with the paper's quoted rows, then the run times and the command.
// Diverged runs (DiffusionResult.Diverged) are left out of the means and
// stds of both tables (the final and the last periodic evaluation),
// counted beside the runs ("2 (+1 diverged)"; a row whose runs all
// diverged shows "diverged" in place of its numbers) and named below the
// table with the iteration they diverged at; the run-time table counts
// every run.
func WriteDiffusionMarkdown(w io.Writer, rep DiffusionReport, rs []DiffusionResult) {
	paper := PaperDiffusion()
	byTask := map[string][]DiffusionResult{}
	for _, r := range rs {
		byTask[r.Task] = append(byTask[r.Task], r)
	}
	var tasks []string
	for _, t := range DiffusionTasks {
		if len(byTask[t]) > 0 {
			tasks = append(tasks, t)
		}
	}
	var order []string // the table's methods, for rows the paper lacks
	if t, err := DiffusionTableByName(rep.Table); err == nil {
		order = t.Methods
	}
	fmt.Fprintf(w, "# gfn bench diffusion --table %s\n", rep.Table)
	if rep.Quick {
		quickNote(w, "40 iterations of a 64-wide network on batches of 64 with T = 20")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Preset **%s**. Mean ± population std over a method's runs (one per seed; \"runs\" counts them) of "+
		"the final evaluation of each run's Student, next to the paper's mean ± std over 5 runs. † marks a measured mean outside the "+
		"paper's mean ± 2 std. ELBO and ELBO-IS estimate log Z from below (higher is better), EUBO from above "+
		"(lower is better); W2 is the 2-Wasserstein distance (exact optimal transport, squared Euclidean cost) "+
		"between the Student's samples and exact samples; \"W2 (paper)\" is the paper's column headed W2², which "+
		"holds W2: its header values, two exact sets' distance, are W2.\n", rep.Preset)
	if slices.ContainsFunc(rs, DiffusionResult.Diverged) {
		fmt.Fprintln(w, "\nA run diverged when its final ELBO is more than 1 nat below the ELBO of its first evaluation "+
			"(step 0, after one iteration): it is left out of the means and stds (\"2 (+1 diverged)\" counts it beside the runs kept) and of the "+
			"figures' mean curves, and named below its table with the iteration from which its ELBO stayed below the start.")
	}
	for _, task := range tasks {
		var logZ, dim string
		if e, err := energy.Named(task); err == nil {
			dim = strconv.Itoa(e.Dim())
			if lz, ok := e.(target.LogZer); ok {
				logZ = strconv.FormatFloat(lz.LogZ(), 'g', 10, 64)
			}
		}
		fmt.Fprintf(w, "\n## %s (d = %s, log Z = %s, paper's W2 of two exact sets %s)\n\n", task, dim, logZ, paperW2Floor[task])
		var rows []PaperDiffusionRow
		refs := map[string]bool{}
		var refList []string
		for _, p := range paper {
			if p.Table == rep.Table && p.Task == task {
				rows = append(rows, p)
				if !refs[p.Ref] {
					refs[p.Ref] = true
					refList = append(refList, p.Ref)
				}
			}
		}
		if len(refList) > 0 {
			fmt.Fprintf(w, "Paper: %s.\n\n", strings.Join(refList, "; "))
		} else {
			fmt.Fprintf(w, "The paper reports no numbers for this table on %s.\n\n", task)
		}
		// Rows: the paper's in its order (quoted ones, and measured
		// methods the paper reports), then measured methods it lacks.
		measured := map[string][]DiffusionResult{}
		var extra []string
		for _, r := range byTask[task] {
			if _, ok := measured[r.Method]; !ok && !slices.ContainsFunc(rows, func(p PaperDiffusionRow) bool { return p.Method == r.Method }) {
				extra = append(extra, r.Method)
			}
			measured[r.Method] = append(measured[r.Method], r)
		}
		sort.SliceStable(extra, func(a, b int) bool { return rank(order, extra[a]) < rank(order, extra[b]) })
		var notes []string
		// table writes one row per method: the paper's rows in its order
		// (quoted ones, and measured methods it reports), then measured
		// methods it lacks. ev picks the evaluation of a run; a run
		// without one (Samples 0) is left out; the first table (final,
		// with the quoted rows) numbers the paper's notes. Diverged runs
		// are counted, not averaged; table returns them in row order.
		table := func(ev func(DiffusionResult) DiffusionEval, final bool) (diverged []DiffusionResult) {
			fmt.Fprintln(w, "| method | runs | ELBO | ELBO (paper) | ELBO-IS | ELBO-IS (paper) | EUBO | EUBO (paper) | W2 | W2 (paper) |")
			fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
			line := func(method string, p *PaperDiffusionRow) {
				var got []DiffusionEval
				var div []DiffusionResult
				for _, r := range measured[method] {
					switch e := ev(r); {
					case !final && e.Samples == 0:
					case r.Diverged():
						div = append(div, r)
					default:
						got = append(got, e)
					}
				}
				if !final && len(got)+len(div) == 0 {
					return
				}
				diverged = append(diverged, div...)
				if p == nil {
					p = &PaperDiffusionRow{ELBO: Stat{math.NaN(), math.NaN()}, ELBOIS: Stat{math.NaN(), math.NaN()},
						EUBO: Stat{math.NaN(), math.NaN()}, W2: Stat{math.NaN(), math.NaN()}}
				}
				name := method
				if p.Note != "" && final {
					notes = append(notes, fmt.Sprintf("[%d] %s: %s.", len(notes)+1, method, p.Note))
					name += fmt.Sprintf(" [%d]", len(notes))
				}
				runs := strconv.Itoa(len(got))
				if len(div) > 0 {
					runs += fmt.Sprintf(" (+%d diverged)", len(div))
				}
				quoted := p.Quoted && len(got)+len(div) == 0
				if quoted {
					runs = "quoted from the paper, not run here"
				}
				cells := []string{name, runs}
				for _, c := range []struct {
					get   func(DiffusionEval) float64
					paper Stat
					prec  int
				}{
					{func(e DiffusionEval) float64 { return e.ELBO }, p.ELBO, 3},
					{func(e DiffusionEval) float64 { return e.ELBOIS }, p.ELBOIS, 3},
					{func(e DiffusionEval) float64 { return e.EUBO }, p.EUBO, 3},
					{func(e DiffusionEval) float64 { return e.W2 }, p.W2, 2},
				} {
					var v []float64
					for _, e := range got {
						if x := c.get(e); !math.IsNaN(x) {
							v = append(v, x)
						}
					}
					mc := measuredCell(v, c.paper, c.prec)
					switch {
					case quoted:
						mc = ""
					case len(got) == 0: // every run diverged
						mc = "diverged"
					}
					cells = append(cells, mc, paperCell(c.paper, c.prec))
				}
				fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
			}
			for i := range rows {
				if (final && rows[i].Quoted) || len(measured[rows[i].Method]) > 0 {
					line(rows[i].Method, &rows[i])
				}
			}
			for _, m := range extra {
				line(m, nil)
			}
			return diverged
		}
		diverged := table(func(r DiffusionResult) DiffusionEval {
			return DiffusionEval{ELBO: r.ELBO, ELBOIS: r.ELBOIS, EUBO: r.EUBO, W2: r.W2, Step: r.Steps, Samples: r.Samples}
		}, true)
		if len(notes) > 0 {
			fmt.Fprintln(w)
			for _, n := range notes {
				fmt.Fprintln(w, n)
			}
		}
		if len(diverged) > 0 {
			fmt.Fprintln(w)
			for _, r := range diverged {
				fmt.Fprintln(w, divergenceNote(r))
			}
		}
		samples, lastSamples, lastStep := 0, 0, 0
		for _, r := range byTask[task] {
			samples = max(samples, r.Samples)
			lastSamples, lastStep = max(lastSamples, r.Last.Samples), max(lastStep, r.Last.Step)
		}
		fmt.Fprintf(w, "\nW2 and EUBO: the final evaluation's %d Student samples against as many %s.\n", samples, w2Sampler[task])
		if lastSamples > 0 {
			fmt.Fprintf(w, "\nThe same runs at their last periodic evaluation (iteration %d, %d samples against a fixed exact set of "+
				"as many), the evaluation the paper's numbers likely come from: the released code logs its final evaluation to "+
				"wandb at step 1 after steps up to the last iteration, which wandb drops, so a run's recorded values are its "+
				"last periodic ones.\n\n", lastStep, lastSamples)
			if diverged := table(func(r DiffusionResult) DiffusionEval { return r.Last }, false); len(diverged) > 0 {
				var names []string
				for _, r := range diverged {
					names = append(names, fmt.Sprintf("%s seed %d (diverged at iteration %s)", r.Method, r.Seed, groupDigits(r.DivergedAt)))
				}
				fmt.Fprintf(w, "\nLeft out here as well: %s.\n", strings.Join(names, ", "))
			}
		}
	}
	writeRunTimes(w, rep, tasks, byTask, len(rs))
}

// writeRunTimes writes the run-time section of a diffusion table's
// results.md and its command: per task and method, the runs' wall times
// and ms per iteration.
func writeRunTimes(w io.Writer, rep DiffusionReport, tasks []string, byTask map[string][]DiffusionResult, runs int) {
	// The table's cost: runs go J at a time, so its elapsed time is about
	// the sum divided by J.
	fmt.Fprintf(w, "\n## Run time\n\nSum of the runs' wall times (%d at a time, so the table took about this sum / %d).\n\n",
		max(rep.Jobs, 1), max(rep.Jobs, 1))
	fmt.Fprintln(w, "| task | method | runs | wall per run (mean) | ms per iteration (mean) | sum of wall times |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	var total float64
	for _, task := range tasks {
		var methods []string
		for _, r := range byTask[task] {
			if !slices.Contains(methods, r.Method) {
				methods = append(methods, r.Method)
			}
		}
		for _, m := range methods {
			var wall, ms []float64
			var sum float64
			for _, r := range byTask[task] {
				if r.Method == m {
					wall = append(wall, r.WallSeconds)
					ms = append(ms, r.MsPerIterMean)
					sum += r.WallSeconds
				}
			}
			wm, _ := meanStd(wall)
			mm, _ := meanStd(ms)
			total += sum
			fmt.Fprintf(w, "| %s | %s | %d | %s | %.0f | %s |\n", task, m, len(wall), fmtDuration(wm), mm, fmtDuration(sum))
		}
	}
	fmt.Fprintf(w, "| all | | %d | | | %s |\n", runs, fmtDuration(total))
	if rep.Command != "" {
		fmt.Fprintf(w, "\nCommand:\n\n    %s\n", rep.Command)
	}
}

// rank is m's position in order, or len(order) if absent.
func rank(order []string, m string) int {
	if i := slices.Index(order, m); i >= 0 {
		return i
	}
	return len(order)
}

// measuredCell formats mean ± std of v, marked † when the mean is outside
// the paper's mean ± 2 std.
func measuredCell(v []float64, paper Stat, prec int) string {
	if len(v) == 0 {
		return "–"
	}
	m, s := meanStd(v)
	c := fmt.Sprintf("%.*f ± %.*f", prec, m, prec, s)
	if !math.IsNaN(paper.Mean) && !math.IsNaN(paper.Std) && math.Abs(m-paper.Mean) > 2*paper.Std {
		c += " †"
	}
	return c
}

// paperCell formats the paper's mean ± std: blank when not reported,
// "n/a" for a std the paper misprinted.
func paperCell(p Stat, prec int) string {
	switch {
	case math.IsNaN(p.Mean):
		return ""
	case math.IsNaN(p.Std):
		return fmt.Sprintf("%.*f ± n/a", prec, p.Mean)
	}
	return fmt.Sprintf("%.*f ± %.*f", prec, p.Mean, prec, p.Std)
}
