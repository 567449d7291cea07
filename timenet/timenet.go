package timenet

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/nn"
)

// Architectures accepted by Config.Arch.
const (
	Reference = "reference" // the reference code's default Fourier-feature MLP
	PIS       = "pis"       // the path-integral-sampler network (pis_architectures)
)

// Defaults of the reference code's train.py (hidden_dim, s_emb_dim,
// t_emb_dim and harmonics_dim are all 256; joint_layers is 2).
const (
	DefaultHidden      = 256
	DefaultJointLayers = 2
)

// Config describes a network. The zero value is the reference code's
// default network: Reference, width 256, 256 harmonics, 2 joint layers.
type Config struct {
	// Arch is Reference or PIS; "" means Reference.
	Arch string
	// Hidden is the width h of the hidden layers; 0 means DefaultHidden.
	Hidden int
	// Harmonics is the number H of Fourier frequencies (2H time features);
	// 0 means Hidden, as both reference codes' defaults have it (256 in
	// adaptive-teacher, 64 in gfn-diffusion). gfn-diffusion keeps 64 when
	// its commands widen the network, so the paper's PIS network for
	// Manywell (width 256, "as Sendera et al.") likely had H = 64: set it.
	Harmonics int
	// StateEmb and TimeEmb are the widths S and τ of the state and time
	// embeddings (s_emb_dim, t_emb_dim); 0 means Hidden. PIS adds the two
	// embeddings and feeds them to h-wide layers, so it needs both equal to
	// Hidden.
	StateEmb, TimeEmb int
	// JointLayers is the number L of hidden (GELU) layers of the joint
	// network; 0 means DefaultJointLayers. For PIS it is the reference's
	// joint_layers. The reference code's default network has exactly 2
	// (its JointPolicy ignores joint_layers); other values extend it with
	// h×h layers.
	JointLayers int
	// Out is the width of the output layer; 0 means 2·dim, the drift and
	// the raw log-variance of a policy. A flow network, the learned
	// log-flow log F(x, t) of the diffusion samplers' DB and SubTB, has
	// Out = 1 (gfn-diffusion's FlowModel, there on the policy's shared
	// embeddings, here with its own).
	Out int `json:",omitempty"`
	// Precision is the arithmetic of the hidden layers' products (forward
	// and both backward products; nn.Precision): in Reference, the state
	// branch's second layer (B₂), the first joint layer's state half (C₁ˢ)
	// and the joint layers C₂..C_L; in PIS, the joint layers C₁..C_L.
	// These are the per-row products between two hidden (GELU) layers,
	// nearly all of a pass's multiply-adds. The input layer on x (B₁ or
	// B), which bfloat16 would round to three significant digits, the
	// output layer (C_o: the drift and log-variance, a narrow product), and
	// the time branch with C₁ᵗ (one row per sampling step, where the
	// bfloat16 kernel is slower than float32's) stay float32, as do every
	// weight, gradient, bias and activation. The zero value is nn.FP32;
	// New refuses nn.BF16 on a CPU without the instructions (Check). Not
	// stored with the sizes: a family's configuration holds it
	// (diffusion.Config.Precision).
	Precision nn.Precision `json:"-"`
}

// resolved returns c with its defaults filled in, or an error naming the
// first invalid field.
func (c Config) resolved() (Config, error) {
	if c.Arch == "" {
		c.Arch = Reference
	}
	if c.Arch != Reference && c.Arch != PIS {
		return c, fmt.Errorf("timenet: Arch = %q, want %q or %q", c.Arch, Reference, PIS)
	}
	if c.Hidden < 0 || c.Harmonics < 0 || c.StateEmb < 0 || c.TimeEmb < 0 || c.JointLayers < 0 || c.Out < 0 {
		return c, fmt.Errorf("timenet: negative size in %+v, want sizes ≥ 0 (0 means the default)", c)
	}
	if c.Hidden == 0 {
		c.Hidden = DefaultHidden
	}
	if c.Harmonics == 0 {
		c.Harmonics = c.Hidden
	}
	if c.StateEmb == 0 {
		c.StateEmb = c.Hidden
	}
	if c.TimeEmb == 0 {
		c.TimeEmb = c.Hidden
	}
	if c.JointLayers == 0 {
		c.JointLayers = DefaultJointLayers
	}
	if c.Arch == PIS && (c.StateEmb != c.Hidden || c.TimeEmb != c.Hidden) {
		return c, fmt.Errorf("timenet: PIS with StateEmb = %d, TimeEmb = %d, Hidden = %d: the embeddings are added and fed to Hidden-wide layers, so all three must be equal", c.StateEmb, c.TimeEmb, c.Hidden)
	}
	return c, nil
}

// out is the output width on states of dimension dim (Out, or 2·dim).
func (c Config) out(dim int) int {
	if c.Out > 0 {
		return c.Out
	}
	return 2 * dim
}

// Net is a time-conditioned policy network: for rows x (n×d) it returns
// n×2d outputs, the drift u (first d columns), then the raw log-variance v
// (n×Out outputs if Config.Out is set).
type Net interface {
	// Dim is the state dimension d.
	Dim() int
	// Forward evaluates the network on the rows of x, where consecutive
	// blocks of x.Rows/len(t) rows share the time t[k] (one block per
	// sampling step; several steps can be batched in one call for larger
	// matrix products). x must have Dim() columns and a multiple of len(t)
	// rows, and must stay unchanged until Backward. The returned matrix is
	// owned by the net and valid until its next Forward.
	Forward(x *nn.Matrix, t []float32) *nn.Matrix
	// Backward takes the gradient of a scalar loss with respect to the most
	// recent Forward's output (it may overwrite dy) and adds the parameter
	// gradients to their Grad. No gradient with respect to x is computed.
	Backward(dy *nn.Matrix)
	// BackwardInput is Backward that also sets dx, resized to x.Rows×Dim(),
	// to the gradient of the loss with respect to the most recent Forward's
	// input x (every recorded row after a recording). The parameter
	// gradients are Backward's, bit for bit. Differentiating through a
	// simulated trajectory, whose next state depends on the network's
	// output at the current one, needs it.
	BackwardInput(dy, dx *nn.Matrix)
	// Params lists the trainable parameters in the reference state_dict's
	// order, named as its keys.
	Params() []*nn.Param
	// Clone returns a net that shares the parameters but has its own
	// activation buffers, so that the two can run forward passes
	// concurrently (neither may be trained while the other runs). A
	// Recorder's clone has its own tape, and is not recording.
	Clone() Net
}

// OutputSetter is implemented by the nets New returns. SetOutputs(n) makes
// Forward compute only the first n output columns, leaving the others as
// they are (zeros, or values of earlier passes), and Backward and
// BackwardInput take the gradients of the others as zero without reading
// them. It is for outputs the caller never uses, such as the variance
// columns of a fixed variance at large d, where the output layer is a
// third of the network's work. n = 0 or the full width computes every
// column; SetOutputs panics for other n outside [1, width]. Clones keep
// the setting. The columns in use come out with the same bits as from
// the whole product wherever the product kernels do not choose their
// path by the output width (on the SIMD backends, widths of 16 and more:
// TestSetOutputsBitIdentical).
type OutputSetter interface {
	SetOutputs(n int)
	// Outputs is the number of leading output columns Forward computes.
	Outputs() int
}

// New returns the network cfg describes on states of dimension dim, its
// initial values drawn from rng with the reference code's distributions
// (the draws themselves differ from torch's generator).
func New(cfg Config, dim int, rng *rand.Rand) (Net, error) {
	c, err := cfg.resolved()
	if err != nil {
		return nil, err
	}
	if dim < 1 {
		return nil, fmt.Errorf("timenet: dim = %d, want ≥ 1", dim)
	}
	if rng == nil {
		return nil, errors.New("timenet: nil *rand.Rand, want a source of the initial weights")
	}
	if err := c.Precision.Check(); err != nil {
		return nil, err
	}
	if c.Arch == PIS {
		return newPIS(c, dim, rng), nil
	}
	return newMLP(c, dim, rng), nil
}

// NumParams returns the number of weights (every parameter's values) of
// the network New(cfg, dim, rng) builds, without building it, or New's
// error for an invalid cfg or dim. It is a float64 so that sizes read
// from a corrupt file cannot overflow; readers of checkpoints compare it
// with the values a file holds before allocating a network.
func NumParams(cfg Config, dim int) (float64, error) {
	c, err := cfg.resolved()
	if err != nil {
		return 0, err
	}
	if dim < 1 {
		return 0, fmt.Errorf("timenet: dim = %d, want ≥ 1", dim)
	}
	// A dense layer from a to b has (a+1)·b weights with its bias.
	dense := func(a, b int) float64 { return (float64(a) + 1) * float64(b) }
	h, H, d, o := c.Hidden, c.Harmonics, dim, c.out(dim)
	if c.Arch == PIS {
		return float64(H) + dense(2*H, h) + dense(h, h) + dense(d, h) + float64(c.JointLayers)*dense(h, h) + dense(h, o), nil
	}
	S, tau := c.StateEmb, c.TimeEmb
	return dense(2*H, h) + dense(h, tau) + dense(d, h) + dense(h, S) + dense(S+tau, h) +
		float64(c.JointLayers-1)*dense(h, h) + dense(h, o), nil
}

// checkInput panics unless x has dim columns and rows that split into
// len(t) equal blocks.
func checkInput(x *nn.Matrix, t []float32, dim int) {
	if x.Cols != dim {
		panic(fmt.Sprintf("timenet: x has %d columns, want %d", x.Cols, dim))
	}
	if len(t) == 0 || x.Rows%len(t) != 0 {
		panic(fmt.Sprintf("timenet: %d rows do not split into %d blocks of equal size", x.Rows, len(t)))
	}
}

// checkGrad panics unless dy matches the output y of the last Forward.
func checkGrad(dy, y *nn.Matrix) {
	if dy.Rows != y.Rows || dy.Cols != y.Cols {
		panic(fmt.Sprintf("timenet: output gradient is %d×%d, want %d×%d", dy.Rows, dy.Cols, y.Rows, y.Cols))
	}
}

// harmonicFreqs returns ω_k = 2πk, k = 1..h, rounded as torch computes
// arange(1, h+1).float() * 2 * math.pi in float32.
func harmonicFreqs(h int) []float32 {
	w := make([]float32, h)
	for k := range w {
		w[k] = float32(2*(k+1)) * float32(math.Pi)
	}
	return w
}

// linspaceFreqs returns torch.linspace(0.1, 100, h) in float32: the first
// half counted from the start, the second from the end, as torch's CPU
// kernel does (to within its vectorised path's rounding).
func linspaceFreqs(h int) []float32 {
	const start, end = float32(0.1), float32(100)
	w := make([]float32, h)
	if h == 1 {
		w[0] = start
		return w
	}
	step := (end - start) / float32(h-1)
	for i := range w {
		if i < h/2 {
			w[i] = start + float32(step*float32(i))
		} else {
			w[i] = end - float32(step*float32(h-1-i))
		}
	}
	return w
}

// fourier sets row k of f (len(t) rows of 2·len(omega)) to [sin(a), cos(a)]
// with a_j = t_k·ω_j + ϑ_j (phase may be nil). The argument is rounded to
// float32, as torch computes it; the conversions also keep the compiler
// from fusing it into an FMA.
func fourier(f *nn.Matrix, t, omega, phase []float32) {
	h := len(omega)
	for k, tk := range t {
		row := f.Row(k)
		for j, w := range omega {
			a := float32(tk * w)
			if phase != nil {
				a = float32(a + phase[j])
			}
			s, c := math.Sincos(float64(a))
			row[j], row[h+j] = float32(s), float32(c)
		}
	}
}
