// Package objective holds the training objectives of GFlowNets apart from
// any family: the grid and user DAG environments, sequences and diffusion
// samplers all hand an objective the same Batch of trajectories and read
// back the loss, its gradient with respect to every input, and a loss per
// object, which is what an adaptive Teacher is paid from.
//
// A trajectory τ = (s_0 → s_1 → … → s_n = x) enters as its per-transition
// log P_F(s_{t+1}|s_t) and log P_B(s_t|s_{t+1}), its terminal log R(x),
// and, for the objectives that learn state flows, the log-flows log F(s_i)
// of its states (log F(x) is log R(x) whatever the family puts there).
// Each objective's batch loss is the mean over trajectories of a per-object
// loss ℓ(τ):
//
//   - TB (Malkin et al. 2022): δ = log R(x) + Σ log P_B − log Z − Σ log P_F,
//     ℓ = δ².
//   - DB (Bengio et al. 2023): for each transition, d_t = log F(s_t) +
//     log P_F(s_{t+1}|s_t) − log F(s_{t+1}) − log P_B(s_t|s_{t+1}),
//     ℓ = Σ_t d_t² (the grid's reference sums a trajectory's transitions).
//   - SubTB(λ) (Madan et al. 2023): every sub-trajectory i < j has the
//     residual r_ij = log F(s_i) + Σ_{t=i}^{j−1}(log P_F − log P_B) −
//     log F(s_j), and ℓ = Σ_{i<j} λ^{j−i} r_ij² / Σ_{i<j} λ^{j−i}.
//   - VarGrad, the log-partition variance (Richter et al. 2020; Zhang et
//     al. 2023's "tb-avg"): ζ = log R(x) + Σ log P_B − Σ log P_F, ℓ =
//     (ζ − ζ̄)² with ζ̄ the batch mean, so that the batch loss is the
//     (population) variance of ζ and no log Z is learned.
//   - Modified DB (Deleu et al. 2022), for environments where every state
//     can stop: for each move s → s', d = log R(s') + log P_B(s|s') +
//     log P_F(⊤|s) − log R(s) − log P_F(s'|s) − log P_F(⊤|s'), ℓ = Σ d².
//   - FM, flow matching (Bengio et al. 2021), for DAGs whose parents can be
//     enumerated: for each visited state but s_0, with edge log-flows,
//     d = log Σ_{in} F − log(R(s) + Σ_{out} F), ℓ = Σ d².
//   - Forward-looking DB and SubTB (Pan et al. 2023; gfn-diffusion's
//     "partial energy"): the flow of a state is log F(s_i) = c_i·log R(s_i) +
//     log F̃(s_i), a network F̃ plus a known part of the reward (c_i = t/T in
//     a diffusion sampler, 1 for a discrete state that can be scored); the
//     objective is DB or SubTB on those flows.
//
// Each objective also returns, per object, δ(τ), signed so that δ > 0
// means that R(x) lies above the Student's estimate of it (the object is
// under-sampled): the Teacher's reward weighs those objects by 1 + C. For
// TB it is the residual above; for VarGrad ζ − ζ̄; for DB, SubTB and their
// forward-looking forms the whole trajectory's residual −Σ_t d_t =
// log R(x) + Σ log P_B − log F(s_0) − Σ log P_F; for modified DB Σ_t d
// (its d has log R(s') on the positive side); for FM the terminal state's
// log R(x) − log Σ_{in} F.
//
// Everything is float64: the families' float32 log-probabilities are
// widened before they reach an objective, and gradients are returned in
// float64 for the family to narrow.
package objective
