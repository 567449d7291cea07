package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/gfngo/gfn/target"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/ot"
	"github.com/gfngo/gfn/progress"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/smc"
)

// smcPriorVar is the SMC prior's variance per task: on 25GMM the prior
// must reach the outer modes (±10) before they separate along the path
// (Blessing et al. 2024's 2-D mixture uses N(0, 15²)); Manywell's N(0, 1)
// is theirs too. The suite's energies take Blessing et al.'s SMC
// initial_scale² (variational_sampling_methods, configs/target/*.yaml:
// funnel 1, gaussian_mixture40 40, student_t_mixture 15, lgcp 1).
var smcPriorVar = map[string]float64{"25gmm": 225, "manywell": 1,
	"funnel": 1, "gmm40": 1600, "gmm40-50d": 1600, "mos": 225, "lgcp": 1}

// smcKernel is the SMC move per task where it is not MALA: Blessing et
// al.'s SMC moves by HMC (one step of 10 leapfrog steps per temperature,
// configs/algorithm/mcmc/hmc.yaml) on the suite's energies.
var smcKernel = map[string]string{"funnel": "hmc", "gmm40": "hmc", "gmm40-50d": "hmc", "mos": "hmc", "lgcp": "hmc"}

// smcTasks names the tasks SMC has settings for.
func smcTasks() string {
	return "25gmm, manywell, funnel, gmm40, gmm40-50d, mos, lgcp"
}

// smcSummary is summary.json of an SMC run, in the keys of a diffusion
// run's so that bench diffusion reads both. SMC has no sampler density:
// its one log Z estimate stands in the ELBO and ELBO-IS columns (the
// paper gives one value for the three), and there is no EUBO.
type smcSummary struct {
	Task        string   `json:"task"`
	Preset      string   `json:"preset,omitempty"`
	Method      string   `json:"method"`
	Seed        uint64   `json:"seed"`
	Steps       int      `json:"steps"` // 0: SMC has no training iterations
	RewardCalls int      `json:"reward_calls"`
	ELBO        float64  `json:"elbo"`
	ELBOIS      float64  `json:"elbo_is"`
	EUBO        *float64 `json:"eubo"`
	W2          *float64 `json:"w2"`
	LogZ        float64  `json:"log_z"`
	LogZErr     *float64 `json:"log_z_err,omitempty"` // GGNS's own error estimate
	TrueLogZ    *float64 `json:"true_log_z"`
	Samples     int      `json:"eval_samples"`
	WallSeconds float64  `json:"wall_seconds"`
	EnergyEvals int      `json:"energy_evals"`
	GradEvals   int      `json:"grad_evals"`
	Particles   int      `json:"particles,omitempty"`
	Temps       int      `json:"temperatures,omitempty"`
	PriorVar    float64  `json:"prior_var,omitempty"`
	Kernel      string   `json:"kernel,omitempty"`
	Live        int      `json:"live_points,omitempty"`
	Box         string   `json:"prior_box,omitempty"`
	Kernels     string   `json:"kernels"`
	// The suite's metrics of the equally weighted samples (EMC, MMD;
	// delta_log_z is |log Z estimate − log Z|), null where they do not
	// apply.
	diffusion.SuiteMetrics
	Notes []string `json:"notes"`
}

// runTrainSMC runs the SMC baseline of the diffusion tables on a task it
// has settings for (smcPriorVar) and writes summary.json.
func runTrainSMC(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	taskName := flagValue(args, "task")
	e, err := energy.Named(taskName)
	if err != nil {
		return usageError{err}
	}
	if _, ok := smcPriorVar[taskName]; !ok {
		return usagef("method smc has settings for %s, not task %q", smcTasks(), taskName)
	}
	fs := newFlagSet("train", "Run the SMC baseline of the diffusion tables (annealed importance sampling with resampling and\nMCMC moves, package smc): its log Z estimate, and the 2-Wasserstein distance, MMD and\nentropic mode coverage of its equally weighted particles against as many exact samples.\nWrites summary.json to --out.")
	fs.String("task", taskName, "target: "+smcTasks())
	fs.String("method", "smc", "smc")
	preset := fs.String("preset", "paper", "recorded in the summary (bench diffusion groups runs by preset); SMC has no training settings")
	particles := fs.Int("particles", 2000, "number of particles N")
	temps := fs.Int("temperatures", 128, "number K of annealing temperatures (beta_k = k/K)")
	priorVar := fs.Float64("prior-var", smcPriorVar[taskName], "variance of the Gaussian prior N(0, s^2 I); default per task (25gmm 225, manywell 1; Blessing et al.'s: funnel 1, gmm40 1600, mos 225, lgcp 1)")
	defKernel := smcKernel[taskName]
	if defKernel == "" {
		defKernel = "mala"
	}
	kern := fs.String("kernel", defKernel, "MCMC move: mala, hmc, rwm or none (default per task: hmc on funnel, gmm40, gmm40-50d, mos and lgcp as Blessing et al., mala otherwise)")
	steps := fs.Int("steps", 0, "MCMC steps per temperature (0: 10 for mala and rwm, 1 for hmc)")
	seed := fs.Uint64("seed", 0, "random seed")
	out := fs.String("out", "", "output directory (default runs/<task>-smc-seed<seed>)")
	fs.Bool("quiet", false, "print nothing but the summary")
	fs.Int("checkpoint-every", 0, "ignored: an SMC run takes seconds")
	if err := parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	opt := smc.Options{Particles: *particles, Temperatures: *temps, PriorVar: *priorVar, Kernel: *kern, Steps: *steps}
	dir := *out
	if dir == "" {
		dir = filepath.Join("runs", fmt.Sprintf("%s-smc-seed%d", taskName, *seed))
	}
	if err := safefile.CheckDir(dir); err != nil {
		return usageError{err}
	}
	fmt.Fprintf(stdout, "gfn train: %s (d = %d), method smc, %d particles, %d temperatures, prior N(0, %g I), seed %d\n",
		taskName, e.Dim(), *particles, *temps, *priorVar, *seed)
	t0 := time.Now()
	res, err := smc.Run(e, opt, rand.New(rand.NewPCG(*seed, 0x53c)))
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s := smcSummary{Task: taskName, Preset: *preset, Method: "smc", Seed: *seed, ELBO: res.LogZ, ELBOIS: res.LogZ,
		LogZ: res.LogZ, Samples: res.Options.Particles, EnergyEvals: res.EnergyEvals, GradEvals: res.GradEvals,
		RewardCalls: res.EnergyEvals + res.GradEvals, Particles: res.Options.Particles, Temps: len(res.Options.Betas),
		PriorVar: res.Options.PriorVar, Kernel: res.Options.Kernel, Kernels: string(kernel.Name()),
		Notes: []string{"SMC has no sampler density: elbo and elbo_is hold its log Z estimate (the paper gives one value for the three columns); no EUBO",
			"w2: the equally weighted particles against as many exact samples"}}
	return writeBaseline(e, s, res.Samples, *seed, dir, t0, stdout)
}

// writeBaseline completes the summary of a baseline sampler (true log Z,
// W2 of its equally weighted samples against as many exact ones),
// writes summary.json and prints it.
func writeBaseline(e energy.Energy, s smcSummary, samples []float32, seed uint64, dir string, t0 time.Time, stdout io.Writer) error {
	if lz, ok := e.(target.LogZer); ok && !math.IsNaN(lz.LogZ()) && !math.IsInf(lz.LogZ(), 0) {
		v := lz.LogZ() // LGCP's is unknown (NaN): no true log Z, no |Δ log Z|
		s.TrueLogZ = &v
	}
	exact := diffusion.ExactSamples(e, len(samples)/e.Dim(), rand.New(rand.NewPCG(seed, 0xe8ac7)))
	if exact != nil {
		w2, err := ot.W2(samples, exact, e.Dim())
		if err != nil {
			return err
		}
		s.W2 = &w2
	}
	var notes []string
	s.SuiteMetrics, notes = diffusion.SamplesSuiteMetrics(e, samples, exact, e.Dim())
	s.Notes = append(s.Notes, notes...)
	if s.TrueLogZ != nil {
		d := math.Abs(s.LogZ - *s.TrueLogZ)
		s.DeltaLogZ = &d
	}
	s.WallSeconds = time.Since(t0).Seconds()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := safefile.WriteBytes(filepath.Join(dir, "summary.json"), append(b, '\n')); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "  log Z estimate %.4f", s.LogZ)
	if s.TrueLogZ != nil {
		fmt.Fprintf(stdout, " (true %.4f)", *s.TrueLogZ)
	}
	if s.W2 != nil {
		fmt.Fprintf(stdout, ", W2 %.4f", *s.W2)
	}
	fmt.Fprintf(stdout, "\n  cost %d energy and %d gradient evaluations, wall %s\n  wrote %s: summary.json\n",
		s.EnergyEvals, s.GradEvals, progress.Duration(time.Since(t0)), dir)
	return nil
}
