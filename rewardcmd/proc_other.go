//go:build !unix

package rewardcmd

import (
	"os/exec"
	"runtime"
)

// shellCommand runs command with cmd /C on Windows and sh -c elsewhere.
func shellCommand(command string) *exec.Cmd {
	if runtime.GOOS == "windows" {
		return exec.Command("cmd", "/C", command)
	}
	return exec.Command("sh", "-c", command)
}

// killGroup kills the program.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
