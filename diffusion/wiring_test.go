package diffusion

// Tests of the trainer's wiring of the Teacher algorithm (package
// teacher): which objects pass the log-reward threshold, the advantage
// terms and the Teacher's targets, the replay priorities of PRT, PER and
// the Teacher's slot, and the reward form reaching the Teacher. Each
// recomputes what an iteration must have done from its batch, with
// snapshots of the agents taken before the iteration, instead of
// comparing with recorded outputs; TestDiffusionGolden then pins whole
// short runs bit for bit.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/teacher"
)

// snapshot returns a copy of agent a (of optimiser settings o) with its
// own parameters holding a's current values: a's state before an
// iteration, which the iteration does not change.
func snapshot(t *testing.T, tr *Trainer, a *Agent, o Optim) *Agent {
	t.Helper()
	c, err := newAgent(tr.cfg, o, tr.Proc.Dim, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	src, dst := a.Params(), c.Params()
	if len(src) != len(dst) {
		t.Fatalf("snapshot has %d parameters, the agent %d", len(dst), len(src))
	}
	for i := range src {
		if len(src[i].Value) != len(dst[i].Value) {
			t.Fatalf("parameter %s: %d values, snapshot %d", src[i].Name, len(src[i].Value), len(dst[i].Value))
		}
		copy(dst[i].Value, src[i].Value)
	}
	return c
}

// copyBatch returns a deep copy of b (an evaluation writes LogPF).
func copyBatch(b *batch) batch {
	return batch{N: b.N, Dim: b.Dim, Steps: b.Steps,
		X:     slices.Clone(b.X[:(b.Steps+1)*b.N*b.Dim]),
		LogPF: slices.Clone(b.LogPF[:b.N]), LogPB: slices.Clone(b.LogPB[:b.N])}
}

// energyLogR is log R of the n rows of x, straight from the energy.
func energyLogR(t *testing.T, e energy.Energy, x []float32, n int) []float64 {
	t.Helper()
	out := make([]float64, n)
	if err := e.LogReward(x[:n*e.Dim()], out); err != nil {
		t.Fatal(err)
	}
	return out
}

// row is row b of the n×d matrix x.
func row(x []float32, b, d int) []float32 { return x[b*d : (b+1)*d] }

// near reports whether a and b agree to round-off of values of their
// size. The recomputations agree bit for bit today on every backend; the
// slack only spares a harmless reordering of a sum (a broken wiring
// changes the values by orders of magnitude more).
func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// studentRound is what a Student ('S') iteration must have computed,
// recomputed independently after it: the batch (a copy), log R of its
// terminal states from the energy, and the Student's TB residuals δ on it
// before its update (a TB evaluation of its pre-iteration snapshot).
type studentRound struct {
	it      Iteration
	batch   batch
	x       []float32 // terminal states, n×d
	logR    []float64
	delta   []float64
	loss    float64 // the pre-update Student's TB loss on the batch
	teacher *Agent  // the Teacher's pre-iteration snapshot, or nil
}

// iterateStudent runs one iteration, which must be a Student slot, and
// recomputes its round.
func iterateStudent(t *testing.T, tr *Trainer) studentRound {
	t.Helper()
	s := snapshot(t, tr, tr.Student, tr.cfg.Student)
	var r studentRound
	if tr.Teacher != nil {
		r.teacher = snapshot(t, tr, tr.Teacher, tr.cfg.Teacher)
	}
	var err error
	if r.it, err = tr.Iterate(); err != nil {
		t.Fatal(err)
	}
	if r.it.Role != teacher.Student {
		t.Fatalf("iteration %d has role %c, want a Student slot", tr.Step-1, r.it.Role)
	}
	r.batch = copyBatch(&tr.batch)
	n := r.batch.N
	if n != tr.cfg.Batch {
		t.Fatalf("Student batch of %d, want %d", n, tr.cfg.Batch)
	}
	r.x = slices.Clone(r.batch.Final())
	r.logR = energyLogR(t, tr.Energy, r.x, n)
	r.delta = make([]float64, n)
	b := copyBatch(&r.batch)
	r.loss = s.tb.Eval(tr.Proc, s.Model, float64(s.LogZ.Value[0]), &b, r.logR, r.delta)
	return r
}

// term is the advantage term row b must have: the floor below the
// threshold, the reward's term of the Student's δ elsewhere.
func (r studentRound) term(tr *Trainer, rw teacher.Reward, b int) float64 {
	if r.logR[b] < tr.Threshold {
		return rw.Floor()
	}
	return rw.Term(r.delta[b])
}

// above lists the rows of log R strictly above the threshold, the
// objects that train the Teacher; it fails unless the batch has rows on
// both sides (else a missing or flipped filter would go unnoticed).
func above(t *testing.T, logR []float64, threshold float64) []int {
	t.Helper()
	var rows []int
	for b, v := range logR {
		if v > threshold {
			rows = append(rows, b)
		}
	}
	if len(rows) == 0 || len(rows) == len(logR) {
		t.Fatalf("%d of %d rows above the threshold %v: the test needs rows on both sides", len(rows), len(logR), threshold)
	}
	return rows
}

// checkTeacherRound checks a Teacher-method Student round against its
// independent recomputation: the Student's δ and loss, the advantage
// terms (floored exactly for the rows below the threshold), the Teacher's
// log-rewards cfg.Reward.LogReward(term, log R) on every row, the states
// the Teacher trains on (exactly the rows above the threshold, in order)
// with their targets, and the Teacher's reported loss (its pre-iteration
// snapshot's TB loss on its trajectories with those targets). It returns
// the expected Teacher log-rewards.
func checkTeacherRound(t *testing.T, tr *Trainer, r studentRound) []float64 {
	t.Helper()
	rw, d, n := tr.cfg.Reward, tr.Proc.Dim, r.batch.N
	if !slices.Equal(tr.logR[:n], r.logR) {
		t.Fatalf("trainer's log R differs from the energy's on its batch")
	}
	if !near(r.it.StudentLoss, r.loss) {
		t.Errorf("Student loss %v, want %v (the pre-update Student's TB loss)", r.it.StudentLoss, r.loss)
	}
	wantRT := make([]float64, n)
	for b := range n {
		if !near(tr.delta[b], r.delta[b]) {
			t.Fatalf("row %d: Student δ %v, want %v", b, tr.delta[b], r.delta[b])
		}
		term := r.term(tr, rw, b)
		if r.logR[b] < tr.Threshold && tr.term[b] != rw.Floor() {
			t.Errorf("row %d below the threshold (log R %v < %v): term %v, want the floor %v", b, r.logR[b], tr.Threshold, tr.term[b], rw.Floor())
		} else if !near(tr.term[b], term) {
			t.Errorf("row %d (log R %v, threshold %v): term %v, want %v", b, r.logR[b], tr.Threshold, tr.term[b], term)
		}
		wantRT[b] = rw.LogReward(term, r.logR[b])
		if !near(tr.logRT[b], wantRT[b]) {
			t.Errorf("row %d: Teacher log-reward %v, want %v", b, tr.logRT[b], wantRT[b])
		}
	}
	kept := above(t, r.logR, tr.Threshold)
	if !slices.Equal(tr.kept, kept) {
		t.Fatalf("the Teacher kept rows %v, want those above the threshold %v: %v", tr.kept, tr.Threshold, kept)
	}
	// The Teacher's own trajectories end at the kept states, and its
	// targets are their log-rewards.
	a := tr.Teacher
	k := len(kept)
	if a.batch.N != k {
		t.Fatalf("the Teacher trained on %d trajectories, want %d", a.batch.N, k)
	}
	targets := make([]float64, k)
	for i, b := range kept {
		if !slices.Equal(row(a.batch.Final(), i, d), row(r.x, b, d)) {
			t.Fatalf("Teacher trajectory %d ends at %v, want row %d %v", i, row(a.batch.Final(), i, d), b, row(r.x, b, d))
		}
		targets[i] = wantRT[b]
		if !near(tr.tLogR[i], targets[i]) {
			t.Errorf("Teacher target %d (row %d): %v, want %v", i, b, tr.tLogR[i], targets[i])
		}
	}
	tb := copyBatch(&a.batch)
	loss := r.teacher.tb.Eval(tr.Proc, r.teacher.Model, float64(r.teacher.LogZ.Value[0]), &tb, targets, make([]float64, k))
	if !near(r.it.TeacherLoss, loss) {
		t.Errorf("Teacher loss %v, want %v (its TB loss on the kept states' targets)", r.it.TeacherLoss, loss)
	}
	return wantRT
}

// TestThresholdFilter: in a Student slot of the Teacher method, the
// threshold is the configured percentile of one batch of the untrained
// Student; the rows of the batch below it get the floor advantage term
// and the others the term of the Student's δ; the Teacher trains on
// exactly the rows above it, with targets LogReward(term, log R), and
// reports the loss of those targets. Dropping or flipping the filter in
// targets or teacherStep fails it.
func TestThresholdFilter(t *testing.T) {
	for _, pct := range []float64{90, 50} {
		t.Run(fmt.Sprint(pct), func(t *testing.T) {
			cfg := smallConfig(MethodTeacher, 20)
			cfg.Percentile = pct
			tr, err := New(energy.GMM25{}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			// New leaves the untrained Student's batch that fixed the
			// threshold in tr.batch.
			if tr.batch.N != cfg.Batch {
				t.Fatalf("threshold batch of %d, want one batch (%d)", tr.batch.N, cfg.Batch)
			}
			want, err := replay.Percentile(energyLogR(t, tr.Energy, tr.batch.Final(), cfg.Batch), pct)
			if err != nil || tr.Threshold != want {
				t.Fatalf("threshold %v, want the %v-th percentile %v of the untrained Student's batch (%v)", tr.Threshold, pct, want, err)
			}
			// Iterations 0 and 2 of STSB are Student slots (1 has the
			// Teacher sample, 2 follows a Teacher update).
			for step := range 3 {
				if step == 1 {
					if _, err := tr.Iterate(); err != nil {
						t.Fatal(err)
					}
					continue
				}
				checkTeacherRound(t, tr, iterateStudent(t, tr))
			}
		})
	}
}

// TestTeacherRewardReachesTeacher: the configured reward (its form and
// α) makes the Teacher's log-rewards: they equal cfg.Reward.LogReward of
// that reward's terms, and differ from the default reward's on the same
// batch (the first batch does not depend on the reward), so a trainer
// that used a fixed form or α fails.
func TestTeacherRewardReachesTeacher(t *testing.T) {
	def := smallConfig(MethodTeacher, 5).Reward
	cases := []struct {
		name string
		rw   teacher.Reward
	}{
		{"default", def},
		{"loglog-alpha0", teacher.Reward{Form: teacher.LogLog, C: 19, Alpha: 0, Eps: 1e-3}},
		{"loglog-alpha1", teacher.Reward{Form: teacher.LogLog, C: 19, Alpha: 1, Eps: 1e-3}},
		{"paper", teacher.Reward{Form: teacher.Paper, C: 19, Alpha: 0.5, Eps: 1e-3}},
		{"paper-alpha0.2-C0", teacher.Reward{Form: teacher.Paper, C: 0, Alpha: 0.2, Eps: 1e-2}},
		{"grid-reference", teacher.Reward{Form: teacher.GridReference, C: 19, Alpha: 0.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := smallConfig(MethodTeacher, 5)
			cfg.Reward = c.rw
			tr, err := New(energy.GMM25{}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := iterateStudent(t, tr)
			got := checkTeacherRound(t, tr, r)
			if c.rw == def {
				return
			}
			// The default reward's log-rewards of the Teacher's rows.
			differ := 0
			for _, b := range tr.kept {
				if v := def.LogReward(r.term(tr, def, b), r.logR[b]); math.Abs(v-got[b]) > 1e-6*max(1, math.Abs(v)) {
					differ++
				}
			}
			if differ != len(tr.kept) {
				t.Errorf("%d of the %d Teacher targets equal the default reward's: the case does not tell the rewards apart", len(tr.kept)-differ, len(tr.kept))
			}
		})
	}
}

// entry is one replay buffer entry.
type entry struct {
	x       []float32
	logR, p float64
}

// added lists the buffer entries not in before (keys), oldest first.
func added(tr *Trainer, before map[uint64]bool) []entry {
	var es []entry
	tr.buffer.Each(func(k uint64, x []float32, logR, p float64) {
		if !before[k] {
			es = append(es, entry{slices.Clone(x), logR, p})
		}
	})
	return es
}

// keys is the set of the buffer's keys.
func keys(tr *Trainer) map[uint64]bool {
	m := map[uint64]bool{}
	tr.buffer.Each(func(k uint64, _ []float32, _, _ float64) { m[k] = true })
	return m
}

// checkEntries compares the buffer's new entries with the expected ones.
func checkEntries(t *testing.T, got, want []entry, stored int) {
	t.Helper()
	if len(got) != len(want) || stored != len(want) {
		t.Fatalf("%d entries added (%d reported), want %d", len(got), stored, len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !slices.Equal(g.x, w.x) || g.logR != w.logR {
			t.Fatalf("entry %d: x %v log R %v, want %v, %v", i, g.x, g.logR, w.x, w.logR)
		}
		if !near(g.p, w.p) {
			t.Errorf("entry %d (log R %v): priority %v, want %v", i, g.logR, g.p, w.p)
		}
	}
}

// TestReplayPriorities: what a Student slot adds to the buffer, and with
// which priority, recomputed from the batch and the Student's δ before
// its update: PER adds every row at iteration 0 and afterwards only the
// rows above the threshold, with priority teacher.Advantage(term) (the
// floor's below the threshold); PRT adds every row with priority log R;
// the Teacher method adds its first batch only. Swapping PER's and PRT's
// priorities, or dropping PER's filter, fails it.
func TestReplayPriorities(t *testing.T) {
	paper := teacher.Reward{Form: teacher.Paper, C: 19, Alpha: 0.5, Eps: 1e-3}
	cases := []struct {
		m    Method
		rw   *teacher.Reward // nil: the default
		step int             // a Student slot: 0 or 2 (SB, STSB)
	}{
		{MethodPER, nil, 0}, {MethodPER, nil, 2}, {MethodPER, &paper, 2},
		{MethodPRT, nil, 0}, {MethodPRT, nil, 2},
		{MethodTeacher, nil, 0}, {MethodTeacher, nil, 2},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s-%d", c.m, c.step)
		if c.rw != nil {
			name += "-" + string(c.rw.Form)
		}
		t.Run(name, func(t *testing.T) {
			cfg := smallConfig(c.m, 10)
			if c.rw != nil {
				cfg.Reward = *c.rw
			}
			tr, err := New(energy.GMM25{}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for tr.Step < c.step {
				if _, err := tr.Iterate(); err != nil {
					t.Fatal(err)
				}
			}
			before := keys(tr)
			r := iterateStudent(t, tr)
			d := tr.Proc.Dim
			above(t, r.logR, tr.Threshold)
			var want []entry
			for b := range r.batch.N {
				var p float64
				switch {
				case c.m == MethodPRT:
					p = r.logR[b]
				case c.step == 0:
					p = teacher.Advantage(r.term(tr, cfg.Reward, b))
				case c.m == MethodPER && r.logR[b] > tr.Threshold:
					p = teacher.Advantage(cfg.Reward.Term(r.delta[b]))
				default:
					continue
				}
				want = append(want, entry{row(r.x, b, d), r.logR[b], p})
			}
			checkEntries(t, added(tr, before), want, r.it.Stored)
		})
	}
}

// TestTeacherSlotPriorities: a Teacher ('T') slot adds to the buffer
// exactly the Teacher's samples above the threshold, with their log R and
// the priority teacher.Advantage(Term(δ)) of the Student's δ on fresh
// backward trajectories to them. The iteration is replayed independently
// from snapshots of both agents and of the random stream.
func TestTeacherSlotPriorities(t *testing.T) {
	for _, rw := range []teacher.Reward{
		smallConfig(MethodTeacher, 5).Reward,
		{Form: teacher.Paper, C: 19, Alpha: 0.5, Eps: 1e-3},
	} {
		t.Run(string(rw.Form), func(t *testing.T) {
			cfg := smallConfig(MethodTeacher, 5)
			cfg.Reward = rw
			tr, err := New(energy.GMM25{}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Iterate(); err != nil { // iteration 0 (S) fills the buffer
				t.Fatal(err)
			}
			s := snapshot(t, tr, tr.Student, cfg.Student)
			tc := snapshot(t, tr, tr.Teacher, cfg.Teacher)
			src := *tr.src // the main stream's state: the Teacher samples from it
			before := keys(tr)
			it, err := tr.Iterate()
			if err != nil {
				t.Fatal(err)
			}
			if it.Role != teacher.Teacher {
				t.Fatalf("iteration 1 has role %c, want T", it.Role)
			}
			// Replay: the Teacher's batch, its rows above the threshold,
			// the Student's backward trajectories to them and its δ.
			rng := rand.New(&src)
			d := tr.Proc.Dim
			var tb, scored batch
			var sm sampler
			sm.Forward(tr.Proc, tc.Model, cfg.Batch, sampleOptions{}, rng, &tb)
			logR := energyLogR(t, tr.Energy, tb.Final(), cfg.Batch)
			var xs []float32
			var lr []float64
			for _, b := range above(t, logR, tr.Threshold) {
				xs = append(xs, row(tb.Final(), b, d)...)
				lr = append(lr, logR[b])
			}
			k := len(lr)
			sm.Backward(tr.Proc, xs, k, rng, &scored)
			delta := make([]float64, k)
			s.tb.Eval(tr.Proc, s.Model, float64(s.LogZ.Value[0]), &scored, lr, delta)
			want := make([]entry, k)
			for i := range k {
				want[i] = entry{row(xs, i, d), lr[i], teacher.Advantage(rw.Term(delta[i]))}
			}
			checkEntries(t, added(tr, before), want, it.Stored)
		})
	}
}

// TestDiffusionGolden guards the diffusion trainer's results bit for bit
// across refactors, as train's TestGridGolden does the grid's: short runs
// (smallConfig, 20 iterations) of tb, per and teacher on 25GMM must end
// with exactly the parameters (hashTrainer: every agent's) they ended with
// when the hashes were recorded, on every kernel backend this machine has
// (each rounds differently). A change that alters results on purpose must
// say so and re-record them: run
//
//	go test -run TestDiffusionGolden -v ./diffusion/
//
// and copy the logged hashes. A backend missing from a case's map fails
// with its hash logged (record it on a machine that has it).
func TestDiffusionGolden(t *testing.T) {
	cases := []struct {
		m    Method
		want map[kernel.Backend]string
	}{
		{MethodTB, map[kernel.Backend]string{
			"go": "7bc9a35c7d87238", "avx2+fma": "7320f03708fbf691", "avx512": "7320f03708fbf691"}},
		{MethodPER, map[kernel.Backend]string{
			"go": "b9d841211fa0cf4a", "avx2+fma": "c1672288ec6b6266", "avx512": "c1672288ec6b6266"}},
		{MethodTeacher, map[kernel.Backend]string{
			"go": "6a35ceaeecd856aa", "avx2+fma": "5b163002a02389f5", "avx512": "5b163002a02389f5"}},
	}
	for _, b := range kernel.Available() {
		prev := kernel.Use(b)
		for _, c := range cases {
			tr, err := New(energy.GMM25{}, smallConfig(c.m, 20))
			if err != nil {
				t.Fatal(err)
			}
			for !tr.Done() {
				if _, err := tr.Iterate(); err != nil {
					t.Fatal(err)
				}
			}
			got := hashTrainer(tr)
			t.Logf("%s %s: %s", b, c.m, got)
			if want, ok := c.want[b]; !ok || got != want {
				t.Errorf("%s %s: parameters hash %s, want %q (results changed)", b, c.m, got, want)
			}
		}
		kernel.Use(prev)
	}
}
