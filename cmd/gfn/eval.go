package main

import (
	"context"
	"errors"
	"fmt"
	"io"
)

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval", "Evaluate a checkpoint and print JSON. Grid: exact distances of the Student (and Teacher)\nterminating distribution to the target where the state space can be enumerated, and the\nempirical L1 of fresh Student samples. Diffusion: ELBO, ELBO-IS, EUBO and W2 on --samples\nfresh and exact samples. Sequences: modes, ELBO, log Z estimate, EUBO and the correlation\nof log P_F with log R on --samples fresh and target samples. A reward program's run starts its\nprogram; metrics that need exact or target samples are then left out.")
	dir := fs.String("checkpoint", "", "checkpoint directory written by gfn train (required)")
	n := fs.Int("samples", gridFamily.evalSamples, fmt.Sprintf("fresh Student samples: for a grid checkpoint's empirical L1 (0 = skip), or of a diffusion or sequence evaluation, with as many exact or target samples (unless set: %d and %d, training's final evaluation)",
		diffusionFamily.evalSamples, seqFamily.evalSamples))
	seed := fs.Uint64("seed", 0, "random seed for sampling")
	figures := fs.Bool("figures", false, "diffusion checkpoints: redraw samples.png and curves.png from the checkpoint instead")
	command := fs.String("reward-cmd", "", "a reward program's run: the command that scores the samples (default: the one the run recorded)")
	weights := fs.String("weights", "", "diffusion and sequence checkpoints: also write each sample's log weight log R + log P_B - log P_F to this CSV file (agent, set, log_w, then x1..xd or the sequence; set model: the fresh samples, whose mean is the ELBO; set exact (diffusion) or target (sequences): the backward trajectories from exact or target samples, whose mean is the EUBO)")
	if err := parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if *n < 0 {
		return usagef("samples %d must be >= 0", *n)
	}
	if *weights != "" && *figures {
		return usagef("--weights evaluates; --figures only redraws: give one of them")
	}
	r, f, done, err := openRun(ctx, *dir, *command, stderr)
	if err != nil {
		return err
	}
	defer done()
	if !flagGiven(fs, "samples") {
		*n = f.evalSamples
	}
	if *figures {
		d, ok := r.(interface{ redraw(seed uint64) error })
		if !ok {
			return usagef("--figures redraws diffusion checkpoints' figures only; %s holds a run of %s", *dir, f.name)
		}
		if err := d.redraw(*seed); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s: samples.png, curves.png\n", *dir)
		return nil
	}
	if *n < 1 && f != gridFamily {
		return usagef("samples %d must be >= 1 for a run of %s", *n, f.name)
	}
	return r.report(*n, *seed, *weights, stdout)
}
