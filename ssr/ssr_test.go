package ssr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/env/sequence"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
)

func zeroReward(xs []int32, n int, out []float64) error {
	clear(out[:n])
	return nil
}

func seqEnv(t testing.TB, a, n int, appendOnly bool, r sequence.LogReward) *sequence.Env {
	t.Helper()
	if r == nil {
		r = zeroReward
	}
	mk := sequence.NewPrependAppend
	if appendOnly {
		mk = sequence.NewAppend
	}
	e, err := mk(a, n, r)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// nonTerminal lists the non-terminal states reachable from s0 (rows of
// StateLen words) in breadth-first order, at most limit of them.
func nonTerminal(env discrete.FeaturizedEnv, limit int) []int32 {
	w, na := env.StateLen(), env.NumActions()
	s0 := make([]int32, w)
	env.Init(s0)
	seen := map[string]bool{}
	key := fmtInts
	var out []int32
	queue := [][]int32{s0}
	seen[key(s0)] = true
	mask := make([]bool, na)
	for len(queue) > 0 && len(out)/w < limit {
		s := queue[0]
		queue = queue[1:]
		out = append(out, s...)
		env.ForwardMask(s, mask)
		for a, ok := range mask {
			if !ok {
				continue
			}
			c := slices.Clone(s)
			if env.Step(c, a) || seen[key(c)] {
				continue
			}
			seen[key(c)] = true
			queue = append(queue, c)
		}
	}
	return out
}

// fmtInts is a map key for a state.
func fmtInts(s []int32) string {
	b := make([]byte, 0, 4*len(s))
	for _, v := range s {
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	return string(b)
}

// ref is an independent float64 implementation of the SSR logits: every
// edge encodes its state and its child from scratch and runs the scorer on
// the concatenation [z_s; z_c], as the reference code does.
type ref struct {
	m   *Model
	raw bool // skip the clip (to look at the raw scores)
}

func (r ref) embed(s []int32) []float64 {
	m := r.m
	f := m.Feat
	idx := make([]int32, f.FeaturesPerState())
	f.Features(s, idx)
	H, E := m.Hidden(), m.Embed()
	w0, b0 := m.Enc.OneHot.W.Value, m.Enc.OneHot.B.Value
	w2, b2 := m.Enc.Layers[0].W.Value, m.Enc.Layers[0].B.Value
	h := make([]float64, H)
	for j := range H {
		h[j] = float64(b0[j])
		for _, i := range idx {
			if i >= 0 {
				h[j] += float64(w0[int(i)*H+j])
			}
		}
		h[j] = leaky(h[j])
	}
	z := make([]float64, E)
	for j := range E {
		z[j] = float64(b2[j])
		for i := range H {
			z[j] += h[i] * float64(w2[i*E+j])
		}
	}
	return z
}

func leaky(v float64) float64 {
	if v < 0 {
		return slope * v
	}
	return v
}

func (r ref) score(s, c []int32) float64 {
	m := r.m
	x := append(r.embed(s), r.embed(c)...)
	H := m.Hidden()
	w1, b1 := m.S1.W.Value, m.S1.B.Value
	w2, b2 := m.S2.W.Value, m.S2.B.Value
	f := float64(b2[0])
	for j := range H {
		pre := float64(b1[j])
		for i, v := range x {
			pre += v * float64(w1[i*H+j])
		}
		f += leaky(pre) * float64(w2[j])
	}
	if r.raw {
		return f
	}
	return min(max(f, ClipMin), ClipMax)
}

// logits returns the rows×NumActions logits, -Inf for invalid actions.
func (r ref) logits(states []int32, rows int) [][]float64 {
	env := r.m.Env
	w, na := env.StateLen(), env.NumActions()
	mask := make([]bool, na)
	out := make([][]float64, rows)
	for i := range rows {
		s := states[i*w : (i+1)*w]
		out[i] = make([]float64, na)
		env.ForwardMask(s, mask)
		for a := range na {
			out[i][a] = math.Inf(-1)
			if mask[a] {
				c := slices.Clone(s)
				env.Step(c, a)
				out[i][a] = r.score(s, c)
			}
		}
	}
	return out
}

// loss is Σ coef·log P_F over the valid actions, in float64.
func refLoss(lg [][]float64, coef [][]float64) float64 {
	var l float64
	for i, row := range lg {
		mx := math.Inf(-1)
		for _, v := range row {
			mx = max(mx, v)
		}
		var s float64
		for _, v := range row {
			if !math.IsInf(v, -1) {
				s += math.Exp(v - mx)
			}
		}
		lse := mx + math.Log(s)
		for a, v := range row {
			if !math.IsInf(v, -1) {
				l += coef[i][a] * (v - lse)
			}
		}
	}
	return l
}

// envCases are the environments the model is checked on.
func envCases(t *testing.T) map[string]discrete.FeaturizedEnv {
	g, err := hypergrid.New(2, 5, hypergrid.Deceptive)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]discrete.FeaturizedEnv{
		"prepend-append": seqEnv(t, 3, 4, false, nil),
		"append":         seqEnv(t, 3, 3, true, nil),
		"hypergrid":      g,
	}
}

// TestForwardMatchesNaivePerEdge: the de-duplicated, split computation
// gives the logits of the naive per-edge float64 computation.
func TestForwardMatchesNaivePerEdge(t *testing.T) {
	for name, env := range envCases(t) {
		for _, wd := range [][2]int{{20, 12}, {24, 12}} { // folded, not
			rng := rand.New(rand.NewPCG(1, 2))
			m := New(env, env, "p.", wd[0], wd[1], rng)
			if m.fold != (wd[0] < 2*wd[1]) {
				t.Fatalf("fold %v for H=%d E=%d", m.fold, wd[0], wd[1])
			}
			states := nonTerminal(env, 60)
			rows := len(states) / env.StateLen()
			got := m.Forward(states, rows)
			want := ref{m: m}.logits(states, rows)
			for i := range rows {
				for a, v := range want[i] {
					g := float64(got.At(i, a))
					if math.IsInf(v, -1) {
						if !math.IsInf(g, -1) {
							t.Fatalf("%s: row %d action %d invalid, logit %v", name, i, a, g)
						}
						continue
					}
					if math.Abs(g-v) > 1e-5*(1+math.Abs(v)) {
						t.Fatalf("%s H%d E%d: row %d action %d: logit %v, naive %v", name, wd[0], wd[1], i, a, g, v)
					}
				}
			}
		}
	}
}

// TestGradientMatchesFiniteDifferences: the gradient of Σ coef·log P_F
// (through the masked log-softmax, as TB takes it) equals the central
// differences of the naive float64 computation, for every parameter, with
// and without clipped scores.
func TestGradientMatchesFiniteDifferences(t *testing.T) {
	for _, clip := range []bool{false, true} {
		for name, env := range envCases(t) {
			for _, wd := range [][2]int{{6, 5}, {7, 3}} { // folded, not
				rng := rand.New(rand.NewPCG(3, 4))
				m := New(env, env, "", wd[0], wd[1], rng)
				states := nonTerminal(env, 12)
				rows := len(states) / env.StateLen()
				na := env.NumActions()
				r := ref{m: m}
				if clip {
					// Spread the scores and shift b2 so that the largest
					// clip at 50 and the others do not, keeping every raw
					// score away from the bound so that the differences do
					// not straddle it.
					kernel.Scale(m.S2.W.Value, 10)
					var raw []float64
					for _, row := range (ref{m: m, raw: true}).logits(states, rows) {
						for _, v := range row {
							if !math.IsInf(v, -1) {
								raw = append(raw, v)
							}
						}
					}
					slices.Sort(raw)
					gap := len(raw) / 4 // the widest gap in the middle half
					for i := len(raw) / 4; i < 3*len(raw)/4; i++ {
						if raw[i+1]-raw[i] > raw[gap+1]-raw[gap] {
							gap = i
						}
					}
					shift := ClipMax - (raw[gap]+raw[gap+1])/2
					m.S2.B.Value[0] += float32(shift)
					for _, v := range raw {
						if math.Abs(v+shift-ClipMax) < 1e-3 {
							t.Fatalf("%s H%d E%d: raw score %v too close to the clip", name, wd[0], wd[1], v+shift)
						}
					}
				}
				mask := make([]bool, rows*na)
				coef := make([][]float64, rows)
				dlogp := nn.NewMatrix(rows, na)
				w := env.StateLen()
				for i := range rows {
					env.ForwardMask(states[i*w:(i+1)*w], mask[i*na:(i+1)*na])
					coef[i] = make([]float64, na)
					for a := range na {
						coef[i][a] = rng.NormFloat64()
						dlogp.Data[i*na+a] = float32(coef[i][a])
					}
				}
				ps := m.Params()
				nn.ZeroGrad(ps)
				var logp, dlogits nn.Matrix
				nn.LogSoftmax(&logp, m.Forward(states, rows), mask)
				nn.LogSoftmaxBackward(&dlogits, &logp, dlogp)
				m.Backward(&dlogits)
				clipped := 0
				for e, live := range m.edges.live {
					if !live {
						clipped++
						if m.out.Data[int(m.edges.row[e])*na+int(m.edges.act[e])] != ClipMax {
							t.Fatalf("%s: a clipped edge's logit is not %v", name, ClipMax)
						}
					}
				}
				if clip != (clipped > 0) {
					t.Fatalf("%s: clip=%v with %d clipped edges", name, clip, clipped)
				}
				checkCentral(t, fmt.Sprintf("%s H%d E%d clip=%v", name, wd[0], wd[1], clip), ps,
					func() float64 { return refLoss(r.logits(states, rows), coef) })
			}
		}
	}
}

// TestLogitsDoNotDependOnTheBatch: a state's logits have the same bits alone,
// among other states, and repeated.
func TestLogitsDoNotDependOnTheBatch(t *testing.T) {
	for _, wd := range [][2]int{{72, 40}, {100, 36}} { // folded, not; widths with SIMD tails
		logitsDoNotDependOnTheBatch(t, wd[0], wd[1])
	}
}

// logitsDoNotDependOnTheBatch checks a model of these widths, in precision
// prec[0] if given.
func logitsDoNotDependOnTheBatch(t *testing.T, hidden, embed int, prec ...nn.Precision) {
	env := seqEnv(t, 4, 6, false, nil)
	w := env.StateLen()
	rng := rand.New(rand.NewPCG(5, 6))
	m := New(env, env, "", hidden, embed, rng)
	for _, p := range prec {
		if err := m.SetPrecision(p); err != nil {
			t.Fatal(err)
		}
	}
	all := nonTerminal(env, 400)
	n := len(all) / w
	batch := make([]int32, 0, 3*n*w)
	batch = append(batch, all...)
	for i := n - 1; i >= 0; i -= 3 { // duplicates, out of order
		batch = append(batch, all[i*w:(i+1)*w]...)
	}
	rows := len(batch) / w
	big := m.Forward(batch, rows)
	bigCopy := slices.Clone(big.Data)
	na := env.NumActions()
	for _, i := range []int{0, 1, 7, n / 2, n - 1, rows - 1} {
		alone := m.Forward(batch[i*w:(i+1)*w], 1)
		for a := range na {
			if x, y := math.Float32bits(alone.At(0, a)), math.Float32bits(bigCopy[i*na+a]); x != y {
				t.Fatalf("row %d action %d: alone %v, in the batch %v", i, a, alone.At(0, a), bigCopy[i*na+a])
			}
		}
	}
	// A duplicate row has the bits of its original.
	for j, i := n, n-1; i >= 0; j, i = j+1, i-3 {
		if !slices.Equal(bigCopy[j*na:(j+1)*na], bigCopy[i*na:(i+1)*na]) {
			t.Fatalf("duplicate of row %d differs", i)
		}
	}
}

// TestBackwardDedupMatchesPerRow: gradients of a batch equal the sum of the
// gradients of its rows run one at a time (the scatter-add into shared
// nodes is right), within float32 rounding.
func TestBackwardDedupMatchesPerRow(t *testing.T) {
	for _, wd := range [][2]int{{16, 16}, {16, 8}} { // folded, not
		backwardDedupMatchesPerRow(t, wd[0], wd[1])
	}
}

func backwardDedupMatchesPerRow(t *testing.T, hidden, embed int) {
	env := seqEnv(t, 3, 4, false, nil)
	w, na := env.StateLen(), env.NumActions()
	rng := rand.New(rand.NewPCG(7, 8))
	m := New(env, env, "", hidden, embed, rng)
	states := nonTerminal(env, 30)
	states = append(states, states[3*w:5*w]...) // two duplicates
	rows := len(states) / w
	dl := nn.NewMatrix(rows, na)
	for i := range dl.Data {
		dl.Data[i] = float32(rng.NormFloat64())
	}
	ps := m.Params()
	nn.ZeroGrad(ps)
	m.Forward(states, rows)
	m.Backward(dl)
	var batch []float32
	for _, p := range ps {
		batch = append(batch, p.Grad...)
	}
	nn.ZeroGrad(ps)
	one := nn.NewMatrix(1, na)
	for i := range rows {
		m.Forward(states[i*w:(i+1)*w], 1)
		copy(one.Data, dl.Row(i))
		m.Backward(one)
	}
	k := 0
	for _, p := range ps {
		for _, g := range p.Grad {
			if math.Abs(float64(g-batch[k])) > 1e-4*(1+math.Abs(float64(g))) {
				t.Fatalf("%s: batch gradient %v, per-row sum %v", p.Name, batch[k], g)
			}
			k++
		}
	}
}

func TestParamsAndClone(t *testing.T) {
	env := seqEnv(t, 4, 3, false, nil)
	m := New(env, env, "student.", 10, 7, rand.New(rand.NewPCG(1, 1)))
	var names []string
	for _, p := range m.Params() {
		names = append(names, p.Name)
	}
	want := []string{"student.enc.0.weight", "student.enc.0.bias", "student.enc.2.weight", "student.enc.2.bias",
		"student.scorer.0.weight", "student.scorer.0.bias", "student.scorer.2.weight", "student.scorer.2.bias"}
	if !slices.Equal(names, want) {
		t.Errorf("names %v", names)
	}
	shapes := [][]int{{12, 10}, {10}, {10, 7}, {7}, {14, 10}, {10}, {10, 1}, {1}}
	for i, p := range m.Params() {
		if !slices.Equal(p.Shape, shapes[i]) || p.Transposed != (len(p.Shape) == 2) {
			t.Errorf("%s: shape %v transposed %v", p.Name, p.Shape, p.Transposed)
		}
	}
	// PyTorch's default init: U(±1/√fan_in).
	for i, p := range m.Params() {
		bound := 1 / math.Sqrt(float64(shapes[i/2*2][0]))
		for _, v := range p.Value {
			if math.Abs(float64(v)) > bound {
				t.Errorf("%s: %v outside ±%v", p.Name, v, bound)
			}
		}
	}
	c := m.Clone()
	states := nonTerminal(env, 20)
	rows := len(states) / env.StateLen()
	a := slices.Clone(m.Forward(states, rows).Data)
	b := c.Forward(states[:env.StateLen()], 1)
	if !slices.Equal(a[:env.NumActions()], b.Data) {
		t.Errorf("clone logits differ")
	}
	m.S2.B.Value[0] += 1 // shared parameters
	if got := c.Forward(states[:env.StateLen()], 1).At(0, 1); got != a[1]+1 {
		t.Errorf("clone does not share parameters: %v, want %v", got, a[1]+1)
	}
}

func TestSteadyStateDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	env := seqEnv(t, 4, 5, false, nil)
	for _, wd := range [][2]int{{64, 64}, {64, 16}} { // folded, not
		m := New(env, env, "", wd[0], wd[1], rand.New(rand.NewPCG(1, 1)))
		states := nonTerminal(env, 200)
		rows := len(states) / env.StateLen()
		dl := nn.NewMatrix(rows, env.NumActions())
		for i := range dl.Data {
			dl.Data[i] = 0.01
		}
		run := func() {
			m.Forward(states, rows)
			m.Backward(dl)
			m.S1.W.Value[len(m.S1.W.Value)-1] += 1e-3 // a new M every time
		}
		run()
		if allocs := testing.AllocsPerRun(10, run); allocs > 0 {
			t.Errorf("H%d E%d: %.1f allocations per Forward+Backward", wd[0], wd[1], allocs)
		}
	}
}

// TestFoldFollowsParameters: after any parameter of M = W_e2·W_bottom or
// c0 = b_e2·W_bottom changes, the logits are those of a model that never
// saw the old values.
func TestFoldFollowsParameters(t *testing.T) {
	env := seqEnv(t, 3, 4, false, nil)
	m := New(env, env, "", 16, 16, rand.New(rand.NewPCG(9, 9)))
	states := nonTerminal(env, 30)
	rows := len(states) / env.StateLen()
	E, H := m.Embed(), m.Hidden()
	for _, change := range []func(){
		func() { m.Enc.Layers[0].W.Value[5] += 0.25 },
		func() { m.Enc.Layers[0].B.Value[E-1] -= 0.5 },
		func() { m.S1.W.Value[E*H+3] *= -1 },
		func() { m.S1.W.Value[E*H+7] = float32(math.Copysign(0, -1)) },
	} {
		m.Forward(states, rows)
		change()
		got := slices.Clone(m.Forward(states, rows).Data)
		want := m.Clone().Forward(states, rows).Data
		if !slices.Equal(got, want) {
			t.Fatal("logits after a parameter change differ from a fresh model's")
		}
	}
}

// TestTBLearnsLogZ trains the model with discrete.TB on the prepend-append
// MDP with A=4, n=3 (64 sequences) and checks that log Z reaches the true
// value and the sampler's terminal distribution matches R/Z: this fails if
// the policy's gradients are wrong.
func TestTBLearnsLogZ(t *testing.T) {
	reward := func(xs []int32, n int, out []float64) error {
		for i := range n {
			x := xs[i*3 : (i+1)*3]
			out[i] = float64(x[0]) - 0.7*float64(x[1]*x[2]) + 0.5*float64(x[2])
		}
		return nil
	}
	env := seqEnv(t, 4, 3, false, reward)
	w := env.StateLen()
	rng := rand.New(rand.NewPCG(11, 12))
	m := New(env, env, "", 32, 32, rng)
	logZ := nn.NewParam("logZ")
	opt := nn.NewAdam(nn.Group{Params: m.Params(), LR: 3e-3}, nn.Group{Params: []*nn.Param{logZ}, LR: 0.1})
	// True log Z over the 64 sequences.
	all := make([]int32, 64*w)
	for k := range uint64(64) {
		env.TerminalOf(k, all[int(k)*w:int(k+1)*w])
	}
	allR := make([]float64, 64)
	if err := env.LogReward(all, 64, allR); err != nil {
		t.Fatal(err)
	}
	var z float64
	for _, v := range allR {
		z += math.Exp(v)
	}
	trueLogZ := math.Log(z)

	smp := discrete.NewSampler(env)
	var tb discrete.TB
	var tr discrete.Trajectories
	logR := make([]float64, 32)
	delta := make([]float64, 32)
	// The sampler (a Forward per step) and TB (one Forward over the
	// batch's distinct states) see the same policy.
	smp.Forward(m, 32, discrete.SampleOptions{}, rng, &tr)
	tb.LogPF(env, m, &tr, delta)
	for b := range tr.Len() {
		if math.Abs(delta[b]-tr.LogPFBehaviour[b]) > 1e-5 {
			t.Fatalf("trajectory %d: log P_F %v under TB, %v when sampled", b, delta[b], tr.LogPFBehaviour[b])
		}
	}
	for range 400 {
		smp.Forward(m, 32, discrete.SampleOptions{Eps: 0.05}, rng, &tr)
		if err := env.LogReward(tr.Final, tr.Len(), logR); err != nil {
			t.Fatal(err)
		}
		nn.ZeroGrad(opt.Params())
		tb.Loss(env, m, logZ, &tr, logR, delta, true)
		opt.Step()
	}
	t.Logf("log Z %.4f true %.4f", logZ.Value[0], trueLogZ)
	if got := float64(logZ.Value[0]); math.Abs(got-trueLogZ) > 0.05 {
		t.Errorf("log Z = %.4f, true %.4f", got, trueLogZ)
	}
	// Terminal distribution: exact P_F(x) by summing over all trajectories.
	p := exactTerminal(t, env, m)
	var l1 float64
	for k, v := range allR {
		l1 += math.Abs(p[uint64(k)] - math.Exp(v-trueLogZ))
	}
	t.Logf("L1 %.4f", l1)
	if l1 > 0.1 {
		t.Errorf("L1 distance between P_F^T and R/Z = %.3f", l1)
	}
}

// exactTerminal computes the terminating distribution of m by propagating
// probability mass forward through the DAG, level by level.
func exactTerminal(t *testing.T, env *sequence.Env, m *Model) map[uint64]float64 {
	w, na := env.StateLen(), env.NumActions()
	s0 := make([]int32, w)
	env.Init(s0)
	level := map[string]float64{fmtInts(s0): 1}
	states := map[string][]int32{fmtInts(s0): s0}
	out := map[uint64]float64{}
	mask := make([]bool, na)
	var logp nn.Matrix
	for len(level) > 0 {
		next := map[string]float64{}
		for key, mass := range level {
			s := states[key]
			env.ForwardMask(s, mask)
			nn.LogSoftmax(&logp, m.Forward(s, 1), mask)
			for a, ok := range mask {
				if !ok {
					continue
				}
				c := slices.Clone(s)
				pa := mass * math.Exp(float64(logp.Data[a]))
				if env.Step(c, a) {
					out[env.TerminalKey(c)] += pa
					continue
				}
				ck := fmtInts(c)
				states[ck] = c
				next[ck] += pa
			}
		}
		level = next
	}
	var total float64
	for _, v := range out {
		total += v
	}
	if math.Abs(total-1) > 1e-4 {
		t.Fatalf("terminal mass %v", total)
	}
	return out
}

// TestTerminalRows: a terminal state has no valid action, so all its logits
// are -Inf and it takes no part in Backward.
func TestTerminalRows(t *testing.T) {
	env := seqEnv(t, 3, 2, false, nil)
	w, na := env.StateLen(), env.NumActions()
	m := New(env, env, "", 8, 8, rand.New(rand.NewPCG(2, 2)))
	states := make([]int32, 2*w)
	env.Init(states[:w])
	env.SetTerminal(states[w:], []int32{2, 1})
	out := m.Forward(states, 2)
	for a := range na {
		if !math.IsInf(float64(out.At(1, a)), -1) {
			t.Fatalf("terminal row: logit %d = %v", a, out.At(1, a))
		}
	}
	dl := nn.NewMatrix(2, na)
	for i := range dl.Data {
		dl.Data[i] = 1
	}
	nn.ZeroGrad(m.Params())
	m.Backward(dl)
	var withTerminal []float32
	for _, p := range m.Params() {
		withTerminal = append(withTerminal, p.Grad...)
	}
	nn.ZeroGrad(m.Params())
	m.Forward(states[:w], 1)
	m.Backward(&nn.Matrix{Rows: 1, Cols: na, Data: dl.Data[:na]})
	k := 0
	for _, p := range m.Params() {
		for _, g := range p.Grad {
			if g != withTerminal[k] {
				t.Fatalf("%s: gradient %v with a terminal row, %v without", p.Name, withTerminal[k], g)
			}
			k++
		}
	}
}

// TestFlowHead: NewFlow's model has the logits of New's (the same
// weights, the flow head drawn after them) and a last column log F(s) =
// z(s)·w_f + b_f, and the gradient of Σ coef·log P_F + Σ c·log F equals
// the central differences of the naive float64 computation for every
// parameter, folded or not.
func TestFlowHead(t *testing.T) {
	for name, env := range envCases(t) {
		for _, wd := range [][2]int{{6, 5}, {7, 3}} { // folded, not
			m := NewFlow(env, env, "", wd[0], wd[1], rand.New(rand.NewPCG(3, 4)))
			plain := New(env, env, "", wd[0], wd[1], rand.New(rand.NewPCG(3, 4)))
			if len(m.Params()) != len(plain.Params())+2 || m.Params()[len(m.Params())-2].Name != "flow.weight" {
				t.Fatalf("%s: params %d, plain %d", name, len(m.Params()), len(plain.Params()))
			}
			states := nonTerminal(env, 12)
			rows := len(states) / env.StateLen()
			na, w := env.NumActions(), env.StateLen()
			got := m.Forward(states, rows)
			want := plain.Forward(states, rows)
			r := ref{m: m}
			flow := func(i int) float64 {
				z := r.embed(states[i*w : (i+1)*w])
				f := float64(m.Flow.B.Value[0])
				for j, v := range z {
					f += v * float64(m.Flow.W.Value[j])
				}
				return f
			}
			if got.Cols != na+1 {
				t.Fatalf("%s: %d columns, want %d", name, got.Cols, na+1)
			}
			for i := range rows {
				for a := range na {
					if math.Float32bits(got.At(i, a)) != math.Float32bits(want.At(i, a)) {
						t.Fatalf("%s: row %d action %d: %v with the flow head, %v without", name, i, a, got.At(i, a), want.At(i, a))
					}
				}
				if f := flow(i); math.Abs(float64(got.At(i, na))-f) > 1e-5*(1+math.Abs(f)) {
					t.Fatalf("%s: row %d: log F %v, naive %v", name, i, got.At(i, na), f)
				}
			}
			rng := rand.New(rand.NewPCG(5, 6))
			mask := make([]bool, rows*na)
			coef := make([][]float64, rows)
			cf := make([]float64, rows)
			dlogp := nn.NewMatrix(rows, na)
			for i := range rows {
				env.ForwardMask(states[i*w:(i+1)*w], mask[i*na:(i+1)*na])
				coef[i] = make([]float64, na)
				for a := range na {
					coef[i][a] = rng.NormFloat64()
					dlogp.Data[i*na+a] = float32(coef[i][a])
				}
				cf[i] = rng.NormFloat64()
			}
			loss := func() float64 {
				l := refLoss(r.logits(states, rows), coef)
				for i := range rows {
					l += cf[i] * flow(i)
				}
				return l
			}
			ps := m.Params()
			nn.ZeroGrad(ps)
			var logp, dsub nn.Matrix
			out := m.Forward(states, rows)
			sub := nn.NewMatrix(rows, na)
			for i := range rows {
				copy(sub.Row(i), out.Row(i)[:na])
			}
			nn.LogSoftmax(&logp, sub, mask)
			nn.LogSoftmaxBackward(&dsub, &logp, dlogp)
			dlogits := nn.NewMatrix(rows, na+1)
			for i := range rows {
				copy(dlogits.Row(i)[:na], dsub.Row(i))
				dlogits.Row(i)[na] = float32(cf[i])
			}
			m.Backward(dlogits)
			checkCentral(t, fmt.Sprintf("%s H%d E%d", name, wd[0], wd[1]), ps, loss)
		}
	}
}

// checkCentral compares every parameter's accumulated gradient with the
// central difference of loss (a float64 computation of the model) over a
// step of 10⁻⁴ in that value, to 10⁻³ relative; where names the case.
func checkCentral(t *testing.T, where string, ps []*nn.Param, loss func() float64) {
	t.Helper()
	const h = 1e-4
	for _, p := range ps {
		for i := range p.Value {
			old := p.Value[i]
			p.Value[i] = old + h
			vp := float64(p.Value[i])
			lp := loss()
			p.Value[i] = old - h
			vm := float64(p.Value[i])
			lm := loss()
			p.Value[i] = old
			num := (lp - lm) / (vp - vm)
			if g := float64(p.Grad[i]); math.Abs(num-g) > 1e-3*(1+math.Abs(num)) {
				t.Errorf("%s: %s[%d]: analytic %.7g, finite difference %.7g", where, p.Name, i, g, num)
			}
		}
	}
}
