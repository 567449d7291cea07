package main

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/rewardcmd"
	"github.com/gfngo/gfn/seqtrain"
	"github.com/gfngo/gfn/task"
	"github.com/gfngo/gfn/train"
)

// rewardRun is the run in a directory whose rewards come from a program,
// loaded with the program started: exactly one of the trainers is set.
type rewardRun struct {
	u    *userReward
	seq  *seqtrain.Trainer
	diff *diffusion.Trainer
	grid *train.Trainer
}

// loadRewardRun starts the program of rec and loads the run in dir with
// it. The caller defers r.u.close() unless there is an error.
func loadRewardRun(ctx context.Context, dir string, rec rewardRecord, stderr io.Writer) (rewardRun, error) {
	opt := rewardcmd.Options{Timeout: time.Duration(rec.TimeoutSeconds * float64(time.Second)), Stderr: syncWriter(stderr)}
	if opt.Timeout <= 0 {
		opt.Timeout = rewardcmd.DefaultTimeout
	}
	c, err := rewardcmd.Start(ctx, rec.Command, rec.Shape, opt)
	if err != nil {
		return rewardRun{}, err
	}
	r := rewardRun{u: &userReward{rec: rec, client: c, stderr: stderr}}
	switch rec.Kind {
	case rewardcmd.Sequence:
		r.seq, err = seqtrain.Load(dir, userSeqTask{r.u}, nil)
	case rewardcmd.Points:
		r.diff, err = diffusion.Load(dir, rewardcmd.Energy{C: c})
	default:
		// The grid's spec keeps the command the run started with; the
		// rewards come from the program started here.
		r.grid, _, err = train.Load(dir, func(raw json.RawMessage) (discrete.Env, error) {
			var s task.Spec
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
			return task.BuildFunc(s, c.Cells)
		})
	}
	if err != nil {
		r.u.close()
		return rewardRun{}, err
	}
	return r, nil
}

// sampleRewardProgram writes n Student samples of the run in dir, whose
// rewards come from the program of rec, scored by that program (started
// for the purpose and ended after).
func sampleRewardProgram(ctx context.Context, dir string, rec rewardRecord, n int, seed uint64, out string, stdout, stderr io.Writer) error {
	r, err := loadRewardRun(ctx, dir, rec, stderr)
	if err != nil {
		return err
	}
	defer r.u.close()
	switch {
	case r.seq != nil:
		return writeSeqSamples(r.seq, userSeqTask{r.u}, n, seed, out, stdout, stderr)
	case r.diff != nil:
		return writeDiffusionSamples(r.diff, rewardcmd.Energy{C: r.u.client}, n, seed, out, stdout, stderr)
	}
	return writeGridSamples(r.grid, n, seed, out, stdout, stderr)
}

// evalRewardProgram prints the evaluation of the run in dir, whose rewards
// come from the program of rec, as gfn eval does for the built-in tasks;
// without exact or target samples, EUBO, W2 and the correlation are null.
func evalRewardProgram(ctx context.Context, dir string, rec rewardRecord, n int, seed uint64, stdout, stderr io.Writer) error {
	r, err := loadRewardRun(ctx, dir, rec, stderr)
	if err != nil {
		return err
	}
	defer r.u.close()
	switch {
	case r.seq != nil:
		return reportSeq(r.seq, userSeqTask{r.u}, "seq", n, seed, stdout)
	case r.diff != nil:
		return reportDiffusion(r.diff, rewardcmd.Energy{C: r.u.client}, n, seed, stdout)
	}
	return reportGrid(r.grid, n, seed, stdout)
}
