package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gfngo/gfn/safefile"
)

func runSample(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sample", "Draw samples from the Student of a checkpoint and write them as CSV, one row per sample: a grid's\nterminal coordinates, a diffusion sampler's x1..xd or a sequence (with its raw score and whether\nit is a mode), and its log-reward. A reward program's run starts its program to score them.")
	dir := fs.String("checkpoint", "", "checkpoint directory written by gfn train (required)")
	n := fs.Int("n", 1000, "number of samples (>= 1)")
	out := fs.String("out", "", "output CSV file (default: standard output)")
	seed := fs.Uint64("seed", 0, "random seed")
	command := fs.String("reward-cmd", "", "a reward program's run: the command that scores the samples (default: the one the run recorded)")
	if err := parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if *n < 1 {
		return usagef("n %d must be at least 1", *n)
	}
	r, _, done, err := openRun(ctx, *dir, *command, stderr)
	if err != nil {
		return err
	}
	defer done()
	write, err := r.samples(*n, *seed)
	if err != nil {
		return err
	}
	if *out == "" {
		return write(stdout)
	}
	if err := safefile.Write(*out, write); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %d samples to %s\n", *n, *out)
	return nil
}
