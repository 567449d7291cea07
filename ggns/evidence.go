package ggns

import "math"

// evidence carries the nested-sampling moments of Skilling's volume
// statistics in log space, per cluster of live points, as PolyChord does
// (Handley et al. 2015, "PolyChord: next-generation nested sampling",
// appendix) and the reference's summaries.py: the global E[Z] and E[Z²],
// and for every live cluster p its volume moment E[X_p], E[Z·X_p],
// E[X_p·X_q] (a symmetric matrix, E[X_p²] on its diagonal) and its own
// evidence E[Z_p] with E[Z_p²] and E[Z_p·X_p] for its error. X_p is the
// prior volume of cluster p inside the current threshold; X = Σ_p X_p.
//
// Killing the lowest of the n live points of cluster p shrinks X_p by
// t ~ Beta(n, 1), independent of the past, so with E[t] = n/(n+1),
// E[t²] = n/(n+2), E[1−t] = 1/(n+1), E[(1−t)²] = 2/((n+1)(n+2)),
// E[t(1−t)] = n/((n+1)(n+2)) and Z' = Z + L·X_p·(1−t), X_p' = X_p·t:
//
//	E[Z']       = E[Z] + L·E[X_p]/(n+1)          (E[Z_p'] alike)
//	E[Z'²]      = E[Z²] + 2L·E[ZX_p]/(n+1) + 2L²·E[X_p²]/((n+1)(n+2))
//	E[Z'X_p']   = E[ZX_p]·n/(n+1) + L·E[X_p²]·n/((n+1)(n+2))
//	E[Z_p'²], E[Z_p'X_p']: the two lines above with Z_p for Z
//	E[Z'X_q]    = E[ZX_q] + L·E[X_pX_q]/(n+1)     (q ≠ p)
//	E[X_p']     = E[X_p]·n/(n+1)
//	E[X_p'²]    = E[X_p²]·n/(n+2)
//	E[X_p'X_q]  = E[X_pX_q]·n/(n+1)               (q ≠ p)
//
// With one cluster these are the single-cluster recursions, computed in
// the same order, so a run that never splits gives the same bits as one
// without clustering.
type evidence struct {
	logZ, logZ2 float64
	c           []clusterMoments
	logXX       [][]float64      // log E[X_p X_q]
	dead        []clusterMoments // the dead clusters, in order of death
	ids         int              // clusters created so far
}

// clusterMoments are the moments of one cluster.
type clusterMoments struct {
	id     int     // 0 for the first cluster, then in order of creation
	logZ   float64 // log E[Z_p], the evidence found in the cluster
	logZ2  float64 // log E[Z_p²]
	logZpX float64 // log E[Z_p·X_p]
	logZX  float64 // log E[Z·X_p], Z the global evidence
	logX   float64 // log E[X_p]
}

// newEvidence starts with one cluster holding the whole prior: X = 1,
// Z = 0.
func newEvidence() evidence {
	inf := math.Inf(-1)
	return evidence{logZ: inf, logZ2: inf,
		c:     []clusterMoments{{logZ: inf, logZ2: inf, logZpX: inf, logZX: inf}},
		logXX: [][]float64{{0}}, ids: 1}
}

// kill updates the moments for the death of a point of log-likelihood l
// out of the n live points of cluster p (counted before the kill) and
// returns its log weight log(L·E[X_p]/(n+1)) = log L + log E[ΔX].
func (e *evidence) kill(l float64, p, n int) float64 {
	fn := float64(n)
	c := &e.c[p]
	xx := e.logXX[p]
	w := l + c.logX - math.Log(fn+1)
	z2 := logAddExp(c.logZX+l+math.Log(2/(fn+1)), xx[p]+2*l+math.Log(2/((fn+1)*(fn+2))))
	e.logZ2 = logAddExp(e.logZ2, z2)
	for q := range e.c {
		if q != p {
			e.c[q].logZX = logAddExp(e.c[q].logZX, xx[q]+l-math.Log(fn+1))
		}
	}
	c.logZX = logAddExp(c.logZX+math.Log(fn/(fn+1)), xx[p]+l+math.Log(fn/((fn+1)*(fn+2))))
	e.logZ = logAddExp(e.logZ, w)
	c.logZ2 = logAddExp(c.logZ2, logAddExp(c.logZpX+l+math.Log(2/(fn+1)), xx[p]+2*l+math.Log(2/((fn+1)*(fn+2)))))
	c.logZpX = logAddExp(c.logZpX+math.Log(fn/(fn+1)), xx[p]+l+math.Log(fn/((fn+1)*(fn+2))))
	c.logZ = logAddExp(c.logZ, w)
	c.logX += math.Log(fn / (fn + 1))
	xx[p] += math.Log(fn / (fn + 2))
	for q := range e.c {
		if q != p {
			xx[q] += math.Log(fn / (fn + 1))
			e.logXX[q][p] = xx[q]
		}
	}
	return w
}

// split divides cluster p, whose live points fall into groups of sizes
// n_0, n_1, … (n in all), into clusters: group 0 keeps index p, groups
// 1, 2, … become new clusters appended in order. The volume fractions of
// the groups are Dirichlet(n_0, n_1, …) (the live points are uniform in
// X_p), so E[f_j] = n_j/n, E[f_j²] = n_j(n_j+1)/(n(n+1)) and
// E[f_j f_k] = n_j n_k/(n(n+1)); Z_p is shared as Z_p·f_j (the
// reference's convention). The global E[Z] and E[Z²] do not change. The
// new clusters get the next ids.
func (e *evidence) split(p int, sizes []int) {
	k := len(e.c)
	old := e.c[p]
	oldXX := make([]float64, k)
	copy(oldXX, e.logXX[p])
	idx := make([]int, len(sizes))
	idx[0] = p
	for j := 1; j < len(sizes); j++ {
		idx[j] = k + j - 1
	}
	k2 := k + len(sizes) - 1
	for q := range e.logXX {
		e.logXX[q] = append(e.logXX[q], make([]float64, k2-k)...)
	}
	for range k2 - k {
		e.logXX = append(e.logXX, make([]float64, k2))
	}
	e.c = append(e.c, make([]clusterMoments, k2-k)...)
	var n float64
	for _, s := range sizes {
		n += float64(s)
	}
	for j, a := range idx {
		nj := float64(sizes[j])
		f := math.Log(nj / n)
		f2 := math.Log(nj * (nj + 1) / (n * (n + 1)))
		id := old.id
		if j > 0 {
			id = e.ids
			e.ids++
		}
		e.c[a] = clusterMoments{id: id, logZ: old.logZ + f, logZ2: old.logZ2 + f2, logZpX: old.logZpX + f2,
			logZX: old.logZX + f, logX: old.logX + f}
		for kk, b := range idx {
			nk := float64(sizes[kk])
			if kk == j {
				e.logXX[a][a] = oldXX[p] + f2
			} else {
				e.logXX[a][b] = oldXX[p] + math.Log(nj*nk/(n*(n+1)))
			}
		}
		for q := range k {
			if q != p {
				e.logXX[a][q] = oldXX[q] + f
				e.logXX[q][a] = e.logXX[a][q]
			}
		}
	}
}

// drop removes cluster p, which has no live points left, recording its
// moments; clusters above p move down by one.
func (e *evidence) drop(p int) {
	e.dead = append(e.dead, e.c[p])
	e.c = append(e.c[:p], e.c[p+1:]...)
	e.logXX = append(e.logXX[:p], e.logXX[p+1:]...)
	for q := range e.logXX {
		e.logXX[q] = append(e.logXX[q][:p], e.logXX[q][p+1:]...)
	}
}

// logX is log E[X], X = Σ_p X_p the prior volume of the live clusters.
func (e *evidence) logX() float64 {
	if len(e.c) == 1 {
		return e.c[0].logX
	}
	m := math.Inf(-1)
	for _, c := range e.c {
		m = max(m, c.logX)
	}
	if math.IsInf(m, -1) {
		return m
	}
	var t float64
	for _, c := range e.c {
		t += math.Exp(c.logX - m)
	}
	return m + math.Log(t)
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
