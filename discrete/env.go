package discrete

// Env is a finite DAG MDP with a unique initial state and positive rewards
// on its terminal states.
type Env interface {
	// StateLen is the number of int32 words per state.
	StateLen() int
	// NumActions is the number of forward actions (valid or not) per state.
	NumActions() int
	// NumBackActions is the number of backward actions per state.
	NumBackActions() int

	// Init writes the initial state s0 into s.
	Init(s []int32)
	// ForwardMask marks the valid forward actions of the non-terminal s.
	ForwardMask(s []int32, mask []bool)
	// Step applies the valid forward action a to s in place and reports
	// whether the result is terminal.
	Step(s []int32, a int) (terminal bool)
	// IsTerminal reports whether s is terminal.
	IsTerminal(s []int32) bool
	// IsInitial reports whether s is s0.
	IsInitial(s []int32) bool
	// BackwardMask marks the valid backward actions of the non-initial s
	// (one per distinct parent) and returns how many there are.
	BackwardMask(s []int32, mask []bool) int
	// BackStep applies backward action b to s in place, making it the
	// parent, and returns the forward action that leads from that parent
	// back to the child.
	BackStep(s []int32, b int) (forward int)
	// BackwardCount is the number of valid backward actions at the child
	// reached from the non-terminal s by forward action a. It gives the
	// uniform P_B of a transition without materialising the child.
	BackwardCount(s []int32, a int) int

	// LogReward writes log R(x) for the n terminal states in xs (n rows of
	// StateLen words). It returns an error for a reward that is NaN, ±Inf
	// or not positive.
	LogReward(xs []int32, n int, out []float64) error
}

// TerminalKeyer maps terminal states to a compact integer key (for mode
// counting and histograms), for environments that have one.
type TerminalKeyer interface {
	TerminalKey(x []int32) uint64
}

// Stopper is an environment where every non-terminal state can stop: its
// StopAction leads from s to the terminal state "stopped at s". Modified
// detailed balance needs it (package objective's ModifiedDB).
type Stopper interface {
	StopAction() int
}

// Featurizer encodes states for a policy network as one-hot indices. It
// belongs to the model side, not to the MDP: the MLP and SSR policies take
// one, and an environment whose states have a natural encoding supplies it
// by implementing Featurizer too (FeaturizedEnv), which train and seqtrain
// use by default.
type Featurizer interface {
	// FeatureLen is the width of the one-hot feature space of states.
	FeatureLen() int
	// FeaturesPerState is the number of one-hot indices Features writes.
	FeaturesPerState() int
	// Features writes FeaturesPerState indices into [0, FeatureLen) for the
	// one-hot encoding of s; unused slots are -1.
	Features(s []int32, idx []int32)
}

// FeaturizedEnv is an environment that supplies its own one-hot state
// features.
type FeaturizedEnv interface {
	Env
	Featurizer
}
