package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
)

// Job is one training run of a table, whatever its family: what the
// generic runner, status and Slurm array need of it.
type Job struct {
	// Label names the run without its seed ("25gmm teacher",
	// "teacher d2 H128"); Seed and Dir complete it.
	Label string
	Seed  int
	Dir   string
	// Args are the gfn arguments of a fresh start.
	Args []string
	// Prepare, if set, is asked before the run starts or resumes, with
	// what its directory calls for: it may finish the run itself (copy an
	// identical finished run, and say RunDone) or refuse a checkpoint that
	// is not this run's.
	Prepare func(st RunStatus) (RunStatus, error)
}

// Name is the job's label with its seed.
func (j Job) Name() string { return fmt.Sprintf("%s seed %d", j.Label, j.Seed) }

// Next says what the job's directory calls for and the gfn arguments
// that do it (nextRun), after Prepare.
func (j Job) Next() (RunStatus, []string, error) {
	st, args := nextRun(j.Dir, j.Args)
	if j.Prepare == nil || st == RunDone {
		return st, args, nil
	}
	p, err := j.Prepare(st)
	if err != nil || p == RunDone {
		return p, nil, err
	}
	return st, args, nil
}

// LaneOptions are how a table's runs are run.
type LaneOptions struct {
	// Lanes is the number of runs at a time (≥ 1).
	Lanes int
	// CollectOnly runs nothing: the table is aggregated from the runs
	// that finished.
	CollectOnly bool
}

// runJobs runs the asked jobs that are not finished, o.Lanes at a time
// (those to resume first), logging under name; dir is the table's
// directory. runErr is the first failure of a run (the others go on);
// err stops the table: an unusable directory, a job that refused its
// checkpoint, a cancelled ctx.
func runJobs(ctx context.Context, name, dir string, jobs []Job, o LaneOptions, runner Runner, log io.Writer) (runErr, err error) {
	if err := safefile.CheckDir(dir); err != nil {
		return nil, err
	}
	var todo []pendingRun
	done, reused := 0, 0
	for _, j := range jobs {
		if o.CollectOnly {
			if st, _ := nextRun(j.Dir, j.Args); st == RunDone {
				done++
			}
			continue
		}
		plain, _ := nextRun(j.Dir, j.Args)
		st, args, err := j.Next()
		if err != nil {
			return nil, err
		}
		if st == RunDone {
			done++
			if plain != RunDone {
				reused++
			}
			continue
		}
		todo = append(todo, pendingRun{j.Name(), st, args})
	}
	if o.CollectOnly {
		fmt.Fprintf(log, "%s: %d of %d runs finished; collecting them only\n", name, done, len(jobs))
		return nil, nil
	}
	extra := ""
	if reused > 0 {
		extra = fmt.Sprintf(" (%d copied from the main table's identical runs)", reused)
	}
	runErr = runPending(ctx, log, name, todo, len(jobs), done, extra, o.Lanes, runner)
	return runErr, ctx.Err()
}

// Status reports where every run of jobs stands, read from its
// directory: the progress of an unfinished run from its checkpoint
// header (any family's), the wall time of a finished one from its
// summary. Unstarted runs of seeds beyond the first seeds are left out
// (all seeds if 0).
func Status(jobs []Job, seeds int) []RunState {
	var rs []RunState
	for _, j := range jobs {
		st, _ := nextRun(j.Dir, j.Args)
		r := runState(j.Label, j.Dir, j.Seed, st)
		if r.Status == RunResume {
			r.Done = -1
			if c, err := run.Open(j.Dir); err == nil {
				r.Unit, r.Done, r.Total = c.Header.Unit, c.Header.Done, c.Header.Total
			}
		}
		rs = append(rs, r)
	}
	return asked(rs, seeds)
}

// SlurmJobs lists jobs as Slurm array tasks, in order, with the table
// runner's rule (Job.Next): a finished run is skipped, an interrupted one
// resumed from its checkpoint, any other started afresh.
func SlurmJobs(jobs []Job) []SlurmTask {
	ts := make([]SlurmTask, len(jobs))
	for i, j := range jobs {
		ts[i] = SlurmTask{Name: j.Name(), Dir: j.Dir, Args: j.Args, Next: j.Next}
	}
	return ts
}

// quickNote is the line at the top of a --quick table's results.md:
// every family's smoke run is one seed and a fraction of the budget.
func quickNote(w io.Writer, budget string) {
	fmt.Fprintf(w, "\n**Smoke run (--quick)**: one seed, %s; not comparable with the paper.\n", budget)
}

// finishedSummary reads a finished run's summary.json into v; false if
// there is none or it cannot be read.
func finishedSummary(dir string, v any) bool {
	b, err := os.ReadFile(filepath.Join(dir, run.SummaryFile))
	return err == nil && json.Unmarshal(b, v) == nil
}

// job is the grid job as the generic runner sees it.
func (j GridJob) job() Job {
	return Job{Label: fmt.Sprintf("%s %v", j.Method, j.Grid), Seed: j.Seed, Dir: j.Dir, Args: j.Args}
}

// job is the diffusion job as the generic runner sees it: the alpha
// table's α = 0.5 run is copied from the main table's once that has
// finished (with the job's preset).
func (j DiffusionJob) job() Job {
	g := Job{Label: j.Task + " " + j.Method, Seed: j.Seed, Dir: j.Dir, Args: j.Args}
	if j.SameAs != "" {
		g.Prepare = func(st RunStatus) (RunStatus, error) {
			if !finished(j.SameAs, j.Preset, j.Iterations) {
				return st, nil
			}
			if err := copyRun(j.SameAs, j.Dir); err != nil {
				return st, err
			}
			return RunDone, nil
		}
	}
	return g
}

// job is the sequence job as the generic runner sees it: a checkpoint
// that is not this job's run is refused.
func (j BiochemJob) job() Job {
	return Job{Label: j.Task + " " + j.Method, Seed: j.Seed, Dir: j.Dir, Args: j.Args,
		Prepare: func(st RunStatus) (RunStatus, error) {
			if st == RunResume {
				return st, j.checkResume()
			}
			return st, nil
		}}
}

// Table is one table of a family as gfn bench runs it: its runs, and how
// its results are written. GridRun, DiffusionRun and BiochemRun are the
// families'.
type Table interface {
	// Name is the table as the log names it ("bench grid tb").
	Name() string
	// Dir is the directory of its runs and results.
	Dir() string
	// Jobs lists the asked runs; All every run of the table in Dir (the
	// asked ones among them), which Status lists and the results
	// describe.
	Jobs() ([]Job, error)
	All() ([]Job, error)
	// Seeds is the number of seeds asked (0: the table's).
	Seeds() int
	// Write aggregates the finished runs of All into Dir (results.csv,
	// results.md and figures) and returns results.md and the names of
	// the files written.
	Write() (markdown string, files []string, err error)
}

// RunTable runs t's unfinished runs, o.Lanes at a time (those to resume
// first), logging to log, then writes its results. runErr is the first
// failure of a run (the others ran; the results describe the finished
// ones); err one that stopped the table.
func RunTable(ctx context.Context, t Table, o LaneOptions, runner Runner, log io.Writer) (markdown string, files []string, runErr, err error) {
	jobs, err := t.Jobs()
	if err != nil {
		return "", nil, nil, err
	}
	if runErr, err = runJobs(ctx, t.Name(), t.Dir(), jobs, o, runner, log); err != nil {
		return "", nil, runErr, err
	}
	markdown, files, err = t.Write()
	return markdown, files, runErr, err
}

// TableStatus reports where every run of t stands.
func TableStatus(t Table) ([]RunState, error) {
	all, err := t.All()
	if err != nil {
		return nil, err
	}
	return Status(all, t.Seeds()), nil
}

// TableSlurm lists t's asked runs as Slurm array tasks.
func TableSlurm(t Table) ([]SlurmTask, error) {
	jobs, err := t.Jobs()
	if err != nil {
		return nil, err
	}
	return SlurmJobs(jobs), nil
}

// writeResults writes results.csv (csv) and results.md (md) into dir.
func writeResults(dir string, csv func(io.Writer) error, md string) error {
	if err := safefile.Write(filepath.Join(dir, "results.csv"), csv); err != nil {
		return err
	}
	return safefile.WriteBytes(filepath.Join(dir, "results.md"), []byte(md))
}

// quickSeeds is the seeds a table asks for: seeds, or 1 for a --quick
// table that names none (0 means the table's own count otherwise).
func quickSeeds(seeds int, quick bool) int {
	if seeds == 0 && quick {
		return 1
	}
	return seeds
}

// GridRun is a grid table with its options, as RunTable takes it.
type GridRun struct {
	T GridTable
	O GridOptions
}

// Name is "bench grid <table>".
func (g GridRun) Name() string { return "bench grid " + g.T.Name }

// Dir is the table's directory.
func (g GridRun) Dir() string { return g.O.Out }

// Seeds is the seeds asked (1 for a --quick table unless set).
func (g GridRun) Seeds() int { return quickSeeds(g.O.Seeds, g.O.Quick) }

// Jobs lists the asked runs.
func (g GridRun) Jobs() ([]Job, error) {
	for _, m := range g.O.Methods {
		if _, ok := GridMethods[m]; !ok {
			return nil, fmt.Errorf("bench: method %q is unknown", m)
		}
	}
	return gridJobs(g.T.Jobs(g.O)), nil
}

// All lists every run of the table in its directory.
func (g GridRun) All() ([]Job, error) { return gridJobs(g.T.TableJobs(g.O)), nil }

func gridJobs(js []GridJob) []Job {
	out := make([]Job, len(js))
	for i, j := range js {
		out[i] = j.job()
	}
	return out
}

// Write writes results.csv, results.md and figures/.
func (g GridRun) Write() (string, []string, error) {
	results, err := collectGrid(g.T.Name, g.T.TableJobs(g.O))
	if err != nil {
		return "", nil, err
	}
	var md strings.Builder
	WriteMarkdown(&md, g.T.Name, g.O.Quick, results)
	if err := writeResults(g.O.Out, func(w io.Writer) error { return WriteResultsCSV(w, results) }, md.String()); err != nil {
		return "", nil, err
	}
	figs, err := GridFigures(filepath.Join(g.O.Out, "figures"), g.T.TableJobs(g.O))
	return md.String(), append([]string{"results.csv", "results.md"}, prefixed("figures/", figs)...), err
}

// DiffusionRun is a diffusion table with its options, as RunTable takes
// it; Report heads its results.md.
type DiffusionRun struct {
	T      DiffusionTable
	O      DiffusionOptions
	Report DiffusionReport
}

// Name is "bench diffusion <table>".
func (d DiffusionRun) Name() string { return "bench diffusion " + d.T.Name }

// Dir is the table's directory.
func (d DiffusionRun) Dir() string { return d.O.Dir(d.T) }

// Seeds is the seeds asked (1 for a --quick table unless set).
func (d DiffusionRun) Seeds() int { return quickSeeds(d.O.Seeds, d.O.Quick) }

// Jobs lists the asked runs.
func (d DiffusionRun) Jobs() ([]Job, error) {
	if err := d.O.validate(d.T); err != nil {
		return nil, err
	}
	return diffusionJobs(d.T.Jobs(d.O)), nil
}

// All lists every run of the table in its directory.
func (d DiffusionRun) All() ([]Job, error) {
	if err := d.O.validate(d.T); err != nil {
		return nil, err
	}
	return diffusionJobs(d.T.allJobs(d.O, d.T.Jobs(d.O))), nil
}

func diffusionJobs(js []DiffusionJob) []Job {
	out := make([]Job, len(js))
	for i, j := range js {
		out[i] = j.job()
	}
	return out
}

// Write writes results.csv, results.md and figures/.
func (d DiffusionRun) Write() (string, []string, error) {
	results, err := collectDiffusion(d.T.Name, d.T.allJobs(d.O, d.T.Jobs(d.O)))
	if err != nil {
		return "", nil, err
	}
	rep := d.Report
	rep.Table, rep.Preset, rep.Quick, rep.Jobs = d.T.Name, d.O.presetFor(d.T.Tasks[0]), d.O.Quick, d.O.Jobs
	var md strings.Builder
	if d.T.Name == "suite" {
		WriteSuiteMarkdown(&md, rep, results)
	} else {
		WriteDiffusionMarkdown(&md, rep, results)
	}
	if err := writeResults(d.Dir(), func(w io.Writer) error { return WriteDiffusionCSV(w, results) }, md.String()); err != nil {
		return "", nil, err
	}
	figs, err := DiffusionFigures(filepath.Join(d.Dir(), "figures"), d.T.Jobs(d.O))
	return md.String(), append([]string{"results.csv", "results.md"}, prefixed("figures/", figs)...), err
}

// BiochemRun is a sequence-design table with its options, as RunTable
// takes it; Report heads its results.md.
type BiochemRun struct {
	O      BiochemOptions
	Report BiochemReport
}

// Name is "bench biochem" (with the table's name but for main).
func (b BiochemRun) Name() string {
	if t := b.O.table().Name; t != "main" {
		return "bench biochem " + t
	}
	return "bench biochem"
}

// Dir is the table's directory.
func (b BiochemRun) Dir() string { return b.O.Dir() }

// Seeds is the seeds asked (1 for a --quick table unless set).
func (b BiochemRun) Seeds() int { return quickSeeds(b.O.Seeds, b.O.Quick) }

// Jobs lists the asked runs.
func (b BiochemRun) Jobs() ([]Job, error) {
	js, err := BiochemJobs(b.O)
	return biochemJobs(js), err
}

// All lists every run of the table in its directory.
func (b BiochemRun) All() ([]Job, error) {
	js, err := b.all()
	return biochemJobs(js), err
}

func (b BiochemRun) all() ([]BiochemJob, error) {
	js, err := BiochemJobs(b.O)
	if err != nil {
		return nil, err
	}
	return allBiochemJobs(b.O, js)
}

func biochemJobs(js []BiochemJob) []Job {
	out := make([]Job, len(js))
	for i, j := range js {
		out[i] = j.job()
	}
	return out
}

// Write writes results.csv, results.md and figure.png.
func (b BiochemRun) Write() (string, []string, error) {
	all, err := b.all()
	if err != nil {
		return "", nil, err
	}
	results, err := collectBiochem(all)
	if err != nil {
		return "", nil, err
	}
	rep := b.Report
	rep.Table, rep.Quick, rep.Jobs = b.O.table().Name, b.O.Quick, b.O.Jobs
	var md strings.Builder
	WriteBiochemMarkdown(&md, rep, results)
	if err := writeResults(b.Dir(), func(w io.Writer) error { return WriteBiochemCSV(w, results) }, md.String()); err != nil {
		return "", nil, err
	}
	asked, err := BiochemJobs(b.O)
	if err != nil {
		return "", nil, err
	}
	files := []string{"results.csv", "results.md"}
	drew, err := BiochemFigure(filepath.Join(b.Dir(), "figure.png"), asked)
	if drew {
		files = append(files, "figure.png")
	}
	return md.String(), files, err
}

func prefixed(p string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p + n
	}
	return out
}
