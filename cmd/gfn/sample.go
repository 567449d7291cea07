package main

import (
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
	t, _, err := train.Load(dir, task.BuildJSON)
	return t, err
}

func runSample(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sample", "Draw samples from the Student of a checkpoint and write them as CSV\n(one row per sample: the terminal state's coordinates and its log-reward).")
	dir := fs.String("checkpoint", "", "checkpoint directory written by gfn train (required)")
	n := fs.Int("n", 1000, "number of samples (>= 1)")
	out := fs.String("out", "", "output CSV file (default: standard output)")
	seed := fs.Uint64("seed", 0, "random seed")
	if err := parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if *n < 1 {
		return usagef("n %d must be at least 1", *n)
	}
	if err := notRewardCmd("sample", *dir); err != nil {
		return err
	}
	if *dir != "" && isDiffusionCheckpoint(*dir) {
		return sampleDiffusion(*dir, *n, *seed, *out, stdout, stderr)
	}
	if *dir != "" && isSeqCheckpoint(*dir) {
		return sampleSeq(*dir, *n, *seed, *out, stdout, stderr)
	}
	t, err := loadCheckpoint(*dir)
	if err != nil {
		return err
	}
	t.Reseed(*seed)
	xs := t.Sample(*n)
	logR := make([]float64, *n)
	if err := t.Env.LogReward(xs, *n, logR); err != nil {
		return err
	}
	write := func(w io.Writer) error { return writeSamples(w, t.Env, xs, logR) }
	if *out == "" {
		return write(stdout)
	}
	if err := safefile.Write(*out, write); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %d samples to %s\n", *n, *out)
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
