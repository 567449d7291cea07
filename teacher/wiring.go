package teacher

import "github.com/gfngo/gfn/replay"

// Effective is the role iteration i samples from when the buffer holds
// buffered objects: the schedule's, except that a buffer slot with
// nothing to replay yet samples the Student on-policy instead.
func (s Schedule) Effective(i, buffered int) Role {
	r := s.Role(i)
	if r == Buffer && buffered == 0 {
		return Student
	}
	return r
}

// Terms writes the δ-dependent term of every object's Teacher reward
// into terms: r.Term(δ_b), or r.Floor() where logR_b is below threshold
// (the log-of-log reference code's floor; −Inf floors nothing). A
// family that averages the terms over more trajectories of the same
// objects (the grid's N_MC) does so between Terms and LogRewards.
func (r Reward) Terms(delta, logR []float64, threshold float64, terms []float64) {
	for b, d := range delta {
		if logR[b] < threshold {
			terms[b] = r.Floor()
		} else {
			terms[b] = r.Term(d)
		}
	}
}

// LogRewards writes the Teacher's log-rewards, r.LogReward(term_b,
// logR_b), of every object into out: its trajectory-balance targets.
func (r Reward) LogRewards(terms, logR, out []float64) {
	for b, t := range terms {
		out[b] = r.LogReward(t, logR[b])
	}
}

// Priority is an object's replay priority in a buffer ranked by p: its
// log R (replay.Reward; rank-equivalent to R), the Student's squared
// residual δ² (replay.Loss), the Teacher's log-reward logRT
// (replay.Teacher; rank-equivalent to R_T), or exp(term) (Advantage: the
// log-of-log reference codes' PER). It is 0 for replay.Uniform.
func Priority(p replay.Priority, logR, delta, term, logRT float64) float64 {
	switch p {
	case replay.Reward:
		return logR
	case replay.Loss:
		return delta * delta
	case replay.Teacher:
		return logRT
	case replay.Advantage:
		return Advantage(term)
	}
	return 0
}
