package envtest_test

import (
	"fmt"
	"strings"

	"github.com/gfngo/gfn/discrete/envtest"
)

// bits builds the binary strings of length 3 by appending bits. A state is
// [length, b0, b1, b2] with the unused bits -1; the strings of length 3 are
// the terminal states, and log R is their number of ones.
type bits struct{}

func (bits) StateLen() int         { return 4 }
func (bits) NumActions() int       { return 2 } // append 0, append 1
func (bits) NumBackActions() int   { return 1 } // delete the last bit
func (bits) FeatureLen() int       { return 6 } // bit b at position i is 2i+b
func (bits) FeaturesPerState() int { return 3 }

func (bits) Init(s []int32) { copy(s, []int32{0, -1, -1, -1}) }

func (bits) Features(s, idx []int32) {
	for i := range 3 {
		idx[i] = -1
		if b := s[1+i]; b >= 0 {
			idx[i] = int32(2*i) + b
		}
	}
}

func (bits) ForwardMask(s []int32, mask []bool) { mask[0], mask[1] = true, true }

func (bits) Step(s []int32, a int) bool {
	s[1+s[0]] = int32(a)
	s[0]++
	return s[0] == 3
}

func (bits) IsTerminal(s []int32) bool { return s[0] == 3 }
func (bits) IsInitial(s []int32) bool  { return s[0] == 0 }

func (bits) BackwardMask(s []int32, mask []bool) int {
	mask[0] = true
	return 1
}

func (bits) BackStep(s []int32, b int) int {
	s[0]--
	a := s[1+s[0]]
	s[1+s[0]] = -1
	return int(a)
}

func (bits) BackwardCount(s []int32, a int) int { return 1 }

func (bits) LogReward(xs []int32, n int, out []float64) error {
	for i := range n {
		out[i] = 0
		for _, b := range xs[4*i+1 : 4*i+4] {
			out[i] += float64(b)
		}
	}
	return nil
}

// Check a user's environment: every reachable state is visited, and there
// are 2³ terminal states.
func ExampleRun() {
	failures := envtest.Run(bits{}, envtest.Options{Terminals: 8})
	for _, f := range failures {
		fmt.Println(f)
	}
	if len(failures) == 0 {
		fmt.Println("ok")
	}
	// Output: ok
}

// wrongCount is bits with a BackwardCount that forgets that every string
// has a single parent.
type wrongCount struct{ bits }

func (wrongCount) BackwardCount(s []int32, a int) int { return 2 }

// A broken environment, its states printed by the user's printer.
func ExampleRun_failure() {
	opt := envtest.Options{
		Format: func(s []int32) string {
			var b strings.Builder
			for _, v := range s[1 : 1+s[0]] {
				fmt.Fprint(&b, v)
			}
			return fmt.Sprintf("%q", b.String())
		},
		MaxFailures: 2,
	}
	for _, f := range envtest.Run(wrongCount{}, opt) {
		fmt.Println(f)
	}
	// Output:
	// envtest: backward mask: "": BackwardCount(·, 0) is 2, but BackwardMask of the child "0" returns 1
	// envtest: backward mask: "": BackwardCount(·, 1) is 2, but BackwardMask of the child "1" returns 1
}
