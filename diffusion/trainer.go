package diffusion

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gfngo/gfn/agent"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/langevin"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/objective"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/timenet"
)

// Agent is one diffusion sampler: a policy network (Model), its log Z
// and its optimiser (agent.Agent), its optimiser settings and its scratch
// space.
type Agent struct {
	agent.Agent[timenet.Net]
	opt  Optim
	time []*nn.Param // the time encoder's parameters (t_model.*)
	// gradNorm is the network's gradient norm at the last step, before
	// any clipping.
	gradNorm float64

	tb      balance
	pis     pathIntegral
	sampler sampler
	batch   batch // the agent's own backward trajectories (the Teacher's step)
}

// wideDrift is the least dimension at which a fixed variance's network
// computes only its drift columns (timenet.OutputSetter): a third of the
// network's work at d = 1,600 (LGCP), a few per cent at d = 32. Below it
// the product kernels choose their path by the output width, so the
// drift columns alone would not have the whole output's bits, and there
// is little to save.
const wideDrift = 16

func newAgent(cfg Config, o Optim, dim int, rng *rand.Rand) (*Agent, error) {
	nc := cfg.Net
	nc.Precision = cfg.Precision // the hidden layers' products
	net, err := timenet.New(nc, dim, rng)
	if err != nil {
		return nil, err
	}
	if s, ok := net.(timenet.OutputSetter); ok && !cfg.LearnedVariance && dim >= wideDrift {
		s.SetOutputs(dim) // the variance columns are never read
	}
	a := &Agent{Agent: agent.New(net, o.LR, agent.NewLogZ(0), o.LogZLR), opt: o}
	a.Opt.WeightDecay = o.WeightDecay
	for _, p := range net.Params() {
		if strings.HasPrefix(p.Name, "t_model.") {
			a.time = append(a.time, p)
		}
	}
	return a, nil
}

// sample draws n trajectories of a (no exploration) and returns their
// terminal states (n×d).
func (a *Agent) sample(p Process, n int, rng *rand.Rand) []float32 {
	var s sampler
	var b batch
	s.Forward(p, a.Model, n, sampleOptions{}, rng, &b)
	return slices.Clone(b.Final())
}

// Sample draws n samples of the Student (n×d rows, no exploration).
func (t *Trainer) Sample(n int, rng *rand.Rand) []float32 { return t.Student.sample(t.Proc, n, rng) }

// step records the network's gradient norm, clips the gradient as
// configured (the time encoder's, then the whole network's) and takes an
// Adam step with the learning rates scaled by s.
func (a *Agent) step(s float64) {
	net := a.Opt.Groups[0].Params
	a.gradNorm = nn.GradNorm(net)
	if a.opt.ClipTime > 0 {
		nn.ClipGradNorm(a.time, a.opt.ClipTime)
	}
	if a.opt.Clip > 0 {
		nn.ClipGradNorm(net, a.opt.Clip)
	}
	a.Opt.Groups[0].LR = a.opt.LR * s
	a.Opt.Groups[1].LR = a.opt.LogZLR * s
	if len(a.Opt.Groups) > 2 { // the flow network
		a.Opt.Groups[2].LR = a.opt.flowLR() * s
	}
	a.Opt.Step()
}

// Trainer holds one training run. Every random draw comes from streams
// seeded by Config.Seed, so a run is a function of its configuration.
type Trainer struct {
	Energy  energy.Energy
	cfg     Config
	Proc    Process
	Student *Agent
	Teacher *Agent // nil unless the method is teacher
	// Threshold is the fixed log-reward threshold.
	Threshold float64

	Step        int // iterations done
	RewardCalls int // log R evaluations of fresh samples (local search included)

	schedule teacher.Schedule
	buffer   *replay.Buffer[float32]
	chain    *langevin.Chain

	// Random streams: the main one (sampling, buffer draws, the Student's
	// backward trajectories, local search) and the Teacher step's own
	// (it runs beside the Student's backward pass).
	src, teacherSrc *rand.PCG
	rng, teacherRNG *rand.Rand

	update teacher.Update
	// noRecord turns off recording the Student's sampling pass (tests
	// compare the two).
	noRecord bool
	batch    batch // the Student's training batch
	scored   batch // Teacher samples scored by the Student
	logR     []float64
	delta    []float64
	// vargrad is the Student's VarGrad objective (nil Obj: TB).
	vargrad struct {
		Obj   objective.Objective
		batch objective.Batch
		res   objective.Result
	}
	// flows is the Student's flow objective (db, subtb, fl-db, fl-subtb),
	// or nil; its flow network trains in the Student's Adam, a third group.
	flows   *flowObjective
	term    []float64 // the Teacher reward's δ term (floored below the threshold)
	logRT   []float64
	kept    []int
	xs      []float32
	tLogR   []float64
	tDelta  []float64
	lsX     []float32
	lsLogR  []float64
	scratch []float64
}

// Iteration reports what one Iterate call did.
type Iteration struct {
	Role        teacher.Role
	StudentLoss float64
	TeacherLoss float64 // NaN without a Teacher step
	StudentLogZ float64
	TeacherLogZ float64
	// StudentGradNorm and TeacherGradNorm are the networks' gradient
	// norms before clipping (log Z excluded; NaN without a Teacher).
	StudentGradNorm float64
	TeacherGradNorm float64
	// Stored is the number of objects added to the buffer.
	Stored int
}

// RewardError reports an energy whose LogReward (or GradLogReward, in
// local search and PIS) failed, a reward program that exited, say, or
// whose local search met a non-finite log-reward or gradient: like a
// NonFiniteError, Run stops after a checkpoint.
type RewardError struct {
	Iteration int    // the training iteration; −1 in an evaluation
	Stage     string // "local search" for the search's energy calls, else ""
	Err       error
}

// Error names the iteration (or the evaluation) and the energy's error.
func (e *RewardError) Error() string {
	at := fmt.Sprintf("iteration %d", e.Iteration)
	if e.Iteration < 0 {
		at = "evaluation"
	}
	if e.Stage != "" {
		at += ": " + e.Stage
	}
	return fmt.Sprintf("diffusion: %s: %v", at, e.Err)
}

// Unwrap returns the energy's error.
func (e *RewardError) Unwrap() error { return e.Err }

// NonFiniteError reports a log-reward that is NaN or infinite.
type NonFiniteError struct {
	Iteration int       // the training iteration; −1 in an evaluation
	Row       int       // the sample's row in its batch
	X         []float32 // the sample
	LogR      float64   // the energy's value there
	// Exact is set when the sample is one of the energy's exact samples
	// (an evaluation's EUBO), not one the sampler drew.
	Exact bool
}

// Error names the iteration, the sample and the value.
func (e *NonFiniteError) Error() string {
	at, which := fmt.Sprintf("iteration %d", e.Iteration), "sample"
	if e.Iteration < 0 {
		at = "evaluation"
	}
	if e.Exact {
		which = "exact sample"
	}
	return fmt.Sprintf("diffusion: %s: the energy returned log R = %v for %s %d at x = %v", at, e.LogR, which, e.Row, e.X)
}

// nonFinite returns a NonFiniteError for the first NaN or infinite value
// of logR, whose rows are those of x (dimension d), or nil.
func nonFinite(x []float32, logR []float64, d, it int, exact bool) error {
	for r, v := range logR {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &NonFiniteError{Iteration: it, Row: r, X: append([]float32(nil), x[r*d:(r+1)*d]...), LogR: v, Exact: exact}
		}
	}
	return nil
}

// OverflowError reports a sampled state that left the float32 range: the
// named sampler's drift grew without bound along a trajectory (an
// untrained or diverging policy far from the data can grow like −K·x with
// K·dt ≫ 2, doubling |x| at every step). Config.DriftClip bounds it; Run
// stops after a checkpoint, from which Resume can continue with
// RunOptions.ResumeDriftClip. With the drift already bounded (Clip > 0) a
// state can only stop being finite through a NaN drift (NaN parameters),
// which no bound stops, and the message says so instead.
type OverflowError struct {
	Iteration int    // the training iteration; −1 in an evaluation
	Sampler   string // "Student" or "Teacher"
	Row       int    // the sample
	X         []float32
	Clip      float64 // the drift bound in force; 0 if none
}

// Error names the sampler, the sample and the remedy.
func (e *OverflowError) Error() string {
	at := fmt.Sprintf("iteration %d", e.Iteration)
	if e.Iteration < 0 {
		at = "evaluation"
	}
	if e.Clip > 0 {
		return fmt.Sprintf("diffusion: %s: the %s's sample %d is not finite (x = %v) although its drift is bounded to ±%g: the network gives NaN (its parameters are no longer finite), which a drift clip does not stop", at, e.Sampler, e.Row, e.X, e.Clip)
	}
	return fmt.Sprintf("diffusion: %s: the %s's sample %d overflowed (x = %v): its drift grew without bound; bound it with a drift clip (Config.DriftClip, gfn train --drift-clip 1e4)", at, e.Sampler, e.Row, e.X)
}

// checkOverflow returns an OverflowError for the first of the n rows of x
// (dimension d), drawn by sampler at iteration it with the drift bound
// clip, with a NaN or infinite coordinate, or nil.
func checkOverflow(x []float32, n, d, it int, sampler string, clip float64) error {
	for r := range n {
		for _, v := range x[r*d : (r+1)*d] {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				return &OverflowError{Iteration: it, Sampler: sampler, Row: r, X: append([]float32(nil), x[r*d:(r+1)*d]...), Clip: clip}
			}
		}
	}
	return nil
}

// GradientError reports a loss whose gradient is NaN or infinite (the
// PIS gradient through a trajectory can overflow): the step is not taken,
// so the parameters are those before it, and Run stops after a
// checkpoint. Resuming it draws a fresh batch.
type GradientError struct {
	Iteration int
	Loss      float64
	Norm      float64 // the gradient's Euclidean norm: NaN or +Inf
}

// Error names the iteration, the loss and the norm.
func (e *GradientError) Error() string {
	return fmt.Sprintf("diffusion: iteration %d: the gradient of the loss %v has norm %v; the step is not taken (resuming draws a fresh batch)", e.Iteration, e.Loss, e.Norm)
}

// New builds a trainer for the energy. It draws the untrained Student's
// samples that fix the threshold (they cost reward calls, as in the
// reference code).
func New(e energy.Energy, cfg Config) (*Trainer, error) {
	t, err := newTrainer(e, cfg)
	if err != nil {
		return nil, err
	}
	// The threshold: a percentile of the untrained Student's log R.
	t.Student.sampler.Forward(t.Proc, t.Student.Model, cfg.Batch, sampleOptions{}, t.rng, &t.batch)
	if err := t.rewards(t.batch.Final(), cfg.Batch, "Student"); err != nil {
		return nil, err
	}
	if t.Threshold, err = replay.Percentile(t.logR, cfg.Percentile); err != nil {
		return nil, err
	}
	return t, nil
}

// newTrainer is New without the threshold, which Load reads instead of
// sampling a batch of the checkpoint's size.
func newTrainer(e energy.Energy, cfg Config) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("diffusion: no energy")
	}
	if e.Dim() < 1 {
		return nil, fmt.Errorf("diffusion: energy %s has dimension %d, must be >= 1", energyName(e), e.Dim())
	}
	proc := Process{Dim: e.Dim(), Steps: cfg.Steps, Sigma2: cfg.Sigma2, LearnedVariance: cfg.LearnedVariance, VarianceRange: 4, Clip: cfg.DriftClip}
	if err := proc.Validate(); err != nil {
		return nil, err
	}
	t := &Trainer{Energy: e, cfg: cfg, Proc: proc, schedule: cfg.schedule()}
	t.src = rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)
	t.teacherSrc = rand.NewPCG(cfg.Seed, 0x7ea)
	t.rng, t.teacherRNG = rand.New(t.src), rand.New(t.teacherSrc)
	var err error
	if t.Student, err = newAgent(cfg, cfg.Student, proc.Dim, t.rng); err != nil {
		return nil, err
	}
	if cfg.Method == MethodTeacher {
		if t.Teacher, err = newAgent(cfg, cfg.Teacher, proc.Dim, t.rng); err != nil {
			return nil, err
		}
	}
	if cfg.buffered() {
		if t.buffer, err = replay.New[float32](cfg.BufferCap, proc.Dim, cfg.priority()); err != nil {
			return nil, err
		}
		t.buffer.Passes = cfg.BufferPasses
	}
	if _, ok := e.(energy.Gradient); !ok && cfg.Method == MethodPIS {
		return nil, fmt.Errorf("diffusion: method pis differentiates log R, and energy %s has no gradient (energy.Gradient)", energyName(e))
	}
	if cfg.LocalSearch {
		if _, ok := e.(energy.Gradient); !ok {
			return nil, fmt.Errorf("diffusion: local search needs the energy's gradient, and energy %s has none (energy.Gradient)", energyName(e))
		}
		if t.chain, err = langevin.New(cfg.LS); err != nil {
			return nil, err
		}
	}
	if cfg.objective() == "vargrad" {
		t.vargrad.Obj = &objective.VarGrad{}
	}
	if flowObjectives[cfg.objective()] {
		if t.flows, err = newFlowObjective(cfg, proc.Dim, t.rng); err != nil {
			return nil, err
		}
		s := t.Student
		s.Opt = nn.NewAdam(s.Opt.Groups[0], s.Opt.Groups[1], nn.Group{Params: t.flows.params(), LR: cfg.Student.flowLR()})
		s.Opt.WeightDecay = cfg.Student.WeightDecay
	}
	t.initUpdate()
	return t, nil
}

// energyName names e in messages: its String method, or its type (a
// user's struct printed with %v shows only its fields).
func energyName(e energy.Energy) string {
	if s, ok := e.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", e)
}

// Done reports whether the run has taken its iterations.
func (t *Trainer) Done() bool { return t.Step >= t.cfg.Iterations }

// rewards sets t.logR to log R of the n rows of x, which sampler drew,
// counting the calls and checking every state and value.
func (t *Trainer) rewards(x []float32, n int, sampler string) error {
	if err := checkOverflow(x, n, t.Proc.Dim, t.Step, sampler, t.Proc.Clip); err != nil {
		return err
	}
	t.logR = growF(t.logR, n)
	if err := t.Energy.LogReward(x[:n*t.Proc.Dim], t.logR); err != nil {
		return &RewardError{Iteration: t.Step, Err: err}
	}
	t.RewardCalls += n
	return t.checkFinite(x, t.logR)
}

func (t *Trainer) checkFinite(x []float32, logR []float64) error {
	return nonFinite(x, logR, t.Proc.Dim, t.Step, false)
}

// Iterate runs one training iteration.
func (t *Trainer) Iterate() (Iteration, error) {
	if t.cfg.Method == MethodPIS {
		return t.iteratePIS()
	}
	cfg := t.cfg
	role := t.schedule.Role(t.Step)
	it := Iteration{Role: role, TeacherLoss: math.NaN()}
	if role != teacher.Student && t.buffer.Len() == 0 {
		role = teacher.Student // nothing to replay yet
	}
	switch role {
	case teacher.Student:
		// Record the pass: the Student's TB step then reuses it.
		opt := sampleOptions{Explore: cfg.explore(t.Step), Record: t.Student.tb.MaxRows == 0 && !t.noRecord}
		t.Student.sampler.Forward(t.Proc, t.Student.Model, cfg.Batch, opt, t.rng, &t.batch)
		if err := t.rewards(t.batch.Final(), cfg.Batch, "Student"); err != nil {
			return it, err
		}
	case teacher.Teacher:
		// The Teacher's samples above the threshold enter the buffer with
		// the Student's advantage on them; the Student then replays.
		n, err := t.teacherExplore()
		if err != nil {
			return it, err
		}
		it.Stored += n
		fallthrough
	case teacher.Buffer:
		t.Student.sampler.Recorded = nil // a replayed batch has no recorded pass
		t.xs, t.logR = t.buffer.Sample(cfg.Batch, t.rng, t.xs[:0], t.logR[:0])
		t.Student.sampler.Backward(t.Proc, t.xs, cfg.Batch, t.rng, &t.batch)
	}
	if t.flows != nil && t.flows.forward {
		// The forward-looking flows score the batch's intermediate states.
		if err := t.flows.partialEnergy(t); err != nil {
			return it, err
		}
	}
	it.StudentLoss, it.TeacherLoss = t.update.Run()
	if t.Teacher == nil {
		it.TeacherLoss = math.NaN()
	}
	lsDue := role == teacher.Student && cfg.LocalSearch && t.Step%cfg.LSEvery == 0
	// On local-search iterations after the first, PER stores the search's
	// states instead of the batch (the reference's if/else).
	if role == teacher.Student && t.buffer != nil && !(lsDue && t.Step > 0) {
		it.Stored += t.store()
	}
	if lsDue && t.buffer.Len() > 0 {
		n, err := t.localSearch()
		if err != nil {
			return it, err
		}
		it.Stored += n
	}
	it.StudentLogZ, it.StudentGradNorm, it.TeacherGradNorm = float64(t.Student.LogZ.Value[0]), t.Student.gradNorm, math.NaN()
	if t.Teacher != nil {
		it.TeacherLogZ, it.TeacherGradNorm = float64(t.Teacher.LogZ.Value[0]), t.Teacher.gradNorm
	}
	t.Step++
	return it, nil
}

// initUpdate sets up the round in package teacher's order: the Student's
// δ on its batch, the advantage terms and the Teacher's targets, then the
// Student's step beside the Teacher's.
func (t *Trainer) initUpdate() {
	u := &t.update
	s := t.Student
	u.Delta = func() float64 {
		n := t.batch.N
		t.delta = growF(t.delta, n)
		nn.ZeroGrad(s.Params())
		logZ := float64(s.LogZ.Value[0])
		var loss float64
		if f := t.flows; f != nil {
			f.stepPF = growF(f.stepPF, t.cfg.Steps*n)
			s.tb.StepLogPF = f.stepPF
			defer func() { s.tb.StepLogPF = nil }()
		}
		if out := s.sampler.Recorded; out != nil {
			s.sampler.Recorded = nil
			loss = s.tb.EvalRecorded(t.Proc, out, logZ, &t.batch, t.logR, t.delta)
		} else {
			loss = s.tb.Eval(t.Proc, s.Model, logZ, &t.batch, t.logR, t.delta)
		}
		if t.vargrad.Obj != nil {
			loss = t.varGrad()
		}
		if t.flows != nil {
			var est float64
			loss, est = t.flows.eval(t)
			s.LogZ.Value[0] = float32(est)
		}
		return loss
	}
	if t.Teacher != nil || t.cfg.Method == MethodPER {
		u.Targets = t.targets
	}
	u.StudentGrad = func() { s.tb.Grad(t.Proc, s.Model, s.LogZ, &t.batch, t.delta) }
	u.StudentUpdate = func() { s.step(t.cfg.lrScale(t.Step)) }
	if t.vargrad.Obj != nil || t.flows != nil { // no log Z to learn
		u.StudentGrad = func() { s.tb.Grad(t.Proc, s.Model, nil, &t.batch, t.delta) }
		if t.flows != nil {
			u.StudentGrad = func() { t.flows.backward(t) }
		}
		u.StudentUpdate = func() {
			est := s.LogZ.Value[0]
			s.step(t.cfg.lrScale(t.Step))
			// Adam would move it (weight decay alone is a full-size step
			// once normalised): it holds the estimate.
			s.LogZ.Value[0] = est
		}
	}
	if t.Teacher != nil {
		u.TeacherStep = t.teacherStep
	}
}

// varGrad turns the batch's TB residuals into VarGrad's: δ_b = ζ_b − ζ̄
// with ζ = log R + Σ log P_B − Σ log P_F (package objective on the
// trajectories' sums), sets the Student's log Z to the batch's estimate ζ̄
// and returns the loss in the family's convention, the mean of ½·δ². Its
// gradient is TB's for these δ without log Z: the mean's own dependence
// sums to zero.
func (t *Trainer) varGrad() float64 {
	n, b := t.batch.N, &t.vargrad
	b.batch.Off = b.batch.Off[:0]
	for k := 0; k <= n; k++ {
		b.batch.Off = append(b.batch.Off, k)
	}
	b.batch.LogPF, b.batch.LogPB, b.batch.LogR = t.batch.LogPF[:n], t.batch.LogPB[:n], t.logR[:n]
	if err := b.Obj.Eval(&b.batch, nil, &b.res); err != nil {
		panic(err) // the sizes are the trainer's own
	}
	copy(t.delta, b.res.Delta)
	t.Student.LogZ.Value[0] = float32(b.res.LogZ)
	return b.res.Loss / 2
}

// targets sets the advantage terms of the batch (floored below the
// threshold) and the Teacher's log-rewards.
func (t *Trainer) targets() {
	n := t.batch.N
	t.term = growF(t.term, n)
	t.logRT = growF(t.logRT, n)
	t.cfg.Reward.Terms(t.delta[:n], t.logR[:n], t.Threshold, t.term[:n])
	t.cfg.Reward.LogRewards(t.term[:n], t.logR[:n], t.logRT[:n])
}

// teacherStep trains the Teacher on the batch's terminal states above the
// threshold, on its own fresh backward trajectories, and returns its loss
// (NaN when no state passes; Adam still steps, as in the reference code).
// It touches only the Teacher's state and the batch's read-only data.
func (t *Trainer) teacherStep() float64 {
	a, d := t.Teacher, t.Proc.Dim
	n := t.batch.N
	x := t.batch.Final()
	t.kept = t.kept[:0]
	for b := range n {
		if t.logR[b] > t.Threshold {
			t.kept = append(t.kept, b)
		}
	}
	k := len(t.kept)
	nn.ZeroGrad(a.Params())
	loss := math.NaN()
	if k > 0 {
		// Gather the kept states and targets at the front of the Teacher's
		// own scratch (x belongs to the batch the Student is training on).
		a.batch.Reset(t.Proc, k)
		fin := a.batch.Final()
		t.tLogR = growF(t.tLogR, k)
		for i, b := range t.kept {
			copy(fin[i*d:(i+1)*d], x[b*d:(b+1)*d])
			t.tLogR[i] = t.logRT[b]
		}
		a.sampler.Backward(t.Proc, fin, k, t.teacherRNG, &a.batch)
		t.tDelta = growF(t.tDelta, k)
		loss = a.tb.Eval(t.Proc, a.Model, float64(a.LogZ.Value[0]), &a.batch, t.tLogR, t.tDelta)
		a.tb.Grad(t.Proc, a.Model, a.LogZ, &a.batch, t.tDelta)
	}
	a.step(t.cfg.lrScale(t.Step))
	return loss
}

// store adds the Student's on-policy batch to the buffer: PRT every
// object with priority log R; PER the objects above the threshold with
// their advantage (every object at the first iteration); the Teacher
// method only the first iteration's batch.
func (t *Trainer) store() int {
	n, d := t.batch.N, t.Proc.Dim
	x := t.batch.Final()
	stored := 0
	prio := replay.Uniform
	switch t.cfg.Method {
	case MethodPRT:
		prio = replay.Reward
	case MethodPER, MethodTeacher:
		prio = replay.Advantage
	}
	for b := range n {
		var term float64
		if prio == replay.Advantage {
			if t.Step > 0 && (t.cfg.Method == MethodTeacher || t.logR[b] <= t.Threshold) {
				continue
			}
			term = t.term[b]
		}
		t.buffer.Append(x[b*d:(b+1)*d], t.logR[b], teacher.Priority(prio, t.logR[b], 0, term, 0))
		stored++
	}
	return stored
}

// teacherExplore samples a Teacher batch, keeps the objects above the
// threshold, scores them under the Student on fresh backward trajectories
// and adds them to the buffer with their advantage.
func (t *Trainer) teacherExplore() (int, error) {
	cfg, d := t.cfg, t.Proc.Dim
	a := t.Teacher
	a.sampler.Forward(t.Proc, a.Model, cfg.Batch, sampleOptions{}, t.rng, &a.batch)
	if err := t.rewards(a.batch.Final(), cfg.Batch, "Teacher"); err != nil {
		return 0, err
	}
	fin := a.batch.Final()
	t.xs = t.xs[:0]
	t.tLogR = t.tLogR[:0]
	for b := range cfg.Batch {
		if t.logR[b] > t.Threshold {
			t.xs = append(t.xs, fin[b*d:(b+1)*d]...)
			t.tLogR = append(t.tLogR, t.logR[b])
		}
	}
	k := len(t.tLogR)
	if k == 0 {
		return 0, nil
	}
	t.Student.sampler.Backward(t.Proc, t.xs, k, t.rng, &t.scored)
	t.tDelta = growF(t.tDelta, k)
	t.Student.tb.Eval(t.Proc, t.Student.Model, float64(t.Student.LogZ.Value[0]), &t.scored, t.tLogR, t.tDelta)
	for i := range k {
		p := teacher.Advantage(cfg.Reward.Term(t.tDelta[i]))
		t.buffer.Append(t.xs[i*d:(i+1)*d], t.tLogR[i], p)
	}
	return k, nil
}

// localSearch runs MALA from a buffer draw and adds the accepted states
// after burn-in with priority log R, as the reference code does.
func (t *Trainer) localSearch() (int, error) {
	cfg := t.cfg
	t.xs, t.scratch = t.buffer.Sample(cfg.Batch, t.rng, t.xs[:0], t.scratch[:0])
	g := t.Energy.(energy.Gradient)
	var err error
	var st langevin.Stats
	t.lsX, t.lsLogR, st, err = t.chain.Collect(g, t.xs, t.rng, t.lsX[:0], t.lsLogR[:0])
	t.RewardCalls += st.Proposals + cfg.Batch
	if err != nil {
		// The iteration's update is taken: it ends here, without the
		// search's states, so that a resume continues after it.
		t.Step++
		return 0, &RewardError{Iteration: t.Step - 1, Stage: "local search", Err: err}
	}
	d := t.Proc.Dim
	for i, lr := range t.lsLogR {
		t.buffer.Append(t.lsX[i*d:(i+1)*d], lr, lr)
	}
	return len(t.lsLogR), nil
}
