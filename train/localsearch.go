package train

import (
	"github.com/gfngo/gfn/discrete"
)

// Back-and-forth local search (Zhang et al. 2022; Kim et al. 2024), as the
// reference runs it on the grid: each of LSIterations rounds takes every
// trajectory of the batch, resamples a path to its terminal x with P_B,
// backtracks the last int(LSBackRatio·#states) states, rebuilds forward
// with the searching policy (no exploration), and keeps the new trajectory
// if its reward (Student search) or Teacher reward (Teacher search) is
// strictly higher. Every round costs one reward call per trajectory.

type lsState struct {
	back, suffix, cand, next discrete.Trajectories
	starts                   []int32
	cuts                     []int
	logR, score, candScore   []float64
	delta                    []float64
}

// lsDue reports whether iteration i's batch gets local search: 1 in 8
// Student batches for method tb, 1 in 4 Teacher batches for the Teacher,
// with the reference's exact iteration arithmetic.
func (t *Trainer) lsDue(role byte, i int) bool {
	if t.cfg.Method == MethodTeacher {
		return role == 'T' && (i/4)%4 == 3
	}
	return role == 'S' && (i/2)%8 == 7
}

// localSearch refines t.batch (with rewards t.logR) in place.
func (t *Trainer) localSearch(searcher *Agent, teacher bool) error {
	cfg, ls, env := t.cfg, &t.ls, t.Env
	n, w := t.batch.Len(), env.StateLen()
	ls.score = grow(ls.score, n)
	ls.candScore = grow(ls.candScore, n)
	score := func(tr *discrete.Trajectories, logR, out []float64) {
		if !teacher {
			copy(out, logR)
			return
		}
		// The Teacher reward of each trajectory, from the Student's δ.
		if cfg.Objective == ObjectiveDB {
			ls.delta = grow(ls.delta, tr.NumTransitions())
			t.db.obj.Loss(env, t.Student.Model, tr, logR, ls.delta, false)
			for b := range tr.Len() {
				out[b] = trajectoryTarget(cfg, ls.delta[tr.Off[b]:tr.Off[b+1]], logR[b])
			}
			return
		}
		ls.delta = grow(ls.delta, tr.Len())
		t.studentDelta(tr, logR, ls.delta)
		for b, d := range ls.delta {
			out[b] = t.reward.LogReward(t.reward.Term(d), logR[b])
		}
	}
	score(&t.batch, t.logR, ls.score)
	for range cfg.LS.Iterations {
		t.sampler.Backward(t.batch.Final, n, t.rng, &ls.back)
		ls.starts = ls.starts[:0]
		ls.cuts = ls.cuts[:0]
		var idx []int // trajectories that are rebuilt
		for b := range n {
			steps := ls.back.Off[b+1] - ls.back.Off[b]
			nBack := int(float64(steps+1) * cfg.LS.BackRatio)
			cut := steps - nBack
			if nBack == 0 || cut < 0 {
				ls.cuts = append(ls.cuts, -1)
				continue
			}
			ls.cuts = append(ls.cuts, cut)
			ls.starts = append(ls.starts, ls.back.State(ls.back.Off[b]+cut)...)
			idx = append(idx, b)
		}
		t.sampler.ForwardFrom(searcher.Model, ls.starts, len(idx), discrete.SampleOptions{}, t.rng, &ls.suffix)
		ls.cand.Reset(w)
		k := 0
		for b := range n {
			if ls.cuts[b] < 0 {
				ls.cand.AddFrom(env, &t.batch, b)
				continue
			}
			ls.cand.AddJoined(env, &ls.back, b, ls.cuts[b], &ls.suffix, k)
			k++
		}
		if err := t.rewards(&ls.cand, &ls.logR); err != nil {
			return err
		}
		score(&ls.cand, ls.logR, ls.candScore)
		ls.next.Reset(w)
		for b := range n {
			if ls.candScore[b] > ls.score[b] {
				ls.next.AddFrom(env, &ls.cand, b)
				ls.score[b], t.logR[b] = ls.candScore[b], ls.logR[b]
			} else {
				ls.next.AddFrom(env, &t.batch, b)
			}
		}
		t.batch, ls.next = ls.next, t.batch
	}
	return nil
}
