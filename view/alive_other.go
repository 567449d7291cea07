//go:build !unix

package view

// alive cannot probe a process here: a run with a RunningFile is taken
// to be running.
func alive(pid int) bool { return true }
