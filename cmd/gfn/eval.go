package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/metrics"
	"github.com/gfngo/gfn/train"
)

// evalReport is what gfn eval prints.
type evalReport struct {
	Env          string             `json:"env"`
	Step         int                `json:"step"`
	StudentLogZ  float64            `json:"student_logz"`
	TrueLogZ     *float64           `json:"true_logz,omitempty"`
	ModesFound   int                `json:"modes_found"`
	StudentExact *metrics.Distances `json:"student_exact,omitempty"`
	TeacherExact *metrics.Distances `json:"teacher_exact,omitempty"`
	EmpiricalL1  *float64           `json:"empirical_l1,omitempty"`
	Samples      int                `json:"samples,omitempty"`
	Note         string             `json:"note,omitempty"`
}

// ckptKind is the family of the run whose checkpoint a directory holds.
type ckptKind int

const (
	gridCkpt ckptKind = iota // or no readable checkpoint: the grid's loader says what is wrong
	diffusionCkpt
	seqCkpt
)

// checkpointKind tells the family of dir's checkpoint, reading it once
// for each family it tries (a checkpoint is read whole).
func checkpointKind(dir string) ckptKind {
	switch {
	case dir == "":
		return gridCkpt
	case isDiffusionCheckpoint(dir):
		return diffusionCkpt
	case isSeqCheckpoint(dir):
		return seqCkpt
	}
	return gridCkpt
}

// defaultEvalSamples is gfn eval's --samples for a checkpoint of kind k:
// 100,000 suits a grid's empirical L1, not an exact W2 in R^d (minutes
// where training's final 10,000 take seconds), nor a sequence task, whose
// training evaluates 2,048.
func defaultEvalSamples(k ckptKind) int {
	switch k {
	case diffusionCkpt:
		return 10000
	case seqCkpt:
		return 2048
	}
	return 100000
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval", "Evaluate a checkpoint and print JSON. Grid: exact distances of the Student (and Teacher)\nterminating distribution to the target where the state space can be enumerated, and the\nempirical L1 of fresh Student samples. Diffusion: ELBO, ELBO-IS, EUBO and W2 on --samples\nfresh and exact samples. Sequences: modes, ELBO, log Z estimate, EUBO and the correlation\nof log P_F with log R on --samples fresh and target samples. A reward program's run starts its\nprogram; metrics that need exact or target samples are then left out.")
	dir := fs.String("checkpoint", "", "checkpoint directory written by gfn train (required)")
	n := fs.Int("samples", 100000, "fresh Student samples: for a grid checkpoint's empirical L1 (0 = skip), or of a diffusion or sequence evaluation, with as many exact or target samples (unless set: 10000 and 2048, training's final evaluation)")
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
	kind := checkpointKind(*dir)
	if !flagGiven(fs, "samples") {
		*n = defaultEvalSamples(kind)
	}
	rec, recErr := readRewardRecord(*dir)
	if *dir != "" && recErr == nil && *figures {
		return usagef("--figures does not run reward programs: the run's own figures are in %s", *dir)
	}
	if *weights != "" && *figures {
		return usagef("--weights evaluates; --figures only redraws: give one of them")
	}
	if kind == diffusionCkpt && *figures {
		_, e, err := loadDiffusion(*dir)
		if err != nil {
			return err
		}
		if err := diffusion.Redraw(*dir, e, 2000, *seed); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s: samples.png, curves.png\n", *dir)
		return nil
	}
	if kind == diffusionCkpt && *n < 1 {
		return usagef("samples %d must be >= 1 for a diffusion checkpoint", *n)
	}
	if kind == seqCkpt {
		if *figures {
			return usagef("--figures redraws diffusion checkpoints' figures only")
		}
		if *n < 1 {
			return usagef("samples %d must be >= 1 for a sequence checkpoint", *n)
		}
	}
	if *dir != "" && recErr == nil {
		if *command != "" {
			rec.Command = *command
		}
		return evalRewardProgram(ctx, *dir, rec, *n, *seed, *weights, stdout, stderr)
	}
	if *command != "" {
		return usagef("--reward-cmd is for the runs of reward programs; %s is a built-in task's", *dir)
	}
	switch kind {
	case diffusionCkpt:
		return evalDiffusion(*dir, *n, *seed, *weights, stdout)
	case seqCkpt:
		return evalSeq(*dir, *n, *seed, *weights, stdout)
	}
	t, err := loadCheckpoint(*dir)
	if err != nil {
		return err
	}
	if *weights != "" {
		return usagef("--weights writes the log weights of diffusion and sequence checkpoints; %s holds a grid checkpoint", *dir)
	}
	return reportGrid(t, *n, *seed, stdout)
}

// reportGrid prints the evaluation of a grid trainer as JSON: exact
// distances where the grid can be enumerated, the empirical L1 of n fresh
// samples (none if n is 0).
func reportGrid(t *train.Trainer, n int, seed uint64, stdout io.Writer) error {
	t.Reseed(seed)
	rep := evalReport{Env: fmt.Sprint(t.Env), Step: t.Step, StudentLogZ: t.Student.LogZEstimate(t.Env), ModesFound: len(t.ModesFound)}
	enum, ok := t.Env.(metrics.Enumerable)
	if !ok {
		rep.Note = "exact metrics skipped: the environment cannot be enumerated"
	} else if target, logZ, err := metrics.Target(enum); err != nil {
		if !errors.Is(err, metrics.ErrTooLarge) {
			return err
		}
		rep.Note = "exact metrics skipped: " + err.Error()
	} else {
		rep.TrueLogZ = &logZ
		p, err := metrics.Terminating(enum, t.Student.Model)
		if err != nil {
			return err
		}
		d := metrics.Compare(p, target)
		rep.StudentExact = &d
		if t.Teacher != nil {
			p, err := metrics.Terminating(enum, t.Teacher.Model)
			if err != nil {
				return err
			}
			d := metrics.Compare(p, target)
			rep.TeacherExact = &d
		}
		if n > 0 {
			emp, err := metrics.Empirical(enum, t.Sample(n, nil), n)
			if err != nil {
				return err
			}
			l1 := metrics.Compare(emp, target).L1
			rep.EmpiricalL1, rep.Samples = &l1, n
		}
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}
