// Package cpusim lets tests see the library as it runs on a CPU without
// some of this one's features, to exercise the refusal paths of callers
// on a machine that has them.
package cpusim

import "sync/atomic"

// NoBF16, while set, makes nn.Precision.Check (and so every SetPrecision
// and family that checks a precision) refuse nn.BF16 as on a CPU without
// AMX-BF16 and AVX512_BF16. GemmBF16 itself is unaffected.
var NoBF16 atomic.Bool
