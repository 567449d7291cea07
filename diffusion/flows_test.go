package diffusion

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/objective"
	"github.com/gfngo/gfn/timenet"
)

// flowTrainer is a small trainer of objective obj with one fresh Student
// batch, its rewards and (forward-looking) its intermediate states scored.
func flowTrainer(t *testing.T, obj string) *Trainer {
	t.Helper()
	cfg := smallConfig(MethodTB, 10)
	cfg.Objective = obj
	cfg.Net = timenet.Config{Hidden: 8}
	cfg.Steps, cfg.Batch = 5, 4
	tr, err := New(energy.GMM25{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Move the zero-initialised output layers, so that every weight has a
	// gradient and the flows differ between states.
	for _, net := range []timenet.Net{tr.Student.Model, tr.flows.net} {
		for _, p := range net.Params() {
			for k := range p.Value {
				p.Value[k] += float32(0.3 * tr.rng.NormFloat64())
			}
		}
	}
	tr.Student.sampler.Forward(tr.Proc, tr.Student.Model, cfg.Batch, sampleOptions{}, tr.rng, &tr.batch)
	if err := tr.rewards(tr.batch.Final(), cfg.Batch, "Student"); err != nil {
		t.Fatal(err)
	}
	if tr.flows.forward {
		if err := tr.flows.partialEnergy(tr); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// The flow objectives' loss is the formula evaluated independently from
// the networks' outputs, and their gradient with respect to the policy's
// and the flow network's weights agrees with central differences.
func TestFlowObjectivesGradient(t *testing.T) {
	for _, obj := range []string{"db", "subtb", "fl-db", "fl-subtb"} {
		tr := flowTrainer(t, obj)
		p, b, n, T, d := tr.Proc, &tr.batch, tr.batch.N, tr.Proc.Steps, tr.Proc.Dim
		loss := tr.update.Delta()

		// Independently: per-step log P_F and log P_B from the densities,
		// the flows from a fresh pass of the flow network, the residuals.
		var want float64
		for r := range n {
			logF := make([]float64, T+1)
			lpf := make([]float64, T)
			lpb := make([]float64, T)
			for i := range T {
				x := b.Step(i)[r*d : (r+1)*d]
				xn := b.Step(i + 1)[r*d : (r+1)*d]
				ti := float32(float64(i) / float64(T))
				xm := nn.NewMatrix(1, d)
				copy(xm.Data, x)
				pol := tr.Student.Model.Forward(xm, []float32{ti})
				fl := tr.flows.net.Forward(xm, []float32{ti})
				logF[i] = float64(fl.Data[0])
				dt := p.dt()
				for c := range d {
					lv := p.logVar(pol.Data[d+c])
					res := float64(xn[c]) - float64(x[c]) - dt*p.drift(pol.Data[c])
					lpf[i] -= (res*res/(dt*math.Exp(lv)) + math.Log(2*math.Pi*dt) + lv) / 2
					if i > 0 {
						a := float64(i) / float64(i+1)
						v := p.Sigma2 * dt * a
						e := float64(x[c]) - float64(xn[c])*a
						lpb[i] -= (e*e/v + math.Log(2*math.Pi*v)) / 2
					}
				}
				if strings.HasPrefix(obj, "fl-") {
					// gfn-diffusion's partial energy.
					tv := float64(i) / float64(T)
					v := p.Sigma2 * float64(max(1, i)) * dt
					var q float64
					for _, xc := range x {
						q += float64(xc) * float64(xc)
					}
					lp := -(q/v + float64(d)*math.Log(2*math.Pi*v)) / 2
					lr := make([]float64, 1)
					if i > 0 {
						if err := tr.Energy.LogReward(x, lr); err != nil {
							t.Fatal(err)
						}
					}
					logF[i] += (1-tv)*lp + tv*lr[0]
				}
			}
			logF[T] = tr.logR[r]
			u := make([]float64, T+1) // u_i = log F(s_i) − Σ_{t<i}(lpf − lpb)
			for i := 0; i <= T; i++ {
				u[i] = logF[i]
				for s := range i {
					u[i] -= lpf[s] - lpb[s]
				}
			}
			var l float64
			if strings.HasSuffix(obj, "subtb") {
				var num, den float64
				for i := 0; i <= T; i++ {
					for j := i + 1; j <= T; j++ {
						w := math.Pow(DefaultLambda, float64(j-i))
						num += w * (u[i] - u[j]) * (u[i] - u[j])
						den += w
					}
				}
				l = num / den
			} else {
				for i := range T {
					l += (u[i] - u[i+1]) * (u[i] - u[i+1])
				}
			}
			want += l / 2 / float64(n)
		}
		if math.Abs(loss-want) > 1e-4*(1+math.Abs(want)) {
			t.Errorf("%s: loss %v, independently %v", obj, loss, want)
		}

		// Gradients: the analytic ones, then central differences.
		tr.update.Delta()
		tr.update.StudentGrad()
		params := append(append([]*nn.Param{}, tr.Student.Model.Params()...), tr.flows.params()...)
		grads := make([][]float32, len(params))
		for i, q := range params {
			grads[i] = append([]float32(nil), q.Grad...)
		}
		checked := 0
		for i, q := range params {
			// The largest gradient of each parameter tensor.
			k := 0
			for j, g := range grads[i] {
				if math.Abs(float64(g)) > math.Abs(float64(grads[i][k])) {
					k = j
				}
			}
			g := float64(grads[i][k])
			if math.Abs(g) < 1e-3 {
				continue
			}
			v := q.Value[k]
			h := float32(2e-3)
			q.Value[k] = v + h
			lp := tr.update.Delta()
			q.Value[k] = v - h
			lm := tr.update.Delta()
			q.Value[k] = v
			fd := (lp - lm) / float64(2*h)
			if math.Abs(fd-g) > 0.02*math.Abs(g)+1e-3 {
				t.Errorf("%s: %s[%d]: gradient %v, central difference %v", obj, q.Name, k, g, fd)
			}
			checked++
		}
		if checked < len(params)/2 {
			t.Errorf("%s: only %d of %d parameter tensors had a gradient to check", obj, checked, len(params))
		}
	}
}

// Every flow objective, alone and with the Teacher, raises the ELBO of
// 25GMM as TB does (TestStudentImproves); the Student's log Z holds the
// mean flow of s_0, the flow network's output at (0, 0), and a
// forward-looking run counts the intermediate states' energy evaluations
// as reward calls.
func TestFlowObjectivesTrain(t *testing.T) {
	objs := []string{"db", "subtb", "fl-db", "fl-subtb"}
	if testing.Short() {
		objs = []string{"subtb", "fl-db"}
	}
	for _, obj := range objs {
		for _, m := range []Method{MethodTB, MethodTeacher} {
			cfg := smallConfig(m, 300)
			cfg.Objective = obj
			res, err := Run(context.Background(), energy.GMM25{}, cfg, quick)
			if err != nil {
				t.Fatalf("%s %s: %v", obj, m, err)
			}
			c := res.Curve
			last := c.Len() - 1
			t.Logf("%s %s: ELBO %.3f -> %.3f, EUBO %.3f, log Z %.3f", obj, m, c.Value(0, "elbo"), c.Value(last, "elbo"), *res.Summary.EUBO, res.Summary.LogZ)
			if !(c.Value(last, "elbo") > c.Value(0, "elbo")+0.5) {
				t.Errorf("%s %s: ELBO %.3f -> %.3f, want an increase of at least 0.5 nat", obj, m, c.Value(0, "elbo"), c.Value(last, "elbo"))
			}
			tr := res.Trainer
			calls := tr.RewardCalls
			if _, err := tr.Iterate(); err != nil {
				t.Fatal(err)
			}
			if want := cfg.Batch * (1 + (cfg.Steps-1)*btoi(strings.HasPrefix(obj, "fl-"))); m == MethodTB && tr.RewardCalls-calls != want {
				t.Errorf("%s: %d reward calls in an iteration, want %d", obj, tr.RewardCalls-calls, want)
			}
			tr.update.Delta()
			x := nn.NewMatrix(1, tr.Proc.Dim)
			f0 := float64(tr.flows.net.Forward(x, []float32{0}).Data[0])
			if strings.HasPrefix(obj, "fl-") {
				// s_0's partial energy: log p_ref at t_1 of x_0 = 0.
				v := tr.Proc.Sigma2 * tr.Proc.dt()
				f0 -= float64(tr.Proc.Dim) * math.Log(2*math.Pi*v) / 2
			}
			if got := float64(tr.Student.LogZ.Value[0]); math.Abs(got-f0) > 1e-3*(1+math.Abs(f0)) {
				t.Errorf("%s %s: the Student's log Z %v, the flow of s_0 %v", obj, m, got, f0)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The Teacher is paid from the Student's per-object loss: the δ handed
// to its reward is sign(δ)·√ℓ of the objective on the batch.
func TestFlowObjectivesTeacherReward(t *testing.T) {
	for _, obj := range []string{"db", "fl-subtb"} {
		tr := flowTrainer(t, obj)
		tr.update.Delta()
		o, err := objective.New(obj, DefaultLambda)
		if err != nil {
			t.Fatal(err)
		}
		var r objective.Result
		if err := o.Eval(&tr.flows.in, nil, &r); err != nil {
			t.Fatal(err)
		}
		for b := range tr.batch.N {
			if want := math.Copysign(math.Sqrt(r.PerObject[b]), r.Delta[b]); tr.delta[b] != want || want == 0 {
				t.Errorf("%s: δ handed to the Teacher [%d] = %v, want %v", obj, b, tr.delta[b], want)
			}
		}
	}
}

// The flow objectives' settings are checked, and a checkpoint of one
// resumes with its flow network.
func TestFlowObjectivesConfig(t *testing.T) {
	cfg := smallConfig(MethodTB, 10)
	cfg.Objective, cfg.Lambda = "db", 0.5
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "lambda 0.5") {
		t.Errorf("db with a lambda: %v", err)
	}
	cfg.Objective, cfg.Lambda = "subtb", -1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "lambda -1") {
		t.Errorf("subtb lambda -1: %v", err)
	}
	cfg.Lambda, cfg.Objective = 0, "fm"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "allowed: tb, vargrad, db, subtb, fl-db, fl-subtb") {
		t.Errorf("fm on diffusion: %v", err)
	}
	cfg.Objective, cfg.Method = "db", MethodPIS
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "pis") {
		t.Errorf("pis with db: %v", err)
	}
}
