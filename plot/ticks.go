package plot

import (
	"math"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
)

// Tick labels are plain: every labelled tick of an axis is either a
// decimal number ("0.002", "15000") or, on a log axis spanning decades, a
// power of ten ("10^{−4}"), never a mix and never "1.7e-05". Where the
// decimals would be very small or very large, the labels leave out a
// common factor ×10^k that the axis label states.

// pow10 is the label of 10^k.
func pow10(k int) string { return "10^{" + minus(strconv.Itoa(k)) + "}" }

// minus writes a number's sign as a minus sign.
func minus(s string) string { return strings.ReplaceAll(s, "-", "−") }

// factorSuffix is what an axis label gains when its labels leave out
// the factor 10^k.
func factorSuffix(k int) string {
	if k == 0 {
		return ""
	}
	return " (×" + pow10(k) + ")"
}

// inRange keeps the ticks within [lo, hi] (a tolerance for rounding).
func inRange(ts []gplot.Tick, lo, hi float64) []gplot.Tick {
	eps := 1e-9 * (hi - lo)
	out := ts[:0]
	for _, t := range ts {
		if t.Value >= lo-eps && t.Value <= hi+eps {
			out = append(out, t)
		}
	}
	return out
}

// linearTicks are ticks over [lo, hi] at the multiples of a round step
// (1, 2, 2.5 or 5 times a power of ten) that gives three to six labelled
// ticks, with unlabelled ones between, labelled by labelDecimals.
func linearTicks(lo, hi float64) ([]gplot.Tick, int) {
	if !(hi > lo) {
		return nil, 0
	}
	span := hi - lo
	mag := math.Pow(10, math.Floor(math.Log10(span/6)))
	var step, minor float64
	for _, m := range []struct{ step, minors float64 }{{1, 5}, {2, 4}, {2.5, 5}, {5, 5}, {10, 5}} {
		step, minor = m.step*mag, m.step*mag/m.minors
		if span/step <= 6 {
			break
		}
	}
	var ts []gplot.Tick
	for i := math.Ceil(lo/minor - 1e-9); i*minor <= hi+1e-9*span; i++ {
		v := i * minor
		if math.Abs(v) < 1e-12*span {
			v = 0
		}
		t := gplot.Tick{Value: v}
		if r := v / step; math.Abs(r-math.Round(r)) < 1e-6 {
			t.Label = "x" // labelled below
		}
		ts = append(ts, t)
	}
	return ts, labelDecimals(ts, true)
}

// labelDecimals relabels the labelled ticks as decimals with just enough
// digits to tell them apart and to say each value exactly (as many for
// every label when uniform, as on a linear axis: "0.5 1.0 1.5"), leaving
// out a factor 10^k when the largest is below 10^{−3} or at least 10^5.
// It returns k.
func labelDecimals(ts []gplot.Tick, uniform bool) int {
	big := 0.0
	for _, t := range ts {
		if t.Label != "" {
			big = math.Max(big, math.Abs(t.Value))
		}
	}
	k := 0
	if big > 0 {
		if e := int(math.Floor(math.Log10(big))); e < -3 || e >= 5 {
			k = e
		}
	}
	scale := math.Pow(10, float64(k))
	for prec := 0; prec <= 12; prec++ {
		seen := map[string]bool{}
		ok := true
		for i, t := range ts {
			if t.Label == "" {
				continue
			}
			v := t.Value / scale
			p := prec
			if !uniform {
				p = min(prec, decimals(v))
			}
			l := strconv.FormatFloat(v, 'f', p, 64)
			back, err := strconv.ParseFloat(l, 64)
			exact := err == nil && math.Abs(back-v) <= 1e-9*math.Max(1, math.Abs(v))
			if back == 0 {
				l = "0" // not "-0" or "0.00"
			}
			ok = ok && exact && !seen[l]
			seen[l] = true
			ts[i].Label = l
		}
		if ok {
			break
		}
	}
	for i := range ts {
		ts[i].Label = minus(ts[i].Label)
	}
	return k
}

// logTicks are the ticks of a log axis over [lo, hi] (0 < lo < hi). Over
// 2.5 decades or more the labelled ticks are powers of ten (every second
// or third beyond eight decades), with the multiples 2…9 between them
// unlabelled up to six decades; k is 0. Over fewer decades they are the
// multiples 1, 2 and 5 of powers of ten in range (all of 1…9 when that
// gives fewer than three, gonum's linear ticks when that still gives
// fewer than two), labelled by labelDecimals, which returns k.
func logTicks(lo, hi float64) ([]gplot.Tick, int) {
	if !(lo > 0) || !(hi > lo) {
		return nil, 0
	}
	d0, d1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	decades := math.Log10(hi / lo)
	var ts []gplot.Tick
	if decades >= 2.5 {
		every := 1
		if decades > 8 {
			every = int(math.Ceil(decades / 6))
		}
		for j := d0; j <= d1; j++ {
			v := math.Pow(10, float64(j))
			if j%every == 0 {
				ts = append(ts, gplot.Tick{Value: v, Label: pow10(j)})
			}
			if decades <= 6 {
				for m := 2; m <= 9; m++ {
					ts = append(ts, gplot.Tick{Value: float64(m) * v})
				}
			}
		}
		return inRange(ts, lo, hi), 0
	}
	for _, mults := range [][]int{{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		ts = ts[:0]
		labelled := 0
		for j := d0; j <= d1; j++ {
			for m := 1; m <= 9; m++ {
				v := float64(m) * math.Pow(10, float64(j))
				if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
					continue
				}
				major := false
				for _, x := range mults {
					major = major || x == m
				}
				t := gplot.Tick{Value: v}
				if major {
					t.Label = "x" // labelled below
					labelled++
				}
				ts = append(ts, t)
			}
		}
		if labelled >= 3 {
			return ts, labelDecimals(ts, false)
		}
	}
	if len(ts) >= 2 {
		return ts, labelDecimals(ts, false)
	}
	return linearTicks(lo, hi)
}

// decimals is the number of decimals v needs, rounded to 12 significant
// digits ("0.002": 3).
func decimals(v float64) int {
	l := strconv.FormatFloat(v, 'g', 12, 64)
	f, err := strconv.ParseFloat(l, 64)
	if err != nil {
		return 12
	}
	l = strconv.FormatFloat(f, 'f', -1, 64)
	if i := strings.IndexByte(l, '.'); i >= 0 {
		return len(l) - i - 1
	}
	return 0
}
