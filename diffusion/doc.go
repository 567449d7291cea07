// Package diffusion is the GFlowNet family of diffusion samplers over R^d
// (Zhang & Chen 2022; Sendera et al. 2024), trained with trajectory balance
// and, optionally, an adaptive Teacher (package teacher).
//
// A trajectory is x_0 = 0, x_1, …, x_T with dt = 1/T. The forward policy is
// an Euler–Maruyama step of a learned drift u and log-variance λ (fixed at
// log σ² or learned as log σ² + ρ·tanh(v)):
//
//	P_F(x_{i+1} | x_i) = N(x_{i+1}; x_i + dt·u(x_i, i·dt), dt·e^λ·I)
//
// and the backward policy is the fixed Brownian bridge pinned at x_0 = 0:
//
//	P_B(x_i | x_{i+1}) = N(x_i; x_{i+1}·i/(i+1), σ²·dt·i/(i+1)·I), i ≥ 1,
//
// with P_B(x_0 | x_1) = 1. Exploration samples with the per-step variance
// dt·e^λ + f² but scores log P_F with dt·e^λ. Trajectory balance for a
// trajectory τ ending at x is
//
//	δ(τ) = log R(x) + Σ log P_B − Σ log P_F − log Z,  loss = mean ½·δ²,
//
// whose gradient reaches the network only through log P_F (states carry no
// gradient) and log Z. All log-densities are exact Gaussians computed in
// float64 from float32 states.
//
// The pis method is the path integral sampler (Zhang & Chen 2022) as
// gfn-diffusion trains it (--mode_fwd pis): no log Z and no replay; each
// iteration draws a batch of reparameterised trajectories
// x_{i+1} = x_i + dt·u + √(dt·e^λ)·ε and minimises
//
//	L = 1/(n·d) · Σ_b [Σ log P_F − Σ log P_B − log R(x_T)]_b
//
// by differentiating through the simulation: through every state into the
// next step's network input, the bridge terms and log R(x_T), whose
// gradient the energy must provide (energy.Gradient). L·d is minus the
// batch's ELBO, and its expected gradient is on-policy TB's; see pathIntegral (pis.go) for
// the adjoint sweep. Its samples are P_F trajectories, evaluated as every
// other method's.
//
// The policy network is a parameter (the Policy interface; package timenet
// has the reference code's two architectures), and the target is any
// energy.Energy.
//
// A run is driven by package run: Run trains a Config to its end (the
// curve, checkpoints, cancellation, timings and progress are the
// driver's), Resume continues or extends the run of a checkpoint, Load
// returns its Trainer, ReadCheckpoint what it records, and Migrate
// converts a checkpoint of an earlier gfn (format 1). New and Iterate
// train without the driver; Evaluator and Trainer.Sample evaluate and
// sample a policy.
package diffusion
