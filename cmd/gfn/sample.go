package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/task"
	"github.com/gfngo/gfn/train"
)

func loadCheckpoint(dir string) (*train.Trainer, error) {
	if dir == "" {
		return nil, usagef("--checkpoint is required: the output directory of a gfn train run")
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, usagef("checkpoint directory %s: %v", dir, errors.Unwrap(err))
	}
	if _, err := os.Stat(filepath.Join(dir, train.CheckpointFile)); errors.Is(err, os.ErrNotExist) {
		return nil, usagef("checkpoint directory %s holds no %s: give the output directory of a gfn train run", dir, train.CheckpointFile)
	}
	st, err := train.ReadCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	env, err := task.BuildJSON(st.Env)
	if err != nil {
		return nil, err
	}
	return train.Load(dir, env)
}

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
	if *dir != "" {
		if rec, err := readRewardRecord(*dir); err == nil {
			if *command != "" {
				rec.Command = *command
			}
			return sampleRewardProgram(ctx, *dir, rec, *n, *seed, *out, stdout, stderr)
		}
	}
	if *command != "" {
		return usagef("--reward-cmd is for the runs of reward programs; %s is a built-in task's", *dir)
	}
	switch checkpointKind(*dir) {
	case diffusionCkpt:
		return sampleDiffusion(*dir, *n, *seed, *out, stdout, stderr)
	case seqCkpt:
		return sampleSeq(*dir, *n, *seed, *out, stdout, stderr)
	}
	t, err := loadCheckpoint(*dir)
	if err != nil {
		return err
	}
	return writeGridSamples(t, *n, *seed, *out, stdout, stderr)
}

// writeGridSamples writes n Student samples of t as CSV: the terminal
// state's coordinates and its log-reward.
func writeGridSamples(t *train.Trainer, n int, seed uint64, out string, stdout, stderr io.Writer) error {
	t.Reseed(seed)
	xs := t.Sample(n, nil)
	logR := make([]float64, n)
	if err := t.Env.LogReward(xs, n, logR); err != nil {
		return err
	}
	return emitCSV(out, n, func(w io.Writer) error { return writeSamples(w, t.Env, xs, logR) }, stdout, stderr)
}

// emitCSV writes the n samples of write to standard output or, atomically,
// to the file out.
func emitCSV(out string, n int, write func(io.Writer) error, stdout, stderr io.Writer) error {
	if out == "" {
		return write(stdout)
	}
	if err := safefile.Write(out, write); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %d samples to %s\n", n, out)
	return nil
}

func writeSamples(w io.Writer, env discrete.Env, xs []int32, logR []float64) error {
	cw := csv.NewWriter(w)
	k := env.StateLen()
	cols := k
	if g, ok := env.(*hypergrid.Grid); ok {
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
}
