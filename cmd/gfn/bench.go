package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gfngo/gfn/bench"
	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/objective"
	"github.com/gfngo/gfn/safefile"
)

const benchUsage = `Usage: gfn bench <benchmark> [flags]

Benchmarks:
  speed      ms per training iteration on the paper's grids and diffusion tasks
  grid       reproduce a grid table of the paper (Table 1, DB, large grids, ablations, local search;
             multi: several Teachers, the paper's future work)
  diffusion  reproduce a diffusion-sampler table of the paper (Table 2 with SMC, GGNS and PIS run
             here, alpha, local search; passes: the authors' buffer draws)
  biochem    reproduce the paper's sequence-design figure (tfbind8, qm9str, sehstr, rna; 6 methods)
  objectives every training objective of each family, without and with the Teacher (grids,
             25gmm, manywell, tfbind8, qm9str)

Every table runs each method × task × seed as a gfn train process, resumes interrupted runs,
and takes --status (where each run stands, time left), --collect-only and --slurm.
`

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, benchUsage)
		return usagef("no benchmark given (allowed: speed, grid, diffusion, biochem, objectives)")
	}
	switch args[0] {
	case "speed":
		return runBenchSpeed(ctx, args[1:], stdout, stderr)
	case "grid":
		return runBenchGrid(ctx, args[1:], stdout, stderr)
	case "diffusion":
		return runBenchDiffusion(ctx, args[1:], stdout, stderr)
	case "biochem":
		return runBenchBiochem(ctx, args[1:], stdout, stderr)
	case "objectives":
		return runBenchObjectives(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, benchUsage)
		return nil
	default:
		fmt.Fprint(stderr, benchUsage)
		return usagef("unknown benchmark %q (allowed: speed, grid, diffusion, biochem, objectives)", args[0])
	}
}

func runBenchSpeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench speed", "Time training iterations (median ms) from a fresh start and after --late-step\niterations, for grid d2 H128 tb and teacher and grid d4 H32 teacher; then the diffusion\nsamplers (reference preset: batch 500, T = 100, width 256) with tb and teacher on 25gmm and\nmanywell, the teacher also in the steady state (every state above the threshold, as once the\nStudent has learned), lgcp's tb and steady teacher at the sendera preset, and 25gmm's tb and\nsteady teacher at the paper preset (lgcp's network, batch and T at d = 2): median and mean ms per iteration,\nGFLOP/s of the network passes and peak RSS; then the Teacher + PER round of sehstr and qm9str.\nWith --precision fp32,bf16 every row runs in both precisions back to back, and --repeat N\ntimes over (interleaved), the best of N shown, with the fp32/bf16 ratios (the grid's per\ntrajectory step of the late window, whose lengths depend on the training).\nPrints the machine's CPU features and kernels, and Markdown tables.")
	iters := fs.Int("iterations", 100, "timed iterations per window (>= 1)")
	late := fs.Int("late-step", 2000, "iteration at which the late window starts")
	diffIters := fs.Int("diffusion-iterations", 8, "timed iterations of each diffusion case, after 4 of warm-up (0 = no diffusion rows)")
	seqRounds := fs.Int("seq-rounds", 6, "timed rounds of each sequence case, after 6 of warm-up (0 = no sequence rows)")
	precs := fs.String("precision", "fp32", "comma-separated precisions of the networks' hidden-layer products to time each row in: fp32, bf16")
	repeat := fs.Int("repeat", 1, "times every row is timed, interleaved with the other precisions; the best (least median ms) is shown")
	only := fs.String("cases", "", "regular expression: time only the rows whose name matches (empty = all)")
	seed := fs.Uint64("seed", 0, "random seed")
	if err := parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if *iters < 1 || *late < 0 || *diffIters < 0 || *seqRounds < 0 || *repeat < 1 {
		return usagef("iterations %d must be >= 1, late-step %d >= 0, diffusion-iterations %d and seq-rounds %d >= 0, repeat %d >= 1", *iters, *late, *diffIters, *seqRounds, *repeat)
	}
	var ps []nn.Precision
	for _, name := range strings.Split(*precs, ",") {
		p, err := nn.ParsePrecision(strings.TrimSpace(name))
		if err != nil {
			return usageError{err}
		}
		if err := p.Check(); err != nil {
			return err
		}
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	match, err := regexp.Compile(*only)
	if err != nil {
		return usagef("cases %q: %v", *only, err)
	}
	fmt.Fprintf(stdout, "machine: %s\n\n", bench.Machine())
	// timeAll runs every case in every precision, repeat times over, and
	// keeps each case's and precision's best and every run's key time.
	type key struct {
		c int
		p nn.Precision
	}
	timeAll := func(n int, name func(int) string, run func(i int, p nn.Precision) (ms float64, err error)) (map[key][]float64, error) {
		times := map[key][]float64{}
		for r := range *repeat {
			for i := range n {
				if !match.MatchString(name(i)) {
					continue
				}
				for _, p := range ps {
					fmt.Fprintf(stderr, "timing %s, %s (%d of %d)...\n", name(i), p, r+1, *repeat)
					ms, err := run(i, p)
					if err != nil {
						return nil, err
					}
					times[key{i, p}] = append(times[key{i, p}], ms)
				}
			}
		}
		return times, nil
	}
	var ratios []string
	ratio := func(name string, t map[key][]float64, i int) {
		if len(ps) < 2 || len(t[key{i, nn.FP32}]) == 0 {
			return
		}
		a, b := t[key{i, nn.FP32}], t[key{i, nn.BF16}]
		paired := make([]float64, len(a))
		for j := range a {
			paired[j] = a[j] / b[j]
		}
		slices.Sort(paired)
		med := paired[len(paired)/2]
		if len(paired)%2 == 0 {
			med = (paired[len(paired)/2-1] + med) / 2
		}
		ratios = append(ratios, fmt.Sprintf("| %s | %.3g | %.3g | %.2f | %.2f (%.2f–%.2f, n=%d) |", name, slices.Min(a), slices.Min(b),
			slices.Min(a)/slices.Min(b), med, paired[0], paired[len(paired)-1], len(paired)))
	}

	best := map[key]bench.SpeedResult{}
	gridName := func(i int) string { return bench.SpeedCases[i].Name }
	gt, err := timeAll(len(bench.SpeedCases), gridName, func(i int, p nn.Precision) (float64, error) {
		// The late window's trajectories are as long as the run has
		// learned to make them, which the precision changes: the measure
		// is the time per step of the batch's trajectories.
		r, err := bench.Speed(ctx, bench.SpeedCases[i], bench.SpeedOptions{Iterations: *iters, LateStep: *late, Seed: *seed, Precision: p})
		perStep := r.LateMs / r.LateLen
		if b, ok := best[key{i, p}]; err == nil && (!ok || perStep < b.LateMs/b.LateLen) {
			best[key{i, p}] = r
		}
		return perStep, err
	})
	if err != nil {
		return err
	}
	var rs []bench.SpeedResult
	for i := range bench.SpeedCases {
		for _, p := range ps {
			if r, ok := best[key{i, p}]; ok {
				rs = append(rs, r)
			}
		}
		ratio(gridName(i)+" (late window, ms per trajectory step: ms/iter ÷ mean length)", gt, i)
	}
	if len(rs) > 0 {
		bench.WriteSpeedTable(stdout, rs)
	}
	if *diffIters > 0 {
		dbest := map[key]bench.DiffusionSpeedResult{}
		name := func(i int) string { return bench.DiffusionSpeedCases[i].Name }
		dt, err := timeAll(len(bench.DiffusionSpeedCases), name, func(i int, p nn.Precision) (float64, error) {
			r, err := bench.DiffusionSpeed(ctx, bench.DiffusionSpeedCases[i], bench.DiffusionSpeedOptions{Iterations: *diffIters, Seed: *seed, Precision: p})
			if b, ok := dbest[key{i, p}]; err == nil && (!ok || r.MedianMs < b.MedianMs) {
				dbest[key{i, p}] = r
			}
			return r.MedianMs, err
		})
		if err != nil {
			return err
		}
		var ds []bench.DiffusionSpeedResult
		for i := range bench.DiffusionSpeedCases {
			for _, p := range ps {
				if r, ok := dbest[key{i, p}]; ok {
					ds = append(ds, r)
				}
			}
			ratio(name(i), dt, i)
		}
		if len(ds) > 0 {
			fmt.Fprintln(stdout)
			bench.WriteDiffusionSpeedTable(stdout, ds)
		}
	}
	if *seqRounds > 0 {
		sbest := map[key]bench.SeqSpeedResult{}
		name := func(i int) string { return bench.SeqSpeedCases[i].Name }
		st, err := timeAll(len(bench.SeqSpeedCases), name, func(i int, p nn.Precision) (float64, error) {
			r, err := bench.SeqSpeed(ctx, bench.SeqSpeedCases[i], bench.SeqSpeedOptions{Rounds: *seqRounds, Seed: *seed, Precision: p})
			if b, ok := sbest[key{i, p}]; err == nil && (!ok || r.MedianMs < b.MedianMs) {
				sbest[key{i, p}] = r
			}
			return r.MedianMs, err
		})
		if err != nil {
			return err
		}
		var ss []bench.SeqSpeedResult
		for i := range bench.SeqSpeedCases {
			for _, p := range ps {
				if r, ok := sbest[key{i, p}]; ok {
					ss = append(ss, r)
				}
			}
			ratio(name(i), st, i)
		}
		if len(ss) > 0 {
			fmt.Fprintln(stdout)
			bench.WriteSeqSpeedTable(stdout, ss)
		}
	}
	if len(ratios) > 0 {
		fmt.Fprintf(stdout, "\nfp32 against bf16 (%d runs each, interleaved; ms per iteration or round, median of each run):\n\n", *repeat)
		fmt.Fprintln(stdout, "| configuration | fp32 best | bf16 best | ratio of bests | paired ratio median (range) |")
		fmt.Fprintln(stdout, "|---|---|---|---|---|")
		for _, l := range ratios {
			fmt.Fprintln(stdout, l)
		}
	}
	return nil
}

func runBenchGrid(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var names []string
	for _, t := range bench.GridTables {
		names = append(names, t.Name)
	}
	fs := newFlagSet("bench grid", "Run every method × grid × seed of one of the paper's grid tables as separate gfn train\nprocesses (resumable: runs with a summary.json are skipped, runs with a checkpoint and no\nsummary continue with gfn train --resume; runs checkpoint every 1,000 iterations), then write\nresults.csv, results.md (mean ± std next to the paper's numbers) and figures/ to --out, from\nevery finished run of the table there (a --methods or --grids subset keeps the others' rows).")
	table := fs.String("table", "tb", "table to reproduce: "+strings.Join(names, ", ")+" (tb is the paper's main grid table, Table 1)")
	tf := addTableFlags(fs, "methods", "seeds per method and grid (0 = the table's: 5 for tb, 3 otherwise)", "smoke run: 1 seed, 1/20 of the reward calls, 2000 evaluation samples")
	out := fs.String("out", "", "output directory (default runs/bench-grid-<table>, runs/bench-grid-<table>-quick with --quick)")
	evalSamples := fs.Int("eval-samples", 0, "fresh Student samples for the empirical L1 (0 = 100000, 2000 with --quick)")
	grids := fs.String("grids", "", "comma-separated subset of grids, like d2H128,d4H16")
	if err := tf.parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	t, err := bench.TableByName(*table)
	if err != nil {
		return usageError{err}
	}
	if *evalSamples < 0 {
		return usagef("eval-samples %d must be >= 0", *evalSamples)
	}
	o := bench.GridOptions{Out: *out, Seeds: *tf.seeds, Jobs: *tf.jobs, Quick: *tf.quick, EvalSamples: *evalSamples, CollectOnly: *tf.collect}
	if o.Out == "" {
		o.Out = filepath.Join("runs", "bench-grid-"+t.Name)
		if o.Quick {
			o.Out += "-quick"
		}
	}
	if o.Methods, err = tf.methodList(func(m string) error {
		if _, ok := bench.GridMethods[m]; !ok {
			return usagef("method %q is unknown (table %s has %s)", m, t.Name, strings.Join(t.Methods, ", "))
		}
		return nil
	}); err != nil {
		return err
	}
	if *grids != "" {
		for _, g := range strings.Split(*grids, ",") {
			var d, h int
			if n, err := fmt.Sscanf(g, "d%dH%d", &d, &h); n != 2 || err != nil || d < 1 || h < 2 {
				return usagef("grid %q is not of the form d2H128", g)
			}
			o.Grids = append(o.Grids, bench.Grid{Dim: d, Side: h})
		}
	}
	return benchTable(ctx, []string{"bench", "grid"}, fs, tf, &o.Out, func() bench.Table { return bench.GridRun{T: t, O: o} }, stdout, stderr)
}

// tableFlags are the flags every gfn bench table command takes.
type tableFlags struct {
	seeds, jobs            *int
	quick, collect, status *bool
	methods                *string
	slurm                  *slurmFlags
}

// addTableFlags defines them; seedsHelp and quickHelp are the table's,
// rows the name of its rows' flag ("methods", "objectives").
func addTableFlags(fs *flag.FlagSet, rows, seedsHelp, quickHelp string) tableFlags {
	return tableFlags{
		seeds:   fs.Int("seeds", 0, seedsHelp),
		jobs:    fs.Int("jobs", runtime.NumCPU(), "runs at a time (each with GOMAXPROCS = cores / jobs unless GOMAXPROCS is set)"),
		quick:   fs.Bool("quick", false, quickHelp),
		collect: fs.Bool("collect-only", false, "run nothing: aggregate the runs already finished"),
		status:  fs.Bool("status", false, "run nothing: list every run of the table in --out and where it stands (finished, the step its checkpoint records, not started) with the time left estimated from finished runs of the same kind"),
		methods: fs.String(rows, "", "comma-separated subset of the table's "+rows+" (rows)"),
		slurm:   addSlurmFlags(fs),
	}
}

// parse parses args and checks the shared flags.
func (f tableFlags) parse(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	if *f.seeds < 0 || *f.jobs < 1 {
		return usagef("seeds %d must be >= 0 and jobs %d >= 1", *f.seeds, *f.jobs)
	}
	return f.slurm.check(fs, *f.collect)
}

// quickOut gives a --quick table its own default root, <out>-quick, so
// smoke runs never mix with (or are refused beside) the table's real runs;
// an --out given on the command line is kept.
func (f tableFlags) quickOut(fs *flag.FlagSet, out *string) {
	if !*f.quick {
		return
	}
	set := false
	fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == "out" })
	if !set {
		*out += "-quick"
	}
}

// methodList splits --methods, each checked by known (which names the
// allowed ones in its error).
func (f tableFlags) methodList(known func(string) error) ([]string, error) {
	if *f.methods == "" {
		return nil, nil
	}
	var ms []string
	for _, m := range strings.Split(*f.methods, ",") {
		m = strings.TrimSpace(m)
		if err := known(m); err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// benchTable is the part of every gfn bench table command after its
// flags: --status, --slurm and --slurm-task, or the runs themselves, then
// the results (results.csv, results.md, figures) and their Markdown on
// stdout. out is the table's --out (made absolute for Slurm before
// table builds the table).
func benchTable(ctx context.Context, command []string, fs *flag.FlagSet, f tableFlags, out *string, table func() bench.Table, stdout, stderr io.Writer) error {
	slurm, lanes := f.slurm, *f.jobs
	if *f.status {
		t := table()
		rs, err := bench.TableStatus(t)
		if err != nil {
			return usageError{err}
		}
		return bench.WriteStatus(stdout, t.Name()+" ("+t.Dir()+")", rs, time.Now())
	}
	if slurm.active() {
		var err error
		if *out, err = filepath.Abs(*out); err != nil {
			return err
		}
		t := table()
		tasks, err := bench.TableSlurm(t)
		if err != nil {
			return err
		}
		return slurm.do(ctx, t.Name(), command, fs, *out, t.Dir(), tasks, stdout, stderr)
	}
	t := table()
	if err := safefile.CheckDir(t.Dir()); err != nil {
		return usageError{err}
	}
	run, err := benchRunner(t.Dir(), lanes)
	if err != nil {
		return err
	}
	md, files, runErr, err := bench.RunTable(ctx, t, bench.LaneOptions{Lanes: lanes, CollectOnly: *f.collect}, run, stderr)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, md)
	fmt.Fprintf(stdout, "\nwrote %s: %s\n", t.Dir(), strings.Join(files, ", "))
	return runErr
}

// benchRunner runs gfn commands as child processes of this binary, each
// with its share of the cores unless the user set GOMAXPROCS (say, to run
// two tables side by side), logging to out/logs.
func benchRunner(out string, jobs int) (bench.Runner, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(self, ".test") {
		// A test binary runs its tests, not gfn train: each run would
		// start the whole suite again, and so on.
		return func(context.Context, []string) error {
			return fmt.Errorf("bench: %s is a test binary and cannot run gfn train", self)
		}, nil
	}
	logs := filepath.Join(out, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, usagef("output directory %s is not usable: %v", out, err)
	}
	env := os.Environ()
	if os.Getenv("GOMAXPROCS") == "" {
		env = append(env, fmt.Sprintf("GOMAXPROCS=%d", max(1, runtime.NumCPU()/jobs)))
	}
	return bench.ExecRunner(self, logs, env), nil
}

func runBenchDiffusion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var names []string
	for _, t := range bench.DiffusionTables {
		names = append(names, t.Name)
	}
	fs := newFlagSet("bench diffusion", "Run every method × task × seed of one of the paper's diffusion-sampler tables as separate gfn\ntrain processes, --jobs at a time, into --out/<table>/<task>-<method>-seed<S>. Resumable: a run\nwith a summary.json is skipped, one with a checkpoint and no summary is continued with gfn\ntrain --resume (checkpoints every 500 iterations), others start afresh. Then writes\nresults.csv, results.md (mean ± std next to the paper's numbers) and figures/ to --out/<table>,\nfrom every finished run of the table there (a --methods or --tasks subset keeps the others'\nrows). A run whose final ELBO is more than 1 nat below its first evaluation's (step 0, after\none iteration) diverged: it is left out of the means, stds and mean curves, counted as \"+N\ndiverged\" and named with its iteration in results.md, and kept in results.csv (start_elbo,\ndiverged_at). Tables: main (Table 2: smc, ggns, pis, tb, eps, prt, per, teacher on 25gmm and\nmanywell), alpha (teacher with alpha 0 and 0.5; alpha 0.5 copies main's finished teacher runs,\nthe same command), local-search (per and teacher with --ls on manywell), passes (per and\nteacher with --buffer-passes, the authors' stale buffer draws, on 25gmm; not in the paper),\nsuite (smc, tb, eps, prt, per, teacher, pis on funnel, gmm40, gmm40-50d, mos and lgcp, each at its\ndefault preset, with EMC, |delta log Z| and MMD and the published numbers of Sendera et al. 2024;\nfinal evaluation of 2,000 samples, W2 on the curve every 1,000 iterations).")
	table := fs.String("table", "main", "table to reproduce: "+strings.Join(names, ", ")+" (main is the paper's Table 2)")
	tf := addTableFlags(fs, "methods", "seeds per method and task (0 = the paper's 5; 1 with --quick)", "smoke run: 1 seed, 40 iterations of 64 trajectories of 20 steps, width 64, small evaluations")
	out := fs.String("out", filepath.Join("runs", "bench-diffusion"), "root output directory: the table's runs and results go to <out>/<table> (default with --quick: runs/bench-diffusion-quick)")
	tasks := fs.String("tasks", "", "comma-separated tasks ("+strings.Join(slices.Concat(bench.DiffusionTasks, bench.SuiteTasks), ", ")+"; default the table's)")
	preset := fs.String("preset", "", "training settings of every task (default: each task's default preset: paper for 25gmm and manywell, which reproduces the paper's table; sendera for funnel and lgcp; blessing for gmm40, gmm40-50d and mos); reference is the released code's")
	iterations := fs.Int("iterations", 0, "replace every preset's iterations (0: the presets'); the runs go to <out>/<table>-it<N>")
	batch := fs.Int("batch", 0, "replace every preset's batch (0: the presets'); the runs go to <out>/<table>-batch<B>")
	if err := tf.parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	tf.quickOut(fs, out)
	t, err := bench.DiffusionTableByName(*table)
	if err != nil {
		return usageError{err}
	}
	if *preset != "" && !slices.Contains(diffusion.Presets, *preset) {
		return usagef("preset %q is unknown (allowed: %s)", *preset, strings.Join(diffusion.Presets, ", "))
	}
	if *iterations < 0 || *batch < 0 || (*iterations > 0 || *batch > 0) && *tf.quick {
		return usagef("iterations %d and batch %d must be >= 0, and --quick has its own budget (give one or the other)", *iterations, *batch)
	}
	o := bench.DiffusionOptions{Out: *out, Seeds: *tf.seeds, Jobs: *tf.jobs, Quick: *tf.quick, Preset: *preset, CollectOnly: *tf.collect, Iterations: *iterations, Batch: *batch}
	if o.Methods, err = tf.methodList(func(m string) error {
		if _, ok := bench.DiffusionMethods[m]; !ok {
			return usagef("method %q is unknown (table %s has %s)", m, t.Name, strings.Join(t.Methods, ", "))
		}
		return nil
	}); err != nil {
		return err
	}
	if *tasks != "" {
		for _, k := range strings.Split(*tasks, ",") {
			if all := slices.Concat(bench.DiffusionTasks, bench.SuiteTasks); !slices.Contains(all, k) {
				return usagef("task %q is unknown (allowed: %s)", k, strings.Join(all, ", "))
			}
			o.Tasks = append(o.Tasks, k)
		}
	}
	rep := bench.DiffusionReport{Command: strings.Join(append([]string{"gfn bench diffusion"}, args...), " ")}
	return benchTable(ctx, []string{"bench", "diffusion"}, fs, tf, &o.Out, func() bench.Table { return bench.DiffusionRun{T: t, O: o, Report: rep} }, stdout, stderr)
}

func runBenchObjectives(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var names []string
	for _, t := range bench.ObjectiveTasks {
		names = append(names, t.Name)
	}
	fs := newFlagSet("bench objectives", "Train every objective of each task's family without and with the Teacher (grid and diffusion: tb and\nteacher; sequences: per and teacher-per), each task × objective × method × seed as a gfn train\nprocess, --jobs at a time, into <out>/objectives. Resumable like the other tables. Then writes\nresults.csv, results.md (per task, mean ± std over seeds of what its family measures) and\nfigures/<task>.png (each objective's training curve without and with the Teacher).\nTasks: "+strings.Join(names, ", ")+" (the grids at the paper's budgets, the diffusion samplers' paper\npreset); the sequence tasks' rows use the paper's ssr policy (db and subtb with its flow head).")
	tf := addTableFlags(fs, "objectives", "seeds per task, objective and method (0 = 3; 1 with --quick)", "smoke run: 1 seed at each task's smoke budget")
	out := fs.String("out", filepath.Join("runs", "bench-objectives"), "root output directory: the runs and results go to <out>/objectives (default with --quick: runs/bench-objectives-quick)")
	tasks := fs.String("tasks", "", "comma-separated tasks (default all: "+strings.Join(names, ", ")+")")
	if err := tf.parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	tf.quickOut(fs, out)
	o := bench.ObjectivesOptions{Out: *out, Seeds: *tf.seeds, Quick: *tf.quick, CollectOnly: *tf.collect}
	if *tasks != "" {
		for _, k := range strings.Split(*tasks, ",") {
			if _, err := bench.ObjectiveTaskByName(strings.TrimSpace(k)); err != nil {
				return usagef("task %q is not in the objectives table (allowed: %s)", k, strings.Join(names, ", "))
			}
			o.Tasks = append(o.Tasks, strings.TrimSpace(k))
		}
	}
	var err error
	if o.Objectives, err = tf.methodList(func(m string) error {
		for _, t := range bench.ObjectiveTasks {
			if slices.Contains(t.Objectives, m) {
				return nil
			}
		}
		var all []string
		for _, o := range objective.Names {
			if slices.ContainsFunc(bench.ObjectiveTasks, func(t bench.ObjectiveTask) bool { return slices.Contains(t.Objectives, o) }) {
				all = append(all, o)
			}
		}
		return usagef("objective %q is in no task of the table (allowed: %s)", m, strings.Join(all, ", "))
	}); err != nil {
		return err
	}
	r := bench.ObjectivesRun{O: o, Command: strings.Join(append([]string{"gfn bench objectives"}, args...), " ")}
	return benchTable(ctx, []string{"bench", "objectives"}, fs, tf, &o.Out, func() bench.Table { r.O.Out = o.Out; return r }, stdout, stderr)
}
