// Package langevin is the Metropolis-adjusted Langevin (MALA) local search
// that feeds a diffusion sampler's replay buffer with states refined under
// the target (the paper's "+ LS" rows on Manywell). From a batch of states x
// (one chain per row) each step proposes
//
//	x' = x + η·∇log R(x) + √(2η)·ξ,   ξ ~ N(0, I),
//
// and accepts row by row with probability min(1, α),
//
//	log α = log R(x') − log R(x) + log q(x | x') − log q(x' | x),
//	log q(x' | x) = −‖x' − x − η·∇log R(x)‖² / (4η),
//
// which leaves R/Z invariant for a fixed η. The step size η is shared by
// all rows and adapted towards the acceptance rate 0.574, the optimal rate
// of MALA in high dimension (Roberts & Rosenthal 1998).
//
// The defaults and every rule below are those of the authors' code
// (alstn12088/adaptive-teacher at 8cfcb22, diffusion/langevin.py, cited as
// LG:line, and diffusion/train.py, T:line):
//
//   - K = 200 steps (T:54 max_iter_ls), η₀ = 0.001 (T:60 ld_step), target
//     rate 0.574 (T:53), adaptation always on (T:62: a store_true flag whose
//     default is True).
//   - η is adjusted before every step i ≥ 1 (0-based), not every 5 steps:
//     η ← 1.01·η if the last computed acceptance rate is strictly above the
//     target, else η ← 0.99·η (LG:4-17, 32-33). The rate is recomputed
//     after step i whenever i mod 5 = 0, over the proposals since the last
//     recomputation (LG:46-47, 57-62): the first window is step 0 alone,
//     then steps 1–5, 6–10, …; a rate stays in force for 5 adjustments.
//     Every search starts again from η₀ (LG:33): nothing carries over.
//   - The rate is pooled over all rows of the window (accepted / proposed,
//     LG:46-47, 58); one η serves the whole batch (LG:37).
//   - The proposal of a row is accepted when u < exp(min(log α, 0)) with one
//     u ~ U[0, 1) per row (LG:41-45).
//   - What the search returns (LG:50-53, 64) is every accepted proposal of
//     every step i > 100 (0-based, so steps 101–199: 99 steps), with its
//     log R — not the final states, and rejected rows are not repeated.
//     With 500 chains at the target rate that is ~28,000 states, all added
//     to the buffer with priority log R (T:314-315, T:343-345).
//   - log R(x) of the initial states is evaluated once and carried along
//     with the accepted states (LG:23, 55).
//
// On Manywell from states near the target the rate stays above 0.574 for
// all 200 steps, so η grows at every step to 0.001·1.01¹⁹⁹ ≈ 0.0072 and
// about 95% of the 49,500 proposals of steps 101–199 are accepted and
// collected (Example).
//
// Precision: states are float32, as in the reference (torch's default);
// log R, ∇log R, η and the acceptance ratio are float64 here (float32 in
// the reference), and the proposal residuals are computed from the stored
// float32 states, so the correction is exact for the states actually kept.
//
// Non-finite values are errors here, where the reference silently rejects
// them: a NaN or ±Inf log R of an initial state or a proposal, a
// non-finite initial gradient and a NaN acceptance ratio end the search
// with an error naming the step and the row.
package langevin
