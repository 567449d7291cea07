package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/gfngo/gfn/bench"
	"github.com/gfngo/gfn/safefile"
)

const benchUsage = `Usage: gfn bench <benchmark> [flags]

Benchmarks:
  speed    ms per training iteration, early and late in training, on the paper's grids
  grid     reproduce a grid table of the paper (Table 1, DB, large grids, ablations, local search)
`

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, benchUsage)
		return usagef("no benchmark given (allowed: speed, grid)")
	}
	switch args[0] {
	case "speed":
		return runBenchSpeed(ctx, args[1:], stdout, stderr)
	case "grid":
		return runBenchGrid(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, benchUsage)
		return nil
	default:
		fmt.Fprint(stderr, benchUsage)
		return usagef("unknown benchmark %q (allowed: speed, grid)", args[0])
	}
}

func runBenchSpeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench speed", "Time training iterations (median ms) from a fresh start and after --late-step\niterations, for grid d2 H128 tb and teacher and grid d4 H32 teacher, and print\nthe machine's CPU features, as a Markdown table.")
	iters := fs.Int("iterations", 100, "timed iterations per window (>= 1)")
	late := fs.Int("late-step", 2000, "iteration at which the late window starts")
	seed := fs.Uint64("seed", 0, "random seed")
	if err := parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if *iters < 1 || *late < 0 {
		return usagef("iterations %d must be >= 1 and late-step %d >= 0", *iters, *late)
	}
	fmt.Fprintf(stdout, "machine: %s\n\n", bench.Machine())
	var rs []bench.SpeedResult
	for _, c := range bench.SpeedCases {
		fmt.Fprintf(stderr, "timing %s...\n", c.Name)
		r, err := bench.Speed(ctx, c, bench.SpeedOptions{Iterations: *iters, LateStep: *late, Seed: *seed})
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	bench.WriteSpeedTable(stdout, rs)
	return nil
}

func runBenchGrid(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var names []string
	for _, t := range bench.GridTables {
		names = append(names, t.Name)
	}
	fs := newFlagSet("bench grid", "Run every method × grid × seed of one of the paper's grid tables as separate gfn train\nprocesses (resumable: runs with a summary.json are skipped), then write results.csv,\nresults.md (mean ± std next to the paper's numbers) and figures/ to --out.")
	table := fs.String("table", "", "table to reproduce: "+strings.Join(names, ", ")+" (required)")
	seeds := fs.Int("seeds", 0, "seeds per method and grid (0 = the table's: 5 for tb, 3 otherwise)")
	jobs := fs.Int("jobs", runtime.NumCPU(), "runs at a time")
	quick := fs.Bool("quick", false, "smoke run: 1 seed, 1/20 of the reward calls, 2000 evaluation samples")
	out := fs.String("out", "", "output directory (default runs/bench-grid-<table>)")
	evalSamples := fs.Int("eval-samples", 0, "fresh Student samples for the empirical L1 (0 = 100000, 2000 with --quick)")
	methods := fs.String("methods", "", "comma-separated subset of the table's methods")
	grids := fs.String("grids", "", "comma-separated subset of grids, like d2H128,d4H16")
	collect := fs.Bool("collect-only", false, "run nothing: aggregate the runs already finished in --out")
	if err := parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	t, err := bench.TableByName(*table)
	if err != nil {
		return usageError{err}
	}
	if *seeds < 0 || *jobs < 1 || *evalSamples < 0 {
		return usagef("seeds %d, jobs %d and eval-samples %d must be >= 0, >= 1 and >= 0", *seeds, *jobs, *evalSamples)
	}
	o := bench.GridOptions{Out: *out, Seeds: *seeds, Jobs: *jobs, Quick: *quick, EvalSamples: *evalSamples, CollectOnly: *collect}
	if o.Out == "" {
		o.Out = filepath.Join("runs", "bench-grid-"+t.Name)
	}
	if *methods != "" {
		for _, m := range strings.Split(*methods, ",") {
			if _, ok := bench.GridMethods[m]; !ok {
				return usagef("method %q is unknown (table %s has %s)", m, t.Name, strings.Join(t.Methods, ", "))
			}
			o.Methods = append(o.Methods, m)
		}
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
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logs := filepath.Join(o.Out, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return usagef("output directory %s is not usable: %v", o.Out, err)
	}
	// Each run gets its share of the cores, unless the user set GOMAXPROCS
	// (say, to run two tables side by side).
	env := os.Environ()
	if os.Getenv("GOMAXPROCS") == "" {
		env = append(env, fmt.Sprintf("GOMAXPROCS=%d", max(1, runtime.NumCPU() / *jobs)))
	}
	run := func(ctx context.Context, args []string) error {
		cmd := exec.CommandContext(ctx, self, args...)
		cmd.Env = env
		name := filepath.Base(args[slices.Index(args, "--out")+1])
		f, err := os.Create(filepath.Join(logs, name+".log"))
		if err != nil {
			return err
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%w (log: %s)", err, f.Name())
		}
		return nil
	}
	results, runErr := bench.RunGrid(ctx, t, o, run, stderr)
	if results == nil && runErr != nil {
		return runErr
	}
	if err := safefile.Write(filepath.Join(o.Out, "results.csv"), func(w io.Writer) error { return bench.WriteResultsCSV(w, results) }); err != nil {
		return err
	}
	var md strings.Builder
	bench.WriteMarkdown(&md, t.Name, results)
	if err := safefile.WriteBytes(filepath.Join(o.Out, "results.md"), []byte(md.String())); err != nil {
		return err
	}
	files, err := bench.GridFigures(filepath.Join(o.Out, "figures"), t.Jobs(o))
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, md.String())
	fmt.Fprintf(stdout, "\nwrote %s: results.csv, results.md, figures/ (%d files)\n", o.Out, len(files))
	return runErr
}
