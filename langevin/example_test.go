package langevin_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/langevin"
)

// The reference's local search on Manywell: 500 states (here exact
// samples pushed off the wells, standing in for a replay buffer's) go
// through 200 MALA steps, and the accepted proposals of steps 101–199 are
// collected with their log R, ready for a buffer.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	e := energy.Manywell{}
	x := make([]float32, 500*e.Dim())
	e.Sample(x, rng)
	for i := range x {
		x[i] += 0.3 * float32(rng.NormFloat64())
	}
	c, err := langevin.New(langevin.Options{}) // the reference's settings
	if err != nil {
		fmt.Println(err)
		return
	}
	xs, logR, st, err := c.Collect(e, x, rng, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", c.Options())
	fmt.Printf("about %d thousand states of %d values, one log R each: %v\n", (len(logR)+500)/1000, len(xs)/len(logR), len(logR) == st.Reported)
	// With η₀ = 0.001 the acceptance rate stays above 0.574 throughout, so η
	// grows at every step after the first: 0.001·1.01¹⁹⁹.
	fmt.Printf("acceptance %.2f, final step size %.4f\n", st.AcceptRate(), st.StepSize)
	// Output:
	// {Steps:200 BurnIn:100 StepSize:0.001 TargetAccept:0.574 Grow:1.01 Shrink:0.99 AdaptEvery:5}
	// about 47 thousand states of 32 values, one log R each: true
	// acceptance 0.97, final step size 0.0072
}
