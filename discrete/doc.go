// Package discrete is the GFlowNet core for finite DAG MDPs: the environment
// interface, trajectory batches, forward sampling (with ε-uniform mixing and
// logit temperature), backward sampling with a fixed uniform P_B, and the
// trajectory-balance (TB) objective with a learnable log Z.
//
// A state is a fixed-length []int32 chosen by the environment; a batch of
// states is a flat slice of rows. Forward actions are indexed
// 0..NumActions()-1; the environment masks the invalid ones, so the same
// interface serves MDPs whose children must be de-duplicated (masked) such as
// the prepend-append sequence MDP.
//
// Off-policy correctness: TB always recomputes log P_F under the model being
// trained; the behaviour policy's log-probabilities stored with a batch are
// for diagnostics only.
//
// Speed without approximation: with SampleOptions.Record the sampling model
// keeps its per-step forward passes, and with SampleOptions.Companion a
// second model (the other agent of a Teacher–Student pair) runs on the same
// states on another goroutine while sampling proceeds. TB on the batch then
// reuses those passes instead of a forward pass of its own. This is exact,
// not merely close: TB takes the distinct states in the order the sampler
// met them, and a row's activations do not depend on which other rows
// share a product (package kernel), so the reused pass has the same bits
// as a fresh one (tested).
package discrete
