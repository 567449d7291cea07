package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/ggns"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/safefile"
)

// runTrainGGNS runs the GGNS baseline of the diffusion table (gradient-
// guided nested sampling, package ggns) on 25gmm or manywell and writes
// summary.json in the keys of a diffusion run.
func runTrainGGNS(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	taskName := flagValue(args, "task")
	e, err := energy.Named(taskName)
	if err != nil {
		return usageError{err}
	}
	opt, err := ggns.Preset(taskName)
	if err != nil {
		return usageError{err}
	}
	fs := newFlagSet("train", "Run the GGNS baseline of the diffusion table (gradient-guided nested sampling with Hamiltonian\nslice sampling, package ggns; the authors' notebook settings per task, and the paper's clustering\nof the live points, which the notebooks turn off) on 25gmm or manywell: its log Z estimate and\nerror, and the 2-Wasserstein distance of 2,000 equally weighted posterior samples to as many\nexact samples. Writes summary.json to --out.")
	fs.String("task", taskName, "target: 25gmm or manywell")
	fs.String("method", "ggns", "ggns")
	preset := fs.String("preset", "paper", "recorded in the summary (bench diffusion groups runs by preset); GGNS has no training settings")
	fs.IntVar(&opt.Live, "live", opt.Live, "number of live points")
	fs.Float64Var(&opt.Lower, "lower", opt.Lower, "lower bound of the uniform prior box (every coordinate)")
	fs.Float64Var(&opt.Upper, "upper", opt.Upper, "upper bound of the uniform prior box")
	fs.Float64Var(&opt.Tol, "tol", opt.Tol, "stop when the remaining evidence L*X falls below tol times its maximum")
	clustering := fs.Bool("clustering", !opt.NoClustering, "cluster the live points (k nearest neighbours; per-cluster volumes and evidences); false: the notebooks' runs")
	seed := fs.Uint64("seed", 0, "random seed")
	out := fs.String("out", "", "output directory (default runs/<task>-ggns-seed<seed>)")
	fs.Bool("quiet", false, "print nothing but the summary")
	fs.Int("checkpoint-every", 0, "ignored: a GGNS run takes seconds")
	if err := parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	opt.NoClustering = !*clustering
	dir := *out
	if dir == "" {
		dir = filepath.Join("runs", fmt.Sprintf("%s-ggns-seed%d", taskName, *seed))
	}
	if err := safefile.CheckDir(dir); err != nil {
		return usageError{err}
	}
	fmt.Fprintf(stdout, "gfn train: %s (d = %d), method ggns, %d live points, prior U([%g, %g]^d), clustering %v, seed %d\n",
		taskName, e.Dim(), opt.Live, opt.Lower, opt.Upper, *clustering, *seed)
	t0 := time.Now()
	res, err := ggns.Run(e, opt, rand.New(rand.NewPCG(*seed, 0x9985)))
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	lzErr := res.LogZErr
	s := smcSummary{Task: taskName, Preset: *preset, Method: "ggns", Seed: *seed, ELBO: res.LogZ, ELBOIS: res.LogZ,
		LogZ: res.LogZ, LogZErr: &lzErr, Samples: len(res.Samples) / e.Dim(), EnergyEvals: res.EnergyEvals, GradEvals: res.GradEvals,
		RewardCalls: res.EnergyEvals + res.GradEvals, Live: res.Options.Live,
		Box: fmt.Sprintf("[%g, %g]^%d", res.Options.Lower, res.Options.Upper, e.Dim()), Kernels: string(kernel.Name()),
		Notes: []string{"nested sampling has no sampler density: elbo and elbo_is hold its log Z estimate (the paper gives one value for the three columns); no EUBO",
			"w2: 2,000 equally weighted posterior samples (dead points resampled by L·ΔX) against as many exact samples",
			clusterNote(res)}}
	return writeBaseline(e, s, res.Samples, *seed, dir, t0, stdout)
}

// clusterNote tells in the summary whether the live points were clustered
// and into how many clusters.
func clusterNote(r *ggns.Result) string {
	if r.Options.NoClustering {
		return "clustering off (--clustering=false)"
	}
	return fmt.Sprintf("clustering on: %d clusters over the run (%d clustering passes)", len(r.ClusterLogZ), r.Clusterings)
}
