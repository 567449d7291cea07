// Package teacher is the adaptive Teacher of Kim et al. (Adaptive teachers
// for amortized samplers, ICLR 2025, Algorithm 1), apart from any domain:
// it knows neither the objects sampled nor the networks. Each family
// (DAG MDPs in package train, diffusion samplers in package diffusion, …)
// supplies how to sample, score and replay its objects, and takes from
// here:
//
//   - Reward: the Teacher's log-reward from the Student's trajectory-balance
//     residual δ = log R + Σ log P_B − log Z − Σ log P_F (before the
//     Student's update) and the object's log R. With w = 1 + C·[δ > 0]:
//
//     grid reference   log R_T = log(log(1 + 10⁻³ + w·δ²)·R^α + 10⁻⁸)
//     log-of-log       log R_T = log(log(1.001 + w·δ²/2)) + α·log R
//     sequence         log R_T = log(log(1.001 + w·min(δ², 5000))) + α·log R
//     paper            log R_T = log(ε + w·δ²) + α·log R
//
//     The log-of-log form is the diffusion reference code's (its loss is
//     δ²/2, and objects below a log-reward threshold get the loss 10⁻¹²),
//     the sequence form the sequence reference code's (its loss is δ²
//     capped at 5000); the paper's text has the last form. With N_MC > 1 the
//     δ-dependent log term is averaged over N_MC backward trajectories of
//     the same object before α·log R is added.
//
//   - Schedule: the cycle of iteration roles S (a Student batch), T (a
//     Teacher batch) and B (a replay batch), built from an S:T:B ratio.
//     What a T iteration does is the family's choice: on the grid the
//     Student trains on the Teacher's batch; in the diffusion and sequence
//     reference code the Teacher's samples enter the replay buffer and the
//     Student trains on a draw from it.
//
//   - Update: the order of one round — the Student's δ before its update,
//     the Teacher's targets from δ, then the Student's update and the
//     Teacher's step side by side (they share nothing once the targets are
//     known).
//
//   - Budget (reward calls).
//
// Replay by priority, and the percentiles its portions and the diffusion
// reference code's fixed log-reward threshold use, is package replay.
package teacher
