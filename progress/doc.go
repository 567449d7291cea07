// Package progress draws a one-line progress bar for long work: done/total,
// percentage, rate, ETA and caller-supplied fields (modes found, loss). On a
// terminal it redraws in place at most ten times a second; elsewhere (CI
// logs, files) it prints a plain line every tenth of the work.
package progress
