package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gfngo/gfn/bench"
)

const benchUsage = `Usage: gfn bench <benchmark> [flags]

Benchmarks:
  speed    ms per training iteration, early and late in training, on the paper's grids
`

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, benchUsage)
		return usagef("no benchmark given (allowed: speed)")
	}
	switch args[0] {
	case "speed":
		return runBenchSpeed(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, benchUsage)
		return nil
	default:
		fmt.Fprint(stderr, benchUsage)
		return usagef("unknown benchmark %q (allowed: speed)", args[0])
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
