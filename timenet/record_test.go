package timenet

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/gfngo/gfn/nn"
)

var (
	_ Recorder = (*mlp)(nil)
	_ Recorder = (*pis)(nil)
)

// grads returns a copy of every parameter gradient, concatenated.
func grads(n Net) []float32 {
	var g []float32
	for _, p := range n.Params() {
		g = append(g, p.Grad...)
	}
	return g
}

// stepTimes returns the times i/100 of steps i0, …, i0+k−1.
func stepTimes(i0, k int) []float32 {
	t := make([]float32, k)
	for i := range t {
		t[i] = float32(float64(i0+i) / 100)
	}
	return t
}

// record runs x through r as steps blocks of equal size, per calls of
// perCall steps, recording with the row hint hint, and returns EndRecord's
// output. Each step's rows are overwritten after its Forward (the net
// must have copied them), and each step's output is checked against
// want's rows.
func record(t *testing.T, name string, r Recorder, x *nn.Matrix, steps, perCall, hint int, want []float32) *nn.Matrix {
	t.Helper()
	block := x.Rows / steps
	d := x.Cols
	scratch := slices.Clone(x.Data)
	r.Record(hint)
	for i0 := 0; i0 < steps; i0 += perCall {
		k := min(perCall, steps-i0)
		xi := &nn.Matrix{Rows: k * block, Cols: d, Data: scratch[i0*block*d : (i0+k)*block*d]}
		y := r.Forward(xi, stepTimes(i0, k))
		if w := want[i0*block*y.Cols : (i0+k)*block*y.Cols]; y.Rows != k*block || !slices.Equal(y.Data, w) {
			t.Errorf("%s: recorded steps %d..%d: outputs differ from one pass's rows", name, i0, i0+k-1)
		}
		for j := range xi.Data {
			xi.Data[j] = 1e3 // the recording must not depend on the caller's rows
		}
	}
	return r.EndRecord()
}

// A recorded sequence of passes equals one pass on their concatenation, bit
// for bit: the outputs, and the parameter gradients of the Backward that
// follows. So does a plain Forward after the recording.
func TestRecordMatchesOneForward(t *testing.T) { onEveryBackend(t, testRecordMatchesOneForward) }

func testRecordMatchesOneForward(t *testing.T) {
	for _, tc := range slices.Concat(testCases, fullSize) {
		n := mustNew(t, tc.cfg, tc.dim, 7)
		rng := rand.New(rand.NewPCG(8, 9))
		randomizeOutput(n, rng)
		r := n.(Recorder)
		ps := n.Params()
		shapes := [][2]int{{1, 6}, {3, 5}, {7, 4}, {16, 3}, {33, 2}} // rows per step, steps
		if tc.cfg.Hidden == 0 || tc.cfg.Hidden > 16 {
			shapes = [][2]int{{1, 3}, {5, 4}, {17, 3}}
		}
		for _, sh := range shapes {
			block, steps := sh[0], sh[1]
			x := randomMatrix(rng, block*steps, tc.dim, 2)
			c := randomCoef(rng, x.Rows*2*tc.dim)
			ts := stepTimes(0, steps)
			nn.ZeroGrad(ps)
			want := slices.Clone(n.Forward(x, ts).Data)
			n.Backward(&nn.Matrix{Rows: x.Rows, Cols: 2 * tc.dim, Data: slices.Clone(c)})
			wantG := grads(n)
			// Hints: none, exact, too few and too many rows; one step per
			// call, as a sampler calls, and two.
			for _, hint := range []int{0, x.Rows, x.Rows / 2, 3 * x.Rows} {
				for _, perCall := range []int{1, 2} {
					y := record(t, tc.name, r, x, steps, perCall, hint, want)
					if y.Rows != x.Rows || y.Cols != 2*tc.dim || !slices.Equal(y.Data, want) {
						t.Errorf("%s, %d×%d, hint %d, %d per call: EndRecord's output differs from one pass", tc.name, block, steps, hint, perCall)
					}
					nn.ZeroGrad(ps)
					n.Backward(&nn.Matrix{Rows: x.Rows, Cols: 2 * tc.dim, Data: slices.Clone(c)})
					if !slices.Equal(grads(n), wantG) {
						t.Errorf("%s, %d×%d, hint %d, %d per call: gradients differ from one pass's", tc.name, block, steps, hint, perCall)
					}
				}
			}
			// A plain pass after the recording replaces it.
			small := randomMatrix(rng, 2*block, tc.dim, 2)
			dy := randomCoef(rng, small.Rows*2*tc.dim)
			nn.ZeroGrad(ps)
			y := slices.Clone(n.Forward(small, ts[:2]).Data)
			n.Backward(&nn.Matrix{Rows: small.Rows, Cols: 2 * tc.dim, Data: slices.Clone(dy)})
			g := grads(n)
			fresh := mustNew(t, tc.cfg, tc.dim, 7)
			for i, p := range fresh.Params() {
				copy(p.Value, ps[i].Value)
			}
			if !slices.Equal(fresh.Forward(small, ts[:2]).Data, y) {
				t.Errorf("%s: a Forward after a recording differs from a fresh net's", tc.name)
			}
			fresh.Backward(&nn.Matrix{Rows: small.Rows, Cols: 2 * tc.dim, Data: dy})
			if !slices.Equal(grads(fresh), g) {
				t.Errorf("%s: a Backward after a recording and a Forward differs from a fresh net's", tc.name)
			}
		}
	}
}

// The PIS network of the paper (width 64) and the reference network (width
// 256) on a sampler's shapes: 100 steps, one call each.
func TestRecordSamplerShapes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		block int
	}{{"pis-64", Config{Arch: PIS, Hidden: 64}, 30}, {"reference-default", Config{}, 20}} {
		n := mustNew(t, tc.cfg, 2, 3)
		rng := rand.New(rand.NewPCG(4, 5))
		randomizeOutput(n, rng)
		const steps = 100
		x := randomMatrix(rng, tc.block*steps, 2, 1)
		c := randomCoef(rng, x.Rows*4)
		want := slices.Clone(n.Forward(x, stepTimes(0, steps)).Data)
		n.Backward(&nn.Matrix{Rows: x.Rows, Cols: 4, Data: slices.Clone(c)})
		wantG := grads(n)
		nn.ZeroGrad(n.Params())
		y := record(t, tc.name, n.(Recorder), x, steps, 1, x.Rows, want)
		if !slices.Equal(y.Data, want) {
			t.Errorf("%s: EndRecord's output differs from one pass", tc.name)
		}
		n.Backward(&nn.Matrix{Rows: x.Rows, Cols: 4, Data: c})
		if !slices.Equal(grads(n), wantG) {
			t.Errorf("%s: gradients differ from one pass's", tc.name)
		}
	}
}

// A clone has its own tape: its passes, even concurrent ones, leave the
// original's recording intact, and it is not recording itself.
func TestRecordClone(t *testing.T) {
	for _, tc := range testCases {
		n := mustNew(t, tc.cfg, tc.dim, 7)
		rng := rand.New(rand.NewPCG(8, 9))
		randomizeOutput(n, rng)
		const block, steps = 4, 5
		x := randomMatrix(rng, block*steps, tc.dim, 2)
		ts := stepTimes(0, steps)
		want := slices.Clone(n.Forward(x, ts).Data)
		c := n.Clone()
		r := n.(Recorder)
		r.Record(0)
		var wg sync.WaitGroup
		for i := range steps {
			xi := &nn.Matrix{Rows: block, Cols: tc.dim, Data: x.Data[i*block*tc.dim : (i+1)*block*tc.dim]}
			wg.Go(func() { c.Forward(x, ts) })
			r.Forward(xi, ts[i:i+1])
			wg.Wait()
		}
		if y := r.EndRecord(); !slices.Equal(y.Data, want) {
			t.Errorf("%s: a clone's passes changed the recording", tc.name)
		}
		if y := c.Forward(x, ts); y.Rows != x.Rows || !slices.Equal(y.Data, want) {
			t.Errorf("%s: the clone's pass differs", tc.name)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: the clone's EndRecord did not panic: it inherited the recording", tc.name)
				}
			}()
			c.(Recorder).EndRecord()
		}()
	}
}

// A record/Backward cycle of the same size as the previous one allocates
// nothing, with or without a hint.
func TestRecordAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	for _, tc := range slices.Concat(testCases, fullSize) {
		n := mustNew(t, tc.cfg, tc.dim, 7)
		rng := rand.New(rand.NewPCG(8, 9))
		randomizeOutput(n, rng)
		r := n.(Recorder)
		const block, steps = 7, 10
		x := randomMatrix(rng, block*steps, tc.dim, 1)
		ts := stepTimes(0, steps)
		steps1 := make([]nn.Matrix, steps)
		for i := range steps1 {
			steps1[i] = view(block, tc.dim, x.Data[i*block*tc.dim:])
		}
		dy := nn.NewMatrix(x.Rows, 2*tc.dim)
		for _, hint := range []int{0, x.Rows} {
			cycle := func() {
				r.Record(hint)
				for i := range steps {
					r.Forward(&steps1[i], ts[i:i+1])
				}
				r.EndRecord()
				clear(dy.Data)
				n.Backward(dy)
			}
			cycle() // grow the buffers
			if a := testing.AllocsPerRun(10, cycle); a != 0 {
				t.Errorf("%s, hint %d: %v allocations per record/Backward cycle", tc.name, hint, a)
			}
			// Sampling-sized plain passes in between do not shrink the storage.
			mixed := func() {
				n.Forward(&steps1[0], ts[:1])
				cycle()
			}
			if a := testing.AllocsPerRun(10, mixed); a != 0 {
				t.Errorf("%s, hint %d: %v allocations per Forward and record/Backward cycle", tc.name, hint, a)
			}
		}
	}
}

// With a hint, the first recording allocates its storage once, at the
// size of the pass; without, it grows by doubling.
func TestRecordHintAllocatesOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	const block, steps = 50, 100
	for _, cfg := range []Config{{}, {Arch: PIS, Hidden: 64}} {
		rng := rand.New(rand.NewPCG(8, 9))
		x := randomMatrix(rng, block*steps, 2, 1)
		ts := stepTimes(0, steps)
		run := func(hint int) (uint64, int) {
			n := mustNew(t, cfg, 2, 7)
			r := n.(Recorder)
			xs := make([]nn.Matrix, steps)
			for i := range xs {
				xs[i] = view(block, 2, x.Data[i*block*2:])
			}
			a := mallocs(func() {
				r.Record(hint)
				for i := range steps {
					r.Forward(&xs[i], ts[i:i+1])
				}
				r.EndRecord()
			})
			return a, cap(r.(interface{ outBuf() []float32 }).outBuf())
		}
		withHint, capHint := run(x.Rows)
		without, capGrow := run(0)
		t.Logf("%+v: %v allocations with the hint, %v without; output capacity %d and %d rows", cfg, withHint, without, capHint/4, capGrow/4)
		if capHint != x.Rows*4 {
			t.Errorf("%+v: output storage of %d rows with a hint of %d", cfg, capHint/4, x.Rows)
		}
		if withHint >= without {
			t.Errorf("%+v: %v allocations with a hint, %v without", cfg, withHint, without)
		}
	}
}

// mallocs counts the heap allocations of one call of f (testing.AllocsPerRun
// would count a second call, after a warm-up).
func mallocs(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.Mallocs - a.Mallocs
}

func TestRecordPanics(t *testing.T) {
	for _, tc := range testCases[:3:3] {
		var r Recorder
		x := nn.NewMatrix(6, tc.dim)
		for name, f := range map[string]func(){
			"end without record":  func() { r.EndRecord() },
			"end without forward": func() { r.Record(0); r.EndRecord() },
			"end twice":           func() { r.Record(0); r.Forward(x, []float32{0}); r.EndRecord(); r.EndRecord() },
			"block sizes": func() {
				r.Record(0)
				r.Forward(x, []float32{0})
				r.Forward(x, []float32{0.1, 0.2})
			},
		} {
			r = mustNew(t, tc.cfg, tc.dim, 1).(Recorder)
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: %s: no panic", tc.name, name)
					}
				}()
				f()
			}()
		}
	}
}
