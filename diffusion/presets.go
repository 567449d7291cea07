package diffusion

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gfngo/gfn/agent"
	"github.com/gfngo/gfn/internal/choice"
	"github.com/gfngo/gfn/langevin"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/timenet"
)

// Presets names the built-in configurations: "reference" and "paper"
// (25gmm, manywell: the adaptive-teacher paper's tasks), "sendera" (funnel,
// lgcp, and 25gmm and manywell at Sendera et al.'s settings) and
// "blessing" (gmm40, gmm40-50d, mos). PresetTasks says which tasks each
// has.
var Presets = []string{"reference", "paper", "sendera", "blessing"}

// PresetTasks lists the tasks each preset has settings for; the first
// preset of a task (in Presets' order) is its default (DefaultPreset).
var PresetTasks = map[string][]string{
	"reference": {"25gmm", "manywell"},
	"paper":     {"25gmm", "manywell"},
	"sendera":   {"funnel", "lgcp", "25gmm", "manywell"},
	"blessing":  {"gmm40", "gmm40-50d", "mos"},
}

// PresetsFor returns the presets that have settings for task, in Presets'
// order (none for an unknown task).
func PresetsFor(task string) []string {
	var ps []string
	for _, p := range Presets {
		if slices.Contains(PresetTasks[p], task) {
			ps = append(ps, p)
		}
	}
	return ps
}

// DefaultPreset returns the preset a task trains with when none is named:
// "paper" for 25gmm and manywell (it reproduces the paper's table),
// "sendera" for funnel and lgcp, "blessing" for gmm40, gmm40-50d and mos;
// "" for a task without presets.
func DefaultPreset(task string) string {
	ps := PresetsFor(task)
	switch {
	case slices.Contains(ps, "paper"):
		return "paper"
	case len(ps) > 0:
		return ps[0]
	}
	return ""
}

// allPresetTasks lists every task with a preset, in Presets' order.
func allPresetTasks() []string {
	var ts []string
	for _, p := range Presets {
		for _, t := range PresetTasks[p] {
			if !slices.Contains(ts, t) {
				ts = append(ts, t)
			}
		}
	}
	return ts
}

// DefaultConfig is the paper preset on 25GMM: the one that reproduces the
// paper's diffusion table (the released code's settings make on-policy TB
// collapse onto one mode of 25GMM, far from the table's TB row).
func DefaultConfig() Config { c, _ := Preset("paper", "25gmm"); return c }

// Preset returns a named configuration for a task. A task without the
// preset gets an error naming the presets it has (PresetsFor).
//
// The adaptive-teacher paper's tasks, 25gmm and manywell:
//
//   - "reference": the released code's settings (README commands): the
//     Fourier-feature MLP of width 256, σ² = 1, batch 500, 10,001
//     iterations, buffer 50,000, schedule STSB, Student lr 10⁻³ / log Z
//     0.1, Teacher 5·10⁻³ / 0.1 with its time encoder clipped to 0.1,
//     weight decay 10⁻⁷, learning rates ×0.1 at 6,000 and 2,000
//     iterations before the end (4,000 and 8,000);
//   - "paper": the paper's text where it differs: the PIS network of
//     width 64 (25GMM) or 256 (Manywell), σ² = 5 on 25GMM, buffers 5,000
//     / 20,000, batch 300, 25,001 iterations ("identical to Sendera et
//     al."), and the 3:1:2 ratio, which the released code runs as
//     --adv_freq 3: the cycle STSBSB, and the drift bound ±10⁴ that
//     every command of Sendera et al.'s README sets (--clipping). The
//     learning settings stay the released code's (its optimisers, weight
//     decay and schedule are not options there, and only that code trains
//     PER and the Teacher): the rates decay ×0.1 at iterations 19,000 and
//     23,000.
//
// Both use the eps method's exploration f = 0.2 decayed to 0 at
// iteration 5,000 (Sendera et al.'s "TB + expl."), and the Teacher's
// log-of-log reward with C = 19, α = 0.5 and the 90th-percentile
// threshold.
//
// The diffusion-sampler suite (docs/design/diffusion-suite-presets.md
// gives every source line):
//
//   - "sendera" (funnel, lgcp, 25gmm, manywell): Sendera et al. 2024
//     ("Improved off-policy training of diffusion samplers"), §5.1 and
//     App. D, with gfn-diffusion's code defaults where the text is silent:
//     T = 100, σ² = 1 (funnel, Manywell) or 5 (25GMM; LGCP: their App. D
//     tried 1, 3 and 5; σ² = 1 gave no reasonable result), fixed variance, the PIS network of width 64
//     (time, state and harmonics 64, 2 joint layers), drift bound ±10⁴,
//     batch 300, 25,001 iterations (their loop's epochs + 1), Adam with
//     lr 10⁻³ / log Z 10⁻¹, no weight decay, no schedule, no clipping, log
//     Z from 0; exploration f = 0.2 decayed to 0 at iteration 5,000 (the
//     code's; the paper says the first half); the rank-prioritised buffer
//     of 600,000 (their App. E), local search (PER + LS, Teacher + LS)
//     every 100 iterations: 200 MALA steps, 100 of burn-in, target
//     acceptance 0.574, η₀ = 0.01 (their App. E.1) adapted ±1 % every 5
//     steps (their code's rule).
//   - "blessing" (gmm40, gmm40-50d, mos): Blessing et al. 2024's budget
//     and optimiser (their code, variational_sampling_methods: T = 128,
//     batch 2,000, 40,000 iterations, lr 10⁻⁴ / log Z 10⁻², the PIS-sized
//     network of width 64 with 2 layers, drift bound ±10⁴, no exploration,
//     replay or local search in their GFN) on this library's process
//     (constant σ², Brownian-bridge backward kernel, no Langevin
//     parametrisation), which cannot reproduce their cosine σ(t). σ² has
//     no source and is chosen so that the last step's noise σ²/T is about
//     a sixth of a component's variance, as 25GMM's σ² = 5 (Sendera et
//     al.'s App. D) is for its 0.3: σ² = 25 for GMM40 (unit-variance
//     modes over ±40; σ²/T = 0.2) and 5 for the Student-t mixture (modes
//     over ±10 like 25GMM's), with the variance learned (log σ² + 4 tanh
//     v, gfn-diffusion's range) so that early steps can widen by up to
//     e⁴ ≈ 55 times and reach the outer modes. Their code's equivalent
//     constant σ² (≈ 0.094·σ_max²: 2,400 for GMM40, 338 for MoS) would
//     add a variance of 19 to every sample at the last step and blur every
//     GMM40 mode. Their element-wise update clip (optax.clip(1)) is left
//     out: the library clips norms only. The replay methods take the
//     sendera values (f = 0.2 → 0 at 5,000; buffer 600,000).
//
// Dimension-dependent settings for LGCP (d = 1,600): the buffer holds
// 60,000 states (384 MB of float32; Sendera's 600,000 would take 3.84 GB
// per buffer: their Table E.1 shows a tenth of the buffer already changes
// Manywell's LS results, so LGCP + LS is not comparable to their LS row),
// and local search starts from η₀ = 10⁻³ (MALA's step shrinks like
// d^(−1/3): η₀ = 0.01 would be rejected for some twenty steps before the
// adaptation reaches it). Log Z starts at 0 as in the source although the
// posterior's is about 480: log Z moves by at most its learning rate (0.1)
// per step, so TB needs ≥ 5,000 iterations before its residual can be
// small.
//
// The Teacher, PER and PRT have no published setting on the suite: their
// settings are the paper preset's (Teacher lr 5·10⁻³ / log Z 0.1 with its
// time encoder clipped to 0.1, C = 19, α = 0.5, the 90th-percentile
// threshold, the cycle STSBSB), without its weight decay and learning-rate
// decay, which Sendera's and Blessing's optimisers do not have.
//
// PresetFor adjusts a preset to a method.
func Preset(name, task string) (Config, error) {
	if !slices.Contains(allPresetTasks(), task) {
		return Config{}, fmt.Errorf("diffusion: task %q has no preset (tasks with presets: %s)", task, strings.Join(allPresetTasks(), ", "))
	}
	if !slices.Contains(Presets, name) {
		return Config{}, fmt.Errorf("diffusion: preset %q is unknown (allowed: %s)", name, choice.List(Presets))
	}
	if !slices.Contains(PresetTasks[name], task) {
		return Config{}, fmt.Errorf("diffusion: preset %q has no settings for task %q (presets for %s: %s)",
			name, task, task, strings.Join(PresetsFor(task), ", "))
	}
	c := Config{
		Method: MethodTeacher, Steps: 100, Sigma2: 1, Batch: 500, Iterations: 10001,
		Net:        timenet.Config{Arch: timenet.Reference, Hidden: 256},
		Student:    Optim{Optim: agent.Optim{LR: 1e-3, LogZLR: 0.1, WeightDecay: 1e-7}},
		Teacher:    Optim{Optim: agent.Optim{LR: 5e-3, LogZLR: 0.1, WeightDecay: 1e-7}, ClipTime: 0.1},
		Milestones: []int{-6000, -2000}, Gamma: 0.1,
		Explore: 0.2, ExploreDecay: 5000,
		BufferCap:  50000,
		Reward:     teacher.Reward{Form: teacher.LogLog, C: 19, Alpha: 0.5, Eps: 1e-3},
		Percentile: 90, LSEvery: 50,
	}
	switch name {
	case "reference":
	case "paper":
		c.Net = timenet.Config{Arch: timenet.PIS, Hidden: 256}
		c.BufferCap = 20000
		if task == "25gmm" {
			c.Net.Hidden, c.Sigma2, c.BufferCap = 64, 5, 5000
		}
		c.Batch, c.Iterations = 300, 25001
		c.TeacherSchedule = "STSBSB"
		c.DriftClip = 1e4
	case "sendera", "blessing":
		suite(&c)
		if name == "blessing" {
			c.Steps, c.Batch, c.Iterations = 128, 2000, 40000
			c.Student.LR, c.Student.LogZLR = 1e-4, 1e-2
			c.LearnedVariance = true
			c.Sigma2 = 25
			if task == "mos" {
				c.Sigma2 = 5
			}
		}
		switch task {
		case "lgcp":
			c.Sigma2, c.BufferCap, c.LS.StepSize = 5, 60000, 1e-3
		case "25gmm":
			c.Sigma2 = 5
		}
	}
	return c, nil
}

// suite sets the settings the sendera and blessing presets share:
// Sendera et al.'s (see Preset).
func suite(c *Config) {
	c.Steps, c.Sigma2, c.Batch, c.Iterations = 100, 1, 300, 25001
	c.Net = timenet.Config{Arch: timenet.PIS, Hidden: 64}
	c.DriftClip = 1e4
	c.Student = Optim{Optim: agent.Optim{LR: 1e-3, LogZLR: 0.1}}
	c.Teacher = Optim{Optim: agent.Optim{LR: 5e-3, LogZLR: 0.1}, ClipTime: 0.1}
	c.Milestones = nil
	c.BufferCap = 600000
	c.TeacherSchedule = "STSBSB"
	c.LSEvery = 100
	c.LS = langevin.Options{Steps: 200, BurnIn: 100, StepSize: 0.01, TargetAccept: 0.574, Grow: 1.01, Shrink: 0.99, AdaptEvery: 5}
}

// PresetFor is Preset for method m. The pis method keeps the preset's
// process, network, batch and iterations but gfn-diffusion's learning
// settings, where PIS comes from (--mode_fwd pis --lr_policy 1e-3: Adam
// without weight decay or schedule; log Z is unused; its --clipping of
// the network's outputs to ±10⁴, which the base command of its README
// sets, is DriftClip).
func PresetFor(name, task string, m Method) (Config, error) {
	c, err := Preset(name, task)
	if err != nil {
		return c, err
	}
	c.Method = m
	if m == MethodPIS {
		c.Student = Optim{Optim: agent.Optim{LR: c.Student.LR, LogZLR: c.Student.LogZLR}}
		c.Milestones = nil
		c.DriftClip = 1e4
	}
	return c, nil
}
