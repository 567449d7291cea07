package biochem_test

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/gfngo/gfn/biochem"
)

func ExampleNamed() {
	task, err := biochem.Named("tfbind8")
	if err != nil {
		log.Fatal(err)
	}
	x, err := task.Encode("AGGTATCA")
	if err != nil {
		log.Fatal(err)
	}
	score := make([]float64, 1)
	logR := make([]float64, 1)
	if err := task.Score(x, 1, score); err != nil {
		log.Fatal(err)
	}
	if err := task.LogReward(x, 1, logR); err != nil {
		log.Fatal(err)
	}
	logZ := task.LogZ()
	fmt.Printf("%s: y %.4f, R %.4g, p(x) %.3g, mode %v of %d\n",
		task.Decode(x), score[0], math.Exp(logR[0]), math.Exp(logR[0]-logZ), task.IsMode(x), task.NumModes())

	samples, err := task.TargetSamples(3, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		log.Fatal(err)
	}
	for r := range 3 {
		fmt.Println(task.Decode(samples[r*task.Length() : (r+1)*task.Length()]))
	}

	_, err = task.Encode("AGGTAUCA")
	fmt.Println(err)
	// Output:
	// AGGTATCA: y 1.0000, R 10, p(x) 0.0024, mode true of 328
	// GTATCGCG
	// GATACTTC
	// GATATTTC
	// biochem: tfbind8: "AGGTAUCA": symbol 'U' at position 5 is not one of A, C, G, T (or the reference's digits 0-3)
}
