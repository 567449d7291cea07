package replay_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gfngo/gfn/replay"
)

// TestStateRoundTrip fills buffers past their capacity, restores them
// from their tensors into fresh ones, and demands identical draws.
func TestStateRoundTrip(t *testing.T) {
	for _, passes := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(1, 2))
		b, _ := replay.New[float32](20, 3, replay.Reward)
		b.Passes = passes
		for i := range 50 {
			b.Append([]float32{float32(i), rng.Float32(), -1}, rng.NormFloat64(), rng.Float64())
			if i == 40 {
				b.Sample(4, rand.New(rand.NewPCG(3, 4)), nil, nil) // a pass in progress
			}
		}
		c, _ := replay.New[float32](20, 3, replay.Reward)
		c.Passes = passes
		if err := c.Restore("buffer.", b.Tensors("buffer.")); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			b.Append([]float32{9, 9, 9}, 1, 1) // the same further history
			c.Append([]float32{9, 9, 9}, 1, 1)
			x1, l1 := b.Sample(7, rand.New(rand.NewPCG(5, 6)), nil, nil)
			x2, l2 := c.Sample(7, rand.New(rand.NewPCG(5, 6)), nil, nil)
			if !reflect.DeepEqual(x1, x2) || !reflect.DeepEqual(l1, l2) {
				t.Fatalf("passes %v: restored buffer draws %v %v, the original %v %v", passes, x2, l2, x1, l1)
			}
		}
		if !reflect.DeepEqual(b.Tensors("p."), c.Tensors("p.")) {
			t.Errorf("passes %v: the restored buffer's tensors differ", passes)
		}
	}
	k, _ := replay.NewKeyed[int32](5, 2)
	for i := range 9 {
		k.Set(uint64(i%7), []int32{int32(i), 1}, float64(i), float64(-i))
	}
	k2, _ := replay.NewKeyed[int32](5, 2)
	if err := k2.Restore("seen.", k.Tensors("seen.")); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(k.Tensors("x."), k2.Tensors("x.")) {
		t.Error("the restored keyed buffer differs")
	}
	// A truncated tensor is refused with its name.
	ts := k.Tensors("seen.")
	ts[1].Data = ts[1].Data[:4]
	ts[1].Shape = []int{1}
	k3, _ := replay.NewKeyed[int32](5, 2)
	if err := k3.Restore("seen.", ts); err == nil {
		t.Error("no error for a truncated x")
	}
}
