package diffusion

import (
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/timenet"
)

// TestForwardAllocations: sampling a batch too small to split across
// cores allocates nothing once its buffers have grown (forRows's closures
// are made on the parallel path only).
func TestForwardAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count")
	}
	proc := Process{Dim: 2, Steps: 10, Sigma2: 5}
	net := pisNet(t, timenet.Config{Arch: timenet.PIS, Hidden: 16}, 2, 1, 3)
	var s sampler
	var b batch
	rng := rand.New(rand.NewPCG(1, 1))
	f := func() { s.Forward(proc, net, 32, sampleOptions{}, rng, &b) }
	f()
	if a := testing.AllocsPerRun(5, f); a != 0 {
		t.Errorf("%v allocations per Forward", a)
	}
}
