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
// With Config.Teachers = K > 1 (TB only), K Teachers take the schedule's T
// slots in turn and each trains on every batch; by Config.TeacherSplit
// (teacher.Split) they share R_T in proportion to their estimated
// probabilities of x, log P_k(x) ≈ log P_F^k(τ) − log P_B(τ|x), or each
// take the whole of it. Trainer.Teacher is the first of Trainer.Teachers;
// the Teacher's curve columns and exact distances are the first Teacher's.
//
// The reward forms, the schedule, the update order and the budget are
// package teacher's, shared with the other families; this package supplies
// the grid's sampling, scoring and replay of trajectories.
//
// # Runs, checkpoints and resuming
//
// Run trains through package run's driver (this package is its "grid"
// family): the loop, the curve (metrics.csv: a point at 0, every
// steps/50 iterations and at the end), the checkpoints and the outputs
// are the driver's; the iteration, the curve's columns, the final
// evaluation (summary.json) and the figures are this package's. With an
// output directory a run checkpoints every RunOptions.CheckpointEvery
// iterations, when its context is cancelled (Ctrl-C: it returns a
// *run.Interrupted) and at the end. A checkpoint holds the state between
// two iterations, all of it: every agent's parameters and Adam state
// ("student", "teacher", "teacher1", ..., GAFN's RND networks "rnd"), the
// training and evaluation random streams, the replay buffer's entries
// oldest first, the counters and modes found, and the driver's record
// (the curve so far, the loss sums since its last point, the iterations'
// durations). Resume continues such a run, or extends a finished one
// with a larger RunOptions.Budget; it ends with the same parameters,
// counters, metrics.csv and summary.json as the run never interrupted,
// wall-clock times aside, even after a SIGKILL at any moment. Load
// returns a checkpoint's trainer; ReadCheckpoint what rebuilds its
// environment. Migrate converts the checkpoints of earlier versions
// (format 1) in place.
//
// The parameters keep the names and PyTorch layout Python uses
// (student.model.<i>.weight, student.logZ, student.optim.*, teacher.*,
// rnd.*).
package train
