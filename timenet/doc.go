// Package timenet provides the time-conditioned policy networks of
// diffusion samplers over R^d, as in the adaptive-teacher reference code
// (diffusion/models/architectures.py, combined in diffusion/models/gfn.py).
//
// At sampling step i of T (time t = i/T) a network f maps a state x ∈ R^d to
// f(x, t) = (u, v) ∈ R^d × R^d: the drift u and the raw log-variance v. With
// G the exact GELU v·Φ(v), widths h (Hidden), H (Harmonics), S (StateEmb),
// τ (TimeEmb) and L (JointLayers), the two architectures are:
//
// Reference (the code's default, a Fourier-feature MLP):
//
//	φ(t)  = [sin(t·ω), cos(t·ω)] ∈ R^2H,   ω_k = 2πk, k = 1..H
//	e_t   = G(G(φ(t)·A₁ + a₁)·A₂ + a₂)     ∈ R^τ    (t_model)
//	e_s   = G(G(x·B₁ + b₁)·B₂ + b₂)        ∈ R^S    (s_model)
//	z₁    = G([e_s, e_t]·C₁ + c₁) = G(e_s·C₁ˢ + (e_t·C₁ᵗ + c₁))
//	z_l   = G(z_{l-1}·C_l + c_l),  l = 2..L
//	(u,v) = z_L·C_o + c_o                           (joint_model)
//
// PIS (Zhang & Chen's path-integral-sampler network, "pis_architectures"):
//
//	φ(t)  = [sin(t·ω + ϑ), cos(t·ω + ϑ)],  ω = linspace(0.1, 100, H), ϑ learned
//	e_t   = G(φ(t)·A₁ + a₁)·A₂ + a₂        ∈ R^h
//	e_s   = x·B + b                         ∈ R^h
//	z₀    = G(e_s + e_t)
//	z_l   = G(z_{l-1}·C_l + c_l),  l = 1..L
//	(u,v) = z_L·C_o + c_o
//
// What v means is the sampler's business: the reference code ignores it
// (fixed variance) unless learned_variance is set, and then uses the
// log-variance tanh(v)·4 + log σ².
//
// The last layer (C_o, c_o) starts at zero, so an untrained network outputs
// exactly 0: the sampler starts as Brownian motion. Every other weight and
// bias starts as torch.nn.Linear's default, U(±1/√in); ϑ starts N(0, 1).
//
// The time branch depends on t only, so it runs once per sampling step on
// one row, not once per sample. Its contribution enters the batch as a
// per-step bias: e_t·C₁ᵗ + c₁ (reference) or e_t + b (PIS). The concatenated
// or broadcast inputs of the reference code are never formed; in the
// backward pass the step's rows are summed into that bias's gradient, which
// is the gradient of the broadcast. Several steps can be evaluated in one
// Forward (blocks of rows sharing a time), for larger matrix products when
// training on recorded trajectories.
//
// Both architectures are Recorders: the T passes of a sampling run, one per
// step, can be recorded and then serve as the training pass over all T
// steps, bit for bit the same as one Forward on their rows, so that
// on-policy training does not compute those activations again. Each layer
// writes a recorded step's rows where that one pass would put them, in
// storage kept from one recording to the next.
//
// When v is ignored, SetOutputs (OutputSetter) makes a net compute only the
// drift columns of its last layer and treat the others' gradients as zero:
// at d = 1,600 that layer is a third of the network's work.
//
// Backward gives the parameter gradients; BackwardInput also the gradient
// with respect to the input states, which a loss differentiated through
// a simulated trajectory (the path integral sampler's) needs.
//
// Parameters are float32 and named as the reference GFN module's
// state_dict names them (t_model.…, s_model.…, joint_model.…), weights in
// PyTorch's out×in layout in checkpoints (nn.ParamTensors), so that a
// reference checkpoint loads with nn.LoadParams("", net.Params(), tensors).
// The state_dict's other entries (the log Z parameter flow_model, the
// unused langevin_scaling_model and the frequency buffer t_model.pe, a
// fixed function of H) are not part of these networks.
package timenet
