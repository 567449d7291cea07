// Package replay is the replay buffer of every family: objects (terminal
// states of a DAG MDP as int32 words, points of R^d as float32) with their
// log-reward and a priority, FIFO eviction at capacity, and rank-based
// prioritised sampling with replacement, where the entry of rank r
// (0 = highest priority) is drawn with weight 1/(RankWeight·N + r)
// (Tripp et al. 2020; the reference uses RankWeight 0.01).
//
// Discrete states are unique by key (Add: re-adding an x refreshes it as
// the newest); points of R^d never repeat and are appended as new entries
// (Append). Replayed objects become trajectories by backward sampling with
// the family's P_B.
package replay
