// Package procstat reads the current process's resource use from the
// operating system, for the summaries of runs and benchmarks.
package procstat

import (
	"math"
	"os"
	"strconv"
	"strings"
)

// PeakRSSMiB is the process's peak resident set size in MiB (VmHWM of
// /proc/self/status on Linux), or NaN where the system does not say.
func PeakRSSMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return math.NaN()
	}
	return parseVmHWM(string(b))
}

// parseVmHWM finds the "VmHWM:  1234 kB" line of a status file.
func parseVmHWM(status string) float64 {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				return math.NaN()
			}
			return kb / 1024
		}
	}
	return math.NaN()
}

// ResetPeakRSS resets the peak resident set that PeakRSSMiB reports
// (Linux ≥ 4.0), reporting whether it could.
func ResetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}
