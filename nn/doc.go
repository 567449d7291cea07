// Package nn is a small float32 neural-network core: dense row-major
// matrices, layers with hand-written backward passes, masked log-softmax,
// Adam with parameter groups, gradient-norm clipping, PyTorch-default
// initialisation, and parameter/optimizer serialisation as safetensors.
//
// Layers cache what their backward pass needs during Forward, so a Backward
// call always refers to the most recent Forward of that layer. Every matrix
// product goes through internal/kernel: Gemm in float32, the default, or
// GemmBF16 for layers set to BF16 (Precision; MLP.SetPrecision sets the
// hidden layers), where only the products' operands are rounded to
// bfloat16 and everything stored or accumulated stays float32.
//
// Shapes follow the convention X·W: a Linear layer's weight is stored in×out
// (the transpose of PyTorch's out×in); checkpoints are written in PyTorch's
// layout so that Python code can load them into torch.nn.Linear directly.
package nn
