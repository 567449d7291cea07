// Package energy defines unnormalised target densities R(x) over ℝ^d for
// diffusion samplers, the targets of the paper's continuous experiments:
//
//	p(x) = R(x)/Z,   Z = ∫ R(x) dx,   log R(x) = −E(x).
//
// An Energy evaluates log R on a batch of states. States are float32 rows
// (row-major, len(x) = rows·Dim()), the precision of the samplers' networks;
// log-rewards are float64, since samplers subtract large, nearly equal log
// quantities (log R against log P_F − log P_B + log Z) and accumulate them.
// Optional interfaces add what only some targets can offer:
//
//   - Gradient: ∇ log R, needed by Langevin local search (package langevin);
//   - Sampler: exact samples, needed by the EUBO and W2 metrics;
//   - LogZer: the known log Z, needed to read ELBO and EUBO as gaps;
//   - Mixture: the components of a finite mixture, needed by the entropic
//     mode coverage (package samplemetric).
//
// Check for them with a type assertion, as gonum does with its Needser
// interfaces.
//
// The paper's two targets are provided, as defined in the authors' code
// (alstn12088/adaptive-teacher, diffusion/energies/):
//
// GMM25 (d = 2): 25 equal-weight Gaussians N(μ, 0.3·I), μ ∈ {−10,−5,0,5,10}²,
//
//	log R(x) = log Σ_k N(x; μ_k, 0.3·I) − log 25,   log Z = 0.
//
// Manywell (d = 32 by default, any even d ≥ 2): d/2 independent double wells on
// the pairs (a, b) = (x_{2k}, x_{2k+1}),
//
//	log R(x) = Σ_k [−a_k⁴ + 6a_k² + a_k/2 − b_k²/2],
//	log Z = (d/2)·(log Z_a + ½ log 2π),   Z_a = ∫ exp(−a⁴ + 6a² + a/2) da.
//
// The field's wider benchmark suite (Sendera et al. 2024; Blessing et al.
// 2024, "Beyond ELBOs") is provided too, each type's comment giving its
// source and the parameters that pin it: Funnel (Neal's funnel, d = 10,
// x₀ ~ N(0, 3²)), GMM40 (40 unit Gaussians with locations in [−40, 40]^d,
// d = 2 or 50, drawn as Blessing et al.'s JAX code draws them),
// StudentTMixture (10 products of t₂ coordinates with locations in
// [−10, 10]^d, d = 50) and LGCP (the log-Gaussian Cox process on the
// Finnish pines, d = 1,600, embedded data). All but LGCP have exact
// samplers and log Z = 0; LGCP's log Z is unknown (NaN). Named builds them
// by their task names (SuiteNames).
//
// All compute in float64. Non-finite states give non-finite log-rewards
// (a NaN row yields NaN), never an error: the caller decides what a
// diverged sample means. Errors are reserved for mis-sized slices.
package energy
