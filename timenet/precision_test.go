package timenet

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/internal/cpusim"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
)

func skipWithoutBF16(t *testing.T) {
	t.Helper()
	if !kernel.HasBF16Path() {
		t.Skip("this CPU runs no fast bfloat16 path: BF16 is refused (TestPrecisionRefused)")
	}
}

// withBF16 runs f with every test network in BF16.
func withBF16(f func(t *testing.T)) func(t *testing.T) {
	return func(t *testing.T) {
		skipWithoutBF16(t)
		saved, savedFull := testCases, fullSize
		defer func() { testCases, fullSize = saved, savedFull }()
		testCases, fullSize = slices.Clone(testCases), slices.Clone(fullSize)
		for _, cs := range [][]testCase{testCases, fullSize} {
			for i := range cs {
				cs[i].cfg.Precision = nn.BF16
			}
		}
		f(t)
	}
}

// In BF16 too, rows are independent and a recording equals one pass, bit
// for bit: GemmBF16 computes a row of X·W the same way whatever the other
// rows.
func TestBF16BlocksAreIndependent(t *testing.T) { withBF16(testBlocksAreIndependent)(t) }

func TestBF16RecordMatchesOneForward(t *testing.T) { withBF16(testRecordMatchesOneForward)(t) }

// TestPrecisionLayers: BF16 reaches exactly the products between hidden
// layers (Config.Precision), clones keep it, and FP32 leaves every layer
// in float32.
func TestPrecisionLayers(t *testing.T) {
	skipWithoutBF16(t)
	for _, tc := range testCases {
		for _, p := range []nn.Precision{nn.FP32, nn.BF16} {
			cfg := tc.cfg
			cfg.Precision = p
			n := mustNew(t, cfg, tc.dim, 1)
			for _, net := range []Net{n, n.Clone()} {
				got := map[string]nn.Precision{}
				var hidden []*dense
				switch m := net.(type) {
				case *mlp:
					got["t1"], got["t2"], got["s1"], got["s2"], got["j1"], got["out"] = m.t1.prec, m.t2.prec, m.s1.prec, m.s2.prec, m.j1.prec, m.head.out.prec
					hidden = m.head.hidden
				case *pis:
					got["t1"], got["t2"], got["s"], got["out"] = m.t1.prec, m.t2.prec, m.s.prec, m.head.out.prec
					hidden = m.head.hidden
				}
				for name, q := range got {
					want := nn.FP32
					if name == "s2" || name == "j1" {
						want = p
					}
					if q != want {
						t.Errorf("%s, %v: layer %s runs in %v, want %v", tc.name, p, name, q, want)
					}
				}
				for i, l := range hidden {
					if l.prec != p {
						t.Errorf("%s, %v: hidden joint layer %d runs in %v", tc.name, p, i, l.prec)
					}
				}
			}
		}
	}
}

// TestBF16CloseToFP32: the same weights in BF16 give the float32
// network's outputs and gradients to within bfloat16's rounding (8
// significant bits on each operand of the hidden products).
func TestBF16CloseToFP32(t *testing.T) {
	skipWithoutBF16(t)
	for _, tc := range slices.Concat(testCases, fullSize) {
		n32, x, c := setup(t, tc)
		cfg := tc.cfg
		cfg.Precision = nn.BF16
		n16 := mustNew(t, cfg, tc.dim, 7)
		for i, p := range n16.Params() {
			copy(p.Value, n32.Params()[i].Value)
		}
		var outs [2][]float32
		var gs [2][]float32
		for k, n := range []Net{n32, n16} {
			nn.ZeroGrad(n.Params())
			outs[k] = slices.Clone(n.Forward(x, times).Data)
			n.Backward(&nn.Matrix{Rows: x.Rows, Cols: 2 * tc.dim, Data: slices.Clone(c)})
			gs[k] = grads(n)
		}
		rel := func(a, b []float32) float64 {
			var d, s float64
			for i := range a {
				d += (float64(a[i]) - float64(b[i])) * (float64(a[i]) - float64(b[i]))
				s += float64(a[i]) * float64(a[i])
			}
			return math.Sqrt(d / s)
		}
		ro, rg := rel(outs[0], outs[1]), rel(gs[0], gs[1])
		t.Logf("%s: relative RMS difference bf16 vs fp32: outputs %.3g, gradients %.3g", tc.name, ro, rg)
		// A bfloat16 operand is within 2^-9 of its float32 value: a few
		// times 2^-9 after a handful of layers (measured: 2e-4 to 3.4e-3).
		if !(ro > 0 && ro < 1e-2 && rg > 0 && rg < 1e-2) {
			t.Errorf("%s: bf16 differs from fp32 by %.3g (outputs), %.3g (gradients): want both within (0, 1e-2)", tc.name, ro, rg)
		}
	}
}

// TestPrecisionRefused: without the instructions New refuses BF16 with
// nn's error naming them.
func TestPrecisionRefused(t *testing.T) {
	cpusim.NoBF16.Store(true)
	defer cpusim.NoBF16.Store(false)
	_, err := New(Config{Hidden: 8, Precision: nn.BF16}, 2, rand.New(rand.NewPCG(1, 1)))
	if err == nil || !strings.Contains(err.Error(), "AVX512_BF16") {
		t.Fatalf("New with BF16 on a CPU without it: %v", err)
	}
}
