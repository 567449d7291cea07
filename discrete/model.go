package discrete

import (
	"math/rand/v2"

	"github.com/gfngo/gfn/nn"
)

// Model maps a batch of non-terminal states to forward-action logits.
type Model interface {
	// Forward returns rows×NumActions logits for the rows states in states
	// (owned by the model; valid until the next Forward).
	Forward(states []int32, rows int) *nn.Matrix
	// Backward accumulates parameter gradients given d loss/d logits of
	// the most recent Forward.
	Backward(dlogits *nn.Matrix)
	// Params lists the trainable parameters.
	Params() []*nn.Param
}

// Recorder is a Model that can record the forward passes of a sampling
// run and offer them as one forward pass for training, saving the
// recomputation of activations that are already known.
type Recorder interface {
	Model
	// StartRecording makes the following Forward calls append to a tape.
	StartRecording()
	// StopRecording makes the tape the most recent forward pass and
	// returns its logits (rows in call order) with the pass's generation.
	StopRecording() (*nn.Matrix, uint64)
	// Generation counts forward passes; a recorded pass is still usable
	// for Backward while the generation is unchanged.
	Generation() uint64
	// KeepRows reduces the recorded pass to the given rows, in that order,
	// and returns their outputs. It consumes the recording (the
	// generation moves on), but Backward applies to the kept rows.
	KeepRows(rows []int32) *nn.Matrix
}

// MLPModel is an MLP on one-hot state features. It is a Recorder.
type MLPModel struct {
	Env  Env
	Feat Featurizer
	Net  *nn.MLP
	idx  []int32
	gen  uint64
}

// NewMLPModel builds a LeakyReLU MLP with the given hidden widths on the
// one-hot features feat gives env's states (often env itself, a
// FeaturizedEnv), outputting env.NumActions() logits. Parameter names
// start with prefix.
func NewMLPModel(env Env, feat Featurizer, prefix string, hidden []int, rng *rand.Rand) *MLPModel {
	return NewMLPModelHeads(env, feat, prefix, hidden, 0, rng)
}

// NewMLPModelHeads is NewMLPModel with extra outputs after the logits
// (column NumActions() is the log state flow log F(s) for DB and GAFN).
func NewMLPModelHeads(env Env, feat Featurizer, prefix string, hidden []int, extra int, rng *rand.Rand) *MLPModel {
	sizes := append(append([]int(nil), hidden...), env.NumActions()+extra)
	net := nn.NewOneHotMLP(prefix, feat.FeatureLen(), sizes, nn.LeakyReLU, rng)
	return &MLPModel{Env: env, Feat: feat, Net: net}
}

// Forward encodes the states' one-hot features and returns the network's
// rows×(NumActions+extra) outputs.
func (m *MLPModel) Forward(states []int32, rows int) *nn.Matrix {
	m.gen++
	w, k := m.Env.StateLen(), m.Feat.FeaturesPerState()
	m.idx = growInt32(m.idx, rows*k)
	for r := range rows {
		m.Feat.Features(states[r*w:(r+1)*w], m.idx[r*k:(r+1)*k])
	}
	return m.Net.ForwardIndices(m.idx, k)
}

// Backward accumulates the parameter gradients of the last Forward.
func (m *MLPModel) Backward(dlogits *nn.Matrix) { m.Net.Backward(dlogits) }

// StartRecording makes the following Forward calls append to a tape.
func (m *MLPModel) StartRecording() { m.Net.Record() }

// StopRecording makes the tape the most recent forward pass and returns
// its outputs with the pass's generation.
func (m *MLPModel) StopRecording() (*nn.Matrix, uint64) {
	m.gen++
	return m.Net.EndRecord(), m.gen
}

// Generation counts forward passes (Forward, StopRecording, KeepRows).
func (m *MLPModel) Generation() uint64 { return m.gen }

// KeepRows reduces the recorded pass to the given rows, in that order, and
// returns their outputs.
func (m *MLPModel) KeepRows(rows []int32) *nn.Matrix {
	m.gen++
	m.Net.KeepRows(rows)
	return m.Net.Output()
}

// Params lists the network's trainable parameters.
func (m *MLPModel) Params() []*nn.Param { return m.Net.Params() }

// SetPrecision sets the precision of the network's hidden layers'
// products (nn.MLP.SetPrecision: the one-hot input layer and the output
// layer stay float32). It returns p.Check's error, and then changes
// nothing.
func (m *MLPModel) SetPrecision(p nn.Precision) error { return m.Net.SetPrecision(p) }

// Clone returns a model sharing m's parameters with buffers of its own, for
// sampling from it on several goroutines at once.
func (m *MLPModel) Clone() *MLPModel { return &MLPModel{Env: m.Env, Feat: m.Feat, Net: m.Net.Clone()} }

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n, n+n/4)
	}
	return s[:n]
}

func growBool(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n, n+n/4)
	}
	return s[:n]
}

func growF64(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n, n+n/4)
	}
	return s[:n]
}

// Narrow returns the first cols columns of src: src itself when it has
// exactly cols, else a copy in dst (models with extra heads put them after
// the logits).
func Narrow(dst, src *nn.Matrix, cols int) *nn.Matrix {
	if src.Cols == cols {
		return src
	}
	dst.Resize(src.Rows, cols)
	for r := range src.Rows {
		copy(dst.Row(r), src.Row(r)[:cols])
	}
	return dst
}
