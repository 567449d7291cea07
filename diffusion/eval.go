package diffusion

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/ot"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/target"
)

// Metrics are the diffusion table's estimates for one policy.
type Metrics struct {
	// ELBO is the mean of log w = log R + Σlog P_B − Σlog P_F over fresh
	// forward trajectories (a lower bound of log Z); ELBOIS is
	// log mean exp(log w), the importance-sampled estimate.
	ELBO   float64 `json:"elbo"`
	ELBOIS float64 `json:"elbo_is"`
	// EUBO is the mean of log w over backward trajectories from exact
	// samples (an upper bound of log Z); NaN without exact samples.
	EUBO float64 `json:"eubo"`
	// W2 is the 2-Wasserstein distance between the fresh samples and the
	// exact ones (equal numbers, exact assignment); NaN without exact
	// samples.
	W2 float64 `json:"w2"`
	// LogZ is the policy's learned log Z.
	LogZ float64 `json:"log_z"`
	// Samples is the number of fresh samples.
	Samples int `json:"samples"`
}

// MarshalJSON writes NaN values (metrics not computed) as null.
func (m Metrics) MarshalJSON() ([]byte, error) {
	f := run.Nullable
	return json.Marshal(struct {
		ELBO    *float64 `json:"elbo"`
		ELBOIS  *float64 `json:"elbo_is"`
		EUBO    *float64 `json:"eubo"`
		W2      *float64 `json:"w2"`
		LogZ    *float64 `json:"log_z"`
		Samples int      `json:"samples"`
	}{f(m.ELBO), f(m.ELBOIS), f(m.EUBO), f(m.W2), f(m.LogZ), m.Samples})
}

// Evaluator computes Metrics. It keeps scratch space between calls (not
// safe for concurrent use).
type Evaluator struct {
	// MaxRows bounds one network pass when scoring exact samples
	// (0: 50,000).
	MaxRows int
	// SkipW2 leaves W2 out (NaN) of the next evaluations: the exact
	// samples still give the EUBO. An exact W2 costs seconds at 2,000
	// heavy-tailed samples (funnel), more than many iterations.
	SkipW2  bool
	sampler sampler
	tb      balance
	fwd     batch
	bwd     batch
	logR    []float64
	logW    []float64 // the fresh samples' log w
	delta   []float64 // the exact samples' log w
	exact   bool      // delta holds the last call's exact samples
}

// Evaluate draws n fresh trajectories from a (no exploration) and scores
// them, then scores backward trajectories from the exact samples (rows of
// exact, n of them, or nil) for the EUBO and compares the two sets by W2.
// It returns the metrics and the fresh samples (n×d, owned by the
// evaluator until its next call).
func (ev *Evaluator) Evaluate(e energy.Energy, p Process, a *Agent, n int, exact []float32, rng *rand.Rand) (Metrics, []float32, error) {
	m, x, err := ev.evaluate(e, p, a, n, exact, rng)
	if err != nil {
		ev.logW, ev.exact = ev.logW[:0], false
	}
	return m, x, err
}

func (ev *Evaluator) evaluate(e energy.Energy, p Process, a *Agent, n int, exact []float32, rng *rand.Rand) (Metrics, []float32, error) {
	m := Metrics{EUBO: math.NaN(), W2: math.NaN(), LogZ: float64(a.LogZ.Value[0]), Samples: n}
	ev.logW, ev.exact = ev.logW[:0], false
	ev.sampler.Forward(p, a.Model, n, sampleOptions{}, rng, &ev.fwd)
	ev.logR = growF(ev.logR, n)
	x := ev.fwd.Final()
	if err := checkOverflow(x, n, p.Dim, -1, "Student", p.Clip); err != nil {
		return m, nil, err
	}
	if err := e.LogReward(x, ev.logR); err != nil {
		return m, nil, &RewardError{Iteration: -1, Err: err}
	}
	if err := nonFinite(x, ev.logR[:n], p.Dim, -1, false); err != nil {
		return m, nil, err
	}
	ev.logW = growF(ev.logW, n)
	for b := range n {
		ev.logW[b] = ev.logR[b] + ev.fwd.LogPB[b] - ev.fwd.LogPF[b]
	}
	m.ELBO, m.ELBOIS = meanAndLogMeanExp(ev.logW)
	if exact == nil {
		return m, x, nil
	}
	if len(exact) != n*p.Dim {
		return m, nil, fmt.Errorf("diffusion: %d exact values are not %d points of dimension %d", len(exact), n, p.Dim)
	}
	ev.sampler.Backward(p, exact, n, rng, &ev.bwd)
	if err := e.LogReward(exact, ev.logR); err != nil {
		return m, nil, &RewardError{Iteration: -1, Err: err}
	}
	if err := nonFinite(exact, ev.logR[:n], p.Dim, -1, true); err != nil {
		return m, nil, err
	}
	ev.tb.MaxRows = ev.MaxRows
	if ev.tb.MaxRows == 0 {
		ev.tb.MaxRows = 50000
	}
	ev.delta = growF(ev.delta, n)
	ev.tb.Eval(p, a.Model, 0, &ev.bwd, ev.logR, ev.delta) // δ with log Z = 0 is log w
	ev.tb.out = nil
	ev.exact = true
	m.EUBO, _ = meanAndLogMeanExp(ev.delta[:n])
	if ev.SkipW2 {
		return m, x, nil
	}
	w2, err := ot.W2(x, exact, p.Dim)
	if err != nil {
		return m, nil, err
	}
	m.W2 = w2
	return m, x, nil
}

// LogWeights returns the per-sample log weights log w = log R(x) +
// Σ log P_B − Σ log P_F of the last Evaluate: fresh, of its n fresh
// trajectories (their mean is the ELBO, their log-mean-exp the ELBO-IS),
// and exact, of the backward trajectories from its exact samples (their
// mean is the EUBO; nil without exact samples). Rows are in sample order.
// Where a mean is dominated by a few samples, or by a region the policy
// never visits, these show it. Both are owned by the evaluator until its
// next call; both are nil before the first call or after a failed one.
func (ev *Evaluator) LogWeights() (fresh, exact []float64) {
	if len(ev.logW) == 0 {
		return nil, nil
	}
	if ev.exact {
		exact = ev.delta[:len(ev.logW)]
	}
	return ev.logW, exact
}

// meanAndLogMeanExp returns the mean of v and log mean exp(v) (stable).
func meanAndLogMeanExp(v []float64) (mean, lme float64) {
	mx := math.Inf(-1)
	for _, x := range v {
		mean += x
		mx = max(mx, x)
	}
	mean /= float64(len(v))
	if math.IsInf(mx, 0) || math.IsNaN(mx) {
		return mean, mx
	}
	var s float64
	for _, x := range v {
		s += math.Exp(x - mx)
	}
	return mean, mx + math.Log(s/float64(len(v)))
}

// ExactSamples draws n exact samples of e if it can (energy.Sampler), or
// returns nil.
func ExactSamples(e energy.Energy, n int, rng *rand.Rand) []float32 {
	s, ok := e.(energy.Sampler)
	if !ok {
		return nil
	}
	x := make([]float32, n*e.Dim())
	s.Sample(x, rng)
	return x
}

// Evaluation is a Trainer's evaluation (gfn eval's JSON): the Student's
// metrics and, with a Teacher, the Teacher's, on the same exact samples.
type Evaluation struct {
	Step     int      `json:"step"`
	Student  Metrics  `json:"student"`
	Teacher  *Metrics `json:"teacher,omitempty"`
	TrueLogZ *float64 `json:"true_log_z,omitempty"`
	// The Student's suite metrics (EMC, |Δ log Z|, MMD) and the notes of
	// those that failed.
	SuiteMetrics
	Notes []string `json:"notes,omitempty"`
	// Weights are every sample's log weight, by agent and set.
	Weights []Weights `json:"-"`
}

// Weights are one agent's log weights log w = log R(x) + Σ log P_B −
// Σ log P_F on one set of samples: "model" (its own fresh samples, whose
// mean is the ELBO) or "exact" (backward trajectories from exact samples,
// whose mean is the EUBO).
type Weights struct {
	Agent, Set string
	X          []float32 // the samples, rows of Dim
	LogW       []float64
}

// Evaluate draws n exact samples (if the energy has a sampler) and
// evaluates the Student and the Teacher on n fresh samples each and on
// the exact ones, with rng.
func (t *Trainer) Evaluate(n int, rng *rand.Rand) (Evaluation, error) {
	exact := ExactSamples(t.Energy, n, rng)
	var ev Evaluator
	r := Evaluation{Step: t.Step}
	for i, a := range []*Agent{t.Student, t.Teacher} {
		if a == nil {
			continue
		}
		m, fresh, err := ev.Evaluate(t.Energy, t.Proc, a, n, exact, rng)
		if err != nil {
			return r, err
		}
		name := "student"
		if i == 0 {
			r.Student = m
			wf, _ := ev.LogWeights()
			r.SuiteMetrics, r.Notes = suiteMetrics(t.Energy, fresh, exact, wf, t.Proc.Dim)
		} else {
			name, r.Teacher = "teacher", &m
		}
		wf, wx := ev.LogWeights()
		r.Weights = append(r.Weights, Weights{name, "model", slices.Clone(fresh), slices.Clone(wf)})
		if wx != nil {
			r.Weights = append(r.Weights, Weights{name, "exact", exact, slices.Clone(wx)})
		}
	}
	if lz, ok := t.Energy.(target.LogZer); ok {
		r.TrueLogZ = run.Nullable(lz.LogZ())
	}
	return r, nil
}
