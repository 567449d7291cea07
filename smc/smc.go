package smc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gfngo/gfn/energy"
)

// The MCMC kernels Options.Kernel names (see the package comment).
const (
	// MALA is the Metropolis-adjusted Langevin algorithm; it needs
	// energy.Gradient.
	MALA = "mala"
	// HMC is Hamiltonian Monte Carlo; it needs energy.Gradient.
	HMC = "hmc"
	// RWM is random-walk Metropolis; it needs only log R.
	RWM = "rwm"
	// None makes no moves: importance sampling along the path.
	None = "none"
)

// Options configures a run. The zero value of every field means its
// default, so Options{} is a usable configuration (see the package
// comment for where the defaults come from).
type Options struct {
	// Particles is the number N of particles. Default 2000.
	Particles int

	// Temperatures is the number K of annealing steps: β_k = k/K for
	// k = 0..K. Default 128. K = 1 reweights the prior draws straight to
	// the target. Ignored when Betas is set.
	Temperatures int

	// Betas, if not nil, is the ladder β_1..β_K (β_0 = 0 is implied):
	// strictly increasing, in (0, 1], ending at 1.
	Betas []float64

	// PriorVar is the variance σ² of the prior N(0, σ²I). Default 1. The
	// prior must put particles near every mode before the modes separate
	// along the path, since MCMC moves cannot carry particles between
	// well-separated modes: on 25GMM (modes out to ±10) σ² = 1 finds ~6
	// of the 25 modes and σ² = 5 ~20, while σ² ≥ 20 finds all.
	PriorVar float64

	// Kernel is the MCMC move: MALA, HMC, RWM or None. Default MALA if
	// the energy implements energy.Gradient, else RWM.
	Kernel string

	// Steps is the number of MCMC steps at every temperature. Default 1
	// for HMC, 10 for MALA and RWM (the same number of target
	// evaluations per temperature with the default Leapfrog).
	Steps int

	// Leapfrog is the number of leapfrog steps of one HMC step. Default 10.
	Leapfrog int

	// StepSize is the initial step size: η of MALA, ε of HMC, the
	// proposal standard deviation s of RWM. Default σ²·d^{−1/3} (MALA),
	// σ·d^{−1/4} (HMC), 2.38·σ/√d (RWM), scales suited to the prior.
	StepSize float64

	// TargetAccept is the mean acceptance probability the step size is
	// steered towards. Default 0.574 (MALA), 0.65 (HMC), 0.234 (RWM);
	// must lie in (0, 1).
	TargetAccept float64

	// AdaptGain: after each MCMC step the step size is multiplied by
	// exp(AdaptGain·(ā − TargetAccept)). Default 1 (MALA, RWM) or 0.5
	// (HMC, whose acceptance in low dimension falls off a cliff near the
	// leapfrog's stability limit, so that a gain of 1 makes ε oscillate).
	AdaptGain float64

	// NoAdapt keeps the step size at StepSize throughout.
	NoAdapt bool

	// ESSThreshold ε: resample when ESS < ε·N after a reweighting.
	// Default 0.5; 1 resamples whenever the weights are not all equal; a
	// negative value never resamples (annealed importance sampling).
	// Must not exceed 1.
	ESSThreshold float64
}

// resolve fills the defaults for energy e and checks the options. Its
// errors name the offending value.
func (o Options) resolve(e energy.Energy) (Options, error) {
	d := e.Dim()
	if d <= 0 {
		return o, fmt.Errorf("smc: energy dimension %d, must be positive", d)
	}
	_, hasGrad := e.(energy.Gradient)
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case o.Particles < 0:
		return o, fmt.Errorf("smc: Particles = %d, must be positive", o.Particles)
	case o.Temperatures < 0:
		return o, fmt.Errorf("smc: Temperatures = %d, must be positive", o.Temperatures)
	case o.Steps < 0:
		return o, fmt.Errorf("smc: Steps = %d, must be positive (Kernel %q means no moves)", o.Steps, None)
	case o.Leapfrog < 0:
		return o, fmt.Errorf("smc: Leapfrog = %d, must be positive", o.Leapfrog)
	case o.PriorVar < 0 || !finite(o.PriorVar):
		return o, fmt.Errorf("smc: PriorVar = %v, must be positive and finite", o.PriorVar)
	case o.StepSize < 0 || !finite(o.StepSize):
		return o, fmt.Errorf("smc: StepSize = %v, must be positive and finite", o.StepSize)
	case o.TargetAccept != 0 && !(o.TargetAccept > 0 && o.TargetAccept < 1):
		return o, fmt.Errorf("smc: TargetAccept = %v, must lie in (0, 1)", o.TargetAccept)
	case o.AdaptGain < 0 || !finite(o.AdaptGain):
		return o, fmt.Errorf("smc: AdaptGain = %v, must be positive and finite", o.AdaptGain)
	case math.IsNaN(o.ESSThreshold) || o.ESSThreshold > 1:
		return o, fmt.Errorf("smc: ESSThreshold = %v, must not exceed 1 (negative: never resample)", o.ESSThreshold)
	}
	if o.Particles == 0 {
		o.Particles = 2000
	}
	if o.PriorVar == 0 {
		o.PriorVar = 1
	}
	if o.Leapfrog == 0 {
		o.Leapfrog = 10
	}
	if o.ESSThreshold == 0 {
		o.ESSThreshold = 0.5
	}
	if o.Betas != nil {
		if len(o.Betas) == 0 {
			return o, fmt.Errorf("smc: Betas is empty; it must end at 1")
		}
		prev := 0.0
		for k, b := range o.Betas {
			if !(b > prev) || b > 1 {
				return o, fmt.Errorf("smc: Betas[%d] = %v, must lie in (%v, 1] (strictly increasing from β₀ = 0)", k, b, prev)
			}
			prev = b
		}
		if prev != 1 {
			return o, fmt.Errorf("smc: Betas ends at %v, must end at 1", prev)
		}
		o.Betas = append([]float64(nil), o.Betas...)
		o.Temperatures = len(o.Betas)
	} else {
		if o.Temperatures == 0 {
			o.Temperatures = 128
		}
		o.Betas = make([]float64, o.Temperatures)
		for k := range o.Betas {
			o.Betas[k] = float64(k+1) / float64(o.Temperatures)
		}
	}
	switch o.Kernel {
	case "":
		o.Kernel = RWM
		if hasGrad {
			o.Kernel = MALA
		}
	case MALA, HMC:
		if !hasGrad {
			return o, fmt.Errorf("smc: Kernel %q needs ∇log R, and the energy (%T) does not implement energy.Gradient; use Kernel %q", o.Kernel, e, RWM)
		}
	case RWM, None:
	default:
		return o, fmt.Errorf("smc: Kernel %q is unknown (allowed: %q, %q, %q, %q)", o.Kernel, MALA, HMC, RWM, None)
	}
	sigma, fd := math.Sqrt(o.PriorVar), float64(d)
	switch o.Kernel {
	case MALA:
		def(&o.StepSize, o.PriorVar*math.Pow(fd, -1.0/3))
		def(&o.TargetAccept, 0.574)
		def(&o.AdaptGain, 1)
		defInt(&o.Steps, 10)
	case HMC:
		def(&o.StepSize, sigma*math.Pow(fd, -0.25))
		def(&o.TargetAccept, 0.65)
		def(&o.AdaptGain, 0.5)
		defInt(&o.Steps, 1)
	case RWM:
		def(&o.StepSize, 2.38*sigma/math.Sqrt(fd))
		def(&o.TargetAccept, 0.234)
		def(&o.AdaptGain, 1)
		defInt(&o.Steps, 10)
	case None:
		o.Steps = 0
	}
	return o, nil
}

func def(v *float64, d float64) {
	if *v == 0 {
		*v = d
	}
}

func defInt(v *int, d int) {
	if *v == 0 {
		*v = d
	}
}

// Result is what a run returns. Rows are row-major float32, N×d.
type Result struct {
	// Options are the options with every default filled in (Betas holds
	// β_1..β_K, Kernel the kernel used).
	Options Options

	// Dim is d.
	Dim int

	// X holds the final particles, weighted by LogW, with their log R in
	// LogR.
	X    []float32
	LogR []float64

	// LogW holds the normalised log-weights of X: log W_i with
	// Σ_i W_i = 1 (all −log N right after a resampling).
	LogW []float64

	// Samples holds N equally weighted particles: a systematic resampling
	// of X by LogW, or X itself when the weights are all equal (after a
	// resampling at the last temperature).
	Samples []float32

	// LogZ is log Ẑ, the estimate of log ∫R.
	LogZ float64

	// ESS[k−1] is the effective sample size 1/Σ_i W_i² right after the
	// reweighting of temperature k, before any resampling, for k = 1..K.
	ESS []float64

	// Resampled[k−1] reports whether the particles were resampled at
	// temperature k.
	Resampled []bool

	// Accept[k−1] is the fraction of MCMC proposals accepted at
	// temperature k (NaN for Kernel None), and StepSize[k−1] the step size
	// of its last MCMC step.
	Accept   []float64
	StepSize []float64

	// EnergyEvals counts the rows passed to LogReward and GradEvals the
	// rows passed to GradLogReward (which returns log R as well): the
	// target evaluations, each row once, however many MCMC steps share a
	// batch.
	EnergyEvals, GradEvals int

	// Wall is the run's wall-clock time.
	Wall time.Duration
}

// Resamplings returns how many times the particles were resampled.
func (r *Result) Resamplings() int {
	c := 0
	for _, b := range r.Resampled {
		if b {
			c++
		}
	}
	return c
}

// Run runs the sampler on e with the options (zero fields meaning their
// defaults) and returns the result, or an error naming a bad option, a
// kernel the energy cannot support, or the temperature and particle of a
// non-finite log R or gradient: NaN or ±Inf at a prior draw (temperature
// 0: the prior must lie inside the target's support), NaN or +Inf at a
// proposal with finite coordinates (a proposal with log R = −Inf is
// rejected).
//
// All randomness comes from rng, in this order: N·d normals for the prior
// draws (row-major); then at every temperature one uniform if it
// resamples, and per MCMC step the proposal normals (MALA, RWM: N·d,
// row-major; HMC: N·d momenta) followed by N uniforms for the acceptance
// tests; finally one uniform for the final resampling into Samples.
func Run(e energy.Energy, opt Options, rng *rand.Rand) (*Result, error) {
	start := time.Now()
	o, err := opt.resolve(e)
	if err != nil {
		return nil, err
	}
	s := newSampler(e, o)
	res, err := s.run(rng)
	if err != nil {
		return nil, err
	}
	res.Wall = time.Since(start)
	return res, nil
}

// sampler holds a run's particles and scratch memory.
type sampler struct {
	e     energy.Energy
	g     energy.Gradient // nil unless the kernel needs gradients
	o     Options
	n, d  int
	needG bool

	x     []float32 // particles
	logR  []float64 // log R(x)
	grad  []float64 // ∇log R(x) (needG)
	logP0 []float64 // log p₀(x)
	logW  []float64 // normalised log-weights

	// scratch
	y     []float32
	logRy []float64
	grady []float64
	mom   []float64 // HMC momenta
	alive []bool    // HMC: trajectory still finite
	tmpW  []float64
	idx   []int
	xs    []float32
	fs    []float64

	res *Result
}

func newSampler(e energy.Energy, o Options) *sampler {
	n, d := o.Particles, e.Dim()
	s := &sampler{e: e, o: o, n: n, d: d}
	s.needG = o.Kernel == MALA || o.Kernel == HMC
	if s.needG {
		s.g = e.(energy.Gradient)
		s.grad = make([]float64, n*d)
		s.grady = make([]float64, n*d)
	}
	s.x = make([]float32, n*d)
	s.y = make([]float32, n*d)
	s.logR = make([]float64, n)
	s.logRy = make([]float64, n)
	s.logP0 = make([]float64, n)
	s.logW = make([]float64, n)
	s.tmpW = make([]float64, n)
	s.idx = make([]int, n)
	if o.Kernel == HMC {
		s.mom = make([]float64, n*d)
		s.alive = make([]bool, n)
	}
	return s
}

// eval evaluates log R (and the gradient when the kernel needs it) of the
// rows of x, counting the rows.
func (s *sampler) eval(x []float32, logR, grad []float64) error {
	if s.needG {
		s.res.GradEvals += len(logR)
		return s.g.GradLogReward(x, logR, grad)
	}
	s.res.EnergyEvals += len(logR)
	return s.e.LogReward(x, logR)
}

// logPrior returns log N(x; 0, σ²I) of one row.
func (s *sampler) logPrior(row []float32) float64 {
	var q float64
	for _, v := range row {
		f := float64(v)
		q += f * f
	}
	return -0.5*q/s.o.PriorVar - 0.5*float64(s.d)*math.Log(2*math.Pi*s.o.PriorVar)
}

func (s *sampler) run(rng *rand.Rand) (*Result, error) {
	o, n, d := s.o, s.n, s.d
	K := len(o.Betas)
	s.res = &Result{
		Options:   o,
		Dim:       d,
		ESS:       make([]float64, 0, K),
		Resampled: make([]bool, 0, K),
		Accept:    make([]float64, 0, K),
		StepSize:  make([]float64, 0, K),
	}
	res := s.res

	sigma := math.Sqrt(o.PriorVar)
	for i := range s.x {
		s.x[i] = float32(sigma * rng.NormFloat64())
	}
	if err := s.eval(s.x, s.logR, s.grad); err != nil {
		return res, fmt.Errorf("smc: temperature 0: %w", err)
	}
	for i := range n {
		if err := s.checkState(i); err != nil {
			return res, err
		}
		s.logP0[i] = s.logPrior(s.x[i*d : (i+1)*d])
		s.logW[i] = -math.Log(float64(n))
	}

	step := o.StepSize
	prev := 0.0
	for k, beta := range o.Betas {
		temp := k + 1
		db := beta - prev
		prev = beta
		// 1. Reweight; log Ẑ gains log Σ W_i G_i.
		for i := range n {
			s.tmpW[i] = s.logW[i] + db*(s.logR[i]-s.logP0[i])
		}
		lz := logSumExp(s.tmpW)
		if math.IsInf(lz, -1) || math.IsNaN(lz) {
			return res, fmt.Errorf("smc: temperature %d (β = %.6g): every particle has zero weight", temp, beta)
		}
		res.LogZ += lz
		for i := range n {
			s.logW[i] = s.tmpW[i] - lz
		}
		// 2. ESS and resampling.
		ess := essOf(s.logW)
		res.ESS = append(res.ESS, ess)
		resample := o.ESSThreshold >= 0 && ess < o.ESSThreshold*float64(n)
		res.Resampled = append(res.Resampled, resample)
		if resample {
			Systematic(s.idx, s.logW, rng.Float64())
			s.gather(s.idx)
			for i := range s.logW {
				s.logW[i] = -math.Log(float64(n))
			}
		}
		// 3. Move.
		if o.Kernel == None {
			res.Accept = append(res.Accept, math.NaN())
			res.StepSize = append(res.StepSize, math.NaN())
			continue
		}
		accepted := 0
		for st := range o.Steps {
			var acc int
			var meanA float64
			var err error
			switch o.Kernel {
			case MALA:
				acc, meanA, err = s.mala(temp, st, beta, step, rng)
			case HMC:
				acc, meanA, err = s.hmc(temp, st, beta, step, rng)
			case RWM:
				acc, meanA, err = s.rwm(temp, st, beta, step, rng)
			}
			if err != nil {
				return res, err
			}
			accepted += acc
			if st == o.Steps-1 {
				res.StepSize = append(res.StepSize, step)
			}
			if !o.NoAdapt {
				step *= math.Exp(o.AdaptGain * (meanA - o.TargetAccept))
				step = min(max(step, 1e-12), 1e12)
			}
		}
		res.Accept = append(res.Accept, float64(accepted)/float64(o.Steps*n))
	}

	res.X, res.LogR, res.LogW = s.x, s.logR, s.logW
	res.Samples = make([]float32, n*d)
	u := rng.Float64()
	if equal(s.logW) {
		copy(res.Samples, s.x)
		return res, nil
	}
	Systematic(s.idx, s.logW, u)
	for i, j := range s.idx {
		copy(res.Samples[i*d:(i+1)*d], s.x[j*d:(j+1)*d])
	}
	return res, nil
}

// checkState checks the log R and gradient of prior draw i.
func (s *sampler) checkState(i int) error {
	l := s.logR[i]
	if math.IsNaN(l) || math.IsInf(l, 0) {
		return fmt.Errorf("smc: temperature 0, particle %d: log R = %v at the prior draw", i, l)
	}
	if s.needG {
		for _, g := range s.grad[i*s.d : (i+1)*s.d] {
			if math.IsNaN(g) || math.IsInf(g, 0) {
				return fmt.Errorf("smc: temperature 0, particle %d: gradient %v is not finite at the prior draw", i, g)
			}
		}
	}
	return nil
}

// gather replaces the particles by the rows idx lists.
func (s *sampler) gather(idx []int) {
	n, d := s.n, s.d
	s.xs = growSlice(s.xs, n*d)
	s.fs = growSlice(s.fs, n)
	for i, j := range idx {
		copy(s.xs[i*d:(i+1)*d], s.x[j*d:(j+1)*d])
	}
	copy(s.x, s.xs)
	for _, v := range [][]float64{s.logR, s.logP0} {
		for i, j := range idx {
			s.fs[i] = v[j]
		}
		copy(v, s.fs)
	}
	if s.needG {
		g := s.grady // free between moves: the scratch of the gather
		for i, j := range idx {
			copy(g[i*d:(i+1)*d], s.grad[j*d:(j+1)*d])
		}
		s.grad, s.grady = g, s.grad
	}
}

// equal reports whether all values of v are equal.
func equal(v []float64) bool {
	for _, x := range v {
		if x != v[0] {
			return false
		}
	}
	return true
}

func growSlice[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// finiteRow reports whether every value of row is finite.
func finiteRow(row []float32) bool {
	for _, v := range row {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return true
}
