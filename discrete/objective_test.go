package discrete_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/objective"
)

// TestObjectiveAgreesWithTBAndDB: through the adapter, objective TB gives
// discrete.TB's loss, δ and gradients, and objective DB discrete.DB's loss.
func TestObjectiveAgreesWithTBAndDB(t *testing.T) {
	g := grid(t, 2, 5)
	rng := rand.New(rand.NewPCG(21, 22))
	m := discrete.NewMLPModelHeads(g, g, "m", []int{8, 8}, 1, rng)
	var tr discrete.Trajectories
	discrete.NewSampler(g).Forward(m, 6, discrete.SampleOptions{Eps: 0.5}, rng, &tr)
	logR := make([]float64, tr.Len())
	g.LogReward(tr.Final, tr.Len(), logR)
	logZ := nn.NewParam("logZ")
	logZ.Value[0] = 0.3

	wantGrad, wantLoss, wantDelta := tbGrads(g, m, logZ, &tr, logR)
	o := discrete.Objective{Obj: &objective.TB{}}
	delta := make([]float64, tr.Len())
	nn.ZeroGrad(m.Params())
	logZ.Grad[0] = 0
	loss, err := o.Eval(g, m, logZ, &tr, logR, delta, nil)
	if err != nil {
		t.Fatal(err)
	}
	o.Grad(g, m, logZ, &tr)
	if math.Abs(loss-wantLoss) > 1e-9 {
		t.Errorf("TB loss %v, discrete.TB %v", loss, wantLoss)
	}
	for b := range delta {
		if math.Abs(delta[b]-wantDelta[b]) > 1e-9 {
			t.Errorf("δ[%d] %v, discrete.TB %v", b, delta[b], wantDelta[b])
		}
	}
	var got []float32
	for _, p := range m.Params() {
		got = append(got, p.Grad...)
	}
	got = append(got, logZ.Grad[0])
	for i := range got {
		if math.Abs(float64(got[i]-wantGrad[i])) > 1e-5*(1+math.Abs(float64(wantGrad[i]))) {
			t.Fatalf("gradient %d: %v, discrete.TB %v", i, got[i], wantGrad[i])
		}
	}

	var db discrete.DB
	want := db.Loss(g, m, &tr, logR, make([]float64, tr.NumTransitions()), false)
	od := discrete.Objective{Obj: &objective.DB{}}
	if l, err := od.Eval(g, m, nil, &tr, logR, nil, nil); err != nil || math.Abs(l-want) > 1e-9 {
		t.Errorf("DB loss %v (%v), discrete.DB %v", l, err, want)
	}
}

// TestObjectiveGradientsFiniteDifferences checks the model gradients of
// SubTB (through the flow head) and VarGrad against central differences.
func TestObjectiveGradientsFiniteDifferences(t *testing.T) {
	g := grid(t, 2, 4)
	for _, name := range []string{"subtb", "vargrad", "db", "fm", "mdb", "fl-db", "fl-subtb"} {
		rng := rand.New(rand.NewPCG(23, 24))
		m := discrete.NewMLPModelHeads(g, g, "m", []int{8}, 1, rng)
		var tr discrete.Trajectories
		discrete.NewSampler(g).Forward(m, 5, discrete.SampleOptions{Eps: 0.5}, rng, &tr)
		logR := make([]float64, tr.Len())
		g.LogReward(tr.Final, tr.Len(), logR)
		obj, _ := objective.New(name, 0.8)
		o := discrete.Objective{Obj: obj}
		if err := o.Check(1); err != nil {
			t.Fatal(err)
		}
		nn.ZeroGrad(m.Params())
		if _, err := o.Eval(g, m, nil, &tr, logR, nil, nil); err != nil {
			t.Fatal(err)
		}
		o.Grad(g, m, nil, &tr)
		const h = 1e-2
		for _, p := range m.Params() {
			for range 5 {
				i := rng.IntN(p.Len())
				old := p.Value[i]
				p.Value[i] = old + h
				up, _ := o.Eval(g, m, nil, &tr, logR, nil, nil)
				p.Value[i] = old - h
				down, _ := o.Eval(g, m, nil, &tr, logR, nil, nil)
				p.Value[i] = old
				fd := (up - down) / (2 * h)
				if math.Abs(fd-float64(p.Grad[i])) > 2e-3*(1+math.Abs(fd)) {
					t.Errorf("%s: ∂/∂%s[%d] = %v, finite differences %v", name, p.Name, i, p.Grad[i], fd)
				}
			}
		}
	}
	if err := (&discrete.Objective{Obj: &objective.SubTB{Lambda: 0.9}}).Check(0); err == nil {
		t.Error("SubTB without a flow head was accepted")
	}
}

// noStop is a grid that does not say every state can stop.
type noStop struct{ discrete.Env }

// TestForwardLookingByHand recomputes forward-looking DB's loss on a grid
// from the model's outputs one transition at a time: log F(s) = log R(s)
// + the flow head's output, each visited state's reward taken as if it
// stopped there, x's flow log R(x); and a reward call per visited state.
// An environment that cannot stop everywhere is refused.
func TestForwardLookingByHand(t *testing.T) {
	g := grid(t, 2, 5)
	rng := rand.New(rand.NewPCG(27, 28))
	m := discrete.NewMLPModelHeads(g, g, "m", []int{8}, 1, rng)
	var tr discrete.Trajectories
	discrete.NewSampler(g).Forward(m, 6, discrete.SampleOptions{Eps: 0.5}, rng, &tr)
	logR := make([]float64, tr.Len())
	g.LogReward(tr.Final, tr.Len(), logR)
	o := discrete.Objective{Obj: &objective.ForwardLooking{Inner: &objective.DB{}}}
	loss, err := o.Eval(g, m, nil, &tr, logR, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.RewardCalls() != tr.NumTransitions() {
		t.Errorf("%d reward calls, want one per visited non-terminal state, %d", o.RewardCalls(), tr.NumTransitions())
	}
	w, na := g.StateLen(), g.NumActions()
	stateLogR := func(s []int32) float64 {
		x := append([]int32(nil), s...)
		g.Step(x, g.StopAction())
		r := make([]float64, 1)
		g.LogReward(x, 1, r)
		return r[0]
	}
	logF := func(s []int32) float64 {
		out := m.Forward(s, 1)
		return stateLogR(s) + float64(out.Data[na])
	}
	logPF := func(s []int32, a int) float64 {
		out := m.Forward(s, 1).Data[:na]
		mask := make([]bool, na)
		g.ForwardMask(s, mask)
		mx := math.Inf(-1)
		for i, v := range out {
			if mask[i] {
				mx = math.Max(mx, float64(v))
			}
		}
		var sum float64
		for i, v := range out {
			if mask[i] {
				sum += math.Exp(float64(v) - mx)
			}
		}
		return float64(out[a]) - mx - math.Log(sum)
	}
	var total float64
	for k := range tr.Len() {
		for t0 := tr.Off[k]; t0 < tr.Off[k+1]; t0++ {
			s := tr.States[t0*w : (t0+1)*w]
			a := int(tr.Actions[t0])
			next := append([]int32(nil), s...)
			g.Step(next, a)
			fn := logR[k]
			if t0+1 < tr.Off[k+1] {
				fn = logF(next)
			}
			d := logF(s) + logPF(s, a) - fn + math.Log(float64(g.BackwardCount(s, a)))
			total += d * d
		}
	}
	if want := total / float64(tr.Len()); math.Abs(loss-want) > 1e-5*(1+want) {
		t.Errorf("forward-looking DB loss %v, by hand %v", loss, want)
	}
	if _, err := o.Eval(noStop{g}, m, nil, &tr, logR, nil, nil); err == nil || !strings.Contains(err.Error(), "Stopper") {
		t.Errorf("an environment that cannot stop everywhere: %v", err)
	}
}

// TestFlowMatchingByHand recomputes FM's loss from the model's outputs one
// state at a time, parents found by trying every cell one step back.
func TestFlowMatchingByHand(t *testing.T) {
	g := grid(t, 2, 4)
	rng := rand.New(rand.NewPCG(25, 26))
	m := discrete.NewMLPModel(g, g, "m", []int{8}, rng)
	var tr discrete.Trajectories
	discrete.NewSampler(g).Forward(m, 4, discrete.SampleOptions{Eps: 0.5}, rng, &tr)
	logR := make([]float64, tr.Len())
	g.LogReward(tr.Final, tr.Len(), logR)
	o := discrete.Objective{Obj: &objective.FM{}}
	loss, err := o.Eval(g, m, nil, &tr, logR, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, na := g.StateLen(), g.NumActions()
	flow := func(s []int32, a int) float64 { return float64(m.Forward(s, 1).Data[a]) }
	lse := func(v []float64) float64 {
		mx := math.Inf(-1)
		for _, x := range v {
			mx = math.Max(mx, x)
		}
		var sum float64
		for _, x := range v {
			sum += math.Exp(x - mx)
		}
		return mx + math.Log(sum)
	}
	var total float64
	for k := range tr.Len() {
		for i := 1; i <= tr.Off[k+1]-tr.Off[k]; i++ {
			terminal := tr.Off[k]+i == tr.Off[k+1]
			s := append([]int32(nil), tr.Final[k*w:(k+1)*w]...)
			if !terminal {
				s = append([]int32(nil), tr.States[(tr.Off[k]+i)*w:(tr.Off[k]+i+1)*w]...)
			}
			// Parents: every state one forward action away from s.
			var in []float64
			for c := range 4 * 4 {
				for _, stop := range []int32{0, 1} {
					p := []int32{int32(c % 4), int32(c / 4), 0}
					if g.IsTerminal(p) {
						continue
					}
					mask := make([]bool, na)
					g.ForwardMask(p, mask)
					for a, ok := range mask {
						q := append([]int32(nil), p...)
						if ok {
							g.Step(q, a)
						}
						if ok && slices.Equal(q, s) && stop == 0 {
							in = append(in, flow(p, a))
						}
					}
				}
			}
			var out []float64
			if terminal {
				out = append(out, logR[k])
			} else {
				mask := make([]bool, na)
				g.ForwardMask(s, mask)
				for a, ok := range mask {
					if ok {
						out = append(out, flow(s, a))
					}
				}
			}
			d := lse(in) - lse(out)
			total += d * d
		}
	}
	if want := total / float64(tr.Len()); math.Abs(loss-want) > 1e-9*(1+want) {
		t.Errorf("FM loss %v, by hand %v", loss, want)
	}
}

// TestModifiedDBByHand recomputes modified DB on the hypergrid, where
// every cell can stop, from single-state passes: each move's residual
// with the rewards of stopping at both ends, and one reward call per
// visited state but the trajectory's end.
func TestModifiedDBByHand(t *testing.T) {
	g := grid(t, 2, 5)
	rng := rand.New(rand.NewPCG(27, 28))
	m := discrete.NewMLPModel(g, g, "m", []int{8}, rng)
	var tr discrete.Trajectories
	discrete.NewSampler(g).Forward(m, 6, discrete.SampleOptions{Eps: 0.3}, rng, &tr)
	logR := make([]float64, tr.Len())
	g.LogReward(tr.Final, tr.Len(), logR)
	o := discrete.Objective{Obj: &objective.ModifiedDB{}}
	loss, err := o.Eval(g, m, nil, &tr, logR, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, na, stop := g.StateLen(), g.NumActions(), g.StopAction()
	logp := func(s []int32, a int) float64 {
		out := m.Forward(s, 1)
		mask := make([]bool, na)
		g.ForwardMask(s, mask)
		mx := math.Inf(-1)
		for b, ok := range mask {
			if ok {
				mx = math.Max(mx, float64(out.Data[b]))
			}
		}
		var sum float64
		for b, ok := range mask {
			if ok {
				sum += math.Exp(float64(out.Data[b]) - mx)
			}
		}
		return float64(out.Data[a]) - mx - math.Log(sum)
	}
	stopR := func(s []int32) (float64, float64) { // log R of stopping at s, log P_F(⊤|s)
		if g.IsTerminal(s) {
			r := make([]float64, 1)
			g.LogReward(s, 1, r)
			return r[0], 0
		}
		x := append([]int32(nil), s...)
		g.Step(x, stop)
		r := make([]float64, 1)
		g.LogReward(x, 1, r)
		return r[0], logp(s, stop)
	}
	var total float64
	calls := 0
	for k := range tr.Len() {
		var states [][]int32
		for i := tr.Off[k]; i < tr.Off[k+1]; i++ {
			states = append(states, tr.States[i*w:(i+1)*w])
		}
		if int(tr.Actions[tr.Off[k+1]-1]) != stop {
			states = append(states, tr.Final[k*w:(k+1)*w])
		}
		calls += len(states) - 1
		for i := 0; i+1 < len(states); i++ {
			s, next := states[i], states[i+1]
			a := int(tr.Actions[tr.Off[k]+i])
			rs, ps := stopR(s)
			rn, pn := stopR(next)
			pb := -math.Log(float64(g.BackwardCount(s, a)))
			d := rn + pb + ps - rs - logp(s, a) - pn
			total += d * d
		}
	}
	if want := total / float64(tr.Len()); math.Abs(loss-want) > 1e-6*(1+want) {
		t.Errorf("modified DB loss %v, by hand %v", loss, want)
	}
	if o.RewardCalls() != calls {
		t.Errorf("%d reward calls, want %d", o.RewardCalls(), calls)
	}
}
