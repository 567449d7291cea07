// Package replay is the terminal-state replay buffer of the grid
// experiments: unique terminal states x with their log-reward and a
// priority, FIFO eviction at capacity (re-adding an x refreshes it as the
// newest), and rank-based prioritised sampling with replacement, where the
// entry of rank r (0 = highest priority) is drawn with weight
// 1/(RankWeight·N + r) (Tripp et al. 2020; the reference uses RankWeight
// 0.01). Replayed states become trajectories by backward sampling with P_B.
package replay
