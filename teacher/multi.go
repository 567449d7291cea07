package teacher

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gfngo/gfn/internal/choice"
)

// Split is how K > 1 Teachers share the Student's loss signal (the
// multi-Teacher of the paper's discussion, where one Teacher may collapse
// onto some of the modes the Student misses in a large space).
//
// With the single Teacher's log-reward log R_T(x) and ℓ_k(x) an estimate
// of log P_k(x), the probability that Teacher k's policy ends in x:
//
//	Share:  log R_T^k(x) = log R_T(x) + log r_k(x),
//	        r_k(x) = P_k(x) / Σ_j P_j(x)
//	None:   log R_T^k(x) = log R_T(x)
//
// On a DAG with the single-trajectory estimate log P_k(x) ≈
// log P_F^k(τ) − log P_B(τ|x), P_B cancels: r_k = P_F^k(τ)/Σ_j P_F^j(τ),
// the posterior probability that Teacher k generated τ when the Teachers
// are drawn uniformly, as the rotation of the T slots draws them.
//
// Share partitions the target: Σ_k R_T^k = R_T, so the Teachers together
// still represent the single Teacher's target (no mode the Student misses
// drops out of every Teacher's reward), while each is rewarded for x in
// proportion to the share of the Teachers' mass it already holds there —
// the responsibilities of an EM step for a mixture of K samplers — so a
// Teacher that puts less mass on x than the others is pushed to other
// regions, and the Teachers specialise. With K = 1 it is the single
// Teacher exactly (r = 1). None gives each Teacher the whole reward: K
// independent Teachers that differ only in their initialisation and their
// samples, the baseline that tells whether splitting, rather than more
// Teachers, helps.
type Split string

const (
	// Share rewards Teacher k with R_T·r_k (see Split).
	Share Split = "share"
	// None rewards every Teacher with R_T.
	None Split = "none"
)

// Splits lists the valid splits.
var Splits = []Split{Share, None}

// Validate reports an unknown split, naming the allowed ones.
func (s Split) Validate() error {
	if !slices.Contains(Splits, s) {
		return fmt.Errorf("teacher: split %q is unknown (allowed: %s)", s, choice.List(Splits))
	}
	return nil
}

// Targets writes Teacher k's log-rewards into out[k] for n objects from
// the single Teacher's log-rewards logRT and the Teachers' log-probability
// estimates logP[k] (one per object; for a DAG, the single-trajectory
// estimate log P_F^k(τ) − log P_B(τ|x)). Each out[k] must have room for n
// values; logP is read only with Share. r_k is computed in log space
// (ℓ_k − log Σ_j exp ℓ_j), so it stays finite however small the P_k are;
// an object no Teacher can reach (every ℓ_j = −Inf) is shared equally.
func (s Split) Targets(logRT []float64, logP, out [][]float64) {
	n := len(logRT)
	if len(out) == 0 || (s == Share && len(logP) != len(out)) {
		panic(fmt.Sprintf("teacher: split targets for %d Teachers with %d log-probability rows", len(out), len(logP)))
	}
	if s == None {
		for k := range out {
			copy(out[k][:n], logRT)
		}
		return
	}
	K := len(out)
	for b := range n {
		m := math.Inf(-1)
		for k := range K {
			m = max(m, logP[k][b])
		}
		if math.IsInf(m, -1) {
			for k := range K {
				out[k][b] = logRT[b] - math.Log(float64(K))
			}
			continue
		}
		var sum float64
		for k := range K {
			sum += math.Exp(logP[k][b] - m)
		}
		lse := m + math.Log(sum)
		for k := range K {
			out[k][b] = logRT[b] + (logP[k][b] - lse)
		}
	}
}

// TeacherIndex returns which of K Teachers samples iteration i of the
// cycle when its role is T: the Teachers take the T slots in turn, so each
// draws 1/K of the Teacher batches wherever the slots fall in the cycle.
// It depends only on i, so a resumed run continues the rotation.
func (s Schedule) TeacherIndex(i, K int) int {
	if K <= 1 {
		return 0
	}
	per := s.Count(Teacher)
	before := (i/len(s))*per + strings.Count(string(s[:i%len(s)]), string(Teacher))
	return before % K
}
