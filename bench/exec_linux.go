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
