package ssr

import (
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/nn"
)

// batchStates draws n trajectories with uniformly random valid actions and
// returns their distinct non-terminal states: the rows a TB step runs.
func batchStates(env discrete.Env, n int, rng *rand.Rand) ([]int32, int) {
	w, na := env.StateLen(), env.NumActions()
	var all []int32
	mask := make([]bool, na)
	s := make([]int32, w)
	for range n {
		env.Init(s)
		for {
			all = append(all, s...)
			env.ForwardMask(s, mask)
			var valid []int
			for a, ok := range mask {
				if ok {
					valid = append(valid, a)
				}
			}
			if env.Step(s, valid[rng.IntN(len(valid))]) {
				break
			}
		}
	}
	var g discrete.Groups
	ids := make([]int32, len(all)/w)
	rep := g.Assign(all, len(all)/w, w, ids)
	var out []int32
	for _, r := range rep {
		out = append(out, all[int(r)*w:int(r+1)*w]...)
	}
	return out, len(rep)
}

// flops counts the floating-point operations of one Forward and Backward
// of the last pass (a product of m×k by k×n is 2mkn), with M = W_e2·W_bottom
// already cached, as it is for a training step's pass (the sampling pass
// before it recomputed M; that costs 2H²E more).
func (m *Model) flops() float64 {
	H, E := float64(m.Hidden()), float64(m.Embed())
	U, P, Ed := float64(m.pc.Rows), float64(m.ps.Rows), float64(len(m.edges.row))
	// Forward products: embeddings (of the parents only when folded), P_s,
	// P_c, the edges' output layer; Backward: two products per forward
	// one, plus the fold's dW_e2 and dW_bottom from dM.
	var macs float64
	if m.fold {
		macs = 3*(P*H*E+P*E*H+U*H*H+Ed*H) + 2*H*H*E
	} else {
		macs = 3 * (U*H*E + P*E*H + U*E*H + Ed*H)
	}
	return 2 * macs
}

// BenchmarkForwardBackward times a Forward and a Backward on the distinct
// states of 32 random trajectories: the sEHstr shape (A=18, n=6, H=E=1024)
// and the L14-RNA1 shape (A=4, n=14, H=E=128).
func BenchmarkForwardBackward(b *testing.B) {
	for _, c := range []struct {
		name         string
		a, n, h, e   int
		trajectories int
		unfolded     bool // P_c = z·W_bottom, to measure what the fold saves
	}{
		{"sEHstr-A18-n6-H1024", 18, 6, 1024, 1024, 32, false},
		{"sEHstr-A18-n6-H1024-unfolded", 18, 6, 1024, 1024, 32, true},
		{"RNA-A4-n14-H128", 4, 14, 128, 128, 32, false},
		{"RNA-A4-n14-H128-unfolded", 4, 14, 128, 128, 32, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			env := seqEnv(b, c.a, c.n, false, nil)
			rng := rand.New(rand.NewPCG(1, 2))
			m := New(env, env, "", c.h, c.e, rng)
			m.fold = m.fold && !c.unfolded
			states, rows := batchStates(env, c.trajectories, rng)
			dl := nn.NewMatrix(rows, env.NumActions())
			for i := range dl.Data {
				dl.Data[i] = float32(rng.NormFloat64())
			}
			m.Forward(states, rows)
			m.Backward(dl)
			b.ResetTimer()
			for b.Loop() {
				m.Forward(states, rows)
				m.Backward(dl)
			}
			b.ReportMetric(m.flops()*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(float64(rows), "states")
			b.ReportMetric(float64(m.pc.Rows), "nodes")
			b.ReportMetric(float64(len(m.edges.row)), "edges")
		})
	}
}
