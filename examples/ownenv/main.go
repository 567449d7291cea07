// Command ownenv trains a Student GFlowNet with an adaptive Teacher on a
// user's own discrete environment: binary strings of length n built bit
// by bit, rewarded for runs of equal bits (the modes are 00…0 and 11…1).
// It first checks the environment with envtest.
package main

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/gfngo/gfn/discrete/envtest"
	"github.com/gfngo/gfn/train"
)

// bits is the environment. A state is [length, b_0, …, b_{n-1}] with
// unset bits -1; action c appends bit c; the only backward action drops
// the last bit.
type bits struct{ n int }

func (e bits) StateLen() int         { return e.n + 1 }
func (e bits) NumActions() int       { return 2 }
func (e bits) NumBackActions() int   { return 1 }
func (e bits) FeatureLen() int       { return 2 * e.n }
func (e bits) FeaturesPerState() int { return e.n }
func (e bits) Init(s []int32) {
	s[0] = 0
	for i := 1; i <= e.n; i++ {
		s[i] = -1
	}
}
func (e bits) Features(s []int32, idx []int32) {
	for i := range e.n {
		idx[i] = -1
		if i < int(s[0]) {
			idx[i] = int32(2*i) + s[1+i]
		}
	}
}
func (e bits) ForwardMask(s []int32, mask []bool) { mask[0], mask[1] = true, true }
func (e bits) Step(s []int32, a int) bool {
	s[1+s[0]] = int32(a)
	s[0]++
	return int(s[0]) == e.n
}
func (e bits) IsTerminal(s []int32) bool { return int(s[0]) == e.n }
func (e bits) IsInitial(s []int32) bool  { return s[0] == 0 }
func (e bits) BackwardMask(s []int32, mask []bool) int {
	mask[0] = true
	return 1
}
func (e bits) BackStep(s []int32, b int) int {
	s[0]--
	a := s[1+s[0]]
	s[1+s[0]] = -1
	return int(a)
}
func (e bits) BackwardCount(s []int32, a int) int { return 1 }

// LogReward: one nat per pair of equal neighbours.
func (e bits) LogReward(xs []int32, n int, out []float64) error {
	w := e.StateLen()
	for r := range n {
		x := xs[r*w : (r+1)*w]
		out[r] = 0
		for i := 2; i <= e.n; i++ {
			if x[i] == x[i-1] {
				out[r]++
			}
		}
	}
	return nil
}

// TerminalKey, IsMode and NumModes (target.Moder) let the trainer count
// the modes it finds.
func (e bits) TerminalKey(x []int32) uint64 {
	var k uint64
	for i := 1; i <= e.n; i++ {
		k = 2*k + uint64(x[i])
	}
	return k
}
func (e bits) IsMode(x []int32) bool { return e.TerminalKey(x) == 0 || e.TerminalKey(x) == 1<<e.n-1 }
func (e bits) NumModes() int         { return 2 }

func run(n, calls int) (string, error) {
	env := bits{n}
	if fs := envtest.Run(env, envtest.Options{Terminals: 1 << n}); len(fs) > 0 {
		return "", fs[0]
	}
	cfg := train.DefaultConfig() // Teacher + Student, the paper's grid settings
	cfg.Hidden, cfg.RewardCalls = []int{64, 64}, calls
	res, err := train.Run(context.Background(), env, cfg, train.RunOptions{})
	if err != nil {
		return "", err
	}
	s := res.Summary
	return fmt.Sprintf("modes found %d of 2; learned log Z %.2f (true %.2f)", s.ModesFound, s.LogZ, logZ(n)), nil
}

// logZ sums R over the 2^n strings: 2 choices for the first bit, then
// each neighbour equal (e) or not.
func logZ(n int) float64 {
	var z float64
	for k := range n { // k equal pairs among n-1
		z += 2 * binom(n-1, k) * math.Exp(float64(k))
	}
	return math.Log(z)
}

func binom(n, k int) float64 {
	r := 1.0
	for i := range k {
		r = r * float64(n-i) / float64(i+1)
	}
	return r
}

func main() {
	out, err := run(8, 16*1500)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
}
