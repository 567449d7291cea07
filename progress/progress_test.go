package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestPlainOutputEveryTenth(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, "train", 100, false)
	t0 := time.Unix(0, 0)
	b.start = t0
	b.Now = func() time.Time { return t0.Add(10 * time.Second) }
	for i := 1; i <= 100; i++ {
		b.Update(i, "modes 3")
	}
	b.Finish()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// The first update, then one line per tenth.
	if len(lines) != 11 {
		t.Fatalf("%d lines, want 11:\n%s", len(lines), buf.String())
	}
	if want := "train [===>                    ] 20/100  20% 2.0 it/s ETA 40.0s | modes 3"; lines[2] != want {
		t.Errorf("line:\n%q\nwant\n%q", lines[2], want)
	}
	if want := "train [========================] 100/100 100% 10.0 it/s ETA 0.0s | modes 3"; lines[10] != want {
		t.Errorf("last line:\n%q\nwant\n%q", lines[10], want)
	}
}

func TestTerminalRedrawsInPlace(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, "x", 10, true)
	now := time.Unix(0, 0)
	b.Now = func() time.Time { now = now.Add(200 * time.Millisecond); return now }
	for i := 1; i <= 10; i++ {
		b.Update(i, "")
	}
	b.Finish()
	if strings.Count(buf.String(), "\r") != 10 || !strings.HasSuffix(buf.String(), "\n") {
		t.Errorf("output %q", buf.String())
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		5200 * time.Millisecond: "5.2s", 184 * time.Second: "3m04s", 3720 * time.Second: "1h02m",
		time.Second: "1.0s", 430 * time.Millisecond: "430ms", 1234 * time.Microsecond: "1.2ms", 120 * time.Microsecond: "0.12ms", 0: "0.0s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestResumedSlowBar: a bar started at 40 of 100 (a resumed run) counts
// its rate from there, in seconds per iteration when below one per second.
func TestResumedSlowBar(t *testing.T) {
	var buf strings.Builder
	now := time.Unix(0, 0)
	b := New(&buf, "train", 100, false)
	b.Now = func() time.Time { return now }
	b.start = now
	b.From(40)
	now = now.Add(25 * time.Second)
	b.Update(50, "ELBO -1.2")
	if want := "train [===========>            ] 50/100  50% 2.50 s/it ETA 2m05s | ELBO -1.2\n"; buf.String() != want {
		t.Errorf("line %q, want %q", buf.String(), want)
	}
}
