package biochem

import (
	"fmt"
	"math"
	"sync"

	"github.com/gfngo/gfn/rna"
)

// rnaScale is the reference's reward scale of L14-RNA1 at beta 40, 10 over
// the largest fitness to the 40th (the "scale" column of L14_RNA1_info.csv,
// row reward_exp 40); it implies a largest fitness of 1.0545395.
const rnaScale = 1.1953257013780185

// rnaLogZScaled is the "logz_scaled" column of L14_RNA1_info.csv at
// reward_exp 40: log Σ_x rnaScale·max(f(x),1e-3)^40 over all 4^14 strings,
// computed by the authors with FLEXS in float32 (about 7 significant
// digits). It leaves out the reward's +1e-12, which LogZ adds.
const rnaLogZScaled = 5.220212936401367

// rnaFitness is the L14-RNA1 binding fitness of one valid row (tokens
// A, C, G, U = 0..3).
type rnaFitness func(x []int32) float64

// newRNAFitness builds the L14-RNA1 fitness from package rna: FLEXS's
// binding landscape of rnaTarget with ViennaRNA's default parameters.
func newRNAFitness() (rnaFitness, error) {
	b, err := rna.NewBinding(rna.DefaultParams(), rnaTarget)
	if err != nil {
		return nil, fmt.Errorf("biochem: rna task: %w", err)
	}
	return b.FitnessTokens, nil
}

// rnaTarget is the target RNA of FLEXS's L14_RNA1 landscape.
const rnaTarget = "GAACGAGGCACAUUCCGGCUCGCCCGGCCCAUGUGAGCAUGGGCCGGACCCCGUCCGCGCGGGGCCCCCGCGCGGACGGGGGCGAGCCGGAAUGUGCCUC"

// rnaTask is the L14-RNA1 task, built once.
var rnaTask = sync.OnceValues(func() (*Task, error) {
	fit, err := newRNAFitness()
	if err != nil {
		return nil, err
	}
	return newRNA(fit), nil
})

// rnaOnce holds the RNA task's data decoded once for all fitness functions.
var rnaOnce = sync.OnceValues(func() (map[uint64]struct{}, []int32) {
	t := rnaBase()
	return t.readModes("rna1_modes.txt.gz"), t.readRows("rna1_true_samples.txt.gz")
})

// rnaBase is the L14-RNA1 task without its data.
func rnaBase() *Task {
	return &Task{
		name:    "rna",
		n:       14,
		symbols: []string{"A", "C", "G", "U"},
		allowed: "A, C, G, U",
		settings: Settings{Rounds: 2000, Epsilon: 0.01, EvalEvery: 50, Beta: 40,
			RewardMax: 10, ScoreMin: ScoreMin, Width: 128, EvalSamples: 2048},
		addLog:   math.Log(1e-12),
		clampLog: math.Inf(-1),
	}
}

// newRNA is the L14-RNA1 task (rna.py) with the fitness fit.
func newRNA(fit rnaFitness) *Task {
	t := rnaBase()
	t.data = sync.OnceValue(func() *taskData {
		modes, stored := rnaOnce()
		return &taskData{
			score:    fit,
			logScale: math.Log(rnaScale),
			modes:    modes,
			// The +1e-12 of every one of the 4^14 strings adds 2.7e-4 to Z.
			logZ:    logAddExp(rnaLogZScaled, math.Log(float64(uint64(1)<<28)*1e-12)),
			hasLogZ: true,
			stored:  stored,
		}
	})
	return t
}
