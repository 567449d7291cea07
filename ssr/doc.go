// Package ssr is the SSR policy ("state × state → R", a relative edge flow)
// of Shen et al. (2023), used by the adaptive-teacher paper for its
// biochemical sequence tasks, as a discrete.Model for any discrete.Env.
//
// # The policy
//
// A shared encoder maps a state's one-hot features to an embedding,
//
//	z(s) = W_e2·LeakyReLU(W_e0·x(s) + b_e0) + b_e2   (FeatureLen → H → E),
//
// and a scorer maps the pair (state, child) to a score,
//
//	f(s, c) = w2·LeakyReLU(W1·[z(s); z(c)] + b1) + b2   (2E → H → 1),
//
// clipped to [ClipMin, ClipMax] = [-50, 50] (the gradient is zero where the
// clip is active, as with torch.clamp; a NaN score becomes 0 as the
// reference's nan_to_num makes it). The children of s are Step(s, a) for the
// valid actions a of the environment's ForwardMask; environments that
// de-duplicate their children (env/sequence) mark one action per distinct
// child, so
//
//	log P_F(c | s) = f(s, c) − logsumexp_{c' ∈ children(s)} f(s, c')
//
// is the masked log-softmax that discrete.TB and discrete.Sampler apply to
// the model's logits. Forward puts f(s, Step(s, a)) in column a of row s and
// -Inf in the invalid columns, so even an unmasked log-softmax gives P_F.
// Every state is encoded through the environment's Features; a stopped
// (leaf) state has the features of its non-leaf copy, as in the reference.
//
// # Computing it once per distinct state
//
// (Column-vector notation here; the code stores weights in×out and
// computes x·W, so its M is W_e2·W_bottom.) Write W1 = [W_top; W_bottom] by the halves of its input. Then
//
//	W1·[z(s); z(c)] + b1 = (W_top·z(s) + b1) + W_bottom·z(c) = P_s(s) + P_c(c),
//
// an identity of linear algebra, so the split is exact (up to float32
// rounding order). Forward gathers every state of the batch and every child
// of its valid actions, de-duplicates them by their features (equal
// features give equal embeddings: a leaf and its copy, a child that is
// also a state of the batch, children shared by several states), runs the
// encoder once per distinct node, computes P_s once per distinct state and
// P_c once per distinct node with matrix products, and only then goes over
// the edges: h = LeakyReLU(P_s[parent] + P_c[child]), f = w2·h + b2, O(H)
// per edge instead of O(2E·H). Backward scatter-adds the edges' gradients
// into the distinct rows of P_s and P_c and runs the products' and the
// encoder's backward passes once.
//
// Most nodes are children only (with 18 tokens, a state has up to 36
// children), and a child needs P_c alone. When H < 2E, P_c is computed from
// the encoder's hidden layer a(c) directly,
//
//	P_c(c) = W_bottom·(W_e2·a(c) + b_e2) = M·a(c) + c0,   M = W_bottom·W_e2, c0 = W_bottom·b_e2,
//
// again exact by associativity: H² multiply-adds per node instead of 2HE
// (half at H = E), and the backward pass saves as much (gradients of M,
// then of W_e2 and W_bottom through two H×H×E products per pass). At
// H = E = 1024 a training step's pass costs 1.7× fewer operations. M and c0
// are cached with a copy of the parameters they come from and recomputed
// whenever a Forward finds those parameters changed (compared bit for bit).
// Whether to fold is fixed when the model is built, never per batch.
//
// Every product goes through internal/kernel.Gemm, whose rows come out with
// the same bits whatever other rows share the product, so an edge's logit
// does not depend on the rest of the batch: a state alone, among others or
// repeated gets the same bits.
//
// Steady-state Forward and Backward allocate nothing.
package ssr
