package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/agent"
	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/objective"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/target"
	"github.com/gfngo/gfn/teacher"
)

// Agent is one GFlowNet: a policy model, its log Z (nil for DB) and its
// optimiser.
type Agent struct {
	agent.Agent[discrete.Model]
}

// newAgent builds an agent for objective obj: for TB, VarGrad and FM a
// policy and log Z (VarGrad's and FM's not learned: it holds the batch's
// estimate), for DB, SubTB and the forward-looking FL-DB and FL-SubTB a
// policy with a state-flow head and no log Z.
// Its hidden layers' products take cfg.Precision.
func newAgent(env discrete.FeaturizedEnv, cfg Config, o agent.Optim, obj Objective, rng *rand.Rand) (*Agent, error) {
	if obj == ObjectiveDB || obj == ObjectiveSubTB || obj == ObjectiveFLDB || obj == ObjectiveFLSubTB {
		m := discrete.NewMLPModelHeads(env, env, "model", cfg.Hidden, 1, rng)
		if err := m.Net.SetPrecision(cfg.Precision); err != nil {
			return nil, err
		}
		return &Agent{agent.New[discrete.Model](m, o.LR, nil, 0)}, nil
	}
	extra := 0
	if cfg.Method == MethodGAFN {
		extra = 1 // the state flow of GAFN's edge rewards
	}
	m := discrete.NewMLPModelHeads(env, env, "model", cfg.Hidden, extra, rng)
	if err := m.Net.SetPrecision(cfg.Precision); err != nil {
		return nil, err
	}
	return &Agent{agent.New[discrete.Model](m, o.LR, agent.NewLogZ(cfg.LogZInit), o.LogZLR)}, nil
}

// LogZEstimate is the agent's estimate of log Z: its parameter for TB, the state
// flow log F(s0) for DB.
func (a *Agent) LogZEstimate(env discrete.Env) float64 {
	if a.LogZ != nil {
		return float64(a.LogZ.Value[0])
	}
	s0 := make([]int32, env.StateLen())
	env.Init(s0)
	out := a.Model.Forward(s0, 1)
	return float64(out.Data[env.NumActions()])
}

// StudentLogZ is the Student's estimate of log Z: LogZEstimate, plus, on
// forward-looking flows (log F(s) = log R(s) + the head), the reward of
// s_0 scored as if it stopped there (one reward call for the run, kept:
// an evaluation's, not training's, so not counted).
func (t *Trainer) StudentLogZ() float64 {
	z := t.Student.LogZEstimate(t.Env)
	if t.cfg.Objective != ObjectiveFLDB && t.cfg.Objective != ObjectiveFLSubTB {
		return z
	}
	if !t.s0Scored {
		st, ok := t.Env.(discrete.Stopper)
		if !ok {
			return z
		}
		s0 := make([]int32, t.Env.StateLen())
		t.Env.Init(s0)
		t.Env.Step(s0, st.StopAction())
		r := make([]float64, 1)
		if err := t.Env.LogReward(s0, 1, r); err != nil {
			return math.NaN()
		}
		t.s0LogR, t.s0Scored = r[0], true
	}
	return z + t.s0LogR
}

// update clips the accumulated gradient jointly (policy and log Z, as the
// reference does) and takes an Adam step.
func (a *Agent) update(clip float64) {
	if clip > 0 {
		nn.ClipGradNorm(a.Params(), clip)
	}
	a.Opt.Step()
}

// ReplayCapacitor is an environment that sets the replay buffer's default
// capacity (the grid reference scales it with the grid's size).
type ReplayCapacitor interface {
	ReplayCapacity() int
}

// TransitionReplayer is an environment that sets how many single
// transitions a DB replay batch of batch trajectories draws.
type TransitionReplayer interface {
	ReplayTransitions(batch int) int
}

// Trainer holds the state of one training run.
type Trainer struct {
	Env     discrete.Env
	cfg     Config
	Student *Agent
	Teacher *Agent // nil for method tb
	// Teachers holds every Teacher, Teachers[0] == Teacher: one, or
	// Config.Teachers of them.
	Teachers []*Agent

	// Counters.
	Step        int // iterations done
	GradSteps   int // Student gradient steps
	RewardCalls int
	// StateRewardCalls counts the rewards of visited non-terminal states
	// kept out of the budget (Config.FreeStateRewards).
	StateRewardCalls int
	// s0LogR is log R of s_0 stopped there, once scored (StudentLogZ).
	s0LogR   float64
	s0Scored bool
	// ModesFound holds the keys of the distinct modes any Student or
	// Teacher training sample has visited (nil if the env has no modes).
	ModesFound map[uint64]struct{}
	// ModesBy records, with Teachers, whose samples found each mode: bit 0
	// the Student's, bit 1+k Teacher k's (nil without a Teacher).
	ModesBy map[uint64]uint64

	// rng draws every random choice of training; src is its state, kept
	// so that checkpoints can store and restore it exactly.
	rng       *rand.Rand
	src       *rand.PCG
	sampler   *discrete.Sampler
	tb        discrete.TB
	tbTeacher discrete.TB // the Teacher's own scratch: its step runs concurrently
	// obj is the Student's objective for subtb and vargrad (TB and DB
	// keep their own code above and in db.go).
	obj      discrete.Objective
	objLoss  []float64
	batch    discrete.Trajectories
	extra    discrete.Trajectories
	logR     []float64
	delta    []float64
	logRT    []float64
	extraD   []float64
	repX     []int32
	schedule teacher.Schedule
	reward   teacher.Reward
	modes    target.Moder
	keyer    discrete.TerminalKeyer
	buffer   *replay.Buffer[int32]
	bufX     []int32
	ls       lsState
	db       dbState
	gafn     *gafnState
	// noCompanion turns off the other agent's forward pass during
	// sampling (tests compare the two).
	noCompanion bool

	// multi holds each Teacher's scratch when the Teachers' step is the
	// K-Teacher one (always with K > 1; tests set multiPath with K = 1).
	multi     []teacherScratch
	multiPath bool
	logPs     [][]float64 // the rows of multi's logP, for teacher.Split
	targets   [][]float64 // the rows of multi's target

	// update is the TB round in package teacher's update order, its
	// functions set once (an iteration then allocates nothing).
	update teacher.Update
}

// Iteration reports what one Iterate call did.
type Iteration struct {
	Role         byte    // 'S' or 'T'
	StudentLoss  float64 // mean δ² before the update
	TeacherLoss  float64 // NaN without a Teacher
	StudentLogZ  float64
	TeacherLogZ  float64
	MeanLength   float64 // mean trajectory length of the batch
	ModesInBatch int
}

// New builds a trainer; all randomness comes from cfg.Seed.
func New(env discrete.Env, cfg Config) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	src := rand.NewPCG(cfg.Seed, trainStream)
	rng := rand.New(src)
	t := &Trainer{
		Env: env, cfg: cfg, rng: rng, src: src, sampler: discrete.NewSampler(env), schedule: cfg.schedule(),
		reward: cfg.Reward,
	}
	fenv, err := featurized(env)
	if err != nil {
		return nil, err
	}
	if t.Student, err = newAgent(fenv, cfg, cfg.Student, cfg.Objective, rng); err != nil {
		return nil, err
	}
	for range cfg.numTeachers() {
		a, err := newAgent(fenv, cfg, cfg.Teacher, cfg.teacherObjective(), rng)
		if err != nil {
			return nil, err
		}
		t.Teachers = append(t.Teachers, a)
	}
	if len(t.Teachers) > 0 {
		t.Teacher = t.Teachers[0]
	}
	t.multiPath = len(t.Teachers) > 1
	if cfg.usesObjective() {
		o, err := objective.New(string(cfg.Objective), cfg.Lambda)
		if err != nil {
			return nil, err
		}
		t.obj.Obj = o
		if _, ok := env.(discrete.Stopper); !ok && (cfg.Objective == ObjectiveMDB || cfg.Objective == ObjectiveFLDB || cfg.Objective == ObjectiveFLSubTB) {
			return nil, fmt.Errorf("train: objective %s scores every visited state, which needs an environment where every state can stop (discrete.Stopper); %v is not one", cfg.Objective, env)
		}
	}
	if cfg.Method == MethodGAFN {
		t.gafn = newGAFN(fenv, cfg.Student.LR, rng)
	}
	t.modes, _ = env.(target.Moder)
	t.keyer, _ = env.(discrete.TerminalKeyer)
	if t.modes != nil && t.keyer != nil {
		t.ModesFound = map[uint64]struct{}{}
		if len(t.Teachers) > 0 {
			t.ModesBy = map[uint64]uint64{}
		}
	}
	if cfg.Buffer.Priority != "" {
		if t.keyer == nil {
			return nil, fmt.Errorf("train: a replay buffer needs an environment with terminal keys; %v has none", env)
		}
		capacity := cfg.Buffer.Cap
		stateLen := t.bufferWidth()
		if cfg.Objective == ObjectiveDB {
			// Transitions (s, a) have their own default.
			if capacity == 0 {
				capacity = 1000 // the reference's transition buffer
			}
		}
		if capacity == 0 {
			rc, ok := env.(ReplayCapacitor)
			if !ok {
				return nil, fmt.Errorf("train: buffer capacity 0 asks the environment for a default, and %v has none: set it", env)
			}
			capacity = rc.ReplayCapacity()
		}
		b, err := replay.New[int32](capacity, stateLen, cfg.Buffer.Priority)
		if err != nil {
			return nil, err
		}
		b.HashTies = cfg.Buffer.Ties == "hash"
		t.buffer = b
	}
	return t, nil
}

// featurized returns env with its one-hot features, which the MLP policies
// (and GAFN's RND networks) read, or an error naming the environment.
func featurized(env discrete.Env) (discrete.FeaturizedEnv, error) {
	f, ok := env.(discrete.FeaturizedEnv)
	if !ok {
		return nil, fmt.Errorf("train: environment %v has no one-hot state features: the MLP policies need it to implement discrete.Featurizer", env)
	}
	return f, nil
}

// bufferWidth is the number of words of a buffer entry: a state, or for
// DB a state and an action.
func (t *Trainer) bufferWidth() int {
	if t.cfg.Objective == ObjectiveDB {
		return t.Env.StateLen() + 1
	}
	return t.Env.StateLen()
}

// Done reports whether the next iteration would exceed the reward-call
// budget (a replay costs none; local search costs a batch per round).
func (t *Trainer) Done() bool {
	return !(teacher.Budget{Limit: t.cfg.RewardCalls, Used: t.RewardCalls}).Allows(t.nextCost())
}

func (t *Trainer) nextCost() int {
	role := byte(t.schedule.Effective(t.Step, t.buffered()))
	if role == 'B' {
		return 0
	}
	cost := t.cfg.Batch
	if t.cfg.LS.On && t.lsDue(role, t.Step) {
		cost += t.cfg.Batch * t.cfg.LS.Iterations
	}
	return cost
}

// Iterate runs one training iteration.
func (t *Trainer) Iterate() (Iteration, error) {
	cfg := t.cfg
	i := t.Step
	it := Iteration{Role: byte(t.schedule.Role(i)), TeacherLoss: math.NaN()}
	role := byte(t.schedule.Effective(i, t.buffered())) // nothing to replay yet: S
	switch {
	case role == 'B' && cfg.Objective == ObjectiveDB:
		t.sampleTransitions()
	case role == 'B':
		t.bufX, t.logR = t.buffer.Sample(cfg.Batch, t.rng, t.bufX[:0], t.logR[:0])
		t.sampler.Backward(t.bufX, cfg.Batch, t.rng, &t.batch)
	default:
		behaviour, agent := t.Student, 0
		if role == 'T' {
			k := t.schedule.TeacherIndex(i, len(t.Teachers))
			behaviour, agent = t.Teachers[k], 1+k
		}
		// Record the behaviour policy's forward passes: its own TB step
		// on this batch then reuses them instead of recomputing.
		opt := discrete.SampleOptions{Eps: cfg.Eps, Temperature: cfg.Temperature,
			Record: cfg.Objective != ObjectiveDB && cfg.Objective != ObjectiveFM && cfg.Method != MethodGAFN}
		if opt.Record && t.Teacher != nil && !t.noCompanion {
			// The other agent trains on this batch too: its forward pass
			// runs beside the sampling, on the core sampling leaves idle.
			// (Of K > 1 Teachers none is the Student's companion.)
			var other *Agent
			switch {
			case role == 'T':
				other = t.Student
			case len(t.Teachers) == 1:
				other = t.Teacher
			}
			if other != nil {
				opt.Companion, _ = other.Model.(discrete.Recorder)
			}
		}
		t.sampler.Forward(behaviour.Model, cfg.Batch, opt, t.rng, &t.batch)
		if err := t.rewards(&t.batch, &t.logR); err != nil {
			return it, err
		}
		if cfg.LS.On && t.lsDue(role, i) {
			if err := t.localSearch(behaviour, role == 'T'); err != nil {
				return it, err
			}
		}
		t.countModes(&it, agent)
	}
	switch {
	case cfg.Method == MethodGAFN:
		t.stepGAFN(&it)
	case cfg.Objective == ObjectiveDB:
		t.stepDB(role, &it)
	default:
		t.stepTB(role, &it)
	}
	t.GradSteps++
	it.StudentLogZ = t.StudentLogZ()
	if t.Teacher != nil {
		it.TeacherLogZ = t.Teacher.LogZEstimate(t.Env)
	}
	t.Step++
	return it, nil
}

// stepTB trains on t.batch with trajectory balance.
func (t *Trainer) stepTB(role byte, it *Iteration) {
	n := t.batch.Len()
	it.MeanLength = float64(t.batch.NumTransitions()) / float64(n)
	t.delta = grow(t.delta, n)
	if t.update.Delta == nil {
		t.initUpdate()
	}
	var tl float64
	it.StudentLoss, tl = t.update.Run()
	if t.Teacher != nil {
		it.TeacherLoss = tl
	}
	if t.buffer != nil && role != 'B' {
		t.addToBuffer()
	}
}

// initUpdate sets up the TB round (package teacher's update order) once:
// the Student's δ before its update, the Teacher's targets from δ, then
// the Student's backward pass and update beside the Teacher's step.
func (t *Trainer) initUpdate() {
	cfg := t.cfg
	u := &t.update
	u.Delta = func() float64 {
		nn.ZeroGrad(t.Student.Params())
		loss := t.studentDelta(&t.batch, t.logR, t.delta)
		if cfg.Objective == ObjectiveVarGrad || cfg.Objective == ObjectiveFM || cfg.Objective == ObjectiveMDB {
			t.Student.LogZ.Value[0] = float32(t.obj.LogZ()) // its estimate, not learned
		}
		return loss
	}
	needRT := t.Teacher != nil || (t.buffer != nil && cfg.Buffer.Priority == replay.Teacher)
	if needRT {
		u.Targets = t.teacherTargets
	}
	// The extra Monte Carlo δ's run the Student again, so its backward
	// pass must come first; they use the same pre-update parameters.
	u.TargetsAfterStudent = needRT && cfg.NMC > 1
	u.StudentGrad = func() { t.tb.Grad(t.Env, t.Student.Model, t.Student.LogZ, &t.batch, t.delta) }
	if t.obj.Obj != nil {
		u.StudentGrad = func() { t.obj.Grad(t.Env, t.Student.Model, t.Student.LogZ, &t.batch) }
	}
	u.StudentUpdate = func() { t.Student.update(cfg.Student.Clip) }
	switch {
	case t.multiPath:
		t.initTeachers()
		u.TeacherStep = t.teachersStep
	case t.Teacher != nil:
		u.TeacherStep = t.teacherStepLoss
	}
}

// studentDelta evaluates the Student's objective on tr, leaving its pass
// ready for the gradient, and writes each object's residual for the
// Teacher's reward into delta: TB's δ, or for SubTB and VarGrad
// sign(δ)·√ℓ with ℓ the object's loss and δ its signed residual (package
// objective), so that the reward's w·δ² is the object's weighted loss. It
// returns the batch loss.
func (t *Trainer) studentDelta(tr *discrete.Trajectories, logR, delta []float64) float64 {
	if t.obj.Obj == nil {
		return t.tb.Eval(t.Env, t.Student.Model, t.Student.LogZ, tr, logR, delta)
	}
	n := tr.Len()
	t.objLoss = grow(t.objLoss, n)
	loss, err := t.obj.Eval(t.Env, t.Student.Model, t.Student.LogZ, tr, logR, delta, t.objLoss)
	if err != nil {
		panic(err) // the sizes are the trainer's own; New checked the environment
	}
	// Modified DB and the forward-looking objectives score every visited
	// state.
	if t.cfg.FreeStateRewards {
		t.StateRewardCalls += t.obj.RewardCalls()
	} else {
		t.RewardCalls += t.obj.RewardCalls()
	}
	for b := range n {
		delta[b] = math.Copysign(math.Sqrt(t.objLoss[b]), delta[b])
	}
	return loss
}

// teacherScratch is one of K Teachers' TB scratch and per-object values.
type teacherScratch struct {
	tb                         discrete.TB
	logPF, logP, target, delta []float64
}

func (t *Trainer) initTeachers() {
	K := len(t.Teachers)
	t.multi = make([]teacherScratch, K)
	t.logPs = make([][]float64, K)
	t.targets = make([][]float64, K)
}

// teachersStep is the K-Teacher step: each Teacher's log P_F(τ) on the
// batch, its estimate ℓ_k(x) = log P_F^k(τ) − log P_B(τ|x) of log P_k(x),
// the targets split by Config.TeacherSplit from the single Teacher's
// (t.logRT), then each Teacher's TB step on its own targets. It returns
// the Teachers' mean loss. Like teacherStepLoss it touches only the
// Teachers' state.
func (t *Trainer) teachersStep() float64 {
	n := t.batch.Len()
	for k, a := range t.Teachers {
		s := &t.multi[k]
		s.logPF, s.logP = grow(s.logPF, n), grow(s.logP, n)
		s.target, s.delta = grow(s.target, n), grow(s.delta, n)
		s.tb.LogPF(t.Env, a.Model, &t.batch, s.logPF)
		for b := range n {
			s.logP[b] = s.logPF[b] - t.batch.LogPB[b]
		}
		t.logPs[k], t.targets[k] = s.logP, s.target
	}
	t.cfg.split().Targets(t.logRT[:n], t.logPs, t.targets)
	var loss float64
	for k, a := range t.Teachers {
		s := &t.multi[k]
		nn.ZeroGrad(a.Params())
		z := float64(a.LogZ.Value[0])
		var l float64
		for b := range n {
			// discrete.TB.Eval's δ, in its order of operations.
			d := s.target[b] + t.batch.LogPB[b] - z - s.logPF[b]
			s.delta[b] = d
			l += d * d
		}
		s.tb.Grad(t.Env, a.Model, a.LogZ, &t.batch, s.delta)
		a.update(t.cfg.Teacher.Clip)
		loss += l / float64(n)
	}
	return loss / float64(len(t.Teachers))
}

// teacherStepLoss trains the Teacher on t.batch with the targets t.logRT and
// returns its loss. It touches only the Teacher's state (its own TB scratch
// included), so it can run beside the Student's backward pass.
func (t *Trainer) teacherStepLoss() float64 {
	n := t.batch.Len()
	nn.ZeroGrad(t.Teacher.Params())
	loss := t.tbTeacher.Loss(t.Env, t.Teacher.Model, t.Teacher.LogZ, &t.batch, t.logRT, t.extraD[:n], true)
	t.Teacher.update(t.cfg.Teacher.Clip)
	return loss
}

// rewards evaluates log R of tr's terminal states into *logR, counting the
// reward calls.
func (t *Trainer) rewards(tr *discrete.Trajectories, logR *[]float64) error {
	n := tr.Len()
	*logR = grow(*logR, n)
	if err := t.Env.LogReward(tr.Final, n, *logR); err != nil {
		return err
	}
	t.RewardCalls += n
	return nil
}

// countModes records the modes among the batch's terminal states, which
// agent (0 the Student, 1+k Teacher k) sampled.
func (t *Trainer) countModes(it *Iteration, agent int) {
	if t.ModesFound == nil {
		return
	}
	for b := range t.batch.Len() {
		x := t.batch.FinalState(b)
		if t.modes.IsMode(x) {
			it.ModesInBatch++
			key := t.keyer.TerminalKey(x)
			t.ModesFound[key] = struct{}{}
			if t.ModesBy != nil {
				t.ModesBy[key] |= 1 << agent
			}
		}
	}
}

// addToBuffer stores the batch's terminal states with their priorities.
func (t *Trainer) addToBuffer() {
	w := t.Env.StateLen()
	completion := t.cfg.Buffer.Pairing == "completion" && len(t.batch.Finished) == t.batch.Len()
	for b := range t.batch.Len() {
		x := t.batch.FinalState(b)
		if completion {
			x = t.batch.FinalState(int(t.batch.Finished[b])) // the pre-77091bf mismatch
		}
		var delta, logRT float64 // each computed only where its priority needs it
		switch t.cfg.Buffer.Priority {
		case replay.Loss:
			delta = t.delta[b]
		case replay.Teacher:
			logRT = t.logRT[b]
		}
		p := teacher.Priority(t.cfg.Buffer.Priority, t.logR[b], delta, 0, logRT)
		t.buffer.Add(t.keyer.TerminalKey(x), x[:w], t.logR[b], p)
	}
}

// teacherTargets fills t.logRT with the Teacher's log-reward for the batch.
func (t *Trainer) teacherTargets() {
	cfg := t.cfg
	n := t.batch.Len()
	t.logRT = grow(t.logRT, n)
	t.extraD = grow(t.extraD, n)
	t.reward.Terms(t.delta[:n], t.logR, math.Inf(-1), t.logRT[:n])
	if cfg.NMC > 1 {
		w := t.Env.StateLen()
		t.repX = t.repX[:0]
		for range cfg.NMC - 1 {
			t.repX = append(t.repX, t.batch.Final[:n*w]...)
		}
		m := (cfg.NMC - 1) * n
		t.sampler.Backward(t.repX, m, t.rng, &t.extra)
		ext := grow(nil, m)
		lr := grow(nil, m)
		for k := range m {
			lr[k] = t.logR[k%n]
		}
		t.tb.Loss(t.Env, t.Student.Model, t.Student.LogZ, &t.extra, lr, ext, false)
		for k, d := range ext {
			t.logRT[k%n] += t.reward.Term(d)
		}
		for b := range n {
			t.logRT[b] /= float64(cfg.NMC)
		}
	}
	t.reward.LogRewards(t.logRT[:n], t.logR, t.logRT[:n])
}

// buffered is the number of objects in the replay buffer (0 without one).
func (t *Trainer) buffered() int {
	if t.buffer == nil {
		return 0
	}
	return t.buffer.Len()
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n, n+n/4)
	}
	return s[:n]
}

// String summarises an iteration for logs.
func (it Iteration) String() string {
	return fmt.Sprintf("%c loss=%.4g teacher=%.4g logZ=%.4g", it.Role, it.StudentLoss, it.TeacherLoss, it.StudentLogZ)
}

// Reseed replaces the random source, e.g. to draw reproducible samples from
// a loaded checkpoint.
func (t *Trainer) Reseed(seed uint64) {
	t.src = rand.NewPCG(seed, trainStream)
	t.rng = rand.New(t.src)
}

// The second words of the PCG seeds of the training and evaluation
// streams: two independent streams from one seed.
const (
	trainStream = 0x9e3779b97f4a7c15
	evalStream  = 0xe7a1
)
