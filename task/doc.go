// Package task names the environments gfn can train on and builds them from
// a serialisable Spec, so that a checkpoint can rebuild its environment.
package task
