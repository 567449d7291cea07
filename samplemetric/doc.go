// Package samplemetric scores a sampler's samples against its target
// beyond ELBO, ELBO-IS, EUBO and W2 (which package diffusion computes, W2
// through package ot), with the metrics of Blessing et al. 2024 ("Beyond
// ELBOs: a large-scale evaluation of variational methods for sampling"):
//
//   - EMC, the entropic mode coverage of samples over a mixture's
//     components (energy.Mixture);
//   - LogZError, |Δ log Z| of the importance-weighted estimate
//     log mean exp(log w) where log Z is known;
//   - MMD, the maximum mean discrepancy between model and exact samples
//     with a Gaussian kernel, unbiased estimator.
//
// # Why a package of its own
//
// These metrics need only samples, log weights and a target's mixture
// structure: nothing of a trainer. Package diffusion, where ELBO and EUBO
// are computed from a policy's trajectories, would tie them to one family
// of samplers; package ot is about optimal transport (an exact assignment
// solver), which MMD is not; package metrics is about discrete
// environments' exact distributions. A small flat package lets every
// sampler (diffusion, SMC, GGNS, Langevin) and the benchmark table use them.
//
// All sums are float64; samples are float32 rows (row-major, d per row) as
// the energies take them. Errors start with "samplemetric: " and name the
// bad value.
package samplemetric
