package timenet

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/safetensors"
)

// onEveryBackend runs f once per kernel backend this machine has.
func onEveryBackend(t *testing.T, f func(t *testing.T)) {
	for _, be := range kernel.Available() {
		t.Run(string(be), func(t *testing.T) {
			prev := kernel.Use(be)
			defer kernel.Use(prev)
			f(t)
		})
	}
}

// testCase is a small network with blocks of rows at distinct times.
type testCase struct {
	name string
	cfg  Config
	dim  int
}

var testCases = []testCase{
	{"reference", Config{Hidden: 16, Harmonics: 5}, 3},
	// Unequal embedding widths and a third joint layer: the weight split
	// of the first joint layer and the layer naming are exercised.
	{"reference-widths", Config{Hidden: 16, Harmonics: 4, StateEmb: 12, TimeEmb: 7, JointLayers: 3}, 2},
	{"pis", Config{Arch: PIS, Hidden: 16, Harmonics: 6}, 3},
	{"pis-1layer", Config{Arch: PIS, Hidden: 12, Harmonics: 5, JointLayers: 1}, 2},
}

// fullSize are the networks of the reference code (width 256) and of the
// paper (PIS, width 64 for 25GMM and 256 for Manywell), whose products
// take the vectorised kernels' main paths.
var fullSize = []testCase{
	{"reference-default", Config{}, 2},
	{"pis-64", Config{Arch: PIS, Hidden: 64}, 2},
	{"pis-256", Config{Arch: PIS, Hidden: 256}, 32},
}

// times are the block times of the tests: the first and last steps of
// T = 100 and two in between.
var times = []float32{0, 0.13, 0.5, 0.99}

func mustNew(t testing.TB, cfg Config, dim int, seed uint64) Net {
	t.Helper()
	n, err := New(cfg, dim, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// outputLayer returns the last two parameters (the zero-initialised layer).
func outputLayer(n Net) (w, b *nn.Param) {
	ps := n.Params()
	return ps[len(ps)-2], ps[len(ps)-1]
}

// randomizeOutput gives the output layer U(±1/√in) values so that
// gradients reach every parameter.
func randomizeOutput(n Net, rng *rand.Rand) {
	w, b := outputLayer(n)
	bound := 1 / math.Sqrt(float64(w.Shape[0]))
	for _, p := range []*nn.Param{w, b} {
		for i := range p.Value {
			p.Value[i] = float32((2*rng.Float64() - 1) * bound)
		}
	}
}

func randomMatrix(rng *rand.Rand, rows, cols int, scale float64) *nn.Matrix {
	m := nn.NewMatrix(rows, cols)
	for i := range m.Data {
		m.Data[i] = float32(scale * rng.NormFloat64())
	}
	return m
}

func randomCoef(rng *rand.Rand, n int) []float32 {
	c := make([]float32, n)
	for i := range c {
		c[i] = float32(rng.NormFloat64())
	}
	return c
}

// weightedSum is the test loss L = Σ c_ij·y_ij, whose gradient dL/dy = c.
func weightedSum(y *nn.Matrix, c []float32) float64 {
	var s float64
	for i, v := range y.Data {
		s += float64(v) * float64(c[i])
	}
	return s
}

// naive is an independent float64 implementation written from the
// reference code's structure: every row gets its own copy of the time
// features and time embedding (the broadcast), the reference network's
// joint input is the explicit concatenation [e_s, e_t], and PIS forms
// e_s + e_t explicitly. Parameters are read by name from vals (stored
// layout, weights in×out).
type naive struct {
	cfg  Config
	dim  int
	vals map[string][]float64
}

func newNaive(n Net) *naive {
	var cfg Config
	var dim int
	switch n := n.(type) {
	case *mlp:
		cfg, dim = n.cfg, n.dim
	case *pis:
		cfg, dim = n.cfg, n.dim
	}
	v := &naive{cfg: cfg, dim: dim, vals: map[string][]float64{}}
	for _, p := range n.Params() {
		f := make([]float64, p.Len())
		for i, x := range p.Value {
			f[i] = float64(x)
		}
		v.vals[p.Name] = f
	}
	return v
}

func gelu(v float64) float64 { return v * 0.5 * math.Erfc(-v/math.Sqrt2) }

// affine returns act(x·W + b) for the layer named prefix.
func (v *naive) affine(prefix string, x []float64, act bool) []float64 {
	w, b := v.vals[prefix+".weight"], v.vals[prefix+".bias"]
	out := len(b)
	if len(w) != len(x)*out {
		panic(fmt.Sprintf("naive: %s has %d weights for %d inputs and %d outputs", prefix, len(w), len(x), out))
	}
	y := make([]float64, out)
	for j := range y {
		s := b[j]
		for i, xi := range x {
			s += xi * w[i*out+j]
		}
		if act {
			s = gelu(s)
		}
		y[j] = s
	}
	return y
}

// row evaluates the network on one state at time t.
func (v *naive) row(x []float64, t float64) []float64 {
	H := v.cfg.Harmonics
	feat := make([]float64, 2*H)
	for k := range H {
		var a float64
		if v.cfg.Arch == PIS {
			a = t*(0.1+99.9*float64(k)/float64(H-1)) + v.vals["t_model.timestep_phase"][k]
		} else {
			a = t * 2 * math.Pi * float64(k+1)
		}
		feat[k], feat[H+k] = math.Sin(a), math.Cos(a)
	}
	var z []float64
	if v.cfg.Arch == PIS {
		et := v.affine("t_model.t_model.2", v.affine("t_model.t_model.0", feat, true), false)
		es := v.affine("s_model.x_model", x, false)
		z = make([]float64, len(es))
		for j := range z {
			z[j] = gelu(es[j] + et[j])
		}
		for l := 1; l <= v.cfg.JointLayers; l++ {
			z = v.affine(fmt.Sprintf("joint_model.model.%d.0", l), z, true)
		}
		return v.affine(fmt.Sprintf("joint_model.model.%d", v.cfg.JointLayers+1), z, false)
	}
	et := v.affine("t_model.t_model.2", v.affine("t_model.t_model.0", feat, true), true)
	es := v.affine("s_model.x_model.2", v.affine("s_model.x_model.0", x, true), true)
	z = append(slices.Clone(es), et...)
	for l := 0; l < v.cfg.JointLayers; l++ {
		z = v.affine(fmt.Sprintf("joint_model.model.%d", 2*l), z, true)
	}
	return v.affine(fmt.Sprintf("joint_model.model.%d", 2*v.cfg.JointLayers), z, false)
}

// forward evaluates every row of x, row r at the time of its block.
func (v *naive) forward(x *nn.Matrix, t []float32) [][]float64 {
	block := x.Rows / len(t)
	out := make([][]float64, x.Rows)
	for r := range x.Rows {
		xr := make([]float64, x.Cols)
		for j, e := range x.Row(r) {
			xr[j] = float64(e)
		}
		out[r] = v.row(xr, float64(t[r/block]))
	}
	return out
}

func (v *naive) loss(x *nn.Matrix, t []float32, c []float32) float64 {
	var s float64
	for r, y := range v.forward(x, t) {
		for j, e := range y {
			s += e * float64(c[r*len(y)+j])
		}
	}
	return s
}

// setup returns a network with a random output layer, inputs with
// len(times) blocks of 5 rows, and loss coefficients.
func setup(t *testing.T, tc testCase) (Net, *nn.Matrix, []float32) {
	n := mustNew(t, tc.cfg, tc.dim, 7)
	rng := rand.New(rand.NewPCG(8, 9))
	randomizeOutput(n, rng)
	x := randomMatrix(rng, 5*len(times), tc.dim, 2)
	c := randomCoef(rng, x.Rows*2*tc.dim)
	return n, x, c
}

// The per-block bias computation equals the explicit concatenation and
// broadcast, evaluated in float64: on the small test networks, and on the
// full-size ones, whose matrix products take the vectorised kernels' main
// paths.
func TestForwardMatchesNaive(t *testing.T) { onEveryBackend(t, testForwardMatchesNaive) }

func testForwardMatchesNaive(t *testing.T) {
	for _, tc := range slices.Concat(testCases, fullSize) {
		n, x, _ := setup(t, tc)
		y := n.Forward(x, times)
		want := newNaive(n).forward(x, times)
		var worst float64
		for r := range y.Rows {
			for j, w := range want[r] {
				worst = max(worst, math.Abs(float64(y.At(r, j))-w)/(1+math.Abs(w)))
			}
		}
		t.Logf("%s: largest relative difference %.3g", tc.name, worst)
		// float32 arithmetic: a few units of 6e-8 per operation (measured:
		// ≤ 6e-8 on the small networks, 2.4e-7 on the full-size ones), and
		// the float32 rounding of the Fourier arguments t·ω, which torch
		// shares (up to 2π·256 for the default network: 1e-4 absolute in a
		// feature, damped by the layers that mix them).
		tol := 1e-6
		if tc.cfg.Hidden == 0 || tc.cfg.Hidden > 16 {
			tol = 1e-5
		}
		if worst > tol {
			t.Errorf("%s: output differs from the float64 reference by %.3g (relative), want ≤ %g", tc.name, worst, tol)
		}
	}
}

// Gradients of every parameter against central finite differences, twice:
// of the float32 Forward itself (as package nn checks its layers: step
// 1e-3, tolerance 2e-2·(1+|fd|), because the float32 loss carries noise
// of about 1e-6 that the difference quotient amplifies by 1/(2h)), and of
// the float64 naive network (step 1e-5: the quotient is exact to about
// 1e-9, so the tolerance, 2e-5 of the parameter's gradient scale, only
// allows for the float32 arithmetic of Backward). With -v the test logs
// the largest error as a fraction of each tolerance.
func TestGradients(t *testing.T) { onEveryBackend(t, testGradients) }

func testGradients(t *testing.T) {
	for _, tc := range testCases {
		n, x, c := setup(t, tc)
		ps := n.Params()
		nn.ZeroGrad(ps)
		n.Forward(x, times)
		dy := &nn.Matrix{Rows: x.Rows, Cols: 2 * tc.dim, Data: slices.Clone(c)}
		n.Backward(dy)
		loss32 := func() float64 { return weightedSum(n.Forward(x, times), c) }
		ref := newNaive(n)
		rng := rand.New(rand.NewPCG(10, 11))
		var worst32, worst64 float64 // largest error as a fraction of the tolerance
		for _, p := range ps {
			var scale float64 // RMS of the analytic gradient
			for _, g := range p.Grad {
				scale += float64(g) * float64(g)
			}
			scale = math.Sqrt(scale / float64(p.Len()))
			if scale == 0 {
				t.Errorf("%s: %s has a zero gradient", tc.name, p.Name)
				continue
			}
			// Every entry of small parameters, a sample of larger ones.
			idx := rng.Perm(p.Len())[:min(p.Len(), 24)]
			for _, i := range idx {
				got := float64(p.Grad[i])
				const h32 = 1e-3
				old := p.Value[i]
				p.Value[i] = old + h32
				lp := loss32()
				p.Value[i] = old - h32
				lm := loss32()
				p.Value[i] = old
				fd := (lp - lm) / (2 * h32)
				worst32 = max(worst32, math.Abs(fd-got)/(2e-2*(1+math.Abs(fd))))
				if math.Abs(fd-got) > 2e-2*(1+math.Abs(fd)) {
					t.Errorf("%s: %s[%d]: analytic %.6g, float32 finite difference %.6g", tc.name, p.Name, i, got, fd)
				}
				const h64 = 1e-5
				v := ref.vals[p.Name]
				o := v[i]
				v[i] = o + h64
				lp = ref.loss(x, times, c)
				v[i] = o - h64
				lm = ref.loss(x, times, c)
				v[i] = o
				fd = (lp - lm) / (2 * h64)
				worst64 = max(worst64, math.Abs(fd-got)/(2e-5*(scale+math.Abs(fd))))
				if math.Abs(fd-got) > 2e-5*(scale+math.Abs(fd)) {
					t.Errorf("%s: %s[%d]: analytic %.8g, float64 finite difference %.8g (gradient scale %.3g)", tc.name, p.Name, i, got, fd, scale)
				}
			}
		}
		t.Logf("%s: largest error / tolerance: %.3g (float32 loss), %.3g (float64 loss)", tc.name, worst32, worst64)
	}
}

// Rows are independent: one block of n rows equals the same rows split
// into blocks with equal times, bit for bit (package kernel computes a row
// of X·W the same way whatever the other rows), and the parameter
// gradients agree up to the order of summation.
func TestBlocksAreIndependent(t *testing.T) { onEveryBackend(t, testBlocksAreIndependent) }

func testBlocksAreIndependent(t *testing.T) {
	for _, tc := range slices.Concat(testCases, fullSize) {
		n, x, c := setup(t, tc)
		const tt = 0.37
		ps := n.Params()
		var ys [][]float32
		var gs [][]float32
		for _, k := range []int{1, 2, 5, x.Rows} {
			ts := make([]float32, k)
			for i := range ts {
				ts[i] = tt
			}
			nn.ZeroGrad(ps)
			ys = append(ys, slices.Clone(n.Forward(x, ts).Data))
			n.Backward(&nn.Matrix{Rows: x.Rows, Cols: 2 * tc.dim, Data: slices.Clone(c)})
			var g []float32
			for _, p := range ps {
				g = append(g, p.Grad...)
			}
			gs = append(gs, g)
		}
		for k := 1; k < len(ys); k++ {
			if !slices.Equal(ys[k], ys[0]) {
				t.Errorf("%s: split %d: outputs differ from one block", tc.name, k)
			}
			for i := range gs[0] {
				if d := math.Abs(float64(gs[k][i] - gs[0][i])); d > 1e-5*(1+math.Abs(float64(gs[0][i]))) {
					t.Errorf("%s: split %d: gradient %d = %v, one block %v", tc.name, k, i, gs[k][i], gs[0][i])
					break
				}
			}
		}
		// A block's rows depend on its own time only: the same rows at other
		// times in other blocks leave them unchanged.
		y1 := slices.Clone(n.Forward(x, []float32{0.5}).Data)
		block := x.Rows / len(times)
		yk := n.Forward(x, times) // times[2] = 0.5
		if !slices.Equal(yk.Data[2*block*yk.Cols:3*block*yk.Cols], y1[2*block*yk.Cols:3*block*yk.Cols]) {
			t.Errorf("%s: a block's outputs depend on the other blocks' times", tc.name)
		}
	}
}

// A clone computes the same outputs from the shared parameters, with its
// own buffers.
func TestClone(t *testing.T) {
	for _, tc := range testCases {
		n, x, _ := setup(t, tc)
		c := n.Clone()
		want := slices.Clone(n.Forward(x, times).Data)
		got := c.Forward(x, times)
		if !slices.Equal(got.Data, want) {
			t.Fatalf("%s: clone output differs", tc.name)
		}
		if &got.Data[0] == &n.Forward(x, times).Data[0] {
			t.Fatalf("%s: clone shares the output buffer", tc.name)
		}
		for i, p := range n.Params() {
			if c.Params()[i] != p {
				t.Fatalf("%s: clone parameter %s is not shared", tc.name, p.Name)
			}
		}
		// Concurrent forward passes (run with -race) give the serial outputs.
		var wg sync.WaitGroup
		res := make([][]float32, 2)
		for i, m := range []Net{n, c} {
			wg.Go(func() {
				for range 3 {
					res[i] = slices.Clone(m.Forward(x, times).Data)
				}
			})
		}
		wg.Wait()
		if !slices.Equal(res[0], want) || !slices.Equal(res[1], want) {
			t.Fatalf("%s: concurrent outputs differ", tc.name)
		}
		n.Params()[0].Value[0] += 0.5
		a := slices.Clone(n.Forward(x, times).Data)
		if b := c.Forward(x, times).Data; !slices.Equal(a, b) || slices.Equal(a, want) {
			t.Fatalf("%s: a parameter change did not reach both the net and its clone", tc.name)
		}
	}
}

// The untrained network outputs exactly 0 (zero last layer): the sampler
// starts as Brownian motion.
func TestZeroOutputAtInit(t *testing.T) {
	for _, cfg := range []Config{{}, {Arch: PIS, Hidden: 64}} {
		for _, dim := range []int{2, 32} {
			n := mustNew(t, cfg, dim, 3)
			rng := rand.New(rand.NewPCG(4, 4))
			x := randomMatrix(rng, 3*len(times), dim, 5)
			for i, v := range n.Forward(x, times).Data {
				if v != 0 {
					t.Fatalf("%+v d=%d: output %d = %v, want 0", cfg, dim, i, v)
				}
			}
		}
	}
}

// paramShapes lists name and checkpoint (PyTorch) shape of each parameter.
func paramShapes(n Net) []string {
	var s []string
	for _, ts := range nn.ParamTensors("", n.Params()) {
		s = append(s, fmt.Sprintf("%s %v", ts.Name, ts.Shape))
	}
	return s
}

func TestParamNamesAndShapes(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		dim  int
		want []string
	}{
		{Config{}, 2, []string{
			"t_model.t_model.0.weight [256 512]", "t_model.t_model.0.bias [256]",
			"t_model.t_model.2.weight [256 256]", "t_model.t_model.2.bias [256]",
			"s_model.x_model.0.weight [256 2]", "s_model.x_model.0.bias [256]",
			"s_model.x_model.2.weight [256 256]", "s_model.x_model.2.bias [256]",
			"joint_model.model.0.weight [256 512]", "joint_model.model.0.bias [256]",
			"joint_model.model.2.weight [256 256]", "joint_model.model.2.bias [256]",
			"joint_model.model.4.weight [4 256]", "joint_model.model.4.bias [4]",
		}},
		{Config{Arch: PIS, Hidden: 64}, 2, []string{
			"t_model.timestep_phase [1 64]",
			"t_model.t_model.0.weight [64 128]", "t_model.t_model.0.bias [64]",
			"t_model.t_model.2.weight [64 64]", "t_model.t_model.2.bias [64]",
			"s_model.x_model.weight [64 2]", "s_model.x_model.bias [64]",
			"joint_model.model.1.0.weight [64 64]", "joint_model.model.1.0.bias [64]",
			"joint_model.model.2.0.weight [64 64]", "joint_model.model.2.0.bias [64]",
			"joint_model.model.3.weight [4 64]", "joint_model.model.3.bias [4]",
		}},
		{Config{Arch: PIS, Hidden: 256}, 32, []string{
			"t_model.timestep_phase [1 256]",
			"t_model.t_model.0.weight [256 512]", "t_model.t_model.0.bias [256]",
			"t_model.t_model.2.weight [256 256]", "t_model.t_model.2.bias [256]",
			"s_model.x_model.weight [256 32]", "s_model.x_model.bias [256]",
			"joint_model.model.1.0.weight [256 256]", "joint_model.model.1.0.bias [256]",
			"joint_model.model.2.0.weight [256 256]", "joint_model.model.2.0.bias [256]",
			"joint_model.model.3.weight [64 256]", "joint_model.model.3.bias [64]",
		}},
	} {
		got := paramShapes(mustNew(t, tc.cfg, tc.dim, 1))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v d=%d: parameters\n%s\nwant\n%s", tc.cfg, tc.dim, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}

// Initial values: torch.nn.Linear's U(±1/√in) for every layer but the
// last (zero), N(0, 1) for the PIS phase.
func TestInit(t *testing.T) {
	for _, cfg := range []Config{{}, {Arch: PIS, Hidden: 64}} {
		n := mustNew(t, cfg, 2, 5)
		ps := n.Params()
		for i, p := range ps {
			last := i >= len(ps)-2
			var bound float64
			switch {
			case p.Name == "t_model.timestep_phase":
				var m, ss float64
				for _, v := range p.Value {
					m += float64(v)
					ss += float64(v) * float64(v)
				}
				m /= float64(p.Len())
				sd := math.Sqrt(ss/float64(p.Len()) - m*m)
				if math.Abs(m) > 0.4 || math.Abs(sd-1) > 0.3 {
					t.Errorf("%s: mean %.3g, sd %.3g, want N(0,1) draws", p.Name, m, sd)
				}
				continue
			case strings.HasSuffix(p.Name, ".weight"):
				bound = 1 / math.Sqrt(float64(p.Shape[0])) // stored in×out
			default:
				bound = 1 / math.Sqrt(float64(ps[i-1].Shape[0]))
			}
			var maxAbs float64
			for _, v := range p.Value {
				maxAbs = max(maxAbs, math.Abs(float64(v)))
			}
			switch {
			case last && maxAbs != 0:
				t.Errorf("%s: output layer not zero (max |v| = %v)", p.Name, maxAbs)
			case !last && (maxAbs > bound || maxAbs < bound/2):
				t.Errorf("%s: max |v| = %v, want draws from U(±%v)", p.Name, maxAbs, bound)
			}
		}
	}
}

func TestFrequencies(t *testing.T) {
	w := harmonicFreqs(256)
	for k, v := range w {
		if want := 2 * math.Pi * float64(k+1); math.Abs(float64(v)-want) > 1e-6*want {
			t.Fatalf("ω_%d = %v, want 2π·%d", k+1, v, k+1)
		}
	}
	for _, h := range []int{1, 2, 64, 256} {
		w := linspaceFreqs(h)
		if w[0] != float32(0.1) || (h > 1 && w[h-1] != 100) {
			t.Errorf("linspace(0.1, 100, %d) ends at %v and %v", h, w[0], w[h-1])
		}
		for i, v := range w {
			want := 0.1
			if h > 1 {
				want += 99.9 * float64(i) / float64(h-1)
			}
			if math.Abs(float64(v)-want) > 1e-5 {
				t.Errorf("linspace(0.1, 100, %d)[%d] = %v, want %v", h, i, v, want)
			}
		}
	}
}

// A checkpoint written in PyTorch's layout loads into a fresh network and
// reproduces its outputs.
func TestCheckpointRoundTrip(t *testing.T) {
	for _, tc := range testCases {
		n, x, _ := setup(t, tc)
		var buf bytes.Buffer
		if err := safetensors.Write(&buf, nn.ParamTensors("", n.Params()), nil); err != nil {
			t.Fatal(err)
		}
		ts, _, err := safetensors.Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		m := mustNew(t, tc.cfg, tc.dim, 99)
		if err := nn.LoadParams("", m.Params(), ts); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m.Forward(x, times).Data, n.Forward(x, times).Data) {
			t.Errorf("%s: outputs differ after a checkpoint round trip", tc.name)
		}
	}
}

func TestAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	for _, tc := range slices.Concat(testCases, fullSize) {
		n, x, c := setup(t, tc)
		dy := nn.NewMatrix(x.Rows, 2*tc.dim)
		step := func(ts []float32) {
			n.Forward(x, ts)
			copy(dy.Data, c)
			n.Backward(dy)
		}
		for _, ts := range [][]float32{times[:1], times} {
			step(ts) // warm up the buffers
			if a := testing.AllocsPerRun(20, func() { n.Forward(x, ts) }); a != 0 {
				t.Errorf("%s, %d blocks: %v allocations per Forward", tc.name, len(ts), a)
			}
			if a := testing.AllocsPerRun(20, func() { step(ts) }); a != 0 {
				t.Errorf("%s, %d blocks: %v allocations per Forward+Backward", tc.name, len(ts), a)
			}
		}
	}
}

func TestConfigErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		cfg  Config
		dim  int
		want string
	}{
		{Config{Arch: "unet"}, 2, `Arch = "unet"`},
		{Config{Hidden: -1}, 2, "negative size"},
		{Config{JointLayers: -2}, 2, "negative size"},
		{Config{}, 0, "dim = 0"},
		{Config{Arch: PIS, Hidden: 64, StateEmb: 32}, 2, "StateEmb = 32"},
	} {
		_, err := New(tc.cfg, tc.dim, rng)
		if err == nil || !strings.HasPrefix(err.Error(), "timenet: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v d=%d: error %v, want one naming %q", tc.cfg, tc.dim, err, tc.want)
		}
	}
	if _, err := New(Config{}, 2, nil); err == nil {
		t.Error("no error for a nil *rand.Rand")
	}
}

func TestShapePanics(t *testing.T) {
	n := mustNew(t, Config{Hidden: 8}, 2, 1)
	for name, f := range map[string]func(){
		"columns":  func() { n.Forward(nn.NewMatrix(4, 3), []float32{0}) },
		"blocks":   func() { n.Forward(nn.NewMatrix(5, 2), []float32{0, 0.5}) },
		"no times": func() { n.Forward(nn.NewMatrix(4, 2), nil) },
		"gradient": func() { n.Forward(nn.NewMatrix(4, 2), []float32{0}); n.Backward(nn.NewMatrix(4, 2)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
