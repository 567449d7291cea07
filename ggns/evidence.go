package ggns

import "math"

// evidence carries the nested-sampling moments of Skilling's volume
// statistics in log space, as PolyChord does (Handley et al. 2015,
// appendix) and the reference's summaries.py for one cluster: E[Z],
// E[Z²], E[ZX], E[X] and E[X²], X the prior volume inside the current
// threshold. Killing the lowest of n live points shrinks X by t ~ Beta(n, 1),
// independent of the past, so with E[t] = n/(n+1), E[t²] = n/(n+2),
// E[1−t] = 1/(n+1), E[(1−t)²] = 2/((n+1)(n+2)), E[t(1−t)] = n/((n+1)(n+2))
// and Z' = Z + L·X·(1−t), X' = X·t:
//
//	E[Z']   = E[Z] + L·E[X]/(n+1)
//	E[Z'²]  = E[Z²] + 2L·E[ZX]/(n+1) + 2L²·E[X²]/((n+1)(n+2))
//	E[Z'X'] = E[ZX]·n/(n+1) + L·E[X²]·n/((n+1)(n+2))
//	E[X']   = E[X]·n/(n+1)
//	E[X'²]  = E[X²]·n/(n+2)
type evidence struct {
	logZ, logZ2, logZX, logX, logX2 float64
}

func newEvidence() evidence {
	inf := math.Inf(-1)
	return evidence{logZ: inf, logZ2: inf, logZX: inf}
}

// kill updates the moments for the death of a point of log-likelihood l
// out of n live points (counted before the kill) and returns its log
// weight log(L·E[X]/(n+1)) = log L + log E[ΔX].
func (e *evidence) kill(l float64, n int) float64 {
	fn := float64(n)
	w := l + e.logX - math.Log(fn+1)
	z2 := logAddExp(e.logZX+l+math.Log(2/(fn+1)), e.logX2+2*l+math.Log(2/((fn+1)*(fn+2))))
	e.logZ2 = logAddExp(e.logZ2, z2)
	e.logZX = logAddExp(e.logZX+math.Log(fn/(fn+1)), e.logX2+l+math.Log(fn/((fn+1)*(fn+2))))
	e.logZ = logAddExp(e.logZ, w)
	e.logX += math.Log(fn / (fn + 1))
	e.logX2 += math.Log(fn / (fn + 2))
	return w
}

// meanSD returns the mean and standard deviation of log Z for a log-normal
// Z with the tracked first two moments: 2·log E[Z] − ½·log E[Z²] and
// √(log E[Z²] − 2·log E[Z]).
func (e *evidence) meanSD() (mean, sd float64) {
	v := e.logZ2 - 2*e.logZ
	return 2*e.logZ - 0.5*e.logZ2, math.Sqrt(max(v, 0))
}

// logAddExp is log(eᵃ + eᵇ), exact for infinite arguments.
func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(a, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}
