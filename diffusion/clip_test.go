package diffusion

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gfngo/gfn/agent"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/nn"
)

// TestAgentStepClip: step records the network's gradient norm before any
// clipping, clips the time encoder to ClipTime and then the whole network
// to Clip, and leaves log Z's gradient alone.
func TestAgentStepClip(t *testing.T) {
	cfg := smallConfig(MethodTeacher, 10)
	for _, tc := range []struct {
		name           string
		clipTime, clip float64
	}{
		{"none", 0, 0},
		{"time only", 0.5, 0},
		{"network only", 0, 1},
		{"both", 0.5, 1},
		{"inert", 0, 1e9},
	} {
		a, err := newAgent(cfg, Optim{Optim: agent.Optim{LR: 1e-3, LogZLR: 0.1, Clip: tc.clip}, ClipTime: tc.clipTime}, 2, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		net := a.Opt.Groups[0].Params
		var n int
		for _, p := range net {
			for i := range p.Grad {
				p.Grad[i] = 1
			}
			n += len(p.Grad)
		}
		a.LogZ.Grad[0] = 7
		var nt int
		for _, p := range a.time {
			nt += len(p.Grad)
		}
		if nt == 0 || nt == n {
			t.Fatalf("%s: time encoder has %d of %d gradient values", tc.name, nt, n)
		}
		a.step(1)
		if want := math.Sqrt(float64(n)); math.Abs(a.gradNorm-want) > 1e-4*want {
			t.Errorf("%s: recorded gradient norm %v, want the unclipped %v", tc.name, a.gradNorm, want)
		}
		// Expected norms after the clips, computed from the counts.
		timeSq, restSq := float64(nt), float64(n-nt)
		if tc.clipTime > 0 && math.Sqrt(timeSq) > tc.clipTime {
			timeSq = tc.clipTime * tc.clipTime
		}
		if c := tc.clip; c > 0 && math.Sqrt(timeSq+restSq) > c {
			f := c * c / (timeSq + restSq)
			timeSq, restSq = timeSq*f, restSq*f
		}
		if got, want := nn.GradNorm(a.time), math.Sqrt(timeSq); math.Abs(got-want) > 1e-4*want {
			t.Errorf("%s: time encoder gradient norm %v after the step, want %v", tc.name, got, want)
		}
		if got, want := nn.GradNorm(net), math.Sqrt(timeSq+restSq); math.Abs(got-want) > 1e-4*want {
			t.Errorf("%s: network gradient norm %v after the step, want %v", tc.name, got, want)
		}
		if a.LogZ.Grad[0] != 7 {
			t.Errorf("%s: log Z gradient %v, want 7 (not clipped)", tc.name, a.LogZ.Grad[0])
		}
	}
}

// TestClipInertAndReported: a Teacher clip far above every gradient norm
// trains the same bits as none, a binding one changes the run, and every
// iteration reports both networks' unclipped norms.
func TestClipInertAndReported(t *testing.T) {
	train := func(clip float64) (string, []Iteration) {
		c := smallConfig(MethodTeacher, 40)
		c.Teacher.Clip = clip
		tr, err := New(energy.GMM25{}, c)
		if err != nil {
			t.Fatal(err)
		}
		var its []Iteration
		for range c.Iterations {
			it, err := tr.Iterate()
			if err != nil {
				t.Fatal(err)
			}
			its = append(its, it)
		}
		return hashTrainer(tr), its
	}
	none, its := train(0)
	for i, it := range its {
		if !(it.StudentGradNorm > 0) || !(it.TeacherGradNorm > 0) || math.IsInf(it.StudentGradNorm+it.TeacherGradNorm, 0) {
			t.Fatalf("iteration %d: gradient norms %v (Student), %v (Teacher)", i, it.StudentGradNorm, it.TeacherGradNorm)
		}
	}
	if inert, _ := train(1e12); inert != none {
		t.Errorf("an inert clip changed the run: %s, want %s", inert, none)
	}
	if tight, _ := train(1e-3); tight == none {
		t.Error("a clip of 1e-3 left the run unchanged")
	}
	// Without a Teacher its norm is NaN.
	tr, err := New(energy.GMM25{}, smallConfig(MethodTB, 1))
	if err != nil {
		t.Fatal(err)
	}
	if it, err := tr.Iterate(); err != nil || !math.IsNaN(it.TeacherGradNorm) || !(it.StudentGradNorm > 0) {
		t.Errorf("tb: %v, gradient norms %v, %v (Teacher), want >0 and NaN", err, it.StudentGradNorm, it.TeacherGradNorm)
	}
}

// TestClipValidated: a negative, NaN or infinite clip is refused, naming
// the value.
func TestClipValidated(t *testing.T) {
	for _, v := range []float64{-1, math.NaN(), math.Inf(1)} {
		c := smallConfig(MethodTeacher, 1)
		c.Teacher.Clip = v
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "gradient clip") {
			t.Errorf("Teacher clip %v: %v", v, err)
		}
		c = smallConfig(MethodTeacher, 1)
		c.Student.Clip = v
		if err := c.Validate(); err == nil {
			t.Errorf("Student clip %v accepted", v)
		}
	}
}

// TestGradNormColumns: each metrics row's gradient-norm columns are the
// means of the iterations' unclipped norms over the window the row closes,
// computed here on a second trainer of the same configuration; the
// Teacher's column is NaN (an empty cell) without a Teacher.
func TestGradNormColumns(t *testing.T) {
	for _, m := range []Method{MethodTeacher, MethodTB} {
		cfg := smallConfig(m, 60)
		o := quick
		o.EvalEvery = 25
		res, err := Run(context.Background(), energy.GMM25{}, cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := New(energy.GMM25{}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		type norms struct {
			step                  int
			student, teacherNorms float64
		}
		var want []norms
		var g, u, n float64
		for !tr.Done() {
			it, err := tr.Iterate()
			if err != nil {
				t.Fatal(err)
			}
			g, u, n = g+it.StudentGradNorm, u+it.TeacherGradNorm, n+1
			if (tr.Step-1)%o.EvalEvery == 0 {
				want = append(want, norms{tr.Step - 1, g / n, u / n})
				g, u, n = 0, 0, 0
			}
		}
		c := res.Curve
		if c.Len() != len(want) {
			t.Fatalf("%s: %d rows, want %d", m, c.Len(), len(want))
		}
		for i, w := range want {
			step, sg, tg := int(c.Value(i, "step")), c.Value(i, "student_grad_norm"), c.Value(i, "teacher_grad_norm")
			if step != w.step || sg != w.student || !(sg > 0) {
				t.Errorf("%s: row %d (step %d): Student gradient norm %v, want %v (step %d)", m, i, step, sg, w.student, w.step)
			}
			if m == MethodTeacher && (tg != w.teacherNorms || !(tg > 0)) {
				t.Errorf("%s: row %d: Teacher gradient norm %v, want %v", m, i, tg, w.teacherNorms)
			}
			if m != MethodTeacher && !math.IsNaN(tg) {
				t.Errorf("%s: row %d: Teacher gradient norm %v without a Teacher, want NaN", m, i, tg)
			}
		}
		var b strings.Builder
		if err := res.Curve.WriteCSV(&b); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		if !strings.HasSuffix(lines[0], ",student_grad_norm,teacher_grad_norm,wall_seconds") {
			t.Errorf("%s: header %q", m, lines[0])
		}
		cells := strings.Split(lines[len(lines)-1], ",")
		if teacher := cells[len(cells)-2]; (m == MethodTeacher) == (teacher == "") {
			t.Errorf("%s: last row %q: the Teacher's cell should be empty exactly without a Teacher", m, lines[len(lines)-1])
		}
	}
}
