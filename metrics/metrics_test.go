package metrics_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/metrics"
	"github.com/gfngo/gfn/nn"
)

// bruteForce sums P_F(τ) over every trajectory by depth-first search.
func bruteForce(g *hypergrid.Grid, m discrete.Model, s []int32, p float64, out []float64) {
	na := g.NumActions()
	mask := make([]bool, na)
	g.ForwardMask(s, mask)
	var logp nn.Matrix
	nn.LogSoftmax(&logp, m.Forward(s, 1), mask)
	lp := append([]float32(nil), logp.Row(0)...)
	for a := range na {
		if !mask[a] {
			continue
		}
		c := append([]int32(nil), s...)
		q := p * math.Exp(float64(lp[a]))
		if g.Step(c, a) {
			out[g.TerminalIndex(c)] += q
		} else {
			bruteForce(g, m, c, q, out)
		}
	}
}

func TestTerminatingMatchesBruteForce(t *testing.T) {
	for _, c := range []struct{ d, h int }{{2, 4}, {3, 3}, {1, 6}} {
		g, _ := hypergrid.New(c.d, c.h, hypergrid.Deceptive)
		m := discrete.NewMLPModel(g, g, "m", []int{16, 16}, rand.New(rand.NewPCG(1, uint64(c.d))))
		exact, err := metrics.Terminating(g, m)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, len(exact))
		s := make([]int32, c.d+1)
		bruteForce(g, m, s, 1, want)
		var sum float64
		for i := range exact {
			sum += exact[i]
			if math.Abs(exact[i]-want[i]) > 1e-12 {
				t.Errorf("d%d H%d terminal %d: DP %v, brute force %v", c.d, c.h, i, exact[i], want[i])
			}
		}
		if math.Abs(sum-1) > 1e-6 {
			t.Errorf("d%d H%d: P_F^T sums to %v", c.d, c.h, sum)
		}
	}
}

func TestTerminatingMatchesSampling(t *testing.T) {
	g, _ := hypergrid.New(2, 6, hypergrid.Deceptive)
	rng := rand.New(rand.NewPCG(4, 4))
	m := discrete.NewMLPModel(g, g, "m", []int{16}, rng)
	exact, _ := metrics.Terminating(g, m)
	var tr discrete.Trajectories
	discrete.NewSampler(g).Forward(m, 100000, discrete.SampleOptions{}, rng, &tr)
	emp, err := metrics.Empirical(g, tr.Final, tr.Len())
	if err != nil {
		t.Fatal(err)
	}
	if d := metrics.Compare(emp, exact); d.TV > 0.02 {
		t.Errorf("TV(empirical, exact) = %v", d.TV)
	}
}

func TestTarget(t *testing.T) {
	g, _ := hypergrid.New(2, 128, hypergrid.Deceptive)
	p, logZ, err := metrics.Target(g)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, v := range p {
		sum += v
	}
	if len(p) != 16383 || math.Abs(sum-1) > 1e-9 {
		t.Errorf("%d states summing to %v", len(p), sum)
	}
	// Z by direct summation.
	x := make([]int32, 3)
	var z float64
	for i := range 16383 {
		g.Terminal(i, x)
		z += g.RewardOf(x)
	}
	if math.Abs(logZ-math.Log(z)) > 1e-9 {
		t.Errorf("log Z = %v, want %v", logZ, math.Log(z))
	}
}

func TestCompare(t *testing.T) {
	d := metrics.Compare([]float64{0.5, 0.5, 0}, []float64{0.25, 0.25, 0.5})
	if math.Abs(d.L1-1.0/3) > 1e-12 || math.Abs(d.TV-0.5) > 1e-12 || !math.IsInf(d.KL, 1) {
		t.Errorf("%+v", d)
	}
	d = metrics.Compare([]float64{0.5, 0.5}, []float64{0.25, 0.75})
	want := 0.25*math.Log(0.5) + 0.75*math.Log(1.5)
	if math.Abs(d.KL-want) > 1e-12 {
		t.Errorf("KL %v, want %v", d.KL, want)
	}
}

func TestTooLarge(t *testing.T) {
	g, _ := hypergrid.New(6, 32, hypergrid.Deceptive)
	if _, _, err := metrics.Target(g); !errors.Is(err, metrics.ErrTooLarge) {
		t.Errorf("Target on d6 H32: %v", err)
	}
	if _, err := metrics.Terminating(g, nil); !errors.Is(err, metrics.ErrTooLarge) {
		t.Errorf("Terminating on d6 H32: %v", err)
	}
}
