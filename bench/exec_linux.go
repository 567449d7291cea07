package bench

import (
	"os/exec"
	"syscall"
)

// killWithParent has the kernel kill cmd's process when its parent dies.
func killWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// stopGently asks cmd's process to stop as Ctrl-C would: a training run
// writes a checkpoint and exits (gfn train handles SIGTERM).
func stopGently(cmd *exec.Cmd) error { return cmd.Process.Signal(syscall.SIGTERM) }
