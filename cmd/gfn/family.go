package main

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/rewardcmd"
	gfnrun "github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/task"
)

// A family is what gfn train, sample and eval need of one family of
// tasks. Everything else (flags every family shares, fresh and resumed
// runs, output directories, reward programs, interruption, the summary's
// common lines) is the commands' own, once for all families.
type family struct {
	name string // as users meet it: "the grid"
	// kind is the family's checkpoint kind (run.Layout.Kind) and legacy
	// its format-1 checkpoints' metadata key.
	kind, legacy string
	// tasks are the built-in tasks; the first one's --help shows the
	// family's flags.
	tasks []string
	// program is the kind of reward program the family trains on.
	program rewardcmd.Kind
	// setup defines the family's gfn train flags on c.fs and its hooks.
	setup func(c *trainCmd) error
	// open loads the Student of the run in dir with its problem: the
	// built-in task its checkpoint names or, with u, u's started program.
	open func(dir string, u *userReward) (opened, error)
	// evalSamples is gfn eval's default --samples.
	evalSamples int
}

// opened is a loaded run of some family.
type opened interface {
	// samples returns a writer of n Student samples as CSV.
	samples(n int, seed uint64) (func(io.Writer) error, error)
	// report prints the evaluation of n samples as JSON (writing the log
	// weights to weights if it is not empty).
	report(n int, seed uint64, weights string, w io.Writer) error
}

// families are gfn's families, the grid first (the default task's). They
// are set by init: the families' setups read the list.
var families []*family

func init() { families = []*family{gridFamily, diffusionFamily, seqFamily} }

// familyOfTask returns the family of a built-in task, or nil.
func familyOfTask(name string) *family {
	for _, f := range families {
		if slices.Contains(f.tasks, name) {
			return f
		}
	}
	return nil
}

// allTasks lists every built-in task.
func allTasks() string {
	return strings.Join(slices.Concat(task.Names, energy.Names, biochem.Names), ", ")
}

// familyOfRun returns the family of the run checkpointed in dir and the
// checkpoint's header, reading it once (for a checkpoint of an earlier
// gfn, the family of its metadata key and a nil header: that family's
// reader then says to migrate it).
func familyOfRun(dir string) (*family, *gfnrun.Header, error) {
	if err := checkpointPresent(dir); err != nil {
		return nil, nil, err
	}
	ck, err := gfnrun.Open(dir)
	var legacy *gfnrun.LegacyError
	for _, f := range families {
		switch {
		case err == nil && ck.Header.Kind == f.kind:
			return f, &ck.Header, nil
		case errors.As(err, &legacy) && legacy.Key == f.legacy:
			return f, nil, nil
		}
	}
	if err != nil {
		return nil, nil, usageError{err}
	}
	return nil, nil, usagef("%s holds a checkpoint of kind %q, which gfn cannot read (allowed: grid, diffusion, sequence)", dir, ck.Header.Kind)
}

// familyOfProgram returns the family that trains on k's programs.
func familyOfProgram(k rewardcmd.Kind) *family {
	for _, f := range families {
		if f.program == k {
			return f
		}
	}
	return nil
}

// openRun loads the run in dir and returns it with its family: with its
// recorded reward program if it has one (started here, with command
// instead of the recorded one if that is set; the caller calls the
// returned close), else with its built-in task.
func openRun(ctx context.Context, dir, command string, stderr io.Writer) (opened, *family, func(), error) {
	none := func() {}
	if dir == "" {
		return nil, nil, none, usagef("--checkpoint is required: the output directory of a gfn train run")
	}
	f, _, err := familyOfRun(dir)
	if err != nil {
		return nil, nil, none, err
	}
	rec, recErr := readRewardRecord(dir)
	if recErr != nil {
		if command != "" {
			return nil, nil, none, usagef("--reward-cmd is for the runs of reward programs; %s is a built-in task's", dir)
		}
		o, err := f.open(dir, nil)
		return o, f, none, err
	}
	if command != "" {
		rec.Command = command
	}
	c, err := rewardcmd.Start(ctx, rec.Command, rec.Shape, rec.options(syncWriter(stderr)))
	if err != nil {
		return nil, nil, none, err
	}
	u := &userReward{rec: rec, client: c, stderr: stderr}
	o, err := f.open(dir, u)
	if err != nil {
		u.close()
		return nil, nil, none, err
	}
	return o, f, u.close, nil
}
