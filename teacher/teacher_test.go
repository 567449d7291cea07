package teacher_test

import (
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/teacher"
)

// TestRewardFixedValues checks every form against values computed by hand
// (Python's math module) from the formulas of the package comment.
func TestRewardFixedValues(t *testing.T) {
	cases := []struct {
		delta, logR, alpha  float64
		grid, loglog, paper float64
	}{
		{1.5, -2, 0, 1.3425156940582417, 1.1496358215947855, 3.806684711745632},
		{-0.7, -2, 0.5, -1.917674030777526, -2.5144076792418026, -1.7113111511876165},
		{2, 1, 0.5, 1.9803449994758469, 1.8120008023827907, 4.8820391345957574},
		{0, -3, 0.5, -8.408210232483661, -8.408255070773826, -8.407755278982137},
	}
	for _, c := range cases {
		for _, f := range []struct {
			form teacher.Form
			want float64
		}{{teacher.GridReference, c.grid}, {teacher.LogLog, c.loglog}, {teacher.Paper, c.paper}} {
			r := teacher.Reward{Form: f.form, C: 19, Alpha: c.alpha, Eps: 1e-3}
			if err := r.Validate(); err != nil {
				t.Fatal(err)
			}
			got := r.LogReward(r.Term(c.delta), c.logR)
			if math.Abs(got-f.want) > 1e-12*math.Max(1, math.Abs(f.want)) {
				t.Errorf("%s δ=%v log R=%v α=%v: log R_T = %.17g, want %.17g", f.form, c.delta, c.logR, c.alpha, got, f.want)
			}
		}
	}
}

func TestFloorAndAdvantage(t *testing.T) {
	r := teacher.Reward{Form: teacher.LogLog, C: 19}
	if got, want := r.Floor(), -6.9082550697742375; math.Abs(got-want) > 1e-12 {
		t.Errorf("log-of-log floor %.17g, want %.17g", got, want)
	}
	// The advantage log(1.001 + w·δ²/2) is the exponential of the term.
	for _, d := range []float64{-2, -0.1, 0.3, 4} {
		w := 1.0
		if d > 0 {
			w = 20
		}
		if got, want := teacher.Advantage(r.Term(d)), math.Log(1.001+w*d*d/2); math.Abs(got-want) > 1e-14 {
			t.Errorf("δ=%v: advantage %v, want %v", d, got, want)
		}
	}
	// The under-sampled side weighs C+1 times more.
	if r.Term(1) <= r.Term(-1) {
		t.Errorf("term(δ=1) %v must exceed term(δ=-1) %v with C = 19", r.Term(1), r.Term(-1))
	}
}

func TestRewardValidate(t *testing.T) {
	cases := []struct {
		r    teacher.Reward
		want string
	}{
		{teacher.Reward{Form: "mine", C: 19}, `reward form "mine" is unknown`},
		{teacher.Reward{Form: teacher.Paper, C: 19}, "eps 0 must be > 0"},
		{teacher.Reward{Form: teacher.LogLog, C: -1}, "C -1 must be"},
		{teacher.Reward{Form: teacher.LogLog, C: 1, Alpha: math.NaN()}, "alpha NaN"},
	}
	for _, c := range cases {
		err := c.r.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "teacher: ") {
			t.Errorf("%+v: error %v, want one containing %q", c.r, err, c.want)
		}
	}
}

func TestFromRatio(t *testing.T) {
	cases := map[string]string{"1:1:0": "ST", "1:1:2": "SBTB", "2:1:3": "SBSBTB", "2:2:0": "SSTT", "1:0:1": "SB", "2:1:1": "SSTB"}
	for ratio, want := range cases {
		got, err := teacher.FromRatio(ratio)
		if err != nil || string(got) != want {
			t.Errorf("FromRatio(%q) = %q, %v; want %q", ratio, got, err, want)
		}
	}
	for _, bad := range []string{"1:1", "a:1:1", "0:0:3", "-1:2:0"} {
		if _, err := teacher.FromRatio(bad); err == nil {
			t.Errorf("FromRatio(%q) accepted", bad)
		}
	}
}

func TestSchedule(t *testing.T) {
	s := teacher.Schedule("STSB")
	var roles []teacher.Role
	for i := range 6 {
		roles = append(roles, s.Role(i))
	}
	if string(roles) != "STSBST" || s.Count(teacher.Student) != 2 || s.Count(teacher.Buffer) != 1 {
		t.Errorf("roles %q, counts S %d B %d", string(roles), s.Count(teacher.Student), s.Count(teacher.Buffer))
	}
	if err := s.Validate(true, true); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		s               teacher.Schedule
		teacher, buffer bool
	}{{"", true, true}, {"SXT", true, true}, {"BB", true, true}, {"ST", false, true}, {"SB", true, false}} {
		if err := c.s.Validate(c.teacher, c.buffer); err == nil {
			t.Errorf("schedule %q (teacher %v, buffer %v) accepted", c.s, c.teacher, c.buffer)
		}
	}
}

func TestBudget(t *testing.T) {
	b := teacher.Budget{Limit: 100}
	b.Spend(60)
	if !b.Allows(40) || b.Allows(41) {
		t.Errorf("budget %+v: allows 40 %v, 41 %v", b, b.Allows(40), b.Allows(41))
	}
	if !(teacher.Budget{}).Allows(1 << 40) {
		t.Error("the zero budget must be unlimited")
	}
}

// TestUpdateOrder checks the round's order: δ first, targets before the
// Teacher's step, the Student's gradient before its update; sequential
// when the targets need the Student's backward pass first. The Teacher's
// step runs concurrently with the Student's, so the log is guarded.
func TestUpdateOrder(t *testing.T) {
	for _, after := range []bool{false, true} {
		var mu sync.Mutex
		var log []string
		rec := func(s string) { mu.Lock(); log = append(log, s); mu.Unlock() }
		u := teacher.Update{
			Delta:               func() float64 { rec("delta"); return 1.5 },
			Targets:             func() { rec("targets") },
			StudentGrad:         func() { rec("grad") },
			StudentUpdate:       func() { rec("update") },
			TeacherStep:         func() float64 { rec("teacher"); return 2.5 },
			TargetsAfterStudent: after,
		}
		for range 3 {
			log = log[:0]
			s, tl := u.Run()
			if s != 1.5 || tl != 2.5 {
				t.Fatalf("losses %v, %v; want 1.5, 2.5", s, tl)
			}
			pos := map[string]int{}
			for i, e := range log {
				pos[e] = i
			}
			if len(log) != 5 || pos["delta"] != 0 || pos["targets"] > pos["teacher"] || pos["grad"] > pos["update"] || pos["targets"] < pos["delta"] {
				t.Fatalf("after=%v: order %v", after, log)
			}
			if after && !slices.Equal(log, []string{"delta", "grad", "targets", "update", "teacher"}) {
				t.Fatalf("sequential order %v", log)
			}
		}
	}
	// Without a Teacher.
	u := teacher.Update{Delta: func() float64 { return 1 }, StudentGrad: func() {}, StudentUpdate: func() {}}
	if s, tl := u.Run(); s != 1 || tl != 0 {
		t.Errorf("no Teacher: losses %v, %v", s, tl)
	}
}

// TestSequenceFormFixedValues checks the sequence code's form, whose loss
// has no ½ and is capped at 5000, against values computed by hand (Python's
// math module).
func TestSequenceFormFixedValues(t *testing.T) {
	cases := []struct{ delta, logR, alpha, want float64 }{
		{1.5, -2, 0, 1.3425156914463638},
		{-0.7, -2, 0.5, -1.917674098828644},
		{2, 1, 0.5, 1.980344998095631},
		{0, -3, 0.5, -8.408255070773826},
		{100, -1, 0.5, 1.9434712271348795}, // δ² = 10⁴ capped at 5000
		{-100, -1, 0.5, math.Log(math.Log(1.001+5000)) - 0.5},
	}
	r := teacher.Reward{Form: teacher.Sequence, C: 19}
	for _, c := range cases {
		r.Alpha = c.alpha
		if err := r.Validate(); err != nil {
			t.Fatal(err)
		}
		got := r.LogReward(r.Term(c.delta), c.logR)
		if math.Abs(got-c.want) > 1e-12*math.Max(1, math.Abs(c.want)) {
			t.Errorf("δ=%v log R=%v α=%v: log R_T = %.17g, want %.17g", c.delta, c.logR, c.alpha, got, c.want)
		}
	}
	if r.Term(100) != r.Term(200) {
		t.Error("the sequence form must cap δ² at 5000")
	}
}

// TestWiring checks the helpers every family's Teacher uses against the
// formulas they stand for.
func TestWiring(t *testing.T) {
	s := teacher.Schedule("SBTB")
	for i, want := range []teacher.Role{'S', 'S', 'T', 'S'} {
		if got := s.Effective(i, 0); got != want {
			t.Errorf("empty buffer, slot %d: %c, want %c", i, got, want)
		}
	}
	if s.Effective(1, 3) != teacher.Buffer {
		t.Error("a buffer slot with a full buffer is not B")
	}
	r := teacher.Reward{Form: teacher.LogLog, C: 19, Alpha: 0.5}
	delta, logR := []float64{-1, 0.5, 2}, []float64{-3, 1, 2}
	terms, out := make([]float64, 3), make([]float64, 3)
	r.Terms(delta, logR, 0, terms)
	r.LogRewards(terms, logR, out)
	for b := range delta {
		want := r.Term(delta[b])
		if logR[b] < 0 {
			want = r.Floor()
		}
		if terms[b] != want || out[b] != r.LogReward(want, logR[b]) {
			t.Errorf("object %d: term %v, log R_T %v; want %v, %v", b, terms[b], out[b], want, r.LogReward(want, logR[b]))
		}
	}
	r.Terms(delta, logR, math.Inf(-1), terms)
	if terms[0] != r.Term(delta[0]) {
		t.Error("a threshold of -Inf floored an object")
	}
	for _, c := range []struct {
		p    replay.Priority
		want float64
	}{{replay.Reward, 1.5}, {replay.Loss, 4}, {replay.Teacher, 7}, {replay.Advantage, math.Exp(0.25)}, {replay.Uniform, 0}} {
		if got := teacher.Priority(c.p, 1.5, -2, 0.25, 7); got != c.want {
			t.Errorf("Priority(%s) = %v, want %v", c.p, got, c.want)
		}
	}
}
