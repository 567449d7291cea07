package ot_test

import (
	"fmt"

	"github.com/gfngo/gfn/ot"
)

func ExampleW2() {
	// Three points on a line and the same points shifted by 1 and
	// listed in another order: the optimal pairing undoes the shuffle.
	x := []float32{0, 0, 1, 0, 2, 0}
	y := []float32{3, 0, 1, 0, 2, 0}
	w, err := ot.W2(x, y, 2)
	if err != nil {
		panic(err)
	}
	fmt.Printf("W2 = %.6f\n", w)
	perm, w2sq, _ := ot.Match(x, y, 2)
	fmt.Println(perm, w2sq)
	// Output:
	// W2 = 1.000000
	// [1 2 0] 1
}
