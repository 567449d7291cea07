package ssr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
)

// ClipMin and ClipMax bound the edge scores (the reference's
// clip_policy_logit_min and _max).
const (
	ClipMin = -50
	ClipMax = 50
)

// slope is the negative slope of the LeakyReLU layers (PyTorch's default).
const slope = 0.01

// chunkEdges is the number of edges whose hidden rows are materialised at
// once: 64 rows of H = 1024 floats stay in L2.
const chunkEdges = 64

// Model is the SSR policy, a discrete.Model for any discrete.Env. It is not
// safe for concurrent use; Clone gives a copy with buffers of its own.
type Model struct {
	// Env supplies the children (ForwardMask and Step on a copy).
	Env discrete.Env
	// Feat encodes every parent and child for the encoder.
	Feat discrete.Featurizer
	// Enc is the state encoder, OneHot(FeatureLen → H) with LeakyReLU, then
	// Linear(H → E). Only its parameters and its first layer's passes are
	// used: the model applies the second layer itself.
	Enc *nn.MLP
	// S1 is the scorer's first layer, 2E → H: rows 0..E-1 of its in×out
	// weight multiply the parent's embedding, rows E..2E-1 the child's.
	// Only its parameters are used (the model computes the layer in two
	// halves); its LeakyReLU is applied per edge.
	S1 *nn.Linear
	// S2 is the scorer's output layer, H → 1.
	S2 *nn.Linear
	// Flow, if not nil, is a state-flow head on the state's embedding,
	// log F(s) = z(s)·w_f + b_f (E → 1), written into the logits' extra
	// column NumActions() for objectives that learn state flows (DB,
	// SubTB: discrete.Objective). NewFlow builds a model with one.
	Flow *nn.Linear

	// fold: P_c = a·M + c0 with M = W_e2·W_bottom and c0 = b_e2·W_bottom
	// (H² per node instead of 2HE), chosen once, at construction, when
	// H < 2E, so that a row's bits never depend on the batch.
	fold  bool
	prec  nn.Precision // of the hidden products (SetPrecision)
	fm    foldCache
	edges edgeList
	nodes nodeSet
	a     *nn.Matrix // the encoder's hidden rows (its first layer's output)
	z     nn.Matrix  // embeddings: of the distinct parents (fold), or of every node
	ps    nn.Matrix  // parent halves z·W_top + b1, one row per distinct parent
	pc    nn.Matrix  // child halves z·W_bottom, one row per distinct node
	h     nn.Matrix  // hidden rows of a chunk of edges
	sc    nn.Matrix  // their scores, or their gradients in Backward
	fl    nn.Matrix  // the flow head's output per distinct parent
	out   nn.Matrix  // logits
	dps   nn.Matrix
	dpc   nn.Matrix
	dz    nn.Matrix
	da    nn.Matrix
	dm    nn.Matrix
	dh    []float32 // the gradient of one edge's hidden row
	cs    []float32 // column sums of dpc
	child []int32
	mask  []bool
	done  bool // a Forward has run
}

// foldCache holds M = W_e2·W_bottom and c0 = b_e2·W_bottom with the
// parameter values they were computed from. Parameters change outside the
// model (an optimizer step), so every Forward compares them bit for bit
// (a few ms at H = E = 1024, against H²E multiply-adds to recompute).
type foldCache struct {
	ok             bool
	we2, wbot, be2 []float32 // the snapshot
	m              nn.Matrix // H×H
	c0             []float32 // H
}

// edgeList holds the valid (state, action) pairs of a Forward.
type edgeList struct {
	row, act []int32 // the logit each edge fills
	par, kid []int32 // distinct-node ids of its parent and child
	live     []bool  // the score was not clipped (gradient passes)
}

// nodeSet de-duplicates the states of a Forward by their features.
type nodeSet struct {
	feat   []int32 // features of every parent, then of every child
	ids    []int32 // distinct id of each
	groups discrete.Groups
	ufeat  []int32 // features of each distinct node, parents first
	np     int     // distinct parents: ids [0, np)
}

// New returns an SSR policy on env with encoder width hidden, embedding
// width embed and scorer width hidden, all initialised as PyTorch's
// nn.Linear from rng. Parameters are named prefix+"enc.0.weight",
// "enc.0.bias", "enc.2.weight", "enc.2.bias", "scorer.0.weight", …, as
// the reference's two nn.Sequential networks. It panics for widths below 1.
func New(env discrete.Env, feat discrete.Featurizer, prefix string, hidden, embed int, rng *rand.Rand) *Model {
	if hidden < 1 || embed < 1 {
		panic(fmt.Sprintf("ssr: widths hidden=%d embed=%d, want at least 1", hidden, embed))
	}
	return &Model{
		Env:  env,
		Feat: feat,
		Enc:  nn.NewOneHotMLP(prefix+"enc", feat.FeatureLen(), []int{hidden, embed}, nn.LeakyReLU, rng),
		S1:   nn.NewLinear(prefix+"scorer.0", 2*embed, hidden, rng),
		S2:   nn.NewLinear(prefix+"scorer.2", hidden, 1, rng),
		fold: hidden < 2*embed,
	}
}

// NewFlow is New with a state-flow head (Model.Flow) named
// prefix+"flow.weight" and "flow.bias", drawn from rng after the rest:
// Forward's logits then have NumActions()+1 columns.
func NewFlow(env discrete.Env, feat discrete.Featurizer, prefix string, hidden, embed int, rng *rand.Rand) *Model {
	m := New(env, feat, prefix, hidden, embed, rng)
	m.Flow = nn.NewLinear(prefix+"flow", embed, 1, rng)
	return m
}

// Hidden is the width H of the encoder's and the scorer's hidden layers.
func (m *Model) Hidden() int { return m.S1.Out() }

// Embed is the width E of the state embedding.
func (m *Model) Embed() int { return m.S1.In() / 2 }

// Params lists the trainable parameters: the encoder's, then the
// scorer's, then the flow head's if there is one.
func (m *Model) Params() []*nn.Param {
	ps := append(m.Enc.Params(), m.S1.W, m.S1.B, m.S2.W, m.S2.B)
	if m.Flow != nil {
		ps = append(ps, m.Flow.W, m.Flow.B)
	}
	return ps
}

// Clone returns a model that shares m's parameters and has buffers of its
// own, so that the two can run forward passes concurrently (neither may be
// trained while the other runs).
func (m *Model) Clone() *Model {
	c := &Model{
		Env:  m.Env,
		Feat: m.Feat,
		Enc:  m.Enc.Clone(),
		S1:   &nn.Linear{W: m.S1.W, B: m.S1.B, Act: m.S1.Act},
		S2:   &nn.Linear{W: m.S2.W, B: m.S2.B, Act: m.S2.Act},
		fold: m.fold,
		prec: m.prec,
	}
	if m.Flow != nil {
		c.Flow = &nn.Linear{W: m.Flow.W, B: m.Flow.B, Act: m.Flow.Act}
	}
	return c
}

// SetPrecision sets the precision of the model's hidden products, forward
// and backward: the encoder's second layer (z = a·W_e2), the scorer's
// first layer (P_s = z·W_top, and P_c = z·W_bottom or, folded, a·M with
// M = W_e2·W_bottom itself), the products that dominate a step at
// H = E = 1,024. The encoder's one-hot first layer (a gather), the
// scorer's output layer (H → 1, the edge score) and the single-row
// product c0 = b_e2·W_bottom stay float32, as do the weights, gradients,
// biases and activations. It returns p.Check's error, and then changes
// nothing.
func (m *Model) SetPrecision(p nn.Precision) error {
	if err := p.Check(); err != nil {
		return err
	}
	m.prec = p
	m.fm.ok = false // M is a product too
	return nil
}

// Precision returns the precision of the hidden products.
func (m *Model) Precision() nn.Precision { return m.prec }

// gemm is kernel.Gemm in the model's precision (kernel.GemmBF16 for
// nn.BF16).
func (m *Model) gemm(transA, transB bool, rows, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	if m.prec == nn.BF16 {
		kernel.GemmBF16(transA, transB, rows, n, k, a, lda, b, ldb, c, ldc, accumulate)
		return
	}
	kernel.Gemm(transA, transB, rows, n, k, a, lda, b, ldb, c, ldc, accumulate)
}

// Forward returns rows×NumActions logits for the rows states: the clipped
// score of every valid action's child, -Inf for the invalid actions (and
// for every action of a terminal state). The masked log-softmax of a row is
// then log P_F over the state's distinct children. With a flow head, a
// last column holds each state's log F. The matrix is owned by the model
// and valid until the next Forward.
func (m *Model) Forward(states []int32, rows int) *nn.Matrix {
	env := m.Env
	w, na, k := env.StateLen(), env.NumActions(), m.Feat.FeaturesPerState()
	H, E := m.Hidden(), m.Embed()
	if len(states) < rows*w {
		panic(fmt.Sprintf("ssr: Forward of %d rows with %d state words", rows, len(states)))
	}
	m.child = grow(m.child, w)
	m.mask = grow(m.mask, na)
	ns, ed := &m.nodes, &m.edges

	// The nodes: every state as a parent, then every child of a valid
	// action, each given by its features.
	ns.feat = grow(ns.feat, rows*k)
	for r := range rows {
		m.Feat.Features(states[r*w:(r+1)*w], ns.feat[r*k:(r+1)*k])
	}
	ed.row, ed.act = ed.row[:0], ed.act[:0]
	for r := range rows {
		s := states[r*w : (r+1)*w]
		if env.IsTerminal(s) {
			continue
		}
		env.ForwardMask(s, m.mask)
		for a, ok := range m.mask {
			if !ok {
				continue
			}
			copy(m.child, s)
			env.Step(m.child, a)
			n := len(ns.feat)
			ns.feat = slices.Grow(ns.feat, k)[:n+k]
			m.Feat.Features(m.child, ns.feat[n:])
			ed.row = append(ed.row, int32(r))
			ed.act = append(ed.act, int32(a))
		}
	}
	nEdges := len(ed.row)

	// Equal features give equal embeddings: one node per distinct feature
	// row (a leaf and its non-leaf copy are one node). Parents come first,
	// so distinct parents get the ids [0, np).
	total := rows + nEdges
	ns.ids = grow(ns.ids, total)
	rep := ns.groups.Assign(ns.feat, total, k, ns.ids)
	U := len(rep)
	ns.np = 0
	for _, id := range ns.ids[:rows] {
		ns.np = max(ns.np, int(id)+1)
	}
	np := ns.np
	ns.ufeat = grow(ns.ufeat, U*k)
	for u, i := range rep {
		copy(ns.ufeat[u*k:(u+1)*k], ns.feat[int(i)*k:int(i+1)*k])
	}
	ed.par, ed.kid = grow(ed.par, nEdges), grow(ed.kid, nEdges)
	ed.live = grow(ed.live, nEdges)
	for e := range nEdges {
		ed.par[e] = ns.ids[ed.row[e]]
		ed.kid[e] = ns.ids[rows+e]
	}

	// The encoder's hidden rows, then the embeddings and the scorer's first
	// layer in two halves: P_s for the distinct parents, P_c for every node.
	m.a = m.Enc.OneHot.ForwardIndices(ns.ufeat, k)
	we2, be2 := m.Enc.Layers[0].W.Value, m.Enc.Layers[0].B.Value
	w1 := m.S1.W.Value
	nz := U
	if m.fold {
		nz = np // only parents need their embedding
	}
	m.z.Resize(nz, E)
	m.gemm(false, false, nz, E, H, m.a.Data, H, we2, E, m.z.Data, E, false)
	for r := range nz {
		kernel.AddTo(m.z.Row(r), be2)
	}
	m.ps.Resize(np, H)
	m.gemm(false, false, np, H, E, m.z.Data, E, w1[:E*H], H, m.ps.Data, H, false)
	for p := range np {
		kernel.AddTo(m.ps.Row(p), m.S1.B.Value)
	}
	m.pc.Resize(U, H)
	if m.fold {
		m.folded()
		m.gemm(false, false, U, H, H, m.a.Data, H, m.fm.m.Data, H, m.pc.Data, H, false)
		for u := range U {
			kernel.AddTo(m.pc.Row(u), m.fm.c0)
		}
	} else {
		m.gemm(false, false, U, H, E, m.z.Data, E, w1[E*H:], H, m.pc.Data, H, false)
	}

	// Per edge: h = LeakyReLU(P_s + P_c), score = clip(h·w2 + b2).
	cols := na
	if m.Flow != nil {
		cols++
	}
	m.out.Resize(rows, cols)
	negInf := float32(math.Inf(-1))
	for i := range m.out.Data {
		m.out.Data[i] = negInf
	}
	if m.Flow != nil {
		// log F of each distinct parent from its embedding (the first
		// np rows of z), then of each row.
		m.fl.Resize(np, 1)
		kernel.Gemm(false, false, np, 1, E, m.z.Data, E, m.Flow.W.Value, 1, m.fl.Data, 1, false)
		bf := m.Flow.B.Value[0]
		for r := range rows {
			m.out.Data[r*cols+na] = m.fl.Data[ns.ids[r]] + bf
		}
	}
	b2 := m.S2.B.Value[0]
	for e0 := 0; e0 < nEdges; e0 += chunkEdges {
		e1 := min(e0+chunkEdges, nEdges)
		m.hidden(e0, e1)
		m.sc.Resize(e1-e0, 1)
		kernel.Gemm(false, false, e1-e0, 1, H, m.h.Data, H, m.S2.W.Value, 1, m.sc.Data, 1, false)
		for e := e0; e < e1; e++ {
			v := m.sc.Data[e-e0] + b2
			// torch.clamp passes the gradient on [min, max]; the
			// reference then maps NaN to 0 (nan_to_num).
			ed.live[e] = v >= ClipMin && v <= ClipMax
			switch {
			case v < ClipMin:
				v = ClipMin
			case v > ClipMax:
				v = ClipMax
			case v != v:
				v = 0
			}
			m.out.Data[int(ed.row[e])*cols+int(ed.act[e])] = v
		}
	}
	m.done = true
	return &m.out
}

// folded brings M = W_e2·W_bottom and c0 = b_e2·W_bottom up to date.
func (m *Model) folded() {
	H, E := m.Hidden(), m.Embed()
	we2, be2 := m.Enc.Layers[0].W.Value, m.Enc.Layers[0].B.Value
	wbot := m.S1.W.Value[E*H:]
	c := &m.fm
	if c.ok && sameBits(c.we2, we2) && sameBits(c.wbot, wbot) && sameBits(c.be2, be2) {
		return
	}
	c.we2 = append(c.we2[:0], we2...)
	c.wbot = append(c.wbot[:0], wbot...)
	c.be2 = append(c.be2[:0], be2...)
	c.m.Resize(H, H)
	m.gemm(false, false, H, H, E, we2, E, wbot, H, c.m.Data, H, false)
	c.c0 = grow(c.c0, H)
	kernel.Gemm(false, false, 1, H, E, be2, E, wbot, H, c.c0, H, false)
	c.ok = true
}

// sameBits reports whether a and b hold the same bits (so -0 differs from
// +0, and a NaN equals itself).
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i, v := range a {
		if math.Float32bits(v) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// hidden fills m.h with the hidden rows LeakyReLU(P_s + P_c) of edges
// [e0, e1).
func (m *Model) hidden(e0, e1 int) {
	H := m.Hidden()
	m.h.Resize(e1-e0, H)
	for e := e0; e < e1; e++ {
		row := m.h.Row(e - e0)
		copy(row, m.pc.Row(int(m.edges.kid[e])))
		kernel.BiasLeakyReLU(row, m.ps.Row(int(m.edges.par[e])), slope)
	}
}

// Backward accumulates the parameter gradients for d loss/d logits of the
// most recent Forward (entries of invalid actions are ignored). It does not
// modify dlogits, and the parameters must not have changed since the
// Forward.
func (m *Model) Backward(dlogits *nn.Matrix) {
	if !m.done {
		panic("ssr: Backward before any Forward")
	}
	ed, ns := &m.edges, &m.nodes
	na, H, E := m.Env.NumActions(), m.Hidden(), m.Embed()
	if dlogits.Rows != m.out.Rows || dlogits.Cols < m.out.Cols {
		panic(fmt.Sprintf("ssr: Backward of %d×%d gradients for %d×%d logits", dlogits.Rows, dlogits.Cols, m.out.Rows, na))
	}
	np, U := ns.np, m.pc.Rows
	m.dps.Resize(np, H)
	m.dps.Zero()
	m.dpc.Resize(U, H)
	m.dpc.Zero()
	w2, dw2 := m.S2.W.Value, m.S2.W.Grad
	m.dh = grow(m.dh, H)
	var db2 float64
	nEdges := len(ed.row)
	for e0 := 0; e0 < nEdges; e0 += chunkEdges {
		e1 := min(e0+chunkEdges, nEdges)
		m.sc.Resize(e1-e0, 1)
		nonzero := false
		for e := e0; e < e1; e++ {
			var g float32
			if ed.live[e] {
				g = dlogits.Data[int(ed.row[e])*dlogits.Cols+int(ed.act[e])]
			}
			m.sc.Data[e-e0] = g
			db2 += float64(g)
			nonzero = nonzero || g != 0
		}
		if !nonzero {
			continue
		}
		m.hidden(e0, e1)
		// dw2 += hᵀ·g; d pre-activation = g·w2 ⊙ LeakyReLU'(h), added
		// to both halves' nodes.
		kernel.Gemm(true, false, H, 1, e1-e0, m.h.Data, H, m.sc.Data, 1, dw2, 1, true)
		for e := e0; e < e1; e++ {
			g := m.sc.Data[e-e0]
			if g == 0 {
				continue
			}
			copy(m.dh, w2)
			kernel.Scale(m.dh, g)
			kernel.LeakyReLUGrad(m.dh, m.h.Row(e-e0), slope)
			kernel.AddTo(m.dps.Row(int(ed.par[e])), m.dh)
			kernel.AddTo(m.dpc.Row(int(ed.kid[e])), m.dh)
		}
	}
	m.S2.B.Grad[0] += float32(db2)

	// P_s = z·W_top + b1 over the distinct parents.
	enc := m.Enc.Layers[0]
	we2, be2, dwe2, dbe2 := enc.W.Value, enc.B.Value, enc.W.Grad, enc.B.Grad
	w1, dw1 := m.S1.W.Value, m.S1.W.Grad
	kernel.AddRows(m.S1.B.Grad, m.dps.Data)
	m.gemm(true, false, E, H, np, m.z.Data, E, m.dps.Data, H, dw1[:E*H], H, true)
	nz := m.z.Rows
	m.dz.Resize(nz, E)
	m.dz.Zero()
	m.gemm(false, true, np, E, H, m.dps.Data, H, w1[:E*H], H, m.dz.Data, E, true)
	if m.Flow != nil {
		// log F(row r) = z(parent)·w_f + b_f.
		wf, dwf := m.Flow.W.Value, m.Flow.W.Grad
		var dbf float64
		for r := range m.out.Rows {
			g := dlogits.Data[r*dlogits.Cols+na]
			if g == 0 {
				continue
			}
			dbf += float64(g)
			z, dz := m.z.Row(int(ns.ids[r])), m.dz.Row(int(ns.ids[r]))
			for j := range E {
				dwf[j] += g * z[j]
				dz[j] += g * wf[j]
			}
		}
		m.Flow.B.Grad[0] += float32(dbf)
	}
	m.da.Resize(U, H)
	if m.fold {
		// P_c = a·M + c0, M = W_e2·W_bottom, c0 = b_e2·W_bottom.
		m.dm.Resize(H, H)
		m.gemm(true, false, H, H, U, m.a.Data, H, m.dpc.Data, H, m.dm.Data, H, false)
		m.gemm(false, true, U, H, H, m.dpc.Data, H, m.fm.m.Data, H, m.da.Data, H, false)
		m.cs = grow(m.cs, H)
		clear(m.cs)
		kernel.AddRows(m.cs, m.dpc.Data)
		wbot, dwbot := w1[E*H:], dw1[E*H:]
		m.gemm(false, true, H, E, H, m.dm.Data, H, wbot, H, dwe2, E, true)
		m.gemm(true, false, E, H, H, we2, E, m.dm.Data, H, dwbot, H, true)
		kernel.Gemm(false, true, 1, E, H, m.cs, H, wbot, H, dbe2, E, true)
		kernel.Gemm(true, false, E, H, 1, be2, E, m.cs, H, dwbot, H, true)
	} else {
		// P_c = z·W_bottom over every node.
		m.gemm(true, false, E, H, U, m.z.Data, E, m.dpc.Data, H, dw1[E*H:], H, true)
		m.gemm(false, true, U, E, H, m.dpc.Data, H, w1[E*H:], H, m.dz.Data, E, true)
		clear(m.da.Data)
	}
	// z = a·W_e2 + b_e2 over the nz embedded nodes (the first rows).
	kernel.AddRows(dbe2, m.dz.Data)
	m.gemm(true, false, H, E, nz, m.a.Data, H, m.dz.Data, E, dwe2, E, true)
	m.gemm(false, true, nz, H, E, m.dz.Data, E, we2, E, m.da.Data, H, true)
	m.Enc.OneHot.Backward(&m.da)
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}
