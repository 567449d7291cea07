package energy_test

import (
	"fmt"
	"github.com/gfngo/gfn/target"
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/energy"
)

// Gaussian is a user's own target: an isotropic Gaussian N(Mean, Var·I)
// over ℝ^len(Mean), left unnormalised by its constant so that log Z is not
// zero.
type Gaussian struct {
	Mean []float64
	Var  float64
}

func (g Gaussian) Dim() int { return len(g.Mean) }

func (g Gaussian) LogReward(x []float32, out []float64) error {
	n, err := energy.Rows(g.Dim(), x, out) // the package's length checks and messages
	if err != nil {
		return err
	}
	d := g.Dim()
	for b := range n {
		var ss float64
		for j, m := range g.Mean {
			r := float64(x[b*d+j]) - m
			ss += r * r
		}
		out[b] = -ss / (2 * g.Var)
	}
	return nil
}

// LogZ makes Gaussian a LogZer: log ∫ exp(−‖x − μ‖²/2v) dx = (d/2)·log 2πv.
func (g Gaussian) LogZ() float64 { return 0.5 * float64(g.Dim()) * math.Log(2*math.Pi*g.Var) }

// Sample makes Gaussian a Sampler.
func (g Gaussian) Sample(dst []float32, rng *rand.Rand) {
	d, s := g.Dim(), math.Sqrt(g.Var)
	for i := range dst {
		dst[i] = float32(g.Mean[i%d] + s*rng.NormFloat64())
	}
}

// A user-defined target evaluated through the package's interfaces, next
// to a provided one.
func Example() {
	for _, e := range []energy.Energy{
		Gaussian{Mean: []float64{1, -1}, Var: 0.5},
		energy.GMM25{},
	} {
		x := []float32{1.5, -1, 0, 0, 5, 5} // three states of ℝ²
		logR := make([]float64, 3)
		if err := e.LogReward(x, logR); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%T: log R = %.4f", e, logR)
		if z, ok := e.(target.LogZer); ok {
			fmt.Printf(", log Z = %.4f", z.LogZ())
		}
		_, canSample := e.(energy.Sampler)
		_, hasGrad := e.(energy.Gradient)
		fmt.Printf(", exact samples: %v, gradient: %v\n", canSample, hasGrad)
	}
	err := energy.GMM25{}.LogReward(make([]float32, 5), make([]float64, 2))
	fmt.Println(err)
	// Output:
	// energy_test.Gaussian: log R = [-0.2500 -2.0000 -52.0000], log Z = 1.1447, exact samples: true, gradient: false
	// energy.GMM25: log R = [-9.2694 -3.8528 -3.8528], log Z = 0.0000, exact samples: true, gradient: true
	// energy: len(x) = 5 is not a multiple of Dim() = 2
}
