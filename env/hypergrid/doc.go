// Package hypergrid is the (deceptive) hypergrid environment: states are
// points of {0..H-1}^d starting at the origin; an action increments one
// coordinate or stops. An episode ends at stop or as soon as a coordinate
// reaches H-1, so valid terminal states have at most one coordinate equal to
// H-1, and there are (H-1)^d + d·(H-1)^(d-1) of them.
//
// The backward policy is uniform over parents that are not themselves
// terminal; a terminal state reached by stop has the stop as its only
// backward step.
//
// Rewards:
//   - Deceptive (default; the authors' reference code, whose numbers the
//     paper's tables report): with u_i = x_i/(H-1)·2 - 1 in float64,
//     R = 0.1 + 1e-5 - 0.1·Π[|u_i| > 0.2] + 2·Π[0.6 < |u_i| < 0.8]. The
//     deceptive region is a central cross, not the box of the paper's
//     equation. The mode count depends on this exact float64 order
//     (81 modes for d=4, H=16).
//   - DeceptivePaper: the paper's equation, R = R0 + R1·Π[|x_i/(H-1) - 0.5| < 0.1]
//   - R2·Π[|x_i/(H-1) - 0.5| ∈ (0.3, 0.4)], R0=1e-5, R1=0.1, R2=2.
//   - Original: the hypergrid of Bengio et al. (2021),
//     R = R0 + R1·Π[|x_i/(H-1) - 0.5| > 0.25] + R2·Π[0.3 < |x_i/(H-1) - 0.5| < 0.4],
//     R0=0.1, R1=0.5, R2=2.
//   - Custom: a user's log-reward function (NewCustom), such as a reward
//     program's (package rewardcmd); such a grid has no known modes.
//
// A state is d+1 int32 words: the coordinates, then 1 if the episode ended
// by the stop action.
package hypergrid
