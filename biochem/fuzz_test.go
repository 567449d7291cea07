package biochem

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// FuzzEncode feeds user strings (gfn reward --seq, a reward program's
// answers) to every task's Encode: an error naming the task, or tokens
// that decode to a string encoding to them again and score to a finite
// log-reward.
func FuzzEncode(f *testing.F) {
	// Valid strings of every task (lengths 8, 5, 6, 14), and invalid ones.
	for _, s := range []string{"ACGTACGT", "01230123", "05a19", "0ah3c7", "GGGGGCCCCGCGCG", "ACGUUUACGTTGCA",
		"ACGU", "acgtacgt", "ÅCGTACG", "", "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8"} {
		for i := range Names {
			f.Add(uint8(i), s)
		}
	}
	tasks := make([]*Task, len(Names))
	for i, name := range Names {
		t, err := Named(name)
		if err != nil {
			f.Fatal(err)
		}
		tasks[i] = t
	}
	f.Fuzz(func(t *testing.T, which uint8, s string) {
		task := tasks[int(which)%len(tasks)]
		x, err := task.Encode(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "biochem: "+task.Name()+": ") {
				t.Errorf("error %q does not name the task", err)
			}
			return
		}
		if len(x) != task.Length() {
			t.Fatalf("%s: %q gave %d tokens, want %d", task.Name(), s, len(x), task.Length())
		}
		y, err := task.Encode(task.Decode(x))
		if err != nil || !slices.Equal(x, y) {
			t.Fatalf("%s: %q: tokens %v decode to %q, which encodes to %v, %v", task.Name(), s, x, task.Decode(x), y, err)
		}
		out := make([]float64, 1)
		if err := task.LogReward(x, 1, out); err != nil || math.IsNaN(out[0]) || math.IsInf(out[0], 0) {
			t.Fatalf("%s: %q: log R %v, %v", task.Name(), s, out[0], err)
		}
	})
}
