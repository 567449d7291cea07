package diffusion

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/safetensors"
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
		a, err := newAgent(cfg, Optim{LR: 1e-3, LogZLR: 0.1, ClipTime: tc.clipTime, Clip: tc.clip}, 2, rand.New(rand.NewPCG(1, 2)))
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
		var want []Point
		var s, u, n float64
		for !tr.Done() {
			it, err := tr.Iterate()
			if err != nil {
				t.Fatal(err)
			}
			s, u, n = s+it.StudentGradNorm, u+it.TeacherGradNorm, n+1
			if (tr.Step-1)%o.EvalEvery == 0 {
				want = append(want, Point{Step: tr.Step - 1, StudentGradNorm: s / n, TeacherGradNorm: u / n})
				s, u, n = 0, 0, 0
			}
		}
		if len(res.Curve) != len(want) {
			t.Fatalf("%s: %d rows, want %d", m, len(res.Curve), len(want))
		}
		for i, p := range res.Curve {
			w := want[i]
			if p.Step != w.Step || p.StudentGradNorm != w.StudentGradNorm || !(p.StudentGradNorm > 0) {
				t.Errorf("%s: row %d (step %d): Student gradient norm %v, want %v (step %d)", m, i, p.Step, p.StudentGradNorm, w.StudentGradNorm, w.Step)
			}
			if m == MethodTeacher && (p.TeacherGradNorm != w.TeacherGradNorm || !(p.TeacherGradNorm > 0)) {
				t.Errorf("%s: row %d: Teacher gradient norm %v, want %v", m, i, p.TeacherGradNorm, w.TeacherGradNorm)
			}
			if m != MethodTeacher && !math.IsNaN(p.TeacherGradNorm) {
				t.Errorf("%s: row %d: Teacher gradient norm %v without a Teacher, want NaN", m, i, p.TeacherGradNorm)
			}
		}
		var b strings.Builder
		if err := WriteCurve(&b, res.Curve); err != nil {
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

// TestResumeOldCheckpoint: a checkpoint written before the gradient-norm
// columns (a 12-column run.curve, no grad_sums) still resumes to the same
// parameters and metrics as a run never interrupted; its earlier rows have
// empty gradient-norm cells and the row after the resume averages the
// iterations since the resume.
func TestResumeOldCheckpoint(t *testing.T) {
	cfg := smallConfig(MethodTeacher, 120)
	o := quick
	o.EvalEvery = 50
	want, _, part := interruptedRun(t, cfg, o, 40, 80)
	// Make the checkpoint an old one.
	path := filepath.Join(part, CheckpointFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ts, meta, err := safetensors.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(meta[stateKey]), &st); err != nil {
		t.Fatal(err)
	}
	if _, ok := st["grad_sums"]; !ok {
		t.Fatal("the checkpoint has no grad_sums")
	}
	delete(st, "grad_sums")
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	meta[stateKey] = string(b)
	for i, x := range ts {
		if x.Name != "run.curve" {
			continue
		}
		rows, err := x.Float64s()
		if err != nil || x.Shape[1] != curveCols {
			t.Fatalf("run.curve %v: %v", x.Shape, err)
		}
		var old []float64
		for r := 0; r < len(rows); r += curveCols {
			old = append(old, rows[r:r+oldCurveCols]...)
		}
		ts[i] = safetensors.F64("run.curve", []int{x.Shape[0], oldCurveCols}, old)
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, ts, meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Resume(context.Background(), part, energy.GMM25{}, o)
	if err != nil {
		t.Fatal(err)
	}
	if hashTrainer(got.Trainer) != hashTrainer(want.Trainer) || got.Summary.ELBO != want.Summary.ELBO {
		t.Error("resuming an old checkpoint changed the run")
	}
	// Rows 0 and 50 were written before the checkpoint at 80; row 100
	// covers iterations 52–101, of which the resumed run saw 81–101.
	tr, err := New(energy.GMM25{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var s, n float64
	for tr.Step < 101 {
		it, err := tr.Iterate()
		if err != nil {
			t.Fatal(err)
		}
		if tr.Step > 80 {
			s, n = s+it.StudentGradNorm, n+1
		}
	}
	for i, p := range got.Curve {
		w := want.Curve[i]
		if p.Step != w.Step || p.ELBO != w.ELBO || p.StudentLoss != w.StudentLoss {
			t.Errorf("row %d: step %d ELBO %v loss %v, want %d %v %v", i, p.Step, p.ELBO, p.StudentLoss, w.Step, w.ELBO, w.StudentLoss)
		}
		switch {
		case p.Step < 80:
			if !math.IsNaN(p.StudentGradNorm) || !math.IsNaN(p.TeacherGradNorm) {
				t.Errorf("row %d (step %d): gradient norms %v, %v from an old checkpoint, want NaN", i, p.Step, p.StudentGradNorm, p.TeacherGradNorm)
			}
		case p.Step == 100:
			if p.StudentGradNorm != s/n {
				t.Errorf("row at 100: Student gradient norm %v, want %v (the mean over iterations 81–101)", p.StudentGradNorm, s/n)
			}
		default:
			if p.StudentGradNorm != w.StudentGradNorm || p.TeacherGradNorm != w.TeacherGradNorm {
				t.Errorf("row %d (step %d): gradient norms %v, %v, want %v, %v", i, p.Step, p.StudentGradNorm, p.TeacherGradNorm, w.StudentGradNorm, w.TeacherGradNorm)
			}
		}
	}
}
