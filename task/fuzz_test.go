package task

import (
	"encoding/json"
	"testing"

	"github.com/gfngo/gfn/discrete"
)

// FuzzBuildJSON feeds arbitrary environment specs, as checkpoints store
// them, to BuildJSON: an error or an environment that a short walk from
// s0 can step through, never a panic or an allocation the size of a
// stored number.
func FuzzBuildJSON(f *testing.F) {
	for _, s := range []Spec{
		{Task: "hypergrid", Dim: 2, Side: 4, Reward: "deceptive"},
		{Task: "hypergrid", Dim: 4, Side: 16, Reward: "deceptive-paper"},
		{Task: "hypergrid", Dim: 3, Side: 2, Reward: "original"},
		{Task: "hypergrid", Dim: 2, Side: 8, Reward: "custom", RewardCmd: "python3 r.py"},
		{Task: "tfbind8"},
	} {
		b, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// An invalid spec gave its error with a non-nil Env holding a nil *Grid
	// (found by this seed).
	f.Add([]byte(`{"task":"hypergrid","dim":1,"side":-5,"reward":"deceptive"}`))
	f.Add([]byte(`null`))
	// A side read from a checkpoint was allocated as the grid's mode band
	// (2^62: a make() panic; 2^40: 1 TB). Found by review.
	f.Add([]byte(`{"task":"hypergrid","dim":1,"side":4611686018427387904,"reward":"deceptive"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		env, err := BuildJSON(raw)
		if err != nil {
			if env != nil {
				t.Errorf("an environment with the error %v", err)
			}
			return
		}
		f, ok := env.(discrete.FeaturizedEnv)
		if !ok {
			t.Fatalf("%v has no one-hot features: the MLP policies cannot train on it", env)
		}
		w, k := env.StateLen(), f.FeaturesPerState()
		if w < 1 || k < 1 || env.NumActions() < 1 || f.FeatureLen() < k {
			t.Fatalf("%v: state length %d, %d of %d features, %d actions", env, w, k, f.FeatureLen(), env.NumActions())
		}
		s := make([]int32, w)
		idx := make([]int32, k)
		mask := make([]bool, env.NumActions())
		env.Init(s)
		for range 64 {
			f.Features(s, idx)
			for _, i := range idx {
				if i < -1 || int(i) >= f.FeatureLen() {
					t.Fatalf("%v: feature %d of %v outside [0, %d)", env, i, s, f.FeatureLen())
				}
			}
			env.ForwardMask(s, mask)
			a := -1
			for j := len(mask) - 1; j >= 0; j-- { // the stop action is last on the grid: walk first
				if mask[j] && (a < 0 || j < a) {
					a = j
				}
			}
			if a < 0 {
				t.Fatalf("%v: no valid action at %v", env, s)
			}
			if env.Step(s, a) {
				break
			}
		}
	})
}
