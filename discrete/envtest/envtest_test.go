package envtest_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/discrete/envtest"
	"github.com/gfngo/gfn/env/hypergrid"
)

// recorder is a testing.TB that keeps the errors reported to it.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Error(args ...any) {
	r.errs = append(r.errs, args[0].(string))
}

func messages(fs []envtest.Failure) []string {
	var m []string
	for _, f := range fs {
		m = append(m, f.Msg)
	}
	return m
}

// Check reports every failure of Run with t.Error, and nothing for a sound
// environment.
func TestCheck(t *testing.T) {
	g := grid(t, 2, 4, hypergrid.Original)
	for _, tc := range []struct {
		name  string
		env   discrete.Env
		wantN int
	}{
		{"sound", g, 0},
		{"broken", oneCount{g}, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			envtest.Check(r, tc.env, envtest.Options{})
			want := messages(envtest.Run(tc.env, envtest.Options{}))
			if !slices.Equal(r.errs, want) || len(want) != tc.wantN {
				t.Errorf("Check reported %d errors %q, Run %d %q; want %d", len(r.errs), r.errs, len(want), want, tc.wantN)
			}
		})
	}
}

// Options: MaxFailures stops the run, Rand makes walks reproducible, and
// a failure is an error with its message.
func TestOptions(t *testing.T) {
	env := oneCount{grid(t, 3, 6, hypergrid.Deceptive)}
	for _, max := range []int{1, 3, 7} {
		if fs := envtest.Run(env, envtest.Options{MaxFailures: max}); len(fs) != max {
			t.Errorf("MaxFailures %d: %d failures", max, len(fs))
		}
	}
	if fs := envtest.Run(env, envtest.Options{}); len(fs) != envtest.DefaultMaxFailures {
		t.Errorf("%d failures, want DefaultMaxFailures", len(fs))
	}
	walks := func(seed uint64) []string {
		var rng *rand.Rand
		if seed > 0 {
			rng = rand.New(rand.NewPCG(seed, 0))
		}
		return messages(envtest.Run(env, envtest.Options{MaxStates: -1, Walks: 3, Rand: rng, MaxFailures: 100}))
	}
	for _, seed := range []uint64{0, 1, 2} {
		if a, b := walks(seed), walks(seed); !slices.Equal(a, b) || len(a) == 0 {
			t.Errorf("seed %d: two runs gave %d and %d failures, not the same ones", seed, len(a), len(b))
		}
	}
	if a, b := walks(1), walks(2); slices.Equal(a, b) {
		t.Errorf("seeds 1 and 2 gave the same walks")
	}
	fs := envtest.Run(env, envtest.Options{MaxFailures: 1})
	var err error = fs[0]
	if err.Error() != fs[0].Msg {
		t.Errorf("Error() = %q, want the message %q", err.Error(), fs[0].Msg)
	}
}

func TestPropertyString(t *testing.T) {
	seen := map[string]bool{}
	for p := envtest.Dimensions; p <= envtest.Enumeration; p++ {
		s := p.String()
		if s == "" || seen[s] || s[0] == 'P' && s != "P_B sum" {
			t.Errorf("property %d has the name %q", int(p), s)
		}
		seen[s] = true
	}
	if s := envtest.Property(99).String(); s != "Property(99)" {
		t.Errorf("Property(99).String() = %q", s)
	}
}
