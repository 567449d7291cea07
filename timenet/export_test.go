package timenet

// outBuf is the output layer's storage, for tests of its capacity.
func (n *mlp) outBuf() []float32 { return n.head.out.y.Data }
func (n *pis) outBuf() []float32 { return n.head.out.y.Data }
