package discrete_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/nn"
)

func grid(t testing.TB, d, h int) *hypergrid.Grid {
	g, err := hypergrid.New(d, h, hypergrid.Deceptive)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// replay checks that tr's trajectories are valid: each starts at s0, each
// state follows from the previous by its action, only the last step is
// terminal, and the final state is where the actions lead.
func replay(t *testing.T, env discrete.Env, tr *discrete.Trajectories) {
	t.Helper()
	w := env.StateLen()
	s := make([]int32, w)
	for b := range tr.Len() {
		env.Init(s)
		for i := tr.Off[b]; i < tr.Off[b+1]; i++ {
			if !slices.Equal(s, tr.State(i)) {
				t.Fatalf("trajectory %d step %d: state %v, replay gives %v", b, i-tr.Off[b], tr.State(i), s)
			}
			done := env.Step(s, int(tr.Actions[i]))
			if done != (i == tr.Off[b+1]-1) {
				t.Fatalf("trajectory %d: terminal=%v at step %d of %d", b, done, i-tr.Off[b], tr.Off[b+1]-tr.Off[b])
			}
		}
		if !slices.Equal(s, tr.FinalState(b)) {
			t.Fatalf("trajectory %d ends at %v, recorded %v", b, s, tr.FinalState(b))
		}
	}
}

func TestForwardSamplingIsValidAndLogPFMatchesTB(t *testing.T) {
	g := grid(t, 3, 6)
	rng := rand.New(rand.NewPCG(1, 2))
	m := discrete.NewMLPModel(g, g, "m", []int{16, 16}, rng)
	s := discrete.NewSampler(g)
	var tr discrete.Trajectories
	s.Forward(m, 40, discrete.SampleOptions{}, rng, &tr)
	if tr.Len() != 40 {
		t.Fatalf("%d trajectories", tr.Len())
	}
	replay(t, g, &tr)
	var tb discrete.TB
	lp := make([]float64, tr.Len())
	tb.LogPF(g, m, &tr, lp)
	for b := range lp {
		if math.Abs(lp[b]-tr.LogPFBehaviour[b]) > 1e-4 {
			t.Errorf("trajectory %d: behaviour log P_F %v, recomputed %v", b, tr.LogPFBehaviour[b], lp[b])
		}
	}
}

// fixedModel returns the same logits for every state.
type fixedModel struct {
	logits []float32
	out    nn.Matrix
}

func (f *fixedModel) Forward(_ []int32, rows int) *nn.Matrix {
	f.out.Resize(rows, len(f.logits))
	for r := range rows {
		copy(f.out.Row(r), f.logits)
	}
	return &f.out
}
func (f *fixedModel) Backward(*nn.Matrix) {}
func (f *fixedModel) Params() []*nn.Param { return nil }

func TestEpsAndTemperature(t *testing.T) {
	g := grid(t, 1, 50) // one coordinate: actions are "+1" and "stop"
	rng := rand.New(rand.NewPCG(3, 4))
	m := &fixedModel{logits: []float32{0, float32(math.Log(3))}} // P(stop) = 3/4
	s := discrete.NewSampler(g)
	var tr discrete.Trajectories
	stopFrac := func(opt discrete.SampleOptions) float64 {
		s.Forward(m, 20000, opt, rng, &tr)
		// The first action of each trajectory is a Bernoulli draw.
		stops := 0
		for b := range tr.Len() {
			if tr.Actions[tr.Off[b]] == 1 {
				stops++
			}
		}
		return float64(stops) / float64(tr.Len())
	}
	for _, c := range []struct {
		opt  discrete.SampleOptions
		want float64
	}{
		{discrete.SampleOptions{}, 0.75},
		{discrete.SampleOptions{Eps: 1}, 0.5},
		{discrete.SampleOptions{Eps: 0.2}, 0.8*0.75 + 0.1},
		{discrete.SampleOptions{Temperature: 2}, math.Sqrt(3) / (1 + math.Sqrt(3))},
	} {
		if got := stopFrac(c.opt); math.Abs(got-c.want) > 0.015 {
			t.Errorf("%+v: P(stop) = %.3f, want %.3f", c.opt, got, c.want)
		}
	}
}

func TestBackwardSampling(t *testing.T) {
	g := grid(t, 2, 4)
	rng := rand.New(rand.NewPCG(5, 6))
	s := discrete.NewSampler(g)
	// All terminals of the grid; many backward samples of each.
	n := int(g.NumTerminals())
	xs := make([]int32, 0, n*3)
	x := make([]int32, 3)
	for i := range n {
		g.Terminal(i, x)
		xs = append(xs, x...)
	}
	var tr discrete.Trajectories
	s.Backward(xs, n, rng, &tr)
	replay(t, g, &tr)
	for b := range n {
		if !slices.Equal(tr.FinalState(b), xs[b*3:(b+1)*3]) {
			t.Fatalf("trajectory %d ends at %v, want %v", b, tr.FinalState(b), xs[b*3:(b+1)*3])
		}
	}
	// P_B is a distribution over the trajectories into x: the probability
	// of each distinct path, estimated by frequency, must match exp(log P_B).
	x0 := []int32{2, 1, 1} // stopped at (2,1): 3 paths, P_B = 1/3... via counts
	reps := make([]int32, 0, 3*30000)
	for range 30000 {
		reps = append(reps, x0...)
	}
	s.Backward(reps, 30000, rng, &tr)
	freq := map[string]int{}
	logpb := map[string]float64{}
	for b := range tr.Len() {
		k := string(rune(0))
		for i := tr.Off[b]; i < tr.Off[b+1]; i++ {
			k += string(rune('0' + tr.Actions[i]))
		}
		freq[k]++
		logpb[k] = tr.LogPB[b]
	}
	var total float64
	for k, c := range freq {
		p := math.Exp(logpb[k])
		total += p
		if math.Abs(float64(c)/30000-p) > 0.01 {
			t.Errorf("path %q: frequency %.4f, P_B %.4f", k, float64(c)/30000, p)
		}
	}
	if len(freq) != 3 || math.Abs(total-1) > 1e-9 {
		t.Errorf("%d paths with total P_B %v, want 3 paths summing to 1", len(freq), total)
	}
}

func TestTBGradientMatchesFiniteDifferences(t *testing.T) {
	g := grid(t, 2, 5)
	rng := rand.New(rand.NewPCG(7, 8))
	m := discrete.NewMLPModel(g, g, "m", []int{8, 8}, rng)
	logZ := nn.NewParam("logZ")
	logZ.Value[0] = 0.3
	s := discrete.NewSampler(g)
	var tr discrete.Trajectories
	s.Forward(m, 6, discrete.SampleOptions{Eps: 0.5}, rng, &tr)
	logR := make([]float64, tr.Len())
	if err := g.LogReward(tr.Final, tr.Len(), logR); err != nil {
		t.Fatal(err)
	}
	delta := make([]float64, tr.Len())
	var tb discrete.TB
	params := append(m.Params(), logZ)
	nn.ZeroGrad(params)
	loss0 := tb.Loss(g, m, logZ, &tr, logR, delta, true)
	// δ by hand for the first trajectory.
	lp := make([]float64, tr.Len())
	tb.LogPF(g, m, &tr, lp)
	if want := logR[0] + tr.LogPB[0] - 0.3 - lp[0]; math.Abs(delta[0]-want) > 1e-5 {
		t.Errorf("δ = %v, want %v", delta[0], want)
	}
	var mean float64
	for _, d := range delta {
		mean += d * d
	}
	if mean /= float64(len(delta)); math.Abs(mean-loss0) > 1e-9 {
		t.Errorf("loss %v, mean δ² %v", loss0, mean)
	}
	const h = 1e-3
	for _, p := range params {
		for trial := 0; trial < 6; trial++ {
			i := rng.IntN(p.Len())
			old := p.Value[i]
			p.Value[i] = old + h
			lp := tb.Loss(g, m, logZ, &tr, logR, delta, false)
			p.Value[i] = old - h
			lm := tb.Loss(g, m, logZ, &tr, logR, delta, false)
			p.Value[i] = old
			num := (lp - lm) / (2 * h)
			if math.Abs(num-float64(p.Grad[i])) > 1e-2*(1+math.Abs(num)) {
				t.Errorf("%s[%d]: analytic %.6g, finite difference %.6g", p.Name, i, p.Grad[i], num)
			}
		}
	}
}

func TestSteadyStateSamplingDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	g := grid(t, 2, 16)
	rng := rand.New(rand.NewPCG(1, 1))
	m := discrete.NewMLPModel(g, g, "m", []int{32, 32}, rng)
	s := discrete.NewSampler(g)
	var tr discrete.Trajectories
	for range 20 { // warm up the buffers to their high-water mark
		s.Forward(m, 16, discrete.SampleOptions{Eps: 1}, rng, &tr)
	}
	other := discrete.NewMLPModel(g, g, "o", []int{32, 32}, rng)
	for _, opt := range []discrete.SampleOptions{{Eps: 1}, {Eps: 1, Record: true}, {Eps: 1, Record: true, Companion: other}} {
		for range 20 {
			s.Forward(m, 16, opt, rng, &tr)
		}
		allocs := testing.AllocsPerRun(20, func() { s.Forward(m, 16, opt, rng, &tr) })
		if allocs > 0.5 {
			t.Errorf("record=%v companion=%v: %.1f allocations per batch in steady state", opt.Record, opt.Companion != nil, allocs)
		}
	}
}

// tbGrads runs TB with gradients on tr and returns every parameter's
// gradient (log Z last), the loss and δ.
func tbGrads(env discrete.Env, m discrete.Model, logZ *nn.Param, tr *discrete.Trajectories, logR []float64) ([]float32, float64, []float64) {
	var tb discrete.TB
	ps := append(m.Params(), logZ)
	nn.ZeroGrad(ps)
	d := make([]float64, tr.Len())
	loss := tb.Loss(env, m, logZ, tr, logR, d, true)
	var all []float32
	for _, p := range ps {
		all = append(all, p.Grad...)
	}
	return all, loss, d
}

// countingModel counts forward passes.
type countingModel struct {
	*discrete.MLPModel
	forwards atomic.Int64
}

func (c *countingModel) Forward(states []int32, rows int) *nn.Matrix {
	c.forwards.Add(1)
	return c.MLPModel.Forward(states, rows)
}

// A companion's passes recorded while another model samples serve TB with
// no forward pass of its own, and give the same bits as a fresh pass: same
// δ, same loss, same gradients. Batches long enough to fill several chunks
// and short ones are both covered.
func TestCompanionRecordingMatchesRecomputed(t *testing.T) {
	// 16 trajectories on a small grid: one chunk, fewer rows than a
	// micro-panel. 400 uniformly random ones on a larger 3-d grid:
	// hundreds of distinct states, many chunks and a short last one.
	for _, tc := range []struct{ d, h, n int }{{2, 4, 16}, {3, 20, 400}} {
		h, n := tc.h, tc.n
		g := grid(t, tc.d, h)
		rng := rand.New(rand.NewPCG(21, uint64(h)))
		m := discrete.NewMLPModel(g, g, "m", []int{32, 32}, rng)
		c := &countingModel{MLPModel: discrete.NewMLPModel(g, g, "c", []int{32, 32}, rng)}
		logZ := nn.NewParam("logZ")
		s := discrete.NewSampler(g)
		var tr discrete.Trajectories
		s.Forward(m, n, discrete.SampleOptions{Record: true, Eps: 1, Companion: c}, rng, &tr)
		if tr.CompanionBy != c || tr.NumTransitions() == 0 {
			t.Fatalf("H=%d: the companion did not record", h)
		}
		if n == 400 && tr.NumTransitions() < 1000 {
			t.Fatalf("only %d transitions; the test wants many chunks", tr.NumTransitions())
		}
		logR := make([]float64, tr.Len())
		g.LogReward(tr.Final, tr.Len(), logR)
		grads := func() ([]float32, float64, []float64) { return tbGrads(g, c, logZ, &tr, logR) }
		before := c.forwards.Load()
		g1, l1, d1 := grads() // uses the companion's recording
		if n := c.forwards.Load() - before; n != 0 {
			t.Errorf("H=%d: TB ran the companion %d times; its recording should serve", h, n)
		}
		g2, l2, d2 := grads() // the generation moved on: recomputes
		if c.forwards.Load() == before {
			t.Fatalf("H=%d: the second TB pass did not recompute", h)
		}
		if l1 != l2 || !slices.Equal(d1, d2) || !slices.Equal(g1, g2) {
			t.Errorf("H=%d: recorded and recomputed passes differ: loss %v vs %v", h, l1, l2)
		}
	}
}

func TestCompanionMustDifferFromSampler(t *testing.T) {
	g := grid(t, 2, 4)
	rng := rand.New(rand.NewPCG(1, 2))
	m := discrete.NewMLPModel(g, g, "m", []int{8}, rng)
	defer func() {
		if recover() == nil {
			t.Error("sampling with itself as companion did not panic")
		}
	}()
	var tr discrete.Trajectories
	discrete.NewSampler(g).Forward(m, 2, discrete.SampleOptions{Record: true, Companion: m}, rng, &tr)
}

// TB on a batch recorded while sampling must equal TB with a fresh forward
// pass: same loss, same δ, same gradients.
func TestRecordedBatchMatchesRecomputed(t *testing.T) {
	g := grid(t, 2, 12)
	rng := rand.New(rand.NewPCG(9, 9))
	m := discrete.NewMLPModel(g, g, "m", []int{32, 32}, rng)
	logZ := nn.NewParam("logZ")
	s := discrete.NewSampler(g)
	var tr discrete.Trajectories
	s.Forward(m, 16, discrete.SampleOptions{Record: true, Eps: 0.1}, rng, &tr)
	if tr.RecBy == nil || len(tr.Rec) != tr.NumTransitions() {
		t.Fatal("sampling did not record")
	}
	logR := make([]float64, tr.Len())
	g.LogReward(tr.Final, tr.Len(), logR)
	grads := func() ([]float32, float64, []float64) { return tbGrads(g, m, logZ, &tr, logR) }
	g1, l1, d1 := grads() // uses the recording
	g2, l2, d2 := grads() // the generation moved on: recomputes
	if math.Abs(l1-l2) > 1e-9 {
		t.Errorf("loss %v recorded, %v recomputed", l1, l2)
	}
	for i := range d1 {
		if math.Abs(d1[i]-d2[i]) > 1e-9 {
			t.Errorf("δ[%d] %v vs %v", i, d1[i], d2[i])
		}
	}
	for i := range g1 {
		if math.Abs(float64(g1[i]-g2[i])) > 1e-5*(1+math.Abs(float64(g2[i]))) {
			t.Fatalf("gradient %d: %v recorded, %v recomputed", i, g1[i], g2[i])
		}
	}
}

func TestForwardFromAndJoin(t *testing.T) {
	g := grid(t, 3, 7)
	rng := rand.New(rand.NewPCG(3, 9))
	m := discrete.NewMLPModel(g, g, "m", []int{16}, rng)
	s := discrete.NewSampler(g)
	var full, back, suffix, joined discrete.Trajectories
	s.Forward(m, 12, discrete.SampleOptions{Eps: 0.3}, rng, &full)
	s.Backward(full.Final, full.Len(), rng, &back)
	w := g.StateLen()
	starts := make([]int32, 0, 12*w)
	cuts := make([]int, 12)
	for b := range back.Len() {
		n := back.Off[b+1] - back.Off[b]
		cuts[b] = n / 2
		starts = append(starts, back.State(back.Off[b]+cuts[b])...)
	}
	s.ForwardFrom(m, starts, 12, discrete.SampleOptions{}, rng, &suffix)
	joined.Reset(w)
	for b := range 12 {
		joined.AddJoined(g, &back, b, cuts[b], &suffix, b)
	}
	replay(t, g, &joined)
	// log P_B of the joined trajectory is that of a full trajectory.
	var chk discrete.Trajectories
	chk.Reset(w)
	for b := range 12 {
		chk.AddFrom(g, &joined, b)
		if chk.LogPB[b] != joined.LogPB[b] {
			t.Errorf("copy changed log P_B")
		}
	}
}

func TestDBGradientMatchesFiniteDifferences(t *testing.T) {
	g := grid(t, 2, 5)
	rng := rand.New(rand.NewPCG(17, 18))
	m := discrete.NewMLPModelHeads(g, g, "m", []int{8, 8}, 1, rng)
	s := discrete.NewSampler(g)
	var tr discrete.Trajectories
	s.Forward(m, 5, discrete.SampleOptions{Eps: 0.5}, rng, &tr)
	replay(t, g, &tr) // the flow head does not disturb sampling
	logR := make([]float64, tr.Len())
	g.LogReward(tr.Final, tr.Len(), logR)
	var db discrete.DB
	delta := make([]float64, tr.NumTransitions())
	nn.ZeroGrad(m.Params())
	loss := db.Loss(g, m, &tr, logR, delta, true)
	// δ of the last transition of trajectory 0 by hand.
	out := m.Forward(tr.States, tr.NumTransitions())
	last := tr.Off[1] - 1
	w := g.StateLen()
	mask := make([]bool, 3)
	g.ForwardMask(tr.State(last), mask)
	row := out.Row(last)
	lse := math.Log(math.Exp(float64(row[0])) + math.Exp(float64(row[1])) + math.Exp(float64(row[2])))
	a := tr.Actions[last]
	want := float64(row[3]) + float64(row[a]) - lse + math.Log(float64(g.BackwardCount(tr.States[last*w:(last+1)*w], int(a)))) - logR[0]
	if math.Abs(delta[last]-want) > 1e-5 {
		t.Errorf("last δ = %v, want %v", delta[last], want)
	}
	var sum float64
	for _, d := range delta {
		sum += d * d
	}
	if math.Abs(sum/float64(tr.Len())-loss) > 1e-9 {
		t.Errorf("loss %v, Σδ²/B %v", loss, sum/float64(tr.Len()))
	}
	const h = 1e-3
	for _, p := range m.Params() {
		for trial := 0; trial < 6; trial++ {
			i := rng.IntN(p.Len())
			old := p.Value[i]
			p.Value[i] = old + h
			lp := db.Loss(g, m, &tr, logR, delta, false)
			p.Value[i] = old - h
			lm := db.Loss(g, m, &tr, logR, delta, false)
			p.Value[i] = old
			num := (lp - lm) / (2 * h)
			if math.Abs(num-float64(p.Grad[i])) > 1e-2*(1+math.Abs(num)) {
				t.Errorf("%s[%d]: analytic %.6g, finite difference %.6g", p.Name, i, p.Grad[i], num)
			}
		}
	}
	// The transition form of the same transitions gives the same δ's.
	var x discrete.Transitions
	for b := range tr.Len() {
		for k := tr.Off[b]; k < tr.Off[b+1]; k++ {
			next := tr.FinalState(b)
			term := k == tr.Off[b+1]-1
			if !term {
				next = tr.State(k + 1)
			}
			x.Add(tr.State(k), int(tr.Actions[k]), next, term, logR[b])
		}
	}
	d2 := make([]float64, x.Len())
	db.Loss(g, m, &tr, logR, delta, false)
	db.TransitionLoss(g, m, &x, d2, false)
	for i := range d2 {
		if math.Abs(d2[i]-delta[i]) > 1e-5 {
			t.Fatalf("transition %d: δ %v, trajectory form %v", i, d2[i], delta[i])
		}
	}
}

// halfFeatures encodes a 2-d grid state by its first coordinate only: a
// featurisation of the model's, not the environment's.
type halfFeatures struct {
	side  int
	calls *int
}

func (h halfFeatures) FeatureLen() int       { return h.side }
func (h halfFeatures) FeaturesPerState() int { return 1 }
func (h halfFeatures) Features(s []int32, idx []int32) {
	*h.calls++
	idx[0] = s[0]
}

// The MLP reads states through the Featurizer it is given: states with
// equal first coordinates get equal logits under halfFeatures.
func TestMLPModelUsesItsFeaturizer(t *testing.T) {
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	calls := 0
	m := discrete.NewMLPModel(g, halfFeatures{8, &calls}, "m", []int{16}, rand.New(rand.NewPCG(1, 2)))
	w := g.StateLen()
	states := make([]int32, 3*w)
	for r, x := range [][2]int32{{3, 1}, {3, 5}, {4, 1}} {
		g.Init(states[r*w : (r+1)*w])
		states[r*w], states[r*w+1] = x[0], x[1]
	}
	out := m.Forward(states, 3)
	if calls != 3 {
		t.Fatalf("Features called %d times for 3 states", calls)
	}
	if !slices.Equal(out.Row(0), out.Row(1)) || slices.Equal(out.Row(0), out.Row(2)) {
		t.Errorf("logits %v, %v, %v: want rows 0 and 1 equal (same first coordinate), row 2 different", out.Row(0), out.Row(1), out.Row(2))
	}
}
