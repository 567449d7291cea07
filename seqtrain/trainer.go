package seqtrain

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/objective"
	"github.com/gfngo/gfn/target"

	"github.com/gfngo/gfn/agent"
	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/env/sequence"
	"github.com/gfngo/gfn/internal/choice"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/ssr"
	"github.com/gfngo/gfn/teacher"
)

// Task is a sequence-design problem: sequences of Length tokens, token i
// printed as Alphabet()[i], with a log-reward. A user's own reward needs
// only this; the optional target.Moder, target.LogZer and Targeter add metrics.
type Task interface {
	Length() int
	Alphabet() []string
	// LogReward writes log R of n sequences (rows of Length tokens); an
	// error for a NaN, infinite or non-positive reward.
	LogReward(xs []int32, n int, out []float64) error
}

// Targeter is a Task that can draw sequences from the target R/Z (exact
// draws or a stored set): the evaluation's EUBO and correlation use them.
type Targeter interface {
	// TargetSamples returns n sequences (n rows of Length tokens), or an
	// error if it cannot (a stored set smaller than n).
	TargetSamples(n int, rng *rand.Rand) ([]int32, error)
}

// ModelFunc builds an agent's policy network for env; prefix starts its
// parameter names (the trainer passes "policy."; checkpoints put each
// agent's tensors under "student." or "teacher.").
type ModelFunc func(env discrete.Env, prefix string, rng *rand.Rand) (discrete.Model, error)

// Agent is one GFlowNet (its policy, log Z and optimiser) with the
// trainer's scratch space for it.
type Agent struct {
	agent.Agent[discrete.Model]
	tb    discrete.TB
	delta []float64 // residuals of the last step
	gd    []float64 // their gradient weights (0 where the loss is capped)
}

// Trainer runs the sequence reference loop. Create it with New.
type Trainer struct {
	cfg     Config
	task    Task
	env     *sequence.Env
	Student *Agent
	Teacher *Agent // nil without a Teacher
	// Round counts finished rounds; RewardCalls the reward evaluations of
	// online samples (replays and evaluations call no reward).
	Round, RewardCalls int

	src *rand.PCG
	rng *rand.Rand

	// obj is the Student's objective other than TB (nil Obj: TB).
	obj     discrete.Objective
	objLoss []float64

	// seen maps every object of an online batch to its log-reward (the
	// reference's allXtoR), in first-seen order for checkpoints.
	seen      map[uint64]float64
	seenOrder []uint64
	seenModes int
	prt       *replay.Keyed[int32] // first-seen objects, priority log R
	per       *replay.Keyed[int32] // online objects, priority the Student's advantage

	sampler  discrete.Sampler
	tr       discrete.Trajectories
	logR     []float64
	term     []float64
	targets  []float64
	xs       []int32
	keys     []uint64
	tokens   []int32
	update   teacher.Update
	stepLoss [2]float64
	ls       lsState
}

// Iteration reports one round.
type Iteration struct {
	Round       int
	Sampler     teacher.Role // who drew the online batch
	StudentLoss float64      // mean over the round's steps
	TeacherLoss float64
	Replayed    bool
}

// NonFiniteError reports a log-reward that is NaN or infinite (or a
// reward that is not positive), naming the round and the sequence.
type NonFiniteError struct {
	Round int
	Seq   string
	Err   error
}

// Error names the round, the sequence and the cause.
func (e *NonFiniteError) Error() string {
	return fmt.Sprintf("seqtrain: round %d: reward of %s: %v", e.Round, e.Seq, e.Err)
}

// Unwrap returns the cause.
func (e *NonFiniteError) Unwrap() error { return e.Err }

// New builds a Trainer for task with cfg (its policy networks built by
// cfg.Model, or the one cfg.Policy names).
func New(task Task, cfg Config) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Method, _ = ParseMethod(string(cfg.Method)) // "teacher": Teacher + PER
	n, a := task.Length(), len(task.Alphabet())
	var env *sequence.Env
	var err error
	if cfg.MDP == "append" {
		env, err = sequence.NewAppend(a, n, task.LogReward)
	} else {
		env, err = sequence.NewPrependAppend(a, n, task.LogReward)
	}
	if err != nil {
		return nil, fmt.Errorf("seqtrain: %w", err)
	}
	if !env.KeyFits() {
		// The trainer knows objects by a 64-bit key (the visited set,
		// the buffers, mode counts): every sequence must have one.
		return nil, fmt.Errorf("seqtrain: %d letters and length %d make %d^%d sequences, more than the trainer's 64-bit keys can tell apart: the length must be at most %d with %d letters", a, n, a, n, sequence.MaxKeyLength(a), a)
	}
	model := cfg.Model
	if model == nil {
		model = cfg.Policy.build
	}
	src := rand.NewPCG(cfg.Seed, 0x5e9)
	t := &Trainer{cfg: cfg, task: task, env: env, src: src, rng: rand.New(src), seen: make(map[uint64]float64)}
	t.sampler.Env = env
	// Each agent's initialisation has its own stream, so adding a Teacher
	// does not change the Student's weights.
	studentModel := model
	if cfg.flows() && cfg.Model == nil {
		p := cfg.Policy
		p.heads = 1 // the state flow
		studentModel = p.build
	}
	if t.Student, err = newAgent(env, cfg.Student, cfg, studentModel, rand.New(rand.NewPCG(cfg.Seed, 1))); err != nil {
		return nil, err
	}
	if cfg.objective() != "tb" {
		o, err := objective.New(cfg.Objective, cfg.Lambda)
		if err != nil {
			return nil, fmt.Errorf("seqtrain: %w", err)
		}
		t.obj.Obj = o
		if cfg.flows() {
			s0 := make([]int32, env.StateLen())
			env.Init(s0)
			if out := t.Student.Model.Forward(s0, 1); out.Cols <= env.NumActions() {
				return nil, fmt.Errorf("seqtrain: objective %s needs a model with a state-flow column after the %d actions; the Model gives %d columns", cfg.Objective, env.NumActions(), out.Cols)
			}
		}
	}
	if cfg.Method.HasTeacher() {
		if t.Teacher, err = newAgent(env, cfg.Teacher, cfg, model, rand.New(rand.NewPCG(cfg.Seed, 2))); err != nil {
			return nil, err
		}
	}
	if cfg.Method.Replays() {
		if cfg.Method.ByLoss() {
			t.per, _ = replay.NewKeyed[int32](cfg.Buffer, env.StateLen())
		} else {
			t.prt, _ = replay.NewKeyed[int32](cfg.Buffer, env.StateLen())
		}
	}
	t.update = teacher.Update{
		Delta:         func() float64 { return t.stepLoss[0] },
		StudentGrad:   func() { t.grad(t.Student) },
		StudentUpdate: func() { t.apply(t.Student) },
	}
	if t.Teacher != nil {
		t.update.Targets = t.teacherTargets
		t.update.TeacherStep = func() float64 {
			l := t.eval(t.Teacher, t.targets)
			t.grad(t.Teacher)
			t.apply(t.Teacher)
			return l
		}
	}
	return t, nil
}

func newAgent(env discrete.Env, o agent.Optim, cfg Config, model ModelFunc, rng *rand.Rand) (*Agent, error) {
	m, err := model(env, "policy.", rng)
	if err != nil {
		return nil, err
	}
	if err := setPrecision(m, cfg.Precision); err != nil {
		return nil, err
	}
	return &Agent{Agent: agent.New(m, o.LR, agent.NewLogZ(cfg.LogZInit), o.LogZLR)}, nil
}

// precisioner is a policy network whose hidden products can run in
// another precision (ssr.Model, discrete.MLPModel).
type precisioner interface {
	SetPrecision(nn.Precision) error
}

// setPrecision gives m precision p: nothing to do for FP32, else m must
// be a precisioner (whose SetPrecision checks the CPU).
func setPrecision(m discrete.Model, p nn.Precision) error {
	if p == nn.FP32 {
		return nil
	}
	pm, ok := m.(precisioner)
	if !ok {
		return fmt.Errorf("seqtrain: precision %s: the policy network %T has no SetPrecision(nn.Precision) error method", p, m)
	}
	return pm.SetPrecision(p)
}

// build makes the policy network p names.
func (p Policy) build(env discrete.Env, prefix string, rng *rand.Rand) (discrete.Model, error) {
	switch p.Kind {
	case "ssr":
		fenv, err := featurized(env)
		if err != nil {
			return nil, err
		}
		if p.heads > 0 {
			return ssr.NewFlow(env, fenv, prefix, p.Hidden, p.Embed, rng), nil
		}
		return ssr.New(env, fenv, prefix, p.Hidden, p.Embed, rng), nil
	case "mlp":
		layers := p.Layers
		if layers <= 0 {
			layers = 2
		}
		hidden := make([]int, layers)
		for i := range hidden {
			hidden[i] = p.Hidden
		}
		fenv, err := featurized(env)
		if err != nil {
			return nil, err
		}
		return discrete.NewMLPModelHeads(env, fenv, prefix, hidden, p.heads, rng), nil
	}
	return nil, fmt.Errorf("seqtrain: policy %q is unknown (allowed: %s)", p.Kind, choice.List(PolicyKinds))
}

// Sample draws n sequences from the Student's policy (no exploration)
// with rng: n rows of Length tokens.
func (t *Trainer) Sample(n int, rng *rand.Rand) []int32 {
	var s discrete.Sampler
	var tr discrete.Trajectories
	s.Env = t.env
	L, w := t.env.Length(), t.env.StateLen()
	xs := make([]int32, 0, n*L)
	for done := 0; done < n; done += 256 {
		k := min(256, n-done)
		s.Forward(t.Student.Model, k, discrete.SampleOptions{}, rng, &tr)
		for b := range k {
			xs = append(xs, t.env.Tokens(tr.Final[b*w:(b+1)*w])...)
		}
	}
	return xs
}

// Done reports whether every round has run.
func (t *Trainer) Done() bool { return t.Round >= t.cfg.Rounds }

// Seen is the number of distinct objects sampled online so far.
func (t *Trainer) Seen() int { return len(t.seen) }

// SeenModes is how many of the objects Seen counts are modes (0 without a
// Moder).
func (t *Trainer) SeenModes() int { return t.seenModes }

// Iterate runs one round: the online batch (Student or Teacher samples,
// reward calls), a step of each agent on it, the buffers' update and, for
// the replay methods, the offline batch with a step of each agent.
func (t *Trainer) Iterate() (Iteration, error) {
	cfg := t.cfg
	it := Iteration{Round: t.Round, Sampler: teacher.Student}
	by := t.Student
	if t.Teacher != nil && (cfg.LS.Rounds == 0 || cfg.LS.Teacher) && cfg.Schedule.Effective(t.Round, t.buffered()) == teacher.Teacher {
		it.Sampler, by = teacher.Teacher, t.Teacher
	}
	n := cfg.OnlineBatch
	if cfg.LS.Rounds > 0 {
		if err := t.localSearchBatch(by, by == t.Teacher); err != nil {
			return it, err
		}
	} else {
		t.sampler.Forward(by.Model, n, discrete.SampleOptions{Eps: cfg.epsilon()}, t.rng, &t.tr)
		t.logR = grow(t.logR, n)
		if err := t.rewards(t.tr.Final, n, t.logR); err != nil {
			return it, err
		}
	}
	t.RewardCalls += n
	sl, tl := t.step(t.logR)
	w := t.env.StateLen()
	for b := range n {
		x := t.tr.Final[b*w : (b+1)*w]
		key := t.env.TerminalKey(x)
		if _, ok := t.seen[key]; !ok {
			t.seen[key] = t.logR[b]
			t.seenOrder = append(t.seenOrder, key)
			if m, ok := t.task.(target.Moder); ok && m.IsMode(t.env.Tokens(x)) {
				t.seenModes++
			}
			if t.prt != nil {
				t.prt.Set(key, x, t.logR[b], t.logR[b])
			}
		}
		if t.per != nil {
			t.per.Set(key, x, t.logR[b], t.priority(b))
		}
	}
	it.StudentLoss, it.TeacherLoss = sl, tl
	if buf := t.buffer(); buf != nil && buf.Len() >= 10 {
		m := cfg.OfflineBatch
		t.xs, t.logR, t.keys = buf.SamplePortions(m, cfg.TopPercentile, t.rng, t.xs[:0], t.logR[:0], t.keys[:0])
		t.sampler.Backward(t.xs, m, t.rng, &t.tr)
		sl2, tl2 := t.step(t.logR)
		if t.per != nil {
			for b, key := range t.keys {
				t.per.SetPriority(key, t.priority(b))
			}
		}
		it.StudentLoss, it.TeacherLoss = (sl+sl2)/2, (tl+tl2)/2
		it.Replayed = true
	}
	t.Round++
	return it, nil
}

func (t *Trainer) buffer() *replay.Keyed[int32] {
	if t.per != nil {
		return t.per
	}
	return t.prt
}

// buffered is the number of objects in the replay buffer.
func (t *Trainer) buffered() int {
	if buf := t.buffer(); buf != nil {
		return buf.Len()
	}
	return 0
}

// priority is PER's priority of object b of the last step: the Student's
// advantage exp(term).
func (t *Trainer) priority(b int) float64 {
	return teacher.Priority(replay.Advantage, t.logR[b], t.Student.delta[b], t.term[b], math.NaN())
}

// rewards evaluates the log-rewards of n terminal states, naming the
// sequence of an invalid one.
func (t *Trainer) rewards(final []int32, n int, out []float64) error {
	w, L := t.env.StateLen(), t.env.Length()
	t.tokens = grow(t.tokens, n*L)
	for b := range n {
		copy(t.tokens[b*L:(b+1)*L], t.env.Tokens(final[b*w:(b+1)*w]))
	}
	if err := t.task.LogReward(t.tokens, n, out); err != nil {
		return &NonFiniteError{Round: t.Round, Seq: "a batch", Err: err}
	}
	for b := range n {
		if v := out[b]; math.IsNaN(v) || math.IsInf(v, 0) {
			return &NonFiniteError{Round: t.Round, Seq: t.decode(t.tokens[b*L : (b+1)*L]),
				Err: fmt.Errorf("seqtrain: log-reward %v", v)}
		}
	}
	return nil
}

func (t *Trainer) decode(x []int32) string {
	al := t.task.Alphabet()
	s := ""
	for _, v := range x {
		if int(v) >= 0 && int(v) < len(al) {
			s += al[v]
		} else {
			s += "?"
		}
	}
	return fmt.Sprintf("%q", s)
}

// step trains both agents on the batch in t.tr with log-rewards logR: the
// Student's residuals first, the Teacher's targets from them, then the
// two updates side by side. It leaves the Student's terms in t.term.
func (t *Trainer) step(logR []float64) (studentLoss, teacherLoss float64) {
	t.stepLoss[0] = t.eval(t.Student, logR)
	n := t.tr.Len()
	t.term = grow(t.term, n)
	t.cfg.Reward.Terms(t.Student.delta[:n], logR, math.Inf(-1), t.term)
	return t.update.Run()
}

// teacherTargets writes the Teacher's log-rewards log R_T from the
// Student's terms and the objects' log R.
func (t *Trainer) teacherTargets() {
	n := t.tr.Len()
	t.targets = grow(t.targets, n)
	t.cfg.Reward.LogRewards(t.term[:n], t.logR, t.targets)
}

// eval computes agent a's residuals δ on t.tr for targets logR and its
// loss mean min(δ², cap).
func (t *Trainer) eval(a *Agent, logR []float64) float64 {
	n := t.tr.Len()
	a.delta, a.gd = grow(a.delta, n), grow(a.gd, n)
	if a == t.Student && t.obj.Obj != nil {
		return t.evalObjective(a, logR)
	}
	a.tb.Eval(t.env, a.Model, a.LogZ, &t.tr, logR, a.delta)
	var loss float64
	for b, d := range a.delta[:n] {
		d2 := d * d
		if d2 <= t.cfg.LossCap {
			a.gd[b] = d
		} else {
			d2, a.gd[b] = t.cfg.LossCap, 0 // a capped loss has no gradient
		}
		loss += d2
	}
	return loss / float64(n)
}

// evalObjective is eval for a Student of another objective than TB: its
// δ for the Teacher's reward is sign(δ)·√ℓ, ℓ the object's loss and δ its
// signed residual (package objective), and its log Z holds the batch's
// estimate (VarGrad's mean, the flow at s_0).
func (t *Trainer) evalObjective(a *Agent, logR []float64) float64 {
	n := t.tr.Len()
	t.objLoss = grow(t.objLoss, n)
	loss, err := t.obj.Eval(t.env, a.Model, a.LogZ, &t.tr, logR, a.delta, t.objLoss)
	if err != nil {
		panic(err) // the sizes are the trainer's own
	}
	for b := range n {
		a.delta[b] = math.Copysign(math.Sqrt(t.objLoss[b]), a.delta[b])
	}
	a.LogZ.Value[0] = float32(t.obj.LogZ())
	return loss
}

// grad accumulates the gradient of a's capped loss.
func (t *Trainer) grad(a *Agent) {
	nn.ZeroGrad(a.Opt.Params())
	if a == t.Student && t.obj.Obj != nil {
		t.obj.Grad(t.env, a.Model, a.LogZ, &t.tr)
		return
	}
	a.tb.Grad(t.env, a.Model, a.LogZ, &t.tr, a.gd)
}

// apply clips the policy's gradient, steps Adam and floors log Z.
func (t *Trainer) apply(a *Agent) {
	if t.cfg.ClipNorm > 0 {
		nn.ClipGradNorm(a.Model.Params(), t.cfg.ClipNorm)
	}
	a.Opt.Step()
	if z := float32(t.cfg.LogZMin); a.LogZ.Value[0] < z {
		a.LogZ.Value[0] = z
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// featurized returns env's one-hot features, which the built-in policies
// read, or an error naming the environment.
func featurized(env discrete.Env) (discrete.Featurizer, error) {
	f, ok := env.(discrete.Featurizer)
	if !ok {
		return nil, fmt.Errorf("seqtrain: environment %v has no one-hot state features: the ssr and mlp policies need it to implement discrete.Featurizer", env)
	}
	return f, nil
}
