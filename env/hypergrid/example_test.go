package hypergrid_test

import (
	"fmt"

	"github.com/gfngo/gfn/env/hypergrid"
)

func ExampleNew() {
	g, err := hypergrid.New(4, 16, hypergrid.Deceptive)
	if err != nil {
		panic(err)
	}
	fmt.Println(g, "terminal states:", g.NumTerminals(), "modes:", g.NumModes())
	fmt.Println("R(2,2,12,13) =", g.RewardOf([]int32{2, 2, 12, 13}))
	// Output:
	// hypergrid(d=4, H=16, deceptive) terminal states: 64125 modes: 81
	// R(2,2,12,13) = 2.00001
}
