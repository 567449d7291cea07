package ggns_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/ggns"
)

// Example runs GGNS on the 25-mode Gaussian mixture (log Z = 0) with the
// reference's settings.
func Example() {
	e, err := energy.Named("25gmm")
	if err != nil {
		panic(err)
	}
	opt, err := ggns.Preset("25gmm")
	if err != nil {
		panic(err)
	}
	r, err := ggns.Run(e, opt, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	fmt.Printf("log Z = %.1f ± %.1f, %d equally weighted samples\n", r.LogZ, r.LogZErr, len(r.Samples)/r.Dim)
	// Output:
	// log Z = -0.1 ± 0.1, 2000 equally weighted samples
}
