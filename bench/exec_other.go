//go:build !linux

package bench

import "os/exec"

// killWithParent does nothing: only Linux has a parent-death signal.
func killWithParent(cmd *exec.Cmd) {}

// stopGently kills cmd's process: other systems have no SIGTERM to send.
func stopGently(cmd *exec.Cmd) error { return cmd.Process.Kill() }
