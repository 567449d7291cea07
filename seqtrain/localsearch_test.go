package seqtrain

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/teacher"
)

// TestLocalSearchBatch: the online batch is the chains' first objects and
// every proposal, each a whole trajectory from the root; with greedy
// acceptance a chain's reward never falls.
func TestLocalSearchBatch(t *testing.T) {
	task := toyTask{A: 3, L: 4}
	cfg := toyConfig(PER)
	cfg.OnlineBatch = 8
	cfg.LS = LocalSearch{Rounds: 3, Back: 2, Greedy: true}
	tr, err := New(task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var last []float64
	tr.ls.trace = func(final []int32, m int) {
		w := tr.env.StateLen()
		logR := make([]float64, m)
		tr.rewards(final, m, logR)
		for b := range m {
			if last != nil && logR[b] < last[b] {
				t.Errorf("greedy chain %d fell from %v to %v", b, last[b], logR[b])
			}
			if !tr.env.IsTerminal(final[b*w : (b+1)*w]) {
				t.Errorf("chain %d holds a non-terminal state", b)
			}
		}
		last = logR
	}
	calls := tr.RewardCalls
	if _, err := tr.Iterate(); err != nil {
		t.Fatal(err)
	}
	if tr.RewardCalls-calls != 8 {
		t.Errorf("%d reward calls, want 8", tr.RewardCalls-calls)
	}
	if tr.cfg.Method.Replays() {
		// The round's last batch is the replay's: the online batch of
		// 8 local-search objects is what the buffer received.
		if n := tr.per.Len(); n < 1 || n > 8 {
			t.Fatalf("the buffer holds %d objects after one round, want 1 to 8 (the online batch)", n)
		}
	} else if tr.tr.Len() != 8 {
		t.Fatalf("%d trajectories, want 8", tr.tr.Len())
	}
	for _, bad := range []LocalSearch{{Rounds: 3, Back: 0}, {Rounds: 2, Back: 1}} {
		c := cfg
		c.LS = bad
		if err := c.Validate(); err == nil {
			t.Errorf("local search %+v with batch 8 must be invalid", bad)
		}
	}
}

// TestLocalSearchTrajectoriesAreWhole checks every trajectory of a local
// search batch: it starts at the root, each step is a valid action, and
// it ends at its final state.
func TestLocalSearchTrajectoriesAreWhole(t *testing.T) {
	task := toyTask{A: 3, L: 4}
	cfg := toyConfig(TB)
	cfg.OnlineBatch = 12
	cfg.LS = LocalSearch{Rounds: 5, Back: 3}
	tr, _ := New(task, cfg)
	if err := tr.localSearchBatch(tr.Student, false); err != nil {
		t.Fatal(err)
	}
	env, w := tr.env, tr.env.StateLen()
	if tr.tr.Len() != 12 || len(tr.logR) != 12 {
		t.Fatalf("%d trajectories and %d rewards, want 12", tr.tr.Len(), len(tr.logR))
	}
	mask := make([]bool, env.NumActions())
	s := make([]int32, w)
	for b := range 12 {
		i0, i1 := tr.tr.Off[b], tr.tr.Off[b+1]
		copy(s, tr.tr.State(i0))
		if !env.IsInitial(s) {
			t.Fatalf("trajectory %d does not start at the root", b)
		}
		for i := i0; i < i1; i++ {
			env.ForwardMask(s, mask)
			if a := tr.tr.Actions[i]; !mask[a] {
				t.Fatalf("trajectory %d step %d: action %d invalid", b, i-i0, a)
			}
			env.Step(s, int(tr.tr.Actions[i]))
		}
		final := tr.tr.FinalState(b)
		for k := range w {
			if s[k] != final[k] {
				t.Fatalf("trajectory %d ends at %v, recorded %v", b, s, final)
			}
		}
		one := make([]float64, 1)
		tr.rewards(final, 1, one)
		if one[0] != tr.logR[b] {
			t.Errorf("trajectory %d: log R %v, recorded %v", b, one[0], tr.logR[b])
		}
	}
}

// TestLocalSearchChainTargetsR: the reference's acceptance (a Barker coin
// on Δlog R plus the proposal's back-and-forth log-probabilities) keeps
// R/Z invariant, whatever the policy: long chains of an untrained Student
// visit the sequences in proportion to R.
func TestLocalSearchChainTargetsR(t *testing.T) {
	task := toyTask{A: 2, L: 3}
	cfg := toyConfig(TB)
	const rounds, chains = 199, 32
	cfg.OnlineBatch = (rounds + 1) * chains
	cfg.LS = LocalSearch{Rounds: rounds, Back: 2}
	tr, err := New(task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	count := map[uint64]float64{}
	total := 0.0
	k := 0
	tr.ls.trace = func(final []int32, m int) {
		k++
		if k%rounds < 100 { // burn-in of each batch
			return
		}
		w := tr.env.StateLen()
		for b := range m {
			count[tr.env.TerminalKey(final[b*w:(b+1)*w])]++
			total++
		}
	}
	for range 15 {
		if err := tr.localSearchBatch(tr.Student, false); err != nil {
			t.Fatal(err)
		}
	}
	z := task.LogZ()
	var tv float64
	for _, x := range task.all() {
		p := math.Exp(task.logR(x) - z)
		key := uint64(0)
		for _, v := range x {
			key = key*2 + uint64(v)
		}
		tv += math.Abs(count[key]/total - p)
	}
	tv /= 2
	t.Logf("total variation %.4f over %.0f visits", tv, total)
	if tv > 0.025 {
		t.Errorf("total variation %.3f between the chains' visits and R/Z", tv)
	}
}

// TestTeacherLocalSearch: with LS.Teacher the Teacher's rounds are the
// Teacher's search, whose chains' scores are the Teacher's reward log R_T
// of their trajectories under the Student (recomputed here) and never fall
// with greedy acceptance; the Student then trains on other data than with
// PER + LS. Without it, as in the authors' code, Teacher + PER + LS
// leaves the Student exactly as PER + LS does: the Teacher never samples.
func TestTeacherLocalSearch(t *testing.T) {
	task := toyTask{A: 3, L: 4}
	run := func(m Method, teacherLS bool, check bool) []float32 {
		cfg := toyConfig(m)
		cfg.OnlineBatch = 8
		cfg.LS = LocalSearch{Rounds: 3, Back: 2, Greedy: true, Teacher: teacherLS}
		tr, err := New(task, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var last []float64
		teacherRounds := 0
		if check {
			tr.ls.trace = func(final []int32, m int) {
				d := make([]float64, m)
				var tb discrete.TB
				tb.Eval(tr.env, tr.Student.Model, tr.Student.LogZ, &tr.ls.chains, tr.ls.logR, d)
				for b := range m {
					want := tr.ls.logR[b]
					if teacherLS && tr.cfg.Schedule.Role(tr.Round) == teacher.Teacher {
						want = cfg.Reward.LogReward(cfg.Reward.Term(d[b]), tr.ls.logR[b])
					}
					if got := tr.ls.score[b]; math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
						t.Errorf("round %d, chain %d: score %v, want %v", tr.Round, b, got, want)
					}
					if last != nil && tr.ls.score[b] < last[b] {
						t.Errorf("round %d: greedy chain %d fell from %v to %v", tr.Round, b, last[b], tr.ls.score[b])
					}
				}
				last = append(last[:0], tr.ls.score[:m]...)
			}
		}
		for range 9 {
			last = nil
			it, err := tr.Iterate()
			if err != nil {
				t.Fatal(err)
			}
			if it.Sampler == teacher.Teacher {
				teacherRounds++
			}
		}
		if want := map[bool]int{false: 0, true: 3}[teacherLS && m.HasTeacher()]; teacherRounds != want {
			t.Errorf("%s, Teacher search %v: %d Teacher rounds in 9, want %d", m, teacherLS, teacherRounds, want)
		}
		var v []float32
		for _, p := range tr.Student.Opt.Params() {
			v = append(v, p.Value...)
		}
		return v
	}
	per := run(PER, false, true)
	if !slices.Equal(per, run(TeacherPER, false, true)) {
		t.Error("Teacher + PER + LS (Student's search only) trained the Student differently from PER + LS")
	}
	if slices.Equal(per, run(TeacherPER, true, true)) {
		t.Error("with the Teacher's search, the Student trained as with PER + LS")
	}
	if err := (Config{Method: PER, LS: LocalSearch{Rounds: 3, Back: 2, Teacher: true}}).LS.validate(8); err != nil {
		t.Fatal(err)
	}
	c := toyConfig(PER)
	c.OnlineBatch = 8
	c.LS = LocalSearch{Rounds: 3, Back: 2, Teacher: true}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "needs a Teacher method") {
		t.Errorf("Teacher search with PER: %v", err)
	}
}
