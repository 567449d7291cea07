package envtest_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/discrete/envtest"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/env/sequence"
)

// sumReward is log R = Σ tokens / 4 (a token-dependent positive reward).
func sumReward(xs []int32, n int, out []float64) error {
	l := len(xs) / n
	for i := range n {
		var s float64
		for _, c := range xs[i*l : (i+1)*l] {
			s += float64(c)
		}
		out[i] = s / 4
	}
	return nil
}

func grid(t testing.TB, d, h int, r hypergrid.Reward) *hypergrid.Grid {
	t.Helper()
	g, err := hypergrid.New(d, h, r)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func seq(t testing.TB, prependAppend bool, a, n int) *sequence.Env {
	t.Helper()
	mk := sequence.NewAppend
	if prependAppend {
		mk = sequence.NewPrependAppend
	}
	e, err := mk(a, n, sumReward)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The shipped environments pass every check, exhaustively on small
// instances (with the exact number of terminal states) and by random walks
// on larger ones.
func TestShipped(t *testing.T) {
	ipow := func(b, e int) int { return int(math.Pow(float64(b), float64(e))) }
	for _, tc := range []struct {
		env       discrete.Env
		terminals int // 0: walks only
	}{
		{grid(t, 1, 2, hypergrid.Deceptive), 2},
		{grid(t, 1, 6, hypergrid.Original), 5 + 1},
		{grid(t, 2, 5, hypergrid.Deceptive), 16 + 2*4},
		{grid(t, 3, 4, hypergrid.DeceptivePaper), 27 + 3*9},
		{grid(t, 4, 6, hypergrid.Original), 625 + 4*125},
		{grid(t, 4, 32, hypergrid.Deceptive), 0},
		{seq(t, true, 1, 4), 1},
		{seq(t, true, 2, 4), 16},
		{seq(t, true, 3, 5), ipow(3, 5)},
		{seq(t, true, 4, 12), 0},
		{seq(t, false, 1, 3), 1},
		{seq(t, false, 3, 4), 81},
		{seq(t, false, 20, 10), 0},
	} {
		opt := envtest.Options{Terminals: tc.terminals}
		if tc.terminals == 0 {
			opt.MaxStates = -1
		}
		t.Run(fmt.Sprint(tc.env), func(t *testing.T) { envtest.Check(t, tc.env, opt) })
	}
}
