package biochem

import (
	"math"
	"sync"
)

// Singletons: a task's data are decoded once, on first use, whatever the
// number of Named calls.
var (
	tfbind8Task = sync.OnceValue(newTFBind8)
	qm9strTask  = sync.OnceValue(newQM9Str)
	sehstrTask  = sync.OnceValue(newSEHStr)
)

// logScale is log(rewardMax / scoreMax^beta), scoreMax the largest clamped
// score: the reference's scale, which gives the best string the reward
// rewardMax.
func logScale(rewardMax, beta, scoreMax float64) float64 {
	return math.Log(rewardMax) - beta*math.Log(max(scoreMax, ScoreMin))
}

// newTFBind8 is the TFbind8 task (tfbind8_oracle.py).
func newTFBind8() *Task {
	t := &Task{
		name:    "tfbind8",
		n:       8,
		symbols: []string{"A", "C", "G", "T"},
		extra:   map[byte]int32{'0': 0, '1': 1, '2': 2, '3': 3},
		allowed: "A, C, G, T (or the reference's digits 0-3)",
		settings: Settings{Rounds: 2000, Epsilon: 0.01, EvalEvery: 50, Beta: 20,
			RewardMax: 10, ScoreMin: ScoreMin, Width: 128, EvalSamples: 2048},
		addLog:   math.Inf(-1),
		clampLog: math.Log(1e-20),
	}
	t.data = sync.OnceValue(func() *taskData {
		canon := readFloat32s("tfbind8_y.f32s.gz", 32896)
		// Both strands score alike; the file keeps the string of each pair
		// whose number is smaller (see internal/gendata).
		y := make([]float32, 1<<16)
		k := 0
		top := math.Inf(-1)
		for i := range y {
			if j := revComp8(i); j < i {
				y[i] = y[j]
			} else {
				y[i] = canon[k]
				k++
			}
			top = max(top, float64(y[i]))
		}
		d := &taskData{
			score:    func(x []int32) float64 { return float64(y[index(x, 4)]) },
			logScale: logScale(t.settings.RewardMax, t.settings.Beta, top),
			modes:    t.readModes("tfbind8_modes.txt.gz"),
		}
		t.enumerate(d)
		return d
	})
	return t
}

// revComp8 is the number of the reverse complement of the DNA 8-mer
// numbered i (A=0, C=1, G=2, T=3, so the complement of t is 3-t).
func revComp8(i int) int {
	r := 0
	for range 8 {
		r = r*4 + 3 - i%4
		i /= 4
	}
	return r
}

// newQM9Str is the QM9str task (qm9str.py): 5 of the 11 blocks of
// block_qm9str_v1.json, the token being the block's number.
func newQM9Str() *Task {
	t := &Task{
		name:    "qm9str",
		n:       5,
		symbols: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a"},
		allowed: "0-9, a (block numbers 0-10)",
		settings: Settings{Rounds: 1000, Epsilon: 0.01, EvalEvery: 20, Beta: 20,
			RewardMax: 100, ScoreMin: ScoreMin, Width: 1024, EvalSamples: 2048},
		addLog:   math.Log(1e-12),
		clampLog: math.Inf(-1),
	}
	t.data = sync.OnceValue(func() *taskData {
		r := readFloat32s("qm9str_r.f32s.gz", 161051)
		top := math.Inf(-1)
		for _, v := range r {
			top = max(top, float64(v))
		}
		d := &taskData{
			score:    func(x []int32) float64 { return float64(r[index(x, 11)]) },
			logScale: logScale(t.settings.RewardMax, t.settings.Beta, top),
			modes:    t.readModes("qm9str_modes.txt.gz"),
		}
		t.enumerate(d)
		return d
	})
	return t
}

// sehMax is the largest prediction of the sEH proxy over all 18^6 strings,
// at "ag550c": the float64 sum the proxy gives there (printed 7.033253 by
// the reference, its REWARD_MAX). TestSEHExhaustive checks it is the maximum.
const sehMax = 7.033253064721926

// sehLogZ is log Σ_x R(x) over all 18^6 = 34,012,224 strings for the sEH
// reward R = max(max(p,1e-3)^6·10/sehMax^6, 1e-32), computed once by
// enumeration (TestSEHExhaustive, BIOCHEM_EXHAUSTIVE=1; 88 s on one busy
// core) as log 10 plus the log of a compensated sum of exp(log R - log 10).
// The reference code uses another value; see the package documentation.
const sehLogZ = 17.552393997235008

// newSEHStr is the sEHstr task (sehstr.py): 6 of the 18 blocks of
// block_18.json scored by the tree proxy.
func newSEHStr() *Task {
	t := &Task{
		name:    "sehstr",
		n:       6,
		symbols: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f", "g", "h"},
		allowed: "0-9, a-h (block numbers 0-17)",
		settings: Settings{Rounds: 2000, Epsilon: 0.05, EvalEvery: 50, Beta: 6,
			RewardMax: 10, ScoreMin: ScoreMin, Width: 1024, EvalSamples: 2048},
		addLog:   math.Inf(-1),
		clampLog: math.Log(1e-32),
	}
	t.data = sync.OnceValue(func() *taskData {
		f, err := parseForest(readGz("sehstr_gbtr_trees.json.gz"), t.n, len(t.symbols))
		if err != nil {
			panic(err) // the file is compiled in and tested
		}
		return &taskData{
			score:    f.predict,
			logScale: logScale(t.settings.RewardMax, t.settings.Beta, sehMax),
			modes:    t.readModes("sehstr_modes.txt.gz"),
			logZ:     sehLogZ,
			hasLogZ:  true,
			stored:   t.readRows("sehstr_true_samples.txt.gz"),
		}
	})
	return t
}
