package objective_test

import (
	"fmt"

	"github.com/gfngo/gfn/objective"
)

// Score two trajectories with SubTB(0.9): the first of two transitions,
// the second of one, each with its states' learned log-flows.
func Example() {
	b := &objective.Batch{
		Off:   []int{0, 2, 3},
		LogPF: []float64{-0.7, -0.7, -1.2},
		LogPB: []float64{0, -0.7, 0},
		LogR:  []float64{1.0, 0.5},
		// States of trajectory 0 at 0..2, of trajectory 1 at 3..4; the
		// terminal states' entries stand for log R(x) and are not read.
		LogF: []float64{1.6, 1.6, 0, 1.6, 0},
	}
	o, _ := objective.New("subtb", 0)
	var g objective.Grad
	var r objective.Result
	if err := o.Eval(b, &g, &r); err != nil {
		panic(err)
	}
	fmt.Printf("loss %.4f, per object %.4f %.4f, δ %.2f %.2f\n", r.Loss, r.PerObject[0], r.PerObject[1], r.Delta[0], r.Delta[1])
	fmt.Printf("∂loss/∂log F(s_0) of the first: %.4f\n", g.LogF[0])
	// Output:
	// loss 0.1531, per object 0.2962 0.0100, δ 0.10 0.10
	// ∂loss/∂log F(s_0) of the first: -0.2724
}
