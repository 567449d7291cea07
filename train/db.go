package train

import (
	"math"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/teacher"
)

// Detailed balance for Student and Teacher (the paper's DB appendix and the
// reference trainer_db.py). The Teacher's reward for a trajectory is built
// from the Student's per-transition δ_t: in the reference form
// R_T = Σ_t log(1 + 1e-3 + w_t·δ_t²)·r_t^α with r_t = 1, plus R(x) on the
// last transition, entering as the Teacher's terminal flow log(R_T + 1e-8);
// in the paper form log R_T = log(ε + Σ_t w_t·δ_t²). With a buffer, single
// transitions keyed by (s, a) are replayed (the reference's PER*), with
// per-transition priorities.

type dbState struct {
	obj     discrete.DB
	delta   []float64 // Student δ per transition
	tdelta  []float64 // Teacher δ per transition
	rt      []float64 // per-transition Teacher reward (reference form)
	logRT   []float64 // per-trajectory Teacher target
	trans   discrete.Transitions
	tTrans  discrete.Transitions // the same transitions with Teacher targets
	extra   discrete.Trajectories
	extraD  []float64
	extraLR []float64
	rep     []int32
}

// transitionTerm is one transition's Teacher reward in the reference form.
func transitionTerm(cfg Config, d, r float64) float64 {
	w := 1.0
	if d > 0 {
		w += cfg.Reward.C
	}
	return math.Log(1+1e-3+w*d*d) * math.Pow(r, cfg.Reward.Alpha)
}

// trajectoryTarget is the Teacher's log terminal flow for a trajectory
// with Student deltas ds and log-reward logR.
func trajectoryTarget(cfg Config, ds []float64, logR float64) float64 {
	if cfg.Reward.Form == teacher.Paper {
		s := cfg.Reward.Eps
		for _, d := range ds {
			w := 1.0
			if d > 0 {
				w += cfg.Reward.C
			}
			s += w * d * d
		}
		return math.Log(s)
	}
	var s float64
	for k, d := range ds {
		r := 1.0
		if k == len(ds)-1 {
			r += math.Exp(logR)
		}
		s += transitionTerm(cfg, d, r)
	}
	return math.Log(s + 1e-8)
}

// sampleTransitions draws a replay batch of single transitions.
func (t *Trainer) sampleTransitions() {
	w := t.Env.StateLen()
	n := t.cfg.Batch * 8
	if rt, ok := t.Env.(TransitionReplayer); ok {
		n = rt.ReplayTransitions(t.cfg.Batch)
	}
	t.bufX, t.logR = t.buffer.Sample(n, t.rng, t.bufX[:0], t.logR[:0])
	x := &t.db.trans
	x.Reset()
	next := make([]int32, w)
	for i := range n {
		e := t.bufX[i*(w+1) : (i+1)*(w+1)]
		copy(next, e[:w])
		a := int(e[w])
		term := t.Env.Step(next, a)
		x.Add(e[:w], a, next, term, t.logR[i])
	}
}

func (t *Trainer) stepDB(role byte, it *Iteration) {
	cfg, db := t.cfg, &t.db
	needRT := t.Teacher != nil || (t.buffer != nil && cfg.Buffer.Priority == replay.Teacher)
	if role == 'B' {
		x := &db.trans
		n := x.Len()
		it.MeanLength = 1
		db.delta = grow(db.delta, n)
		nn.ZeroGrad(t.Student.Params())
		it.StudentLoss = db.obj.TransitionLoss(t.Env, t.Student.Model, x, db.delta, true)
		t.Student.update(cfg.Student.Clip)
		if t.Teacher != nil {
			// Teacher targets per transition: only terminal ones enter.
			tx := &db.tTrans
			tx.Reset()
			for i := range n {
				r := 1.0
				if x.Terminal[i] {
					r += math.Exp(x.LogR[i])
				}
				w := t.Env.StateLen()
				target := math.Log(transitionTerm(cfg, db.delta[i], r) + 1e-8)
				tx.Add(x.States[i*w:(i+1)*w], int(x.Actions[i]), x.Next[i*w:(i+1)*w], x.Terminal[i], target)
			}
			db.tdelta = grow(db.tdelta, n)
			nn.ZeroGrad(t.Teacher.Params())
			it.TeacherLoss = db.obj.TransitionLoss(t.Env, t.Teacher.Model, tx, db.tdelta, true)
			t.Teacher.update(cfg.Teacher.Clip)
		}
		return
	}
	tr := &t.batch
	n, T := tr.Len(), tr.NumTransitions()
	it.MeanLength = float64(T) / float64(n)
	db.delta = grow(db.delta, T)
	nn.ZeroGrad(t.Student.Params())
	it.StudentLoss = db.obj.Loss(t.Env, t.Student.Model, tr, t.logR, db.delta, true)
	if needRT {
		db.logRT = grow(db.logRT, n)
		db.rt = grow(db.rt, T)
		for b := range n {
			ds := db.delta[tr.Off[b]:tr.Off[b+1]]
			db.logRT[b] = trajectoryTarget(cfg, ds, t.logR[b])
			for k, d := range ds {
				r := 1.0
				if k == len(ds)-1 {
					r += math.Exp(t.logR[b])
				}
				db.rt[tr.Off[b]+k] = transitionTerm(cfg, d, r)
			}
		}
		if cfg.NMC > 1 {
			t.dbMonteCarlo()
		}
	}
	t.Student.update(cfg.Student.Clip)
	if t.Teacher != nil {
		db.tdelta = grow(db.tdelta, T)
		nn.ZeroGrad(t.Teacher.Params())
		it.TeacherLoss = db.obj.Loss(t.Env, t.Teacher.Model, tr, db.logRT, db.tdelta, true)
		t.Teacher.update(cfg.Teacher.Clip)
	}
	if t.buffer != nil {
		t.addTransitions()
	}
}

// dbMonteCarlo averages the Teacher targets over NMC-1 extra backward
// trajectories per terminal state, in the log domain.
func (t *Trainer) dbMonteCarlo() {
	cfg, db, tr := t.cfg, &t.db, &t.batch
	n, w := tr.Len(), t.Env.StateLen()
	db.rep = db.rep[:0]
	db.extraLR = db.extraLR[:0]
	for range cfg.NMC - 1 {
		db.rep = append(db.rep, tr.Final[:n*w]...)
		db.extraLR = append(db.extraLR, t.logR[:n]...)
	}
	m := (cfg.NMC - 1) * n
	t.sampler.Backward(db.rep, m, t.rng, &db.extra)
	db.extraD = grow(db.extraD, db.extra.NumTransitions())
	db.obj.Loss(t.Env, t.Student.Model, &db.extra, db.extraLR, db.extraD, false)
	for k := range m {
		ds := db.extraD[db.extra.Off[k]:db.extra.Off[k+1]]
		db.logRT[k%n] += trajectoryTarget(cfg, ds, db.extraLR[k])
	}
	for b := range n {
		db.logRT[b] /= float64(cfg.NMC)
	}
}

// addTransitions stores every transition of the batch, keyed by (s, a).
func (t *Trainer) addTransitions() {
	tr, db := &t.batch, &t.db
	w, na := t.Env.StateLen(), uint64(t.Env.NumActions())
	entry := make([]int32, w+1)
	for b := range tr.Len() {
		for k := tr.Off[b]; k < tr.Off[b+1]; k++ {
			s := tr.State(k)
			copy(entry, s)
			entry[w] = tr.Actions[k]
			var p float64 = 1 // the reference's priority for "reward" and uniform
			switch t.cfg.Buffer.Priority {
			case replay.Teacher:
				p = db.rt[k]
			case replay.Loss:
				p = db.delta[k] * db.delta[k]
			}
			logR := 0.0
			if k == tr.Off[b+1]-1 {
				logR = t.logR[b]
			}
			t.buffer.Add(t.keyer.TerminalKey(s)*na+uint64(tr.Actions[k]), entry, logR, p)
		}
	}
}
