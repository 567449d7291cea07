package procstat

import (
	"math"
	"runtime"
	"testing"
)

func TestParseVmHWM(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{
		{"Name:\tgfn\nVmPeak:\t  99 kB\nVmHWM:\t   2048 kB\nVmRSS:\t 1024 kB\n", 2},
		{"VmHWM:\t1536 kB", 1.5},
		{"Name:\tgfn\n", math.NaN()},
		{"VmHWM:\tmany kB\n", math.NaN()},
	} {
		got := parseVmHWM(c.in)
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%q: %v, want %v", c.in, got, c.want)
		}
	}
}

// On Linux the peak covers at least a buffer this process just touched.
func TestPeakRSSGrows(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("VmHWM is Linux's")
	}
	ResetPeakRSS() // the peak is then the current resident set, where the kernel allows it
	before := PeakRSSMiB()
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = byte(i)
	}
	after := PeakRSSMiB()
	runtime.KeepAlive(b)
	if !(after >= before+60) {
		t.Errorf("peak RSS %v MiB before touching 64 MiB, %v after", before, after)
	}
}
