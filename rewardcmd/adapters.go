package rewardcmd

import (
	"fmt"
	"math"
	"strings"
)

// SeqTask adapts a client of kind Sequence to seqtrain.Task (Length,
// Alphabet, LogReward).
type SeqTask struct{ C *Client }

// Length is the number of tokens of a sequence.
func (t SeqTask) Length() int { return t.C.shape.Length }

// Alphabet returns the tokens (a copy).
func (t SeqTask) Alphabet() []string { return append([]string(nil), t.C.shape.Alphabet...) }

// LogReward scores n sequences of token indices (rows of Length): one
// batch of the protocol.
func (t SeqTask) LogReward(xs []int32, n int, out []float64) error { return t.C.Sequences(xs, n, out) }

// String names the program and the shape: "reward-cmd(CMD, length 10 over ACGT)".
func (t SeqTask) String() string {
	return fmt.Sprintf("reward-cmd(%s, length %d over %s)", t.C.command, t.C.shape.Length, strings.Join(t.C.shape.Alphabet, ""))
}

// Energy adapts a client of kind Points to energy.Energy (Dim,
// LogReward). It has no gradient, exact sampler or log Z.
//
// energy.Energy's LogReward returns an error only for mis-sized slices; a
// failure of the program therefore fills out with NaN and returns nil.
// The trainers stop on a non-finite log-reward (package diffusion after
// writing a checkpoint), and Err tells why.
type Energy struct{ C *Client }

// Dim is the dimension of the points.
func (e Energy) Dim() int { return e.C.shape.Dim }

// LogReward scores the rows of x into out: one batch of the protocol. A
// failure of the program leaves NaN in out (see Energy).
func (e Energy) LogReward(x []float32, out []float64) error {
	err := e.C.Points(x, out)
	if err == nil {
		return nil
	}
	if _, ok := err.(*Error); !ok {
		return err // mis-sized arguments
	}
	for i := range out {
		out[i] = math.NaN()
	}
	return nil
}

// Err is the failure that stopped the program, or nil.
func (e Energy) Err() error { return e.C.Err() }

// String names the program and the dimension: "reward-cmd(CMD, d=2)".
func (e Energy) String() string {
	return fmt.Sprintf("reward-cmd(%s, d=%d)", e.C.command, e.C.shape.Dim)
}
