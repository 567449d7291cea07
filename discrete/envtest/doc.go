// Package envtest checks that a discrete.Env keeps the promises the
// GFlowNet core relies on, the way gonum's graph/testgraph checks graph
// implementations. A user calls Check from a test of their own environment,
// or Run anywhere else (Run does not need package testing):
//
//	func TestConformance(t *testing.T) {
//		env, err := myenv.New(3, 4)
//		if err != nil {
//			t.Fatal(err)
//		}
//		envtest.Check(t, env, envtest.Options{Terminals: 81})
//	}
//
// States are explored from Init. When at most Options.MaxStates states are
// reachable, every one of them is visited breadth-first and checked, and the
// DAG as a whole is checked too (acyclicity, reachability of every parent,
// the number of terminal states, the numbering of a metrics.Enumerable).
// Otherwise the states met before the budget ran out are checked, and then
// Options.Walks random walks, each forward from Init to a terminal state with
// uniformly chosen valid actions and back to Init with uniformly chosen
// backward actions, check every state they meet.
//
// At every state s met, the checks are, by Property:
//
//   - Dimensions: StateLen, NumActions and NumBackActions are positive,
//     FeatureLen and FeaturesPerState are not negative.
//   - InitState: Init writes every word, the same each time; IsInitial of
//     its state is true and IsTerminal false.
//   - FeatureIndices (when the environment is a discrete.Featurizer):
//     Features writes FeaturesPerState indices, each in [0, FeatureLen) or
//     -1, and gives equal indices for equal states.
//   - ForwardMasks: a non-terminal state has a valid forward action, and
//     ForwardMask writes every entry (the samplers reuse mask buffers).
//   - Steps: Step of every valid action gives a child that is not initial,
//     reports terminal exactly when IsTerminal of the child is true, and
//     leaves the parent it was copied from intact. No method other than
//     Step and BackStep modifies the state it is given.
//   - DistinctChildren: distinct valid actions lead to distinct children;
//     an MDP in which two actions lead to the same child must mask all but
//     one (as the prepend-append sequence MDP does).
//   - BackwardMasks: at a non-initial state BackwardMask marks as many
//     actions as it returns, at least one, and writes every entry; at a
//     parent s, BackwardCount(s, a) equals the count of the child that a
//     leads to.
//   - Inverse: forward and backward steps invert each other. For the child
//     c of s by a, one backward action of c leads back to s and BackStep
//     returns a; every backward action of c leads to a non-terminal parent
//     p and returns a forward action f valid in p, with Step(p, f) = c.
//   - PBSum: the uniform backward policy sums to one: the parents that the
//     backward actions of a state lead to are distinct, and Σ 1/BackwardCount
//     over them, the P_B the training objectives use, is 1.
//   - Termination: forward and backward walks end (at a terminal state, at
//     the initial state) within Options.MaxSteps steps and never revisit a
//     state; an exhaustive search finds no cycle.
//   - Reachability: in an exhaustive search, every parent that BackStep
//     gives is reachable from Init.
//   - Terminals: TerminalKey (of a discrete.TerminalKeyer) gives equal keys
//     for equal terminal states and distinct keys for distinct ones; an
//     exhaustive search counts Options.Terminals terminal states when that
//     is set.
//   - Rewards: LogReward of each terminal state succeeds and is finite, and
//     a batch of terminal states gets the log-rewards they get one by one.
//   - Enumeration: in an exhaustive search of an environment that is a
//     metrics.Enumerable, NumStates and NumTerminals count the reachable
//     states, State/StateIndex and Terminal/TerminalIndex are inverse
//     bijections onto them, and StateIndex increases along every action.
//
// A method that panics fails the property being checked when it was called.
// Every message starts with "envtest: ", the property, and the state where
// the check failed, printed by Options.Format (its words by default), and
// names the actions involved.
package envtest
