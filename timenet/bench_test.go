package timenet

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gfngo/gfn/nn"
)

// macs counts the multiply-adds of the matrix products of one Forward
// (and, with backward, of the Backward after it) on rows rows in blocks
// blocks. Element-wise work (GELU, sin/cos, biases) is not counted.
func macs(cfg Config, dim, rows, blocks int, backward bool) float64 {
	c, err := cfg.resolved()
	if err != nil {
		panic(err)
	}
	h, H, S, tau, L := c.Hidden, c.Harmonics, c.StateEmb, c.TimeEmb, c.JointLayers
	var perRow, perBlock, inRow, inBlock int
	if c.Arch == PIS {
		perRow = dim*h + L*h*h + h*2*dim
		perBlock = 2*H*h + h*h
		inRow = L*h*h + h*2*dim // input gradients: none for x
		inBlock = h*h + 2*H*h   // down to φ(t), for the phase
	} else {
		perRow = dim*h + h*S + S*h + (L-1)*h*h + h*2*dim
		perBlock = 2*H*h + h*tau + tau*h
		inRow = h*S + S*h + (L-1)*h*h + h*2*dim
		inBlock = h*tau + tau*h
	}
	n := float64(rows*perRow + blocks*perBlock)
	if backward {
		n *= 2 // the weight gradients repeat the forward products
		n += float64(rows*inRow + blocks*inBlock)
	}
	return n
}

// BenchmarkNet times Forward and Forward+Backward for one sampling step
// (500 rows) and for ten steps in one call (5000 rows), on 25GMM (d = 2)
// and Manywell (d = 32), for both architectures at widths 256 (the
// reference code's) and 64 (the paper's PIS network for 25GMM). GFLOP/s
// counts the products' multiply-adds (macs) as two operations each.
func BenchmarkNet(b *testing.B) {
	for _, cfg := range []Config{{}, {Hidden: 64}, {Arch: PIS, Hidden: 64}, {Arch: PIS, Hidden: 256}} {
		arch := cfg.Arch
		if arch == "" {
			arch = Reference
		}
		h := cfg.Hidden
		if h == 0 {
			h = DefaultHidden
		}
		for _, dim := range []int{2, 32} {
			for _, shape := range [][2]int{{500, 1}, {5000, 10}} {
				rows, blocks := shape[0], shape[1]
				for _, backward := range []bool{false, true} {
					pass := "fwd"
					if backward {
						pass = "fwd+bwd"
					}
					name := fmt.Sprintf("%s-h%d/d%d/%dx%d/%s", arch, h, dim, rows, blocks, pass)
					b.Run(name, func(b *testing.B) { benchNet(b, cfg, dim, rows, blocks, backward) })
				}
			}
		}
	}
}

func benchNet(b *testing.B, cfg Config, dim, rows, blocks int, backward bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, err := New(cfg, dim, rng)
	if err != nil {
		b.Fatal(err)
	}
	randomizeOutput(n, rng)
	x := randomMatrix(rng, rows, dim, 1)
	t := make([]float32, blocks)
	for k := range t {
		t[k] = float32(k) / 100
	}
	dy := randomMatrix(rng, rows, 2*dim, 1)
	for b.Loop() {
		n.Forward(x, t)
		if backward {
			n.Backward(dy) // dy's values do not matter for the timing
		}
	}
	b.ReportMetric(2*macs(cfg, dim, rows, blocks, backward)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// The benchmark's count agrees with the shapes of the parameters: the
// forward products of a block of one row are one multiply-add per weight.
func TestMACsCountsEveryWeight(t *testing.T) {
	for _, tc := range slices.Concat(testCases, fullSize) {
		n := mustNew(t, tc.cfg, tc.dim, 1)
		var weights int
		for _, p := range n.Params() {
			if len(p.Shape) == 2 && p.Transposed {
				weights += p.Len()
			}
		}
		if got := macs(tc.cfg, tc.dim, 1, 1, false); got != float64(weights) {
			t.Errorf("%s: %v multiply-adds for one row, %d weights", tc.name, got, weights)
		}
	}
}

// trainCases are a sampler's shapes on 25GMM (d = 2, T = 100 steps): the
// reference network with a batch of 500, the paper's PIS network (width
// 64) with 300.
var trainCases = []struct {
	name string
	cfg  Config
	rows int // per step
}{
	{"reference-h256/d2/500x100", Config{}, 500},
	{"pis-h64/d2/300x100", Config{Arch: PIS, Hidden: 64}, 300},
}

// BenchmarkRecord times an on-policy training step that reuses the sampling
// pass: "sample" is 100 Forwards of one step's rows while recording, then
// EndRecord; "sample+train" adds the Backward over all of them; "backward"
// is that Backward alone. Compare with BenchmarkNoRecord.
func BenchmarkRecord(b *testing.B) { benchTrain(b, true) }

// BenchmarkNoRecord times the same step without recording: "sample" is
// 100 Forwards of one step's rows; "sample+train" adds one Forward over
// all the steps' rows and the Backward; "backward" is that Backward alone.
func BenchmarkNoRecord(b *testing.B) { benchTrain(b, false) }

func benchTrain(b *testing.B, rec bool) {
	const steps, dim = 100, 2
	for _, tc := range trainCases {
		rng := rand.New(rand.NewPCG(1, 2))
		n, err := New(tc.cfg, dim, rng)
		if err != nil {
			b.Fatal(err)
		}
		randomizeOutput(n, rng)
		r := n.(Recorder)
		// Step-major states, as a sampler's batch holds them.
		x := randomMatrix(rng, steps*tc.rows, dim, 1)
		xs := make([]nn.Matrix, steps)
		for i := range xs {
			xs[i] = view(tc.rows, dim, x.Data[i*tc.rows*dim:])
		}
		ts := make([]float32, steps)
		for i := range ts {
			ts[i] = float32(i) / steps
		}
		dy := randomMatrix(rng, steps*tc.rows, 2*dim, 1e-3)
		sample := func() {
			if rec {
				r.Record(x.Rows)
			}
			for i := range steps {
				n.Forward(&xs[i], ts[i:i+1])
			}
			if rec {
				r.EndRecord()
			} else {
				n.Forward(x, ts)
			}
		}
		sample() // allocate the buffers (and fault their pages in)
		n.Backward(dy)
		b.Run(tc.name+"/sample", func(b *testing.B) {
			for b.Loop() {
				if rec {
					r.Record(x.Rows)
				}
				for i := range steps {
					n.Forward(&xs[i], ts[i:i+1])
				}
				if rec {
					r.EndRecord()
				}
			}
		})
		b.Run(tc.name+"/sample+train", func(b *testing.B) {
			for b.Loop() {
				sample()
				n.Backward(dy) // dy's values do not matter for the timing
			}
		})
		b.Run(tc.name+"/backward", func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				sample()
				b.StartTimer()
				n.Backward(dy)
			}
		})
	}
}
