package bench

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/timenet"
)

func TestDiffusionSpeedSmall(t *testing.T) {
	c := DiffusionSpeedCase{"tiny teacher", "25gmm", diffusion.MethodTeacher, false, ""}
	o := DiffusionSpeedOptions{Iterations: 4, Warmup: 2, Batch: 16, Hidden: 16, Steps: 5}
	r, err := DiffusionSpeed(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	if !(r.MedianMs > 0 && r.MeanMs > 0 && r.GFLOPPerIter > 0 && r.GFLOPS > 0) || r.Batch != 16 || r.Hidden != 16 || r.Steps != 5 {
		t.Errorf("%+v", r)
	}
	// A Teacher iteration does at least the Student's sampling pass and
	// its training pass (forward and backward) over the batch.
	n := newFlopCounter(timenet.Config{Hidden: 16}, 2, 4)
	least := 2 * (2*n.perRow*16*5 + 2*n.perRow*16*5) / 1e9
	if r.GFLOPPerIter < least {
		t.Errorf("%.3g GFLOP per iteration, below the %.3g of one sampling and one training pass", r.GFLOPPerIter, least)
	}
	var buf bytes.Buffer
	WriteDiffusionSpeedTable(&buf, []DiffusionSpeedResult{r})
	if !strings.Contains(buf.String(), "| tiny teacher | 16 × 5, 16 |") || !strings.Contains(buf.String(), "kernels") {
		t.Errorf("table:\n%s", buf.String())
	}
	// In the steady state the Teacher trains, forward and backward, on
	// every state of every Student batch, as the Student does (its forward
	// pass perhaps the sampling pass's): two such passes at least. A fresh
	// run's threshold lets only part of the states through to the Teacher.
	c.Steady = true
	st, err := DiffusionSpeed(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	if most := 2 * 2 * (3 * n.perRow * 16 * 5) / 1e9; !(st.GFLOPPerIter >= most) || !(st.GFLOPPerIter > r.GFLOPPerIter) {
		t.Errorf("steady state: %.4g GFLOP per iteration, want at least %.4g and more than a fresh run's %.4g", st.GFLOPPerIter, most, r.GFLOPPerIter)
	}
	c.Steady = false
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := DiffusionSpeed(ctx, c, o); err == nil {
		t.Error("cancelled context did not stop DiffusionSpeed")
	}
}

// The reference network's multiply-adds per row and per step, as the
// brief of the speed rows gives them for d = 2, h = 256.
func TestFlopCounterShapes(t *testing.T) {
	n := newFlopCounter(timenet.Config{}, 2, 4)
	if want := float64(2*256 + 3*256*256 + 256*4); n.perRow != want {
		t.Errorf("per row %v, want %v", n.perRow, want)
	}
	if want := float64(512*256 + 2*256*256); n.perBlock != want {
		t.Errorf("per block %v, want %v", n.perBlock, want)
	}
	n.fwdRows.Add(10)
	n.fwdBlock.Add(1)
	n.bwdRows.Add(10)
	n.bwdBlock.Add(1)
	if got, want := n.flops(), 2*3*(10*n.perRow+n.perBlock); math.Abs(got-want) > 1e-6*want {
		t.Errorf("flops %v, want %v", got, want)
	}
}
