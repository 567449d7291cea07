package train

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/gfngo/gfn/metrics"
)

// Evaluation is a Trainer's evaluation (gfn eval's JSON): exact distances
// of the Student's (and Teacher's) terminating distribution to the target
// where the environment can be enumerated, and the empirical L1 of fresh
// Student samples.
type Evaluation struct {
	Env          string             `json:"env"`
	Step         int                `json:"step"`
	LogZ         float64            `json:"log_z"` // the Student's estimate of log Z
	TrueLogZ     *float64           `json:"true_log_z,omitempty"`
	ModesFound   int                `json:"modes_found"`
	StudentExact *metrics.Distances `json:"student_exact,omitempty"`
	TeacherExact *metrics.Distances `json:"teacher_exact,omitempty"`
	EmpiricalL1  *float64           `json:"empirical_l1,omitempty"`
	Samples      int                `json:"samples,omitempty"`
	// Note says why exact metrics are missing.
	Note string `json:"note,omitempty"`
}

// Evaluate computes the exact distances and, with n > 0, the empirical L1
// of n fresh Student samples drawn with rng.
func (t *Trainer) Evaluate(n int, rng *rand.Rand) (Evaluation, error) {
	r := Evaluation{Env: fmt.Sprint(t.Env), Step: t.Step, LogZ: t.StudentLogZ(), ModesFound: len(t.ModesFound)}
	enum, ok := t.Env.(metrics.Enumerable)
	if !ok {
		r.Note = "exact metrics skipped: the environment cannot be enumerated"
		return r, nil
	}
	target, logZ, err := metrics.Target(enum)
	if errors.Is(err, metrics.ErrTooLarge) {
		r.Note = "exact metrics skipped: " + err.Error()
		return r, nil
	}
	if err != nil {
		return r, err
	}
	r.TrueLogZ = &logZ
	for _, a := range []*Agent{t.Student, t.Teacher} {
		if a == nil {
			continue
		}
		p, err := metrics.Terminating(enum, a.Model)
		if err != nil {
			return r, err
		}
		d := metrics.Compare(p, target)
		if a == t.Student {
			r.StudentExact = &d
		} else {
			r.TeacherExact = &d
		}
	}
	if n > 0 {
		emp, err := metrics.Empirical(enum, t.Sample(n, rng), n)
		if err != nil {
			return r, err
		}
		l1 := metrics.Compare(emp, target).L1
		r.EmpiricalL1, r.Samples = &l1, n
	}
	return r, nil
}
