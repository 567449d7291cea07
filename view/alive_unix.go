//go:build unix

package view

import (
	"errors"

	"golang.org/x/sys/unix"
)

// alive reports whether process pid exists (signal 0 probes it; EPERM:
// it exists, another user's).
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
