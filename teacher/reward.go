package teacher

import (
	"fmt"
	"math"
	"slices"

	"github.com/gfngo/gfn/internal/choice"
)

// Form names a Teacher reward formula.
type Form string

const (
	// GridReference is the grid reference code's form:
	// log R_T = log(log(1 + 10⁻³ + w·δ²)·R^α + 10⁻⁸).
	GridReference Form = "grid-reference"
	// LogLog is the diffusion and sequence reference code's form:
	// log R_T = log(log(1.001 + w·δ²/2)) + α·log R, a log of a log.
	LogLog Form = "loglog"
	// Sequence is the sequence reference code's log-of-log form, on its
	// loss δ² (no ½) capped at SequenceCap:
	// log R_T = log(log(1.001 + w·min(δ², 5000))) + α·log R.
	Sequence Form = "sequence"
	// Paper is the paper's form: log R_T = log(ε + w·δ²) + α·log R.
	Paper Form = "paper"
)

// SequenceCap is the sequence reference code's cap on a trajectory's
// squared residual, in its loss and in the Sequence form.
const SequenceCap = 5000

// Forms lists the valid forms.
var Forms = []Form{GridReference, LogLog, Sequence, Paper}

// Reward is the Teacher's reward. The zero value is not useful: set Form,
// and C = 19 as every experiment of the paper does.
type Reward struct {
	Form Form
	// C is the extra weight of under-sampled objects: w = 1 + C where the
	// Student's δ > 0 (R above its estimate), 1 elsewhere.
	C float64
	// Alpha weighs the Student's log-reward into the Teacher's (0 on the
	// grid, 0.5 in the diffusion reference code).
	Alpha float64
	// Eps is the paper form's ε (must be > 0 for it; 10⁻³ in gfn).
	Eps float64
}

// Validate reports an invalid setting, naming the value.
func (r Reward) Validate() error {
	switch {
	case !slices.Contains(Forms, r.Form):
		return fmt.Errorf("teacher: reward form %q is unknown (allowed: %s)", r.Form, choice.List(Forms))
	case !(r.C >= 0) || math.IsInf(r.C, 0):
		return fmt.Errorf("teacher: C %v must be finite and >= 0", r.C)
	case math.IsNaN(r.Alpha) || math.IsInf(r.Alpha, 0):
		return fmt.Errorf("teacher: alpha %v must be finite", r.Alpha)
	case r.Form == Paper && !(r.Eps > 0):
		return fmt.Errorf("teacher: eps %v must be > 0 for the paper form", r.Eps)
	}
	return nil
}

// Weight is w = 1 + C·[δ > 0]: the Student's under-sampled objects (R
// above its estimate) weigh more.
func (r Reward) Weight(delta float64) float64 {
	if delta > 0 {
		return 1 + r.C
	}
	return 1
}

// Term is the δ-dependent log term of log R_T, the part N_MC averages:
// log(log(1 + 10⁻³ + w·δ²) + 10⁻⁸) (grid reference), log(log(1.001 +
// w·δ²/2)) (log-of-log), log(log(1.001 + w·min(δ², 5000))) (sequence) or
// log(ε + w·δ²) (paper).
func (r Reward) Term(delta float64) float64 {
	d2 := delta * delta
	if r.Form == Sequence {
		d2 = min(d2, SequenceCap)
	}
	return r.termOfLoss(r.Weight(delta) * d2)
}

// Floor is the term of an object whose weighted loss is replaced by 10⁻¹²,
// as the log-of-log reference code does for objects with log R below its
// threshold.
func (r Reward) Floor() float64 {
	if r.Form == LogLog || r.Form == Sequence {
		return math.Log(math.Log(1.001 + 1e-12))
	}
	return r.termOfLoss(1e-12)
}

// termOfLoss is the term for a weighted squared residual wd2 = w·δ².
func (r Reward) termOfLoss(wd2 float64) float64 {
	switch r.Form {
	case Paper:
		return math.Log(r.Eps + wd2)
	case LogLog:
		return math.Log(math.Log(1.001 + wd2/2))
	case Sequence:
		return math.Log(math.Log(1.001 + wd2))
	default:
		return math.Log(math.Log(1+1e-3+wd2) + 1e-8)
	}
}

// LogReward combines a (possibly averaged) Term with the Student's log R
// into the Teacher's log-reward, its trajectory-balance target.
func (r Reward) LogReward(term, logR float64) float64 {
	if r.Form != GridReference || r.Alpha == 0 {
		return term + r.Alpha*logR
	}
	// log(R_T + 10⁻⁸) with R_T = log(1 + 10⁻³ + w·δ²)·R^α: undo the 10⁻⁸
	// inside Term to recover the plain loss term first.
	rt := (math.Exp(term) - 1e-8) * math.Exp(r.Alpha*logR)
	return math.Log(rt + 1e-8)
}

// Advantage is the log-of-log reference codes' buffer priority,
// log(1.001 + w·δ²/2) (or log(1.001 + 10⁻¹²) below its threshold) in the
// diffusion code and log(1.001 + w·min(δ², 5000)) in the sequence code:
// the exponential of a LogLog or Sequence term. Ranks by Advantage equal
// ranks by Term.
func Advantage(term float64) float64 { return math.Exp(term) }
