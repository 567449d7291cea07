package run

import "time"

// Clock is a run's wall-clock time across resumes: Before seconds spent
// by the run before Start (its earlier sessions, from the checkpoint; 0
// for a fresh run) plus the time since Start.
type Clock struct {
	Start  time.Time
	Before float64
}

// Seconds is Before plus the seconds elapsed since Start.
func (c Clock) Seconds() float64 { return c.Before + time.Since(c.Start).Seconds() }

// IterStats summarises the times of a run's iterations in milliseconds:
// the mean over the first k, over the last k, and over all n of them,
// k = max(⌊n/10⌋, 1) (the first and last tenth, at least one iteration);
// zeros when n = 0. d holds durations or, as float64, milliseconds (as
// diffusion's checkpoints store them). Each sum is taken in d's type, in
// order (integer nanoseconds for durations), and only then turned into
// milliseconds and divided by its count.
func IterStats[T time.Duration | float64](d []T) (early, late, mean float64) {
	if len(d) == 0 {
		return
	}
	k := max(len(d)/10, 1)
	return meanMs(d[:k]), meanMs(d[len(d)-k:]), meanMs(d)
}

// meanMs is the mean of d in milliseconds (d not empty).
func meanMs[T time.Duration | float64](d []T) float64 {
	var sum T
	for _, x := range d {
		sum += x
	}
	switch s := any(sum).(type) {
	case time.Duration:
		return s.Seconds() * 1000 / float64(len(d))
	case float64:
		return s / float64(len(d))
	}
	panic("unreachable")
}
