// Package sequence provides MDPs that build fixed-length sequences over an
// alphabet of A tokens {0, …, A-1}, as discrete.Env implementations for any
// user-supplied log-reward on the finished sequences.
//
// Two MDPs are offered:
//
//   - Prepend-append (NewPrependAppend), the MDP of Shen et al. (2023) used by
//     the biochemical tasks of the adaptive-teacher paper: a state is a string
//     and a leaf flag, the root is the empty non-leaf string, and the forward
//     actions are Stop, Prepend c and Append c. Below the full length n only
//     Prepend and Append are valid; at length n only Stop is, and it makes the
//     leaf, so every trajectory has n+1 transitions. Children are de-duplicated
//     keeping the first occurrence in action order (Stop, Prepend 0..A-1,
//     Append 0..A-1): at the root Prepend c and Append c give the same child,
//     so only the A prepends are valid; elsewhere all 2A actions are valid
//     except, when the string is one token t repeated, Append t (it equals
//     Prepend t). The parents of a non-leaf string s are s[1:] and s[:-1]
//     (one parent when they coincide, that is when s is one repeated token
//     or has length 1); a leaf's only parent is its non-leaf copy. The
//     backward policy is uniform over these distinct parents.
//   - Append-only (NewAppend), the autoregressive MDP: the forward actions
//     are Stop and Append c; below length n the A appends are valid, at
//     length n only Stop, which makes the leaf. It keeps the leaf step so
//     that both MDPs have the same states, terminal states and features (a
//     replay buffer or a reward works with either); every state has one
//     parent, so P_B is 1.
//
// Action numbering. Prepend-append: 0 is Stop, 1+c is Prepend c, 1+A+c is
// Append c (NumActions 1+2A); backward actions are 0 UnStop (leaf to its
// non-leaf copy), 1 DelFirst (s to s[1:]) and 2 DelLast (s to s[:-1]). When
// the two deletions give the same parent only DelFirst is valid, so that
// BackStep always returns a forward action that is valid (not a masked
// duplicate) in the parent. Append-only: 0 is Stop and 1+c is Append c;
// backward actions are 0 UnStop and 1 DelLast.
//
// State layout: n+2 int32 words [length, leaf, t_0, …, t_{n-1}], the tokens
// left-aligned and the unused slots -1, so that equal states have equal
// words. Tokens returns the token slice of a state and SetTerminal writes
// the leaf of a given sequence.
//
// Features are the reference's one-hot encoding, token c at position i being
// index i·A + c (FeatureLen n·A, FeaturesPerState n, -1 for the empty
// positions); the root has none. A leaf has the features of its non-leaf copy.
//
// Terminal keys (discrete.TerminalKeyer) are the sequence read as a base-A
// number, the first token most significant, so key order is lexicographic
// order. They exist only when A^n ≤ 2^64 (KeyFits); TerminalKey panics
// otherwise.
package sequence
