package envtest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/discrete"
)

// Defaults of the zero Options.
const (
	DefaultMaxStates   = 100_000 // states of the exhaustive search
	DefaultWalks       = 200     // random walks when it is not exhaustive
	DefaultMaxSteps    = 100_000 // steps of a walk
	DefaultPBTol       = 1e-9    // tolerance of Σ P_B = 1
	DefaultRewardTol   = 1e-9    // relative tolerance of batched log-rewards
	DefaultRewardBatch = 16      // terminal states per batched LogReward
	DefaultMaxFailures = 20      // failures before Run stops
)

// Options configure Run and Check. The zero value checks with the defaults.
type Options struct {
	// MaxStates is the budget of the exhaustive search: when at most
	// MaxStates states (terminal or not) are reachable from Init, all are
	// checked. Otherwise the states explored until the budget ran out are
	// checked, and then random walks. Zero means DefaultMaxStates; a
	// negative value skips the exhaustive search.
	MaxStates int
	// Walks is the number of random forward-then-backward walks when the
	// search is not exhaustive. Zero means DefaultWalks; a negative value
	// means none.
	Walks int
	// Rand drives the random walks. Nil means a fixed seed, so that a run
	// is reproducible.
	Rand *rand.Rand
	// MaxSteps bounds the number of steps of a walk. Zero means
	// DefaultMaxSteps. A positive MaxSteps also bounds the longest
	// trajectory of an exhaustively searched DAG.
	MaxSteps int
	// Terminals, when positive, is the expected number of terminal states
	// reachable from Init. Counting them needs an exhaustive search; when
	// the search is not exhaustive Terminals is reported as unchecked.
	Terminals int
	// PBTol is the tolerance of |Σ P_B - 1| at a state. Zero means
	// DefaultPBTol.
	PBTol float64
	// RewardTol is the tolerance of |a - b| / max(1, |a|) between the
	// log-reward a of a terminal state alone and b in a batch. Zero means
	// DefaultRewardTol; a negative value asks for equality.
	RewardTol float64
	// RewardBatch is the number of terminal states per batched LogReward
	// call. Zero means DefaultRewardBatch.
	RewardBatch int
	// MaxFailures stops the run after that many failures. Zero means
	// DefaultMaxFailures.
	MaxFailures int
	// Format prints a state in messages. Nil prints its words, as
	// fmt.Sprint does ("[1 0 2]").
	Format func(s []int32) string
}

// Property is a promise of a discrete.Env that Run checks; the package
// documentation describes each.
type Property int

// The properties, in the order of the package documentation.
const (
	Dimensions       Property = iota // sizes of states, actions and features
	InitState                        // Init and its state
	FeatureIndices                   // Features
	ForwardMasks                     // ForwardMask
	Steps                            // Step and its children
	DistinctChildren                 // no two valid actions lead to the same child
	BackwardMasks                    // BackwardMask and BackwardCount
	Inverse                          // BackStep undoes Step
	PBSum                            // the uniform P_B sums to one
	Termination                      // no cycle, walks end within MaxSteps
	Reachability                     // parents are reachable from Init
	Terminals                        // terminal keys and count
	Rewards                          // LogReward
	Enumeration                      // a metrics.Enumerable's numbering
)

var propertyNames = [...]string{
	Dimensions:       "dimensions",
	InitState:        "init",
	FeatureIndices:   "features",
	ForwardMasks:     "forward mask",
	Steps:            "step",
	DistinctChildren: "distinct children",
	BackwardMasks:    "backward mask",
	Inverse:          "inverse",
	PBSum:            "P_B sum",
	Termination:      "termination",
	Reachability:     "reachability",
	Terminals:        "terminals",
	Rewards:          "reward",
	Enumeration:      "enumeration",
}

// String is the name of the property as messages print it.
func (p Property) String() string {
	if p < 0 || int(p) >= len(propertyNames) {
		return fmt.Sprintf("Property(%d)", int(p))
	}
	return propertyNames[p]
}

// Failure is a failed check.
type Failure struct {
	// Property is the promise that is broken.
	Property Property
	// State is a copy of the state where the check failed, nil for a
	// failure of the environment as a whole (a count).
	State []int32
	// Msg is the message: "envtest: ", the property, the state and what
	// went wrong.
	Msg string
}

// Error returns f.Msg, so that a Failure is an error.
func (f Failure) Error() string { return f.Msg }

// Run checks env and returns the failures found, nil if none. It never
// prints, and recovers from panics of env's methods, reporting them as
// failures.
func Run(env discrete.Env, opt Options) []Failure {
	c := newChecker(env, opt)
	c.run()
	return c.failures
}

// Check runs the checks on env inside a test and reports every failure
// with t.Error.
func Check(t testing.TB, env discrete.Env, opt Options) {
	t.Helper()
	for _, f := range Run(env, opt) {
		t.Error(f.Msg)
	}
}
