package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Bar is a progress bar. The zero value is not usable; call New.
type Bar struct {
	w      io.Writer
	total  int
	tty    bool
	label  string
	start  time.Time
	last   time.Time
	nextPc int
	base   int // units already done when the bar started (a resumed run)
	// Now is the clock (replaceable in tests).
	Now func() time.Time
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// New starts a bar for total units of work, drawn on w.
func New(w io.Writer, label string, total int, tty bool) *Bar {
	b := &Bar{w: w, total: max(total, 1), tty: tty, label: label, Now: time.Now}
	b.start = b.Now()
	return b
}

// From tells the bar that done units were complete when it started (a
// resumed run), so that its rate and ETA count only the work it timed.
func (b *Bar) From(done int) {
	b.base = done
	b.nextPc = done*100/b.total - (done*100/b.total)%10 + 10
}

// Update reports that done units are complete; fields is extra text.
func (b *Bar) Update(done int, fields string) {
	now := b.Now()
	if b.tty {
		if now.Sub(b.last) < 100*time.Millisecond && done < b.total {
			return
		}
		b.last = now
		fmt.Fprintf(b.w, "\r%s\x1b[K", b.line(done, fields, now))
		return
	}
	pc := done * 100 / b.total
	if pc < b.nextPc && done < b.total {
		return
	}
	b.nextPc = pc - pc%10 + 10
	fmt.Fprintln(b.w, b.line(done, fields, now))
}

// Finish ends the bar's line.
func (b *Bar) Finish() {
	if b.tty {
		fmt.Fprintln(b.w)
	}
}

func (b *Bar) line(done int, fields string, now time.Time) string {
	const width = 24
	el := now.Sub(b.start)
	fill := done * width / b.total
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", width-fill)
	if fill < width && fill > 0 {
		bar = bar[:fill-1] + ">" + bar[fill:]
	}
	rate, eta := "", "?"
	if done > b.base && el > 0 {
		r := float64(done-b.base) / el.Seconds()
		// Slow iterations read better as seconds per iteration.
		if r < 1 {
			rate = fmt.Sprintf(" %.2f s/it", 1/r)
		} else {
			rate = fmt.Sprintf(" %.1f it/s", r)
		}
		eta = Duration(time.Duration(float64(b.total-done) / r * float64(time.Second)))
	}
	s := fmt.Sprintf("%s [%s] %d/%d %3d%%%s ETA %s", b.label, bar, done, b.total, done*100/b.total, rate, eta)
	if fields != "" {
		s += " | " + fields
	}
	return s
}

// Duration formats d as 1h02m, 3m04s, 5.2s or, under a second, 43ms or
// 0.12ms (a short run's times are not all "0.0s"); 0 is 0.0s.
func Duration(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d >= time.Second || d <= 0:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2gms", float64(d)/float64(time.Millisecond))
	}
}
