package timenet

import (
	"fmt"

	"github.com/gfngo/gfn/nn"
)

// Recorder is a Net that can record a sequence of forward passes and then
// treat them as one: after
//
//	Record(T·n); Forward(x₀, [t₀]); …; Forward(x_{T−1}, [t_{T−1}]); y := EndRecord()
//
// y and the state Backward works from are, bit for bit, those of one
// Forward([x₀; …; x_{T−1}], [t₀, …, t_{T−1}]). A sampler's steps thus serve
// as the training pass, whose activations are not computed again: package
// kernel computes a row of a product with the same bits whatever the other
// rows are, and every other operation is row-wise.
//
// Both architectures of this package implement Recorder.
type Recorder interface {
	Net
	// Record starts recording: every following Forward writes its rows
	// (all the activations Backward needs) after those of the previous
	// ones, and returns them as usual. The calls must have blocks of one
	// size (rows per time), as one Forward on their concatenation would.
	// rows, when positive, is the number of rows the recording will hold,
	// so that its storage is allocated once, at that size; 0 lets it grow.
	// The storage is kept for the next recording, so that recording a
	// batch of the same size again allocates nothing.
	Record(rows int)
	// EndRecord stops recording and makes the recorded rows, in recording
	// order, the most recent forward pass, as if one Forward had run on
	// their concatenation with the concatenated time lists. It returns that
	// pass's output (owned by the net, valid until its next Forward);
	// Backward then applies to every recorded row. The inputs are copied
	// while recording, so the caller's may change after each Forward.
	// EndRecord panics unless a recording with at least one Forward is on.
	EndRecord() *nn.Matrix
}

// tape is the recording state of a net. The layers' own buffers hold the
// recorded activations: while recording, a Forward writes its rows after
// those of the previous calls, so that nothing is moved when it ends.
type tape struct {
	on           bool
	want         int       // rows the recording will hold (a hint; 0 if unknown)
	rows, blocks int       // rows and blocks recorded so far
	block        int       // rows per block
	x            nn.Matrix // the recorded inputs
}

// start begins a recording of about want rows.
func (r *tape) start(want int) {
	r.on, r.want, r.rows, r.blocks = true, max(want, 0), 0, 0
}

// next returns the row and block offsets at which a Forward on x at times t
// writes its rows, and the input of the pass those rows are part of: x
// itself when not recording, else the recorded inputs, to which it copies
// x (n·d values, against the n·h values of each of the pass's activations:
// the first layer's weight gradient Xᵀ·dY then takes one product over every
// row, summed as one Forward's would be, rather than one per step).
// On the first recorded call, with a hint, the net's buffers get room for
// the rows and blocks expected.
func (r *tape) next(x *nn.Matrix, t []float32, net reserver) (off, boff int, in *nn.Matrix) {
	if !r.on {
		return 0, 0, x
	}
	b := x.Rows / len(t)
	if r.blocks == 0 {
		r.block = b
		if r.want > 0 && b > 0 {
			net.reserve(r.want, (r.want+b-1)/b)
			reserveRows(&r.x, r.want, x.Cols)
		}
	} else if b != r.block {
		panic(fmt.Sprintf("timenet: recorded Forward with blocks of %d rows after blocks of %d: the recording is one pass, whose blocks are of one size", b, r.block))
	}
	off, boff = r.rows, r.blocks
	extend(&r.x, off+x.Rows, x.Cols, off)
	copy(r.x.Data[off*x.Cols:], x.Data[:x.Rows*x.Cols])
	r.rows += x.Rows
	r.blocks += len(t)
	return off, boff, &r.x
}

// stop ends the recording, panicking unless one with a Forward was on.
func (r *tape) stop() {
	if !r.on {
		panic("timenet: EndRecord without Record")
	}
	r.on = false
	if r.blocks == 0 {
		panic("timenet: EndRecord after no Forward: nothing was recorded")
	}
}

// reserver is a net whose buffers can be given room in advance.
type reserver interface {
	// reserve gives the buffers of a pass of rows rows in blocks blocks
	// room, discarding their contents.
	reserve(rows, blocks int)
}

// reserveRows gives m room for rows rows of cols columns. It is called
// before anything is written (the contents are then discarded).
func reserveRows(m *nn.Matrix, rows, cols int) {
	if cap(m.Data) < rows*cols {
		m.Data = make([]float32, 0, rows*cols)
		m.Rows, m.Cols = 0, cols
	}
}
