package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/metrics"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/teacher"
)

// Local search never lowers the score it accepts on (R for the Student,
// R_T for the Teacher), keeps trajectories valid, and pays one reward call
// per trajectory and round.
func TestLocalSearchAcceptance(t *testing.T) {
	g, _ := hypergrid.New(2, 16, hypergrid.Deceptive)
	for _, teacher := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Hidden = []int{32}
		cfg.LS.On = true
		if !teacher {
			cfg.Method = MethodTB
		}
		tr, err := New(g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		agent := tr.Student
		if teacher {
			agent = tr.Teacher
		}
		tr.sampler.Forward(agent.Model, 16, discrete.SampleOptions{}, tr.rng, &tr.batch)
		if err := tr.rewards(&tr.batch, &tr.logR); err != nil {
			t.Fatal(err)
		}
		before := slices.Clone(tr.logR)
		calls := tr.RewardCalls
		var initial []float64
		if teacher {
			tr.ls.score = grow(tr.ls.score, 16)
		}
		if err := tr.localSearch(agent, teacher); err != nil {
			t.Fatal(err)
		}
		if got := tr.RewardCalls - calls; got != 16*cfg.LS.Iterations {
			t.Errorf("teacher=%v: %d reward calls, want %d", teacher, got, 16*cfg.LS.Iterations)
		}
		// Stored log-rewards match the new terminal states.
		check := make([]float64, 16)
		g.LogReward(tr.batch.Final, 16, check)
		for b := range 16 {
			if check[b] != tr.logR[b] {
				t.Fatalf("teacher=%v: trajectory %d log R %v, stored %v", teacher, b, check[b], tr.logR[b])
			}
			if !teacher && tr.logR[b] < before[b] {
				t.Errorf("Student search lowered R of trajectory %d: %v -> %v", b, before[b], tr.logR[b])
			}
		}
		_ = initial
		// Valid trajectories from s0.
		s := make([]int32, 3)
		for b := range 16 {
			g.Init(s)
			for k := tr.batch.Off[b]; k < tr.batch.Off[b+1]; k++ {
				if !slices.Equal(s, tr.batch.State(k)) {
					t.Fatalf("trajectory %d invalid at step %d", b, k)
				}
				g.Step(s, int(tr.batch.Actions[k]))
			}
			if !slices.Equal(s, tr.batch.FinalState(b)) {
				t.Fatalf("trajectory %d does not end at its final state", b)
			}
		}
	}
}

func TestLocalSearchSchedule(t *testing.T) {
	tb := &Trainer{cfg: Config{Method: MethodTB}}
	te := &Trainer{cfg: Config{Method: MethodTeacher}}
	var sDue, tDue []int
	for i := range 32 {
		if tb.lsDue('S', i) {
			sDue = append(sDue, i)
		}
		role := "SSTT"[i%4]
		if te.lsDue(role, i) {
			tDue = append(tDue, i)
		}
	}
	if !slices.Equal(sDue, []int{14, 15, 30, 31}) {
		t.Errorf("tb local search at %v, want 2 in 16 (1 in 8 Student batches)", sDue)
	}
	if !slices.Equal(tDue, []int{14, 15, 30, 31}) {
		t.Errorf("teacher local search at %v, want 2 in 16 (1 in 4 Teacher batches)", tDue)
	}
}

func TestBufferRun(t *testing.T) {
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	for _, m := range []Method{MethodTB, MethodTeacher} {
		cfg := DefaultConfig()
		cfg.Method, cfg.Hidden, cfg.Buffer.Priority = m, []int{32}, "teacher"
		cfg.RewardCalls = 100 * 16
		tr, err := New(g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for !tr.Done() {
			if _, err := tr.Iterate(); err != nil {
				t.Fatal(err)
			}
		}
		if tr.GradSteps != 200 || tr.RewardCalls != 1600 {
			t.Errorf("%s: %d gradient steps for %d reward calls, want 200 for 1600", m, tr.GradSteps, tr.RewardCalls)
		}
		if tr.buffer.Len() == 0 || tr.buffer.Cap != g.ReplayCapacity() {
			t.Errorf("%s: buffer len %d cap %d", m, tr.buffer.Len(), tr.buffer.Cap)
		}
	}
}

func TestDBRuns(t *testing.T) {
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	for _, c := range []struct {
		m      Method
		buffer replay.Priority
		ls     bool
		nmc    int
	}{{MethodTB, "", false, 1}, {MethodTeacher, "", true, 2}, {MethodTB, replay.Teacher, false, 1}, {MethodTeacher, replay.Teacher, false, 1}} {
		cfg := DefaultConfig()
		cfg.Objective, cfg.Method, cfg.Hidden, cfg.Buffer.Priority, cfg.LS.On, cfg.NMC = ObjectiveDB, c.m, []int{32}, c.buffer, c.ls, c.nmc
		cfg.RewardCalls = 80 * 16
		tr, err := New(g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for !tr.Done() {
			it, err := tr.Iterate()
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(it.StudentLoss) || (c.m == MethodTeacher && math.IsNaN(it.TeacherLoss)) {
				t.Fatalf("%+v: NaN loss at step %d", c, tr.Step)
			}
		}
		if c.buffer != "" && (tr.buffer.Len() == 0 || tr.GradSteps < 150) {
			t.Errorf("%+v: buffer %d entries, %d gradient steps", c, tr.buffer.Len(), tr.GradSteps)
		}
		if tr.Student.LogZ != nil {
			t.Errorf("DB agent has a log Z")
		}
	}
}

func TestDBTeacherTarget(t *testing.T) {
	cfg := DefaultConfig()
	ds := []float64{0.5, -0.2, 1}
	logR := math.Log(0.1)
	want := math.Log(math.Log(1+1e-3+20*0.25) + math.Log(1+1e-3+0.04) + math.Log(1+1e-3+20) + 1e-8)
	if got := trajectoryTarget(cfg, ds, logR); math.Abs(got-want) > 1e-12 {
		t.Errorf("reference target %v, want %v", got, want)
	}
	cfg.Reward.Form = teacher.Paper
	want = math.Log(1e-3 + 20*0.25 + 0.04 + 20)
	if got := trajectoryTarget(cfg, ds, logR); math.Abs(got-want) > 1e-12 {
		t.Errorf("paper target %v, want %v", got, want)
	}
}

func TestGAFNRuns(t *testing.T) {
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	cfg := DefaultConfig()
	cfg.Method, cfg.Hidden, cfg.RewardCalls = MethodGAFN, []int{64, 64}, 1500*16
	tr, err := New(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(tr.gafn.target.Params()[0].Value)
	for !tr.Done() {
		it, err := tr.Iterate()
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(it.StudentLoss) {
			t.Fatalf("NaN loss at step %d", tr.Step)
		}
	}
	if !slices.Equal(before, tr.gafn.target.Params()[0].Value) {
		t.Error("the RND target network changed")
	}
	// The predictor learned the visited states: small distances now.
	s := make([]int32, 3)
	var tgt nn.Matrix
	d := tr.gafn.rndDistance(g, s, 1, &tgt)
	if d[0] > 0.5 {
		t.Errorf("RND distance at s0 after training %v", d[0])
	}
	target, _, _ := metrics.Target(g)
	p, _ := metrics.Terminating(g, tr.Student.Model)
	if dd := metrics.Compare(p, target); dd.TV > 0.1 || len(tr.ModesFound) != 4 {
		t.Errorf("GAFN Student: TV %v, %d modes", dd.TV, len(tr.ModesFound))
	}
}

// With a single path to every x (d = 1), all N_MC backward trajectories
// coincide, so averaging them must give the single-sample Teacher target;
// on d = 2 the extra samples must change it.
func TestNMCAveraging(t *testing.T) {
	for _, c := range []struct {
		d     int
		equal bool
	}{{1, true}, {2, false}} {
		g, _ := hypergrid.New(c.d, 12, hypergrid.Deceptive)
		targets := map[int][]float64{}
		for _, nmc := range []int{1, 5} {
			cfg := DefaultConfig()
			cfg.Hidden, cfg.NMC, cfg.Eps = []int{16}, nmc, 1
			tr, err := New(g, cfg)
			if err != nil {
				t.Fatal(err)
			}
			tr.sampler.Forward(tr.Student.Model, 16, discrete.SampleOptions{Eps: 1}, tr.rng, &tr.batch)
			tr.rewards(&tr.batch, &tr.logR)
			tr.delta = grow(tr.delta, 16)
			tr.tb.Loss(g, tr.Student.Model, tr.Student.LogZ, &tr.batch, tr.logR, tr.delta, false)
			tr.teacherTargets()
			targets[nmc] = slices.Clone(tr.logRT)
		}
		same := true
		for b := range targets[1] {
			if math.Abs(targets[1][b]-targets[5][b]) > 1e-9 {
				same = false
			}
		}
		if same != c.equal {
			t.Errorf("d=%d: N_MC=5 targets equal to N_MC=1: %v, want %v", c.d, same, c.equal)
		}
	}
}

// The GAFN loss's gradients (policy, flow head, log Z) against finite
// differences, with states shared between trajectories.
func TestGAFNGradient(t *testing.T) {
	g, _ := hypergrid.New(2, 5, hypergrid.Deceptive)
	cfg := DefaultConfig()
	cfg.Method, cfg.Hidden, cfg.GAFNScale = MethodGAFN, []int{8}, 0.5
	tr, err := New(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr.sampler.Forward(tr.Student.Model, 8, discrete.SampleOptions{Eps: 0.5}, tr.rng, &tr.batch)
	tr.rewards(&tr.batch, &tr.logR)
	T := tr.batch.NumTransitions()
	tr.gafn.ri = grow(tr.gafn.ri, T)
	for k := range T {
		tr.gafn.ri[k] = 0.1 + 0.05*float64(k%3)
	}
	params := tr.Student.Params()
	nn.ZeroGrad(params)
	tr.gafnLoss(true)
	rng := rand.New(rand.NewPCG(1, 1))
	const h = 1e-3
	for _, p := range params {
		for range 6 {
			i := rng.IntN(p.Len())
			old := p.Value[i]
			p.Value[i] = old + h
			lp := tr.gafnLoss(false)
			p.Value[i] = old - h
			lm := tr.gafnLoss(false)
			p.Value[i] = old
			num := (lp - lm) / (2 * h)
			if math.Abs(num-float64(p.Grad[i])) > 1e-2*(1+math.Abs(num)) {
				t.Errorf("%s[%d]: analytic %.6g, finite difference %.6g", p.Name, i, p.Grad[i], num)
			}
		}
	}
}

// "completion" pairing stores the i-th finished x with the i-th
// trajectory's reward, as the reference did before commit 77091bf.
func TestBufferPairing(t *testing.T) {
	g, _ := hypergrid.New(2, 16, hypergrid.Deceptive)
	for _, pairing := range []string{"batch", "completion"} {
		cfg := DefaultConfig()
		cfg.Method, cfg.Hidden, cfg.Buffer.Priority, cfg.Buffer.Pairing, cfg.Eps = MethodTB, []int{16}, replay.Reward, pairing, 1
		tr, err := New(g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 { // ten on-policy batches added to the buffer
			if _, err := tr.Iterate(); err != nil {
				t.Fatal(err)
			}
		}
		mismatched := 0
		xs, lr := tr.buffer.Sample(2000, tr.rng, nil, nil)
		for i := range lr {
			want := math.Log(g.RewardOf(xs[i*3 : i*3+2]))
			if math.Abs(lr[i]-want) > 1e-12 {
				mismatched++
			}
		}
		if (mismatched > 0) != (pairing == "completion") {
			t.Errorf("pairing %s: %d of 2000 replays carry another state's reward", pairing, mismatched)
		}
	}
}

// Running the other agent beside the sampling (the companion) changes where
// its forward pass happens, not what it computes: a Teacher run with it
// ends with the same bits as one without.
func TestCompanionLeavesTrainingUnchanged(t *testing.T) {
	// Batches of 128 on a 3-d grid: the full passes (hundreds of distinct
	// states) and the companion's chunks take different product paths.
	g, _ := hypergrid.New(3, 20, hypergrid.Deceptive)
	params := func(noCompanion bool) []float32 {
		cfg := DefaultConfig()
		cfg.Hidden = []int{64, 64}
		cfg.Batch = 128
		tr, err := New(g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		tr.noCompanion = noCompanion
		for range 10 {
			if _, err := tr.Iterate(); err != nil {
				t.Fatal(err)
			}
		}
		var all []float32
		for _, p := range append(tr.Student.Params(), tr.Teacher.Params()...) {
			all = append(all, p.Value...)
		}
		return all
	}
	with, without := params(false), params(true)
	if !slices.Equal(with, without) {
		t.Error("parameters differ with and without the companion pass")
	}
}

// Evaluation samples do not depend on how many goroutines draw them, and a
// run of them is reproducible from the seed.
func TestSampleTerminalsIndependentOfWorkers(t *testing.T) {
	g, _ := hypergrid.New(2, 8, hypergrid.Deceptive)
	cfg := DefaultConfig()
	cfg.Hidden = []int{16}
	tr, err := New(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 2500 // three batches, the last partial
	var first []int32
	for _, workers := range []int{1, 2, 3} {
		xs := sampleTerminalsWorkers(tr, n, rand.New(rand.NewPCG(7, 7)), workers)
		if len(xs) != n*g.StateLen() {
			t.Fatalf("%d workers: %d words, want %d", workers, len(xs), n*g.StateLen())
		}
		if first == nil {
			first = xs
			continue
		}
		if !slices.Equal(xs, first) {
			t.Errorf("%d workers give other samples than 1", workers)
		}
	}
	for i := range n {
		if !g.IsTerminal(first[i*g.StateLen() : (i+1)*g.StateLen()]) {
			t.Fatalf("sample %d is not terminal: %v", i, first[i*g.StateLen():(i+1)*g.StateLen()])
		}
	}
}

// BufferTies "hash" reaches the buffer, the default keeps oldest-first
// ties, and an unknown value names itself.
func TestBufferTies(t *testing.T) {
	g, _ := hypergrid.New(2, 16, hypergrid.Deceptive)
	for _, ties := range []string{"", "oldest", "hash"} {
		cfg := DefaultConfig()
		cfg.Method, cfg.Hidden, cfg.Buffer.Priority, cfg.Buffer.Ties = MethodTB, []int{16}, replay.Reward, ties
		tr, err := New(g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if tr.buffer.HashTies != (ties == "hash") {
			t.Errorf("ties %q: buffer HashTies %v", ties, tr.buffer.HashTies)
		}
	}
	cfg := DefaultConfig()
	cfg.Buffer.Priority, cfg.Buffer.Ties = replay.Reward, "newest"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `"newest"`) {
		t.Errorf("ties newest: %v", err)
	}
}
