package ggns

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gfngo/gfn/energy"
)

// TestKNNClustersByHand checks the reference's k-nearest-neighbour rule on
// points 0, 1, 2, 10, 11, 12 of a line (d = 1, clusters must exceed 2
// points), worked out by hand. k = 1 (neighbours 0→1, 1→0 (tie with 2, by
// index), 2→1, 10→11, 11→10, 12→11): from 0 the walk reaches {0, 1}; 2
// starts its own cluster since its link leads into a finished one; then
// {10, 11} and {12}: sizes [2 1 2 1]. k = 2: [3 3]. k = 3: 0's third
// neighbour is 10, so [6]; k = 4: [6] again, larger than 2: stop.
func TestKNNClustersByHand(t *testing.T) {
	x := []float32{0, 1, 2, 10, 11, 12}
	for _, tc := range []struct {
		maxK   int
		count  int
		labels []int
	}{
		{2, 4, []int{0, 0, 1, 2, 2, 3}}, // k ≤ 1: no stable k, the last partition
		{3, 2, []int{0, 0, 0, 1, 1, 1}}, // k ≤ 2: the last partition, [3 3]
		{5, 1, []int{0, 0, 0, 0, 0, 0}}, // stops at k = 4
		{1, 1, []int{0, 0, 0, 0, 0, 0}}, // too small to cluster
	} {
		c, l := knnClusters(x, 1, tc.maxK)
		if c != tc.count || !reflect.DeepEqual(l, tc.labels) {
			t.Errorf("maxK %d: %d clusters %v, want %d %v", tc.maxK, c, l, tc.count, tc.labels)
		}
	}
}

// TestKNNClustersBlobs: well-separated Gaussian blobs of unequal sizes, in
// shuffled order, come out as exactly the blobs; one blob stays one
// cluster.
func TestKNNClustersBlobs(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, tc := range []struct {
		d     int
		sizes []int
	}{{2, []int{40, 25, 60}}, {5, []int{30, 30, 50, 40}}, {3, []int{120}}} {
		var x []float32
		var truth []int
		for b, n := range tc.sizes {
			for range n {
				for j := range tc.d {
					c := 0.0
					if j == b%tc.d {
						c = 8 * float64(1+b/tc.d)
					}
					x = append(x, float32(c+0.5*rng.NormFloat64()))
				}
				truth = append(truth, b)
			}
		}
		n := len(truth)
		for i := n - 1; i > 0; i-- { // shuffle the rows
			k := rng.IntN(i + 1)
			truth[i], truth[k] = truth[k], truth[i]
			for j := range tc.d {
				x[i*tc.d+j], x[k*tc.d+j] = x[k*tc.d+j], x[i*tc.d+j]
			}
		}
		c, l := knnClusters(x, tc.d, n/2)
		if c != len(tc.sizes) {
			t.Errorf("d=%d sizes %v: %d clusters", tc.d, tc.sizes, c)
			continue
		}
		m := map[int]int{} // found → true, a bijection if the partition matches
		for i := range n {
			if b, ok := m[l[i]]; ok && b != truth[i] {
				t.Fatalf("d=%d: cluster %d holds points of blobs %d and %d", tc.d, l[i], b, truth[i])
			}
			m[l[i]] = truth[i]
		}
		if len(m) != c || l[0] != 0 {
			t.Errorf("d=%d: labels %v", tc.d, l)
		}
	}
}

// TestEvidenceSplitMoments checks the per-cluster moment recursions and
// the split against a Monte Carlo simulation of the volumes: kills shrink
// the volume of their cluster by t ~ Beta(n, 1); a split divides it by
// Dirichlet(n_0, n_1, …) fractions (Gamma draws normalised), and the
// cluster's evidence with it.
func TestEvidenceSplitMoments(t *testing.T) {
	type ev struct {
		split []int // split cluster p into these sizes
		p, n  int   // else kill in cluster p with n live points
		l     float64
	}
	seq := []ev{
		{p: 0, n: 8, l: -3}, {p: 0, n: 7, l: -2.5}, {p: 0, n: 8, l: -2},
		{split: []int{3, 5}},
		{p: 1, n: 5, l: -1.5}, {p: 0, n: 3, l: -1.2}, {p: 1, n: 4, l: -1}, {p: 1, n: 5, l: -0.8},
		{split: []int{2, 3}, p: 1},
		{p: 2, n: 3, l: -0.5}, {p: 0, n: 2, l: -0.4}, {p: 1, n: 2, l: -0.2}, {p: 2, n: 2, l: 0}, {p: 0, n: 1, l: 0.1},
		{p: 1, n: 1, l: 0.3}, {p: 2, n: 1, l: 0.5},
	}
	e := newEvidence()
	for _, s := range seq {
		if s.split != nil {
			e.split(s.p, s.split)
		} else {
			e.kill(s.l, s.p, s.n)
		}
	}
	rng := rand.New(rand.NewPCG(1, 3))
	const reps = 400000
	var sz, sz2 float64
	var szp, szp2, sx [3]float64
	gamma := func(k int) float64 { // Gamma(k, 1), k integer
		var g float64
		for range k {
			g -= math.Log(1 - rng.Float64())
		}
		return g
	}
	for range reps {
		x := []float64{1}
		zp := []float64{0}
		var z float64
		var xEnd []float64
		for _, s := range seq {
			if s.split != nil {
				g := make([]float64, len(s.split))
				var tot float64
				for j, k := range s.split {
					g[j] = gamma(k)
					tot += g[j]
				}
				x0, z0 := x[s.p], zp[s.p]
				x[s.p], zp[s.p] = x0*g[0]/tot, z0*g[0]/tot
				for j := 1; j < len(g); j++ {
					x = append(x, x0*g[j]/tot)
					zp = append(zp, z0*g[j]/tot)
				}
				continue
			}
			tk := math.Pow(rng.Float64(), 1/float64(s.n))
			dz := math.Exp(s.l) * x[s.p] * (1 - tk)
			z += dz
			zp[s.p] += dz
			x[s.p] *= tk
			if s.l == -0.5 { // after the second split's first kill
				xEnd = append(xEnd[:0], x...)
			}
		}
		sz += z
		sz2 += z * z
		for p := range 3 {
			szp[p] += zp[p]
			szp2[p] += zp[p] * zp[p]
			sx[p] += xEnd[p]
		}
	}
	near := func(what string, got, want, tol float64) {
		if math.Abs(got/want-1) > tol {
			t.Errorf("%s = %.6g, simulation %.6g", what, got, want)
		}
	}
	near("E[Z]", math.Exp(e.logZ), sz/reps, 0.005)
	near("E[Z²]", math.Exp(e.logZ2), sz2/reps, 0.01)
	if len(e.dead) != 0 {
		t.Fatalf("clusters died: %d", len(e.dead))
	}
	for p, c := range e.c {
		near("E[Z_p]", math.Exp(c.logZ), szp[c.id]/reps, 0.01)
		near("E[Z_p²]", math.Exp(c.logZ2), szp2[c.id]/reps, 0.02)
		_ = p
	}
	// Volumes after the kill at l = −0.5: replay the sequence to there.
	e2 := newEvidence()
	for _, s := range seq {
		if s.split != nil {
			e2.split(s.p, s.split)
		} else {
			e2.kill(s.l, s.p, s.n)
		}
		if s.l == -0.5 {
			break
		}
	}
	for p, c := range e2.c {
		near("E[X_p]", math.Exp(c.logX), sx[p]/reps, 0.01)
	}
	var tot float64
	for _, c := range e.c {
		tot += math.Exp(c.logZ)
	}
	near("Σ E[Z_p]", tot, math.Exp(e.logZ), 1e-12)
}

// mix2 is the test likelihood of two isotropic Gaussians in d dimensions,
// R(x) = Σ_c w_c·N(x; μ_c, s_c²I), whose integral over a box holding both
// (to 5 standard deviations or more) is w_0 + w_1 = 1.
type mix2 struct {
	d  int
	mu [2][]float64
	s  [2]float64
	w  [2]float64
}

func (m *mix2) Dim() int { return m.d }

func (m *mix2) LogReward(x []float32, out []float64) error {
	return m.GradLogReward(x, out, make([]float64, len(x)))
}

func (m *mix2) GradLogReward(x []float32, logR, grad []float64) error {
	d := m.d
	n, err := energy.Rows(d, x, logR)
	if err != nil {
		return err
	}
	for b := range n {
		row := x[b*d : (b+1)*d]
		var lc [2]float64
		for c := range 2 {
			var q float64
			for j, v := range row {
				r := float64(v) - m.mu[c][j]
				q += r * r
			}
			lc[c] = math.Log(m.w[c]) - q/(2*m.s[c]*m.s[c]) - float64(d)*math.Log(math.Sqrt(2*math.Pi)*m.s[c])
		}
		l := logAddExp(lc[0], lc[1])
		logR[b] = l
		for j, v := range row {
			var g float64
			for c := range 2 {
				g -= math.Exp(lc[c]-l) * (float64(v) - m.mu[c][j]) / (m.s[c] * m.s[c])
			}
			grad[b*d+j] = g
		}
	}
	return nil
}

// TestTwoModes runs GGNS with clustering on two well-separated Gaussian
// modes in 2-D, balanced (weights ½, ½) and unbalanced (0.3, 0.7, widths
// 0.15 and 0.3), over repeated seeds. Each run must split the modes
// into clusters; log Ẑ must lie within 4 of its own error estimates of
// log Z = 0 and the mean within 3 standard errors; the evidence of each
// mode (its clusters' ClusterLogZ, the clusters told apart by where their
// dead points lie) must give the mode's weight within 4 of its estimated
// error, and the posterior weight of the mode (the dead points' weights)
// must average to it. The no-clustering runs are logged for comparison.
func TestTwoModes(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *mix2
	}{
		{"balanced", &mix2{d: 2, mu: [2][]float64{{2.5, 2.5}, {-2.5, -2.5}}, s: [2]float64{0.2, 0.2}, w: [2]float64{0.5, 0.5}}},
		{"unbalanced", &mix2{d: 2, mu: [2][]float64{{2.5, 2}, {-2, -2.5}}, s: [2]float64{0.15, 0.3}, w: [2]float64{0.3, 0.7}}},
	} {
		const runs = 16
		for _, off := range []bool{false, true} {
			var sum, errSum, fSum, fSum2, fErrSum float64
			for seed := range runs {
				opt := Options{Lower: -5, Upper: 5, Live: 50, Tol: 0.01, StepSize: 1, Samples: 100, NoClustering: off}
				r, err := Run(tc.m, opt, rand.New(rand.NewPCG(uint64(seed), 8)))
				if err != nil {
					t.Fatal(err)
				}
				// The posterior weight of mode 0 (the half-plane x₀ + x₁ > 0).
				var f float64
				for i, lw := range r.DeadLogW {
					if r.Dead[2*i]+r.Dead[2*i+1] > 0 {
						f += math.Exp(lw)
					}
				}
				fSum += f
				fSum2 += f * f
				sum += r.LogZ
				errSum += r.LogZErr
				if off {
					continue
				}
				if dz := r.LogZ; math.Abs(dz) > 4*r.LogZErr {
					t.Errorf("%s seed %d: log Ẑ = %.3f ± %.3f, want 0", tc.name, seed, r.LogZ, r.LogZErr)
				}
				if r.Splits == 0 {
					t.Errorf("%s seed %d: the modes were not split (%d clusterings)", tc.name, seed, r.Clusterings)
					continue
				}
				// Mode evidence from the clusters: a cluster belongs to the
				// mode where its last dead point (highest log R) lies.
				last := map[int]int{}
				for i, c := range r.DeadCluster {
					last[c] = i
				}
				var z [2]float64
				var v [2]float64 // Σ Z_p²·err_p²: the variance of Σ Z_p, clusters independent
				for c, i := range last {
					mode := 1
					if r.Dead[2*i]+r.Dead[2*i+1] > 0 {
						mode = 0
					}
					zp := math.Exp(r.ClusterLogZ[c])
					z[mode] += zp
					v[mode] += zp * zp * r.ClusterLogZErr[c] * r.ClusterLogZErr[c]
				}
				if z[0] == 0 || z[1] == 0 {
					t.Errorf("%s seed %d: a mode has no cluster: %v", tc.name, seed, z)
					continue
				}
				// f = z₀/(z₀+z₁); d log(f/(1−f)) = d log z₀ − d log z₁.
				fc := z[0] / (z[0] + z[1])
				se := math.Sqrt(v[0]/(z[0]*z[0]) + v[1]/(z[1]*z[1]))
				logit := math.Log(fc / (1 - fc))
				want := math.Log(tc.m.w[0] / tc.m.w[1])
				if math.Abs(logit-want) > 4*se {
					t.Errorf("%s seed %d: mode 0 evidence fraction %.3f (logit %.2f ± %.2f), want %.2f", tc.name, seed, fc, logit, se, tc.m.w[0])
				}
				fErrSum += fc * (1 - fc) * se
			}
			mean, fMean := sum/runs, fSum/runs
			fSD := math.Sqrt((fSum2 - runs*fMean*fMean) / (runs - 1))
			t.Logf("%s, clustering %v: mean log Ẑ %+.3f (error estimate %.3f); posterior weight of mode 0 %.3f ± %.3f over seeds (want %.2f)",
				tc.name, !off, mean, errSum/runs, fMean, fSD, tc.m.w[0])
			if off {
				continue
			}
			if math.Abs(mean) > 3*errSum/runs/math.Sqrt(runs) {
				t.Errorf("%s: mean log Ẑ = %.4f over %d runs, want 0 ± %.4f", tc.name, mean, runs, errSum/runs/math.Sqrt(runs))
			}
			if math.Abs(fMean-tc.m.w[0]) > 3*fSD/math.Sqrt(runs) {
				t.Errorf("%s: posterior weight of mode 0 %.3f ± %.3f, want %.2f", tc.name, fMean, fSD/math.Sqrt(runs), tc.m.w[0])
			}
			if pred := fErrSum / runs; fSD > 2.5*pred || fSD < pred/2.5 {
				t.Errorf("%s: spread of the mode weight %.3f over seeds, its estimated error %.3f", tc.name, fSD, pred)
			}
		}
	}
}

// TestClusteringWithoutSplit: on one Gaussian mode the clustering passes
// find one cluster each time and draw no random numbers, so the run is
// the run without clustering, bit for bit.
func TestClusteringWithoutSplit(t *testing.T) {
	g := newGaussT(3)
	on, err := Run(g, testOptions(), rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	opt := testOptions()
	opt.NoClustering = true
	off, err := Run(g, opt, rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	if on.Clusterings == 0 || on.Splits != 0 || off.Clusterings != 0 {
		t.Fatalf("clusterings %d (splits %d) with clustering, %d without", on.Clusterings, on.Splits, off.Clusterings)
	}
	on.Wall, off.Wall = 0, 0
	on.Clusterings = 0
	on.Options.NoClustering = true
	if !reflect.DeepEqual(on, off) {
		t.Error("a run whose clustering never splits differs from the run without clustering")
	}
	if len(on.ClusterLogZ) != 1 || on.ClusterLogZ[0] != on.LogEZ {
		t.Errorf("ClusterLogZ %v, LogEZ %v", on.ClusterLogZ, on.LogEZ)
	}
}
