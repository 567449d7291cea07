// Package train runs the DAG-MDP family's GFlowNet training with an adaptive Teacher (Kim et al.,
// "Adaptive teachers for amortized samplers", Algorithm 1): a Student
// GFlowNet trained with trajectory balance on the target reward, and a
// Teacher GFlowNet (same architecture, own log Z and Adam) trained with TB
// on a reward computed from the Student's TB discrepancy δ on the same
// batch, so that it learns to sample where the Student is wrong.
//
// Each iteration picks a behaviour policy from a cyclic schedule of
// Student (S), Teacher (T) and buffer (B) slots, samples a batch, takes a
// Student TB step, then a Teacher TB step on the same batch with the Teacher
// reward. Method "tb" is the on-policy Student alone.
//
// Teacher rewards (δ > 0 means the Student under-samples x; w = 1 + C·[δ>0]):
//   - "reference" (default, the authors' code): R_T = log(1 + 1e-3 + w·δ²)·R^α,
//     and the Teacher's TB target is log(R_T + 1e-8);
//   - "paper": log R_T = log(ε + w·δ²) + α·log R.
//
// With N_MC > 1 the δ-dependent part is averaged in the log domain over the
// batch trajectory and N_MC-1 extra trajectories drawn from P_B(·|x).
//
// The reward forms, the schedule, the update order and the budget are
// package teacher's, shared with the other families; this package supplies
// the grid's sampling, scoring and replay of trajectories.
package train
