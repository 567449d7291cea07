package main

import (
	"context"
	"io"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/rewardcmd"
	"github.com/gfngo/gfn/seqtrain"
	"github.com/gfngo/gfn/train"
)

// withRewardRun starts the program of rec, loads the run in dir with it,
// calls the function of the run's kind and ends the program.
func withRewardRun(ctx context.Context, dir string, rec rewardRecord, stderr io.Writer,
	seq func(*seqtrain.Trainer, seqtrain.Task) error, points func(*diffusion.Trainer, energy.Energy) error, grid func(*train.Trainer) error) error {
	c, err := rewardcmd.Start(ctx, rec.Command, rec.Shape, rec.options(syncWriter(stderr)))
	if err != nil {
		return err
	}
	u := &userReward{rec: rec, client: c, stderr: stderr}
	defer u.close()
	switch rec.Kind {
	case rewardcmd.Sequence:
		t, err := seqtrain.Load(dir, userSeqTask{u})
		if err != nil {
			return err
		}
		return seq(t, userSeqTask{u})
	case rewardcmd.Points:
		e := rewardcmd.Energy{C: c}
		t, err := diffusion.Load(dir, e)
		if err != nil {
			return err
		}
		return points(t, e)
	}
	st, err := train.ReadCheckpoint(dir)
	if err != nil {
		return err
	}
	env, err := programGrid(c)(st.Env)
	if err != nil {
		return err
	}
	t, err := train.Load(dir, env)
	if err != nil {
		return err
	}
	return grid(t)
}

// sampleRewardProgram writes n Student samples of the run in dir, whose
// rewards come from the program of rec, scored by that program (started
// for the purpose and ended after).
func sampleRewardProgram(ctx context.Context, dir string, rec rewardRecord, n int, seed uint64, out string, stdout, stderr io.Writer) error {
	return withRewardRun(ctx, dir, rec, stderr,
		func(t *seqtrain.Trainer, task seqtrain.Task) error {
			return writeSeqSamples(t, task, n, seed, out, stdout, stderr)
		},
		func(t *diffusion.Trainer, e energy.Energy) error {
			return writeDiffusionSamples(t, e, n, seed, out, stdout, stderr)
		},
		func(t *train.Trainer) error { return writeGridSamples(t, n, seed, out, stdout, stderr) })
}

// evalRewardProgram prints the evaluation of the run in dir, whose rewards
// come from the program of rec, as gfn eval does for the built-in tasks;
// without exact or target samples, EUBO, W2 and the correlation are null.
// A weights file is written for points and seq runs.
func evalRewardProgram(ctx context.Context, dir string, rec rewardRecord, n int, seed uint64, weights string, stdout, stderr io.Writer) error {
	return withRewardRun(ctx, dir, rec, stderr,
		func(t *seqtrain.Trainer, task seqtrain.Task) error {
			return reportSeq(t, task, "seq", n, seed, weights, stdout)
		},
		func(t *diffusion.Trainer, e energy.Energy) error {
			return reportDiffusion("points", t, e, n, seed, weights, stdout)
		},
		func(t *train.Trainer) error {
			if weights != "" {
				return usagef("--weights writes the log weights of diffusion and sequence runs; %s is a hypergrid run of a reward program", dir)
			}
			return reportGrid(t, n, seed, stdout)
		})
}
