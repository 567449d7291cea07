package teacher

import "sync"

// Update runs one round of Algorithm 1's update order on a batch the
// family has prepared:
//
//  1. Delta: the Student's residuals δ (before its update) and loss;
//  2. Targets: the Teacher's log-rewards from δ (and log R);
//  3. StudentStep (backward pass and optimiser step) and TeacherStep
//     (the Teacher's trajectory-balance step on the targets) side by
//     side: once the targets are known they share nothing.
//
// When the targets need the Student's backward pass first (N_MC > 1 runs
// the Student again on extra trajectories of the same objects, and its
// scratch must be free), set TargetsAfterStudent: the round is then
// Delta, StudentGrad, Targets, StudentUpdate, TeacherStep in sequence.
//
// Set the functions once; Run allocates nothing, so a training loop can
// call it every iteration.
type Update struct {
	Delta func() (studentLoss float64)
	// Targets may be nil (no Teacher and no priority that needs them).
	Targets func()
	// StudentGrad accumulates the Student's gradient; StudentUpdate takes
	// the optimiser step.
	StudentGrad, StudentUpdate func()
	// TeacherStep may be nil (no Teacher).
	TeacherStep func() (teacherLoss float64)
	// TargetsAfterStudent orders the round sequentially (see above).
	TargetsAfterStudent bool

	side        func()
	done        sync.WaitGroup
	teacherLoss float64
}

// Run performs one round and returns the Student's loss and the Teacher's
// (0 without a Teacher).
func (u *Update) Run() (studentLoss, teacherLoss float64) {
	studentLoss = u.Delta()
	if u.TargetsAfterStudent {
		u.StudentGrad()
		if u.Targets != nil {
			u.Targets()
		}
		u.StudentUpdate()
		if u.TeacherStep != nil {
			teacherLoss = u.TeacherStep()
		}
		return studentLoss, teacherLoss
	}
	if u.Targets != nil {
		u.Targets()
	}
	if u.TeacherStep != nil {
		if u.side == nil {
			u.side = u.runSide // a function value made once
		}
		u.done.Add(1)
		go u.side()
	}
	u.StudentGrad()
	u.StudentUpdate()
	if u.TeacherStep != nil {
		u.done.Wait()
		teacherLoss = u.teacherLoss
	}
	return studentLoss, teacherLoss
}

func (u *Update) runSide() {
	u.teacherLoss = u.TeacherStep()
	u.done.Done()
}
