//go:build !linux

package bench

import "os/exec"

// killWithParent does nothing: only Linux has a parent-death signal.
func killWithParent(cmd *exec.Cmd) {}
