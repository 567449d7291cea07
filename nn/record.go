package nn

// Recording lets a sequence of small forward passes (one per sampling step)
// serve later as one large forward pass for Backward, so that training on
// the sampled rows does not recompute activations that are already known.

// tape holds the recorded rows of one MLP.
type tape struct {
	on  bool
	idx []int32 // OneHot input indices
	// spare is the idx buffer handed to the OneHot layer at the previous
	// EndRecord; keeping two means the tape never aliases the caller's or
	// the layer's indices.
	spare []int32
	// keep holds KeepRows's index lists (two, alternating).
	keep    [2][]int32
	keepSel int
	k       int      // indices per row
	x       Matrix   // dense inputs
	outs    []Matrix // per layer outputs: input layer, then Layers
	pres    []Matrix // per layer pre-activations, recorded for GELU layers
}

// preAct returns, for layer i (0 the input layer, then Layers), its
// activation and pre-activation.
func (m *MLP) preAct(i int) (Activation, *Matrix) {
	switch {
	case i > 0:
		l := m.Layers[i-1]
		return l.Act, &l.z
	case m.OneHot != nil:
		return m.OneHot.Act, &m.OneHot.z
	}
	return m.First.Act, &m.First.z
}

// Record starts recording: every following Forward or ForwardIndices
// appends its rows (inputs and every layer's outputs) to a tape.
func (m *MLP) Record() {
	t := &m.tape
	t.on = true
	t.idx, t.k = t.idx[:0], 0
	t.x.Resize(0, 0)
	if len(t.outs) != 1+len(m.Layers) {
		t.outs = make([]Matrix, 1+len(m.Layers))
		t.pres = make([]Matrix, 1+len(m.Layers))
	}
	for i := range t.outs {
		t.outs[i].Resize(0, 0)
		t.pres[i].Resize(0, 0)
	}
}

func appendRows(dst *Matrix, src *Matrix) {
	n := dst.Rows
	if n == 0 {
		dst.Resize(0, src.Cols)
	}
	dst.Data = append(dst.Data[:n*src.Cols], src.Data[:src.Rows*src.Cols]...)
	dst.Rows, dst.Cols = n+src.Rows, src.Cols
}

// record appends the current forward pass to the tape.
func (m *MLP) record(idx []int32, k int, x *Matrix) {
	t := &m.tape
	if m.OneHot != nil {
		t.idx = append(t.idx, idx...)
		t.k = k
		appendRows(&t.outs[0], &m.OneHot.y)
	} else {
		appendRows(&t.x, x)
		appendRows(&t.outs[0], &m.First.y)
	}
	for i, l := range m.Layers {
		appendRows(&t.outs[i+1], &l.y)
	}
	for i := range t.pres {
		if act, z := m.preAct(i); act == GELU {
			appendRows(&t.pres[i], z)
		}
	}
}

// EndRecord stops recording and makes the tape the most recent forward
// pass: Backward then applies to every recorded row, in the order they were
// recorded. It returns the recorded outputs (owned by the MLP).
func (m *MLP) EndRecord() *Matrix {
	t := &m.tape
	t.on = false
	// Swap tape buffers into the layers' caches (no copy); the layers'
	// old buffers become the next tape.
	if m.OneHot != nil {
		m.OneHot.idx, m.OneHot.k = t.idx, t.k
		t.idx, t.spare = t.spare, t.idx
		m.OneHot.y, t.outs[0] = t.outs[0], m.OneHot.y
		if len(m.Layers) > 0 {
			m.Layers[0].x = &m.OneHot.y
		}
	} else {
		m.First.y, t.outs[0] = t.outs[0], m.First.y
		m.tapeX, t.x = t.x, m.tapeX
		m.First.x = &m.tapeX
		if len(m.Layers) > 0 {
			m.Layers[0].x = &m.First.y
		}
	}
	for i, l := range m.Layers {
		l.y, t.outs[i+1] = t.outs[i+1], l.y
		if i+1 < len(m.Layers) {
			m.Layers[i+1].x = &l.y
		}
	}
	for i := range t.pres {
		if act, z := m.preAct(i); act == GELU {
			*z, t.pres[i] = t.pres[i], *z
		}
	}
	return m.Output()
}

// KeepRows reduces the most recent forward pass to the given rows (in that
// order), so that Backward runs on them only. Rows with identical inputs
// have identical activations: training on one representative each, with
// their output gradients summed, gives the same parameter gradients.
func (m *MLP) KeepRows(rows []int32) {
	if identity(rows, m.Output().Rows) {
		return // every row, in order: nothing to move
	}
	t := &m.tape
	if m.OneHot != nil {
		// Alternate between two buffers: the current index list may be
		// the previous KeepRows's, the tape's or the caller's.
		t.keepSel ^= 1
		k, dst := m.OneHot.k, t.keep[t.keepSel][:0]
		for _, r := range rows {
			dst = append(dst, m.OneHot.idx[int(r)*k:int(r+1)*k]...)
		}
		t.keep[t.keepSel] = dst
		m.OneHot.idx = dst
		gatherRows(&m.OneHot.y, rows, &t.x)
	} else {
		// First.x may be the caller's matrix: read it, never swap it.
		src := m.First.x
		t.x.Resize(len(rows), src.Cols)
		for i, r := range rows {
			copy(t.x.Row(i), src.Row(int(r)))
		}
		m.tapeX, t.x = t.x, m.tapeX
		m.First.x = &m.tapeX
		gatherRows(&m.First.y, rows, &t.x)
	}
	for _, l := range m.Layers {
		gatherRows(&l.y, rows, &t.x)
	}
	for i := range 1 + len(m.Layers) {
		if act, z := m.preAct(i); act == GELU {
			gatherRows(z, rows, &t.x)
		}
	}
}

// gatherRows replaces m by its rows (in order), using scratch as the new
// storage and handing m's old storage back in scratch.
func gatherRows(m *Matrix, rows []int32, scratch *Matrix) {
	scratch.Resize(len(rows), m.Cols)
	for i, r := range rows {
		copy(scratch.Row(i), m.Row(int(r)))
	}
	*m, *scratch = *scratch, *m
}

// identity reports whether rows is 0, 1, …, n-1.
func identity(rows []int32, n int) bool {
	if len(rows) != n {
		return false
	}
	for i, r := range rows {
		if int(r) != i {
			return false
		}
	}
	return true
}
