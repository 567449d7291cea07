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

// sampleRewardProgram writes n Student samples of the run in dir, whose
// rewards come from the program of rec, scored by that program (started
// for the purpose and ended after).
func sampleRewardProgram(ctx context.Context, dir string, rec rewardRecord, n int, seed uint64, out string, stdout, stderr io.Writer) error {
	opt := rewardcmd.Options{Timeout: time.Duration(rec.TimeoutSeconds * float64(time.Second)), Stderr: syncWriter(stderr)}
	if opt.Timeout <= 0 {
		opt.Timeout = rewardcmd.DefaultTimeout
	}
	c, err := rewardcmd.Start(ctx, rec.Command, rec.Shape, opt)
	if err != nil {
		return err
	}
	u := &userReward{rec: rec, client: c, stderr: stderr}
	defer u.close()
	switch rec.Kind {
	case rewardcmd.Sequence:
		t, err := seqtrain.Load(dir, userSeqTask{u}, nil)
		if err != nil {
			return err
		}
		return writeSeqSamples(t, userSeqTask{u}, n, seed, out, stdout, stderr)
	case rewardcmd.Points:
		e := rewardcmd.Energy{C: c}
		t, err := diffusion.Load(dir, e)
		if err != nil {
			return err
		}
		return writeDiffusionSamples(t, e, n, seed, out, stdout, stderr)
	}
	// The grid's spec keeps the command the run started with; the
	// rewards come from the program started here.
	t, _, err := train.Load(dir, func(raw json.RawMessage) (discrete.Env, error) {
		var s task.Spec
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return task.BuildFunc(s, c.Cells)
	})
	if err != nil {
		return err
	}
	return writeGridSamples(t, n, seed, out, stdout, stderr)
}
