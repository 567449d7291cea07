// Package agent is one GFlowNet as every family trains it: a policy
// model, its log Z (nil for objectives that learn state flows instead)
// and the Adam optimiser over both. A family's agent embeds it and adds
// its own scratch; the driver (package run) checkpoints it by name.
package agent
