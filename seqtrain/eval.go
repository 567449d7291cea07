package seqtrain

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/target"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/run"
)

// Metrics are the sequence experiments' measurements of the Student.
type Metrics struct {
	// ModesSeen counts the distinct modes among all online samples so far
	// (Student's and Teacher's, with exploration; not replays);
	// ModesEval those among this evaluation's samples.
	ModesSeen int `json:"modes_seen"`
	ModesEval int `json:"modes_eval"`
	// ELBO is the mean of log w = log R + Σlog P_B − Σlog P_F over fresh
	// Student samples (no exploration): a lower bound of log Z.
	// LogZEst is log mean exp(log w), LogZErr its distance to the true
	// log Z (NaN when unknown).
	ELBO    float64 `json:"elbo"`
	LogZEst float64 `json:"log_z_est"`
	LogZErr float64 `json:"log_z_err"`
	// EUBO is the mean of log w over uniform-P_B trajectories of target
	// samples: an upper bound of log Z (NaN without a Targeter).
	EUBO float64 `json:"eubo"`
	// Pearson is the correlation of Σlog P_F with log R over those
	// trajectories (NaN without a Targeter).
	Pearson float64 `json:"pearson"`
	// LogZ is the Student's learned log Z.
	LogZ float64 `json:"log_z"`
	// Samples is the number of fresh samples.
	Samples int `json:"samples"`
}

// MarshalJSON writes NaN values (metrics not computed) as null.
func (m Metrics) MarshalJSON() ([]byte, error) {
	f := run.Nullable
	return json.Marshal(struct {
		ModesSeen int      `json:"modes_seen"`
		ModesEval int      `json:"modes_eval"`
		ELBO      *float64 `json:"elbo"`
		LogZEst   *float64 `json:"log_z_est"`
		LogZErr   *float64 `json:"log_z_err"`
		EUBO      *float64 `json:"eubo"`
		Pearson   *float64 `json:"pearson"`
		LogZ      *float64 `json:"log_z"`
		Samples   int      `json:"samples"`
	}{m.ModesSeen, m.ModesEval, f(m.ELBO), f(m.LogZEst), f(m.LogZErr), f(m.EUBO), f(m.Pearson), f(m.LogZ), m.Samples})
}

// evalChunk bounds the trajectories of one network pass: an SSR pass
// encodes every child of every state, 2,048 trajectories of sEHstr at
// width 1,024 would need gigabytes.
const evalChunk = 128

// Evaluator computes Metrics for a Trainer's Student. It keeps scratch
// space between calls and is not safe for concurrent use.
type Evaluator struct {
	sampler discrete.Sampler
	tb      discrete.TB
	tr      discrete.Trajectories
	logR    []float64
	logPF   []float64
	logW    []float64 // the fresh samples' log w
	logWT   []float64 // the targets' log w
	fresh   []int32   // the fresh samples' tokens
	tokens  []int32
	states  []int32
	evalSet map[uint64]bool
}

// Evaluate draws n Student samples with rng and scores them; targets
// (rows of Length tokens, may be nil) give the EUBO and the correlation.
// It calls the reward on the fresh samples (not counted as training
// reward calls, as the reference code does not).
func (e *Evaluator) Evaluate(t *Trainer, n int, targets []int32, rng *rand.Rand) (Metrics, error) {
	e.sampler.Env = t.env
	m := Metrics{Samples: n, ModesSeen: t.seenModes, LogZ: float64(t.Student.LogZ.Value[0]),
		LogZErr: math.NaN(), EUBO: math.NaN(), Pearson: math.NaN()}
	if e.evalSet == nil {
		e.evalSet = make(map[uint64]bool)
	}
	clear(e.evalSet)
	moder, _ := t.task.(target.Moder)
	e.logW, e.logWT, e.fresh = e.logW[:0], e.logWT[:0], e.fresh[:0]
	m, err := e.evaluate(t, n, targets, rng, m, moder)
	if err != nil {
		e.logW, e.logWT, e.fresh = e.logW[:0], e.logWT[:0], e.fresh[:0]
	}
	return m, err
}

// LogWeights returns the per-sample log weights log w = log R(x) +
// Σ log P_B − Σ log P_F of the last Evaluate: fresh, of its n Student
// samples in the order of Samples (their mean is the ELBO, their
// log-mean-exp the log Z estimate), and target, of the backward
// trajectories from its targets in their order (mean: the EUBO; empty
// without targets). Both are owned by the evaluator until its next call,
// and empty before the first call or after a failed one.
func (e *Evaluator) LogWeights() (fresh, target []float64) { return e.logW, e.logWT }

// Samples returns the last Evaluate's fresh Student samples, n rows of
// Length tokens (owned by the evaluator until its next call).
func (e *Evaluator) Samples() []int32 { return e.fresh }

func (e *Evaluator) evaluate(t *Trainer, n int, targets []int32, rng *rand.Rand, m Metrics, moder target.Moder) (Metrics, error) {
	env, st := t.env, t.Student
	w := env.StateLen()
	for done := 0; done < n; done += evalChunk {
		k := min(evalChunk, n-done)
		e.sampler.Forward(st.Model, k, discrete.SampleOptions{}, rng, &e.tr)
		if err := e.score(t, k, true); err != nil {
			return m, err
		}
		for b := range k {
			e.logW = append(e.logW, e.logR[b]+e.tr.LogPB[b]-e.logPF[b])
			x := e.tr.Final[b*w : (b+1)*w]
			e.fresh = append(e.fresh, env.Tokens(x)...)
			key := env.TerminalKey(x)
			if !e.evalSet[key] {
				e.evalSet[key] = true
				if moder != nil && moder.IsMode(env.Tokens(x)) {
					m.ModesEval++
				}
			}
		}
	}
	m.ELBO = mean(e.logW)
	m.LogZEst = logMeanExp(e.logW)
	if lz, ok := t.task.(target.LogZer); ok {
		if z := lz.LogZ(); !math.IsNaN(z) {
			m.LogZErr = math.Abs(m.LogZEst - z)
		}
	}
	L := env.Length()
	if nt := len(targets) / max(L, 1); nt > 0 {
		var f, r []float64
		for done := 0; done < nt; done += evalChunk {
			k := min(evalChunk, nt-done)
			e.states = grow(e.states, k*w)
			for b := range k {
				env.SetTerminal(e.states[b*w:(b+1)*w], targets[(done+b)*L:(done+b+1)*L])
			}
			e.sampler.Backward(e.states, k, rng, &e.tr)
			if err := e.score(t, k, false); err != nil {
				return m, err
			}
			for b := range k {
				e.logWT = append(e.logWT, e.logR[b]+e.tr.LogPB[b]-e.logPF[b])
				f, r = append(f, e.logPF[b]), append(r, e.logR[b])
			}
		}
		m.EUBO = mean(e.logWT)
		m.Pearson = pearson(f, r)
	}
	return m, nil
}

// score writes the log-rewards and the Student's Σlog P_F of the k
// trajectories in e.tr. For the Student's own samples (sampled, no
// exploration) the sampler's log-probabilities are that sum already — the
// same softmax of the same logits, a third of an evaluation's network work
// saved; backward trajectories need a forward pass.
func (e *Evaluator) score(t *Trainer, k int, sampled bool) error {
	env := t.env
	w, L := env.StateLen(), env.Length()
	e.tokens = grow(e.tokens, k*L)
	for b := range k {
		copy(e.tokens[b*L:(b+1)*L], env.Tokens(e.tr.Final[b*w:(b+1)*w]))
	}
	e.logR, e.logPF = grow(e.logR, k), grow(e.logPF, k)
	if err := t.task.LogReward(e.tokens, k, e.logR); err != nil {
		return &NonFiniteError{Round: t.Round, Seq: "an evaluation batch", Err: err}
	}
	for b, v := range e.logR[:k] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &NonFiniteError{Round: t.Round, Seq: t.decode(e.tokens[b*L : (b+1)*L]),
				Err: fmt.Errorf("seqtrain: log-reward %v in an evaluation", v)}
		}
	}
	if sampled {
		copy(e.logPF, e.tr.LogPFBehaviour[:k])
		return nil
	}
	e.tb.LogPF(env, t.Student.Model, &e.tr, e.logPF)
	return nil
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func logMeanExp(v []float64) float64 {
	mx := math.Inf(-1)
	for _, x := range v {
		mx = max(mx, x)
	}
	if math.IsInf(mx, 0) {
		return mx
	}
	var s float64
	for _, x := range v {
		s += math.Exp(x - mx)
	}
	return mx + math.Log(s/float64(len(v)))
}

// pearson is the sample correlation of a and b (NaN when either is
// constant).
func pearson(a, b []float64) float64 {
	ma, mb := mean(a), mean(b)
	var sab, saa, sbb float64
	for i := range a {
		da, db := a[i]-ma, b[i]-mb
		sab += da * db
		saa += da * da
		sbb += db * db
	}
	if saa == 0 || sbb == 0 {
		return math.NaN()
	}
	return sab / math.Sqrt(saa*sbb)
}

// Evaluation is a Trainer's evaluation (gfn eval's JSON): the Student's
// metrics on fresh samples and, if the task is a Targeter, on as many
// target samples.
type Evaluation struct {
	Round   int     `json:"round"`
	Student Metrics `json:"student"`
	// Weights are every sample's log weight: "model" (the fresh samples,
	// whose mean is the ELBO) and "target" (backward trajectories from
	// the target samples, whose mean is the EUBO).
	Weights []Weights `json:"-"`
}

// Weights are the Student's log weights log w = log R(x) + Σ log P_B −
// Σ log P_F on one set of sequences.
type Weights struct {
	Set  string
	X    []int32 // the sequences, rows of Length tokens
	LogW []float64
}

// Evaluate draws n target samples (if the task is a Targeter) and
// evaluates the Student on n fresh samples and on them, with rng.
func (t *Trainer) Evaluate(n int, rng *rand.Rand) (Evaluation, error) {
	var targets []int32
	if tg, ok := t.task.(Targeter); ok {
		var err error
		if targets, err = tg.TargetSamples(n, rng); err != nil {
			return Evaluation{}, err
		}
	}
	var ev Evaluator
	m, err := ev.Evaluate(t, n, targets, rng)
	if err != nil {
		return Evaluation{}, err
	}
	fresh, target := ev.LogWeights()
	return Evaluation{Round: t.Round, Student: m, Weights: []Weights{{"model", ev.Samples(), fresh}, {"target", targets, target}}}, nil
}
