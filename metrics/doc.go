// Package metrics computes what the paper reports and a little more: the
// target distribution R/Z, the exact terminating distribution P_F^T of a
// policy by dynamic programming over the DAG, empirical distributions from
// samples, and their distances (L1 as the paper defines it, total variation,
// KL).
//
// Exact metrics need an Enumerable environment whose state space is small
// enough (MaxExactStates); larger ones get ErrTooLarge, and callers report
// that the metric was skipped.
package metrics
