// Package seqtrain trains GFlowNet samplers of sequences with the
// sequence reference loop of Kim et al. (Adaptive teachers for amortized
// samplers, ICLR 2025, §5.3; code: alstn12088/adaptive-teacher,
// discovery/), for any Task: the four biochemical tasks of package
// biochem or a user's own reward over strings.
//
// A round is
//
//  1. an online batch of OnlineBatch sequences drawn forward in the MDP
//     (prepend-append by default) by the Student, or by the Teacher on the
//     Schedule's T rounds (every third round), with ε-uniform exploration
//     over unique children; its rewards are the run's reward calls;
//  2. one trajectory-balance step of the Student on it, with the loss
//     min(δ², 5000) per trajectory, δ = log R + Σlog P_B − log Z − Σlog P_F,
//     the policy's gradient norm clipped at 10 and log Z floored at 0;
//  3. for the Teacher methods, one step of the Teacher on the same
//     trajectories towards log R_T = log(log(1.001 + w·min(δ², 5000))) +
//     α·log R (w = 20 where δ > 0), from the Student's δ before its update
//     (package teacher; the paper's form log(ε + w·δ²) + α·log R is an
//     option);
//  4. the replay buffers: every never-seen sequence enters PRT's FIFO of
//     1000 with its reward; with PER every online sequence enters (or
//     updates in place) a FIFO of 1000 with priority log(1.001 + w·min(δ²,
//     5000));
//  5. for the replay methods, an offline batch: half uniformly among the
//     buffer's sequences with priority at or above its 90th percentile,
//     half among the rest, each on a fresh uniform-P_B trajectory (no
//     reward calls), and a step of the Student and the Teacher on it (PER
//     then updates the replayed priorities).
//
// The Student's and the Teacher's steps of one batch run side by side:
// they share nothing once the Teacher's targets are known.
//
// Every RunOptions.EvalEvery rounds and after the last, the Evaluator draws 2,048
// Student samples without exploration and reports the modes found (all
// online samples, and this evaluation's), ELBO, the importance-sampled
// log Z estimate and its error, and — on target samples with uniform-P_B
// trajectories — the EUBO and the correlation of Σlog P_F with log R.
//
// Where the reference code departs from its intent it is followed in
// results and fixed in bugs: its gradient clip acts only on the first step
// (a spent generator), here every step; its two-buffer PER checks the PRT
// buffer's size before replaying, here the PER buffer's.
//
// The policy is a parameter: Config.Model, a ModelFunc, builds any
// discrete.Model for both agents (nil: the Config's SSR or MLP policy).
// Objects are known by a 64-bit key, so New refuses tasks with more than
// 2^64 sequences.
//
// Run trains through the driver of package run, which adds the outputs
// (metrics.csv, summary.json, curves.png), checkpoints (periodic, on
// Ctrl-C, after a failing reward), Resume (a run resumed from any
// checkpoint ends with the same bits as one never interrupted; a larger
// RunOptions.Budget extends a finished run) and Load. What is the
// family's own is in run.go: a round is a unit, the curve's columns are
// the Metrics, its agents are "student" and "teacher", its streams the
// training and the evaluation streams. Migrate converts checkpoints of
// earlier versions (legacy.go).
package seqtrain
