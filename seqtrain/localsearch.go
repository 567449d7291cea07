package seqtrain

import (
	"fmt"
	"math"

	"github.com/gfngo/gfn/discrete"
)

// LocalSearch is the back-and-forth local search of the sequence
// reference code (its TFbind8 appendix; Kim et al. 2024): the online
// batch of n objects starts as n/(Rounds+1) fresh Student samples, and
// each of Rounds rounds proposes, for every chain, a new object by
// walking Back steps back with P_B from the current one and Back steps
// forward with the Student's policy (no exploration). Every proposal is
// an online sample (a reward call, trained on, entering the buffers); it
// replaces its chain's current object when accepted. The zero value is
// off.
type LocalSearch struct {
	// Rounds of proposals per online batch (the reference's i = 7);
	// 0 turns local search off. OnlineBatch must be a multiple of
	// Rounds+1.
	Rounds int `json:"rounds,omitempty"`
	// Back is the number k of steps back and forth (3).
	Back int `json:"back,omitempty"`
	// Greedy accepts a proposal when its reward is higher, as the paper
	// states; otherwise acceptance is the reference code's default, a
	// Metropolis–Hastings coin with log-odds Δlog R + log q(x|x') −
	// log q(x'|x), the proposal's back-and-forth probabilities.
	Greedy bool `json:"greedy,omitempty"`
	// Teacher makes the Teacher's rounds (the schedule's T slots) search
	// too, as the paper's appendix describes it: chains from the
	// Teacher's samples, rebuilt forward with the Teacher's policy, scored
	// by the Teacher's reward log R_T (from the Student's δ on the
	// proposal's trajectory before the round's update) in place of log R.
	// Off, as in the authors' code, every online batch is the Student's
	// search and the Teacher never samples: its training then changes
	// nothing the Student sees.
	Teacher bool `json:"teacher,omitempty"`
}

// lsState is the local search's scratch space.
type lsState struct {
	chains, back, suffix, cand discrete.Trajectories
	next, out                  discrete.Trajectories
	starts                     []int32
	cuts                       []int
	logR, candR                []float64
	score, candScore, delta    []float64
	backPF, candPF             []float64
	tb                         discrete.TB
	// trace, if set (tests), sees the chains' current objects after each
	// round.
	trace func(final []int32, m int)
}

// validate reports an invalid local search for an online batch of n.
func (ls LocalSearch) validate(n int) error {
	switch {
	case ls.Rounds == 0 && ls.Teacher:
		return fmt.Errorf("seqtrain: the Teacher's local search needs local search (rounds %d)", ls.Rounds)
	case ls.Rounds == 0:
		return nil
	case ls.Rounds < 0 || ls.Back < 1:
		return fmt.Errorf("seqtrain: local search of %d rounds of %d steps: both must be at least 1", ls.Rounds, ls.Back)
	case n%(ls.Rounds+1) != 0:
		return fmt.Errorf("seqtrain: online batch %d must be a multiple of the local search's rounds + 1 = %d", n, ls.Rounds+1)
	}
	return nil
}

// localSearchBatch builds the online batch in t.tr with its log-rewards in
// t.logR (n = OnlineBatch objects, reward calls included): the search of
// agent st, scored by log R, or by the Teacher's reward if teacherScore.
func (t *Trainer) localSearchBatch(st *Agent, teacherScore bool) error {
	cfg, env := t.cfg, t.env
	ls := &t.ls
	n := cfg.OnlineBatch
	m := n / (cfg.LS.Rounds + 1)
	w := env.StateLen()
	t.sampler.Forward(st.Model, m, discrete.SampleOptions{Eps: cfg.epsilon()}, t.rng, &ls.chains)
	ls.logR = grow(ls.logR, m)
	if err := t.rewards(ls.chains.Final, m, ls.logR); err != nil {
		return err
	}
	// score sets out to what the search maximises for the m trajectories
	// of tr with log-rewards logR.
	score := func(tr *discrete.Trajectories, logR, out []float64) {
		if !teacherScore {
			copy(out, logR)
			return
		}
		ls.delta = grow(ls.delta, m)
		s := t.Student
		ls.tb.Eval(env, s.Model, s.LogZ, tr, logR, ls.delta)
		for b, d := range ls.delta[:m] {
			out[b] = cfg.Reward.LogReward(cfg.Reward.Term(d), logR[b])
		}
	}
	ls.score, ls.candScore = grow(ls.score, m), grow(ls.candScore, m)
	score(&ls.chains, ls.logR, ls.score)
	ls.out.Reset(w)
	ls.out.Append(&ls.chains)
	t.logR = append(t.logR[:0], ls.logR...)
	for range cfg.LS.Rounds {
		// Back: a P_B trajectory of each current object, cut Back steps
		// before its end; forth: the Student from the cut state.
		t.sampler.Backward(ls.chains.Final, m, t.rng, &ls.back)
		ls.starts = ls.starts[:0]
		ls.cuts = grow(ls.cuts, m)
		cuts := ls.cuts
		for b := range m {
			steps := ls.back.Off[b+1] - ls.back.Off[b]
			cuts[b] = max(steps-cfg.LS.Back, 0)
			ls.starts = append(ls.starts, ls.back.State(ls.back.Off[b]+cuts[b])...)
		}
		t.sampler.ForwardFrom(st.Model, ls.starts, m, discrete.SampleOptions{}, t.rng, &ls.suffix)
		ls.cand.Reset(w)
		for b := range m {
			ls.cand.AddJoined(env, &ls.back, b, cuts[b], &ls.suffix, b)
		}
		ls.candR = grow(ls.candR, m)
		if err := t.rewards(ls.cand.Final, m, ls.candR); err != nil {
			return err
		}
		score(&ls.cand, ls.candR, ls.candScore)
		if !cfg.LS.Greedy {
			ls.backPF, ls.candPF = grow(ls.backPF, m), grow(ls.candPF, m)
			ls.tb.LogPF(env, st.Model, &ls.back, ls.backPF)
			ls.tb.LogPF(env, st.Model, &ls.cand, ls.candPF)
		}
		next := &ls.next
		next.Reset(w)
		for b := range m {
			accept := ls.candScore[b] > ls.score[b]
			if !cfg.LS.Greedy {
				// log q(x|x') − log q(x'|x): forward along the old
				// segment and back along the new one, against back along
				// the old and forward along the new. The shared prefix's
				// log P_F cancels: old segment = back − prefix, new =
				// cand − prefix.
				oldPF := ls.backPF[b]
				newPF := ls.candPF[b]
				oldPB := segLogPB(env, &ls.back, b, cuts[b])
				newPB := segLogPB(env, &ls.cand, b, cuts[b])
				logOdds := ls.candScore[b] - ls.score[b] + (oldPF + newPB) - (oldPB + newPF)
				accept = t.rng.Float64() < 1/(1+math.Exp(-logOdds))
			}
			if accept {
				next.AddFrom(env, &ls.cand, b)
				ls.logR[b], ls.score[b] = ls.candR[b], ls.candScore[b]
			} else {
				next.AddFrom(env, &ls.chains, b)
			}
		}
		ls.chains, ls.next = ls.next, ls.chains
		if ls.trace != nil {
			ls.trace(ls.chains.Final, m)
		}
		ls.out.Append(&ls.cand)
		t.logR = append(t.logR, ls.candR[:m]...)
	}
	t.tr, ls.out = ls.out, t.tr
	return nil
}

// segLogPB is Σ log P_B over the transitions of trajectory b of tr from
// transition cut on, with the uniform P_B.
func segLogPB(env discrete.Env, tr *discrete.Trajectories, b, cut int) float64 {
	var s float64
	for i := tr.Off[b] + cut; i < tr.Off[b+1]; i++ {
		s -= math.Log(float64(env.BackwardCount(tr.State(i), int(tr.Actions[i]))))
	}
	return s
}
