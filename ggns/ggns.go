package ggns

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/gfngo/gfn/energy"
)

// Options configures a run. The zero value of every field means its
// default, except Lower and Upper, the prior box, which must be set (GGNS
// needs a proper prior; Preset gives the reference's boxes for the
// built-in energies). Defaults are those of the reference's HamiltonianNS
// class (see the package comment).
type Options struct {
	// Lower and Upper bound the uniform prior U([Lower, Upper]^d), the
	// same interval on every coordinate, as the reference's notebooks set
	// it. Required: Lower < Upper, both finite.
	Lower, Upper float64

	// Live is the number N of live points. Default 25·d (the reference's
	// advice, "~25*nparams"). Must be at least 2: each dynamic step kills
	// ⌊N/2⌋ of them and samples as many new ones.
	Live int

	// Tol is the termination tolerance: the run stops after the first step
	// at which L*·X has fallen below Tol times its largest value so far
	// (L* the last likelihood threshold, X the expected prior volume
	// inside it). Default 0.1 (the reference's class default; its
	// notebooks use 0.01). Must lie in (0, 1).
	Tol float64

	// StepSize is the initial time step dt of Hamiltonian slice sampling
	// (adapted during the run). Default 0.1 (the reference's dt_ini; its
	// notebooks use 1).
	StepSize float64

	// MinReflections: positions along a trajectory are kept as candidates
	// only once every trajectory of the batch has reflected off the
	// likelihood boundary more than MinReflections times. Default 1.
	MinReflections int

	// MaxReflections: the trajectories of a batch run until every one has
	// reflected MaxReflections times, or for 100·MaxReflections steps.
	// Default 3. Must exceed MinReflections.
	MaxReflections int

	// VelocityNoise σ_v: after every step inside the constraint each
	// velocity component is multiplied by 1 + σ_v·r_j, r a uniformly
	// random unit vector. Default 0.05; NoVelocityNoise sets it to 0.
	VelocityNoise   float64
	NoVelocityNoise bool

	// RejectionFraction: the run starts with plain nested sampling, one
	// point at a time, each replacement drawn from the prior by rejection,
	// until the fraction of prior draws accepted falls to RejectionFraction
	// or below; then it switches to the dynamic Hamiltonian steps.
	// Default 0.1; a value ≥ 1 skips the rejection phase.
	RejectionFraction float64

	// MaxRejectionDraws caps the prior draws for one replacement in the
	// rejection phase; exceeding it is an error (the reference has no
	// cap). Default 10⁷.
	MaxRejectionDraws int

	// MaxRounds caps the rounds of Hamiltonian slice sampling for one
	// dynamic step (a round re-runs the failed or, after a change of dt,
	// all trajectories); exceeding it is an error (the reference has no
	// cap). Default 1000.
	MaxRounds int

	// Samples is the number of equally weighted posterior samples
	// returned in Result.Samples. Default 2000.
	Samples int

	// NoClustering turns off the clustering of the live points (on by
	// default, as the paper describes GGNS: clustering and mode
	// separation; the reference's clustering=True). With clustering, each
	// time the count of new live points passes another multiple of Live,
	// every cluster of at least ⌊Live/d⌋ live points is split by
	// k-nearest-neighbour clustering; clusters keep their own prior
	// volumes, evidences and live counts, new points are allotted to
	// clusters in proportion to their volumes and start from a live point
	// of their cluster (see the package comment). NoClustering gives the
	// reference's clustering=False (its class default and the setting of
	// its notebooks for the table's targets) and this package's runs
	// before clustering was added, bit for bit.
	NoClustering bool
}

// resolve fills the defaults for energy e and checks the options. Its
// errors name the offending value.
func (o Options) resolve(e energy.Energy) (Options, error) {
	d := e.Dim()
	if d <= 0 {
		return o, fmt.Errorf("ggns: energy dimension %d, must be positive", d)
	}
	if _, ok := e.(energy.Gradient); !ok {
		return o, fmt.Errorf("ggns: the energy (%T) does not implement energy.Gradient; Hamiltonian slice sampling reflects off the likelihood boundary along ∇log R", e)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(o.Lower) || !finite(o.Upper) || !(o.Lower < o.Upper):
		return o, fmt.Errorf("ggns: prior box [Lower, Upper] = [%v, %v], must have finite Lower < Upper (GGNS needs a proper prior; see Preset)", o.Lower, o.Upper)
	case o.Live < 0 || o.Live == 1:
		return o, fmt.Errorf("ggns: Live = %d, must be at least 2", o.Live)
	case o.Tol < 0 || o.Tol >= 1 || math.IsNaN(o.Tol):
		return o, fmt.Errorf("ggns: Tol = %v, must lie in (0, 1)", o.Tol)
	case o.StepSize < 0 || !finite(o.StepSize):
		return o, fmt.Errorf("ggns: StepSize = %v, must be positive and finite", o.StepSize)
	case o.MinReflections < 0:
		return o, fmt.Errorf("ggns: MinReflections = %d, must not be negative", o.MinReflections)
	case o.MaxReflections < 0:
		return o, fmt.Errorf("ggns: MaxReflections = %d, must be positive", o.MaxReflections)
	case o.VelocityNoise < 0 || !finite(o.VelocityNoise):
		return o, fmt.Errorf("ggns: VelocityNoise = %v, must be positive and finite (NoVelocityNoise turns it off)", o.VelocityNoise)
	case o.RejectionFraction < 0 || math.IsNaN(o.RejectionFraction):
		return o, fmt.Errorf("ggns: RejectionFraction = %v, must not be negative (≥ 1 skips the rejection phase)", o.RejectionFraction)
	case o.MaxRejectionDraws < 0:
		return o, fmt.Errorf("ggns: MaxRejectionDraws = %d, must be positive", o.MaxRejectionDraws)
	case o.MaxRounds < 0:
		return o, fmt.Errorf("ggns: MaxRounds = %d, must be positive", o.MaxRounds)
	case o.Samples < 0:
		return o, fmt.Errorf("ggns: Samples = %d, must be positive", o.Samples)
	}
	defInt(&o.Live, 25*d)
	if o.Live < 2 {
		o.Live = 2
	}
	if o.Tol == 0 {
		o.Tol = 0.1
	}
	if o.StepSize == 0 {
		o.StepSize = 0.1
	}
	if o.MinReflections == 0 {
		o.MinReflections = 1
	}
	defInt(&o.MaxReflections, 3)
	if o.MaxReflections <= o.MinReflections {
		return o, fmt.Errorf("ggns: MaxReflections = %d, must exceed MinReflections = %d", o.MaxReflections, o.MinReflections)
	}
	if o.NoVelocityNoise {
		o.VelocityNoise = 0
	} else if o.VelocityNoise == 0 {
		o.VelocityNoise = 0.05
	}
	if o.RejectionFraction == 0 {
		o.RejectionFraction = 0.1
	}
	defInt(&o.MaxRejectionDraws, 10_000_000)
	defInt(&o.MaxRounds, 1000)
	defInt(&o.Samples, 2000)
	return o, nil
}

func defInt(v *int, d int) {
	if *v == 0 {
		*v = d
	}
}

// Preset returns the options of the reference's notebooks for a built-in
// task: "manywell" as nb/manywells.ipynb runs it (U([−3, 3]^32), 1000 live
// points, Tol 0.01, dt 1), "25gmm" as nb/manygaussians.ipynb runs its 2-D
// mixture (500 live points, Tol 0.01, dt 1) with the box scaled as there,
// 1.25 times the extent of the component means: U([−12.5, 12.5]²). The
// rest keeps the class defaults, and clustering stays on (the package
// default, GGNS as the paper describes it) although both notebooks turn
// it off; set NoClustering for the notebooks' runs.
func Preset(task string) (Options, error) {
	switch task {
	case "manywell":
		return Options{Lower: -3, Upper: 3, Live: 1000, Tol: 0.01, StepSize: 1}, nil
	case "25gmm":
		return Options{Lower: -12.5, Upper: 12.5, Live: 500, Tol: 0.01, StepSize: 1}, nil
	}
	return Options{}, fmt.Errorf("ggns: no preset for task %q (allowed: 25gmm, manywell)", task)
}

// Result is what a run returns. Rows are row-major float32, n×d.
type Result struct {
	// Options are the options with every default filled in.
	Options Options

	// Dim is d.
	Dim int

	// Samples holds Options.Samples equally weighted posterior samples: a
	// systematic resampling of the dead points by their weights.
	Samples []float32

	// Dead holds the dead points in the order they were killed (log R
	// non-decreasing), the final live points last; DeadLogR their log R
	// and DeadLogW their normalised posterior log-weights
	// log(L_i·ΔX_i / Ẑ), Σ exp = 1.
	Dead     []float32
	DeadLogR []float64
	DeadLogW []float64

	// LogZ is the estimate of log ∫_box R(x) dx: the mean of log Z under
	// the nested-sampling volume statistics, 2·log E[Z] − ½·log E[Z²]
	// (the reference's get_mean_logZ), plus the log volume of the box,
	// d·log(Upper − Lower). LogZErr is its standard deviation,
	// √(log E[Z²] − 2·log E[Z]). LogEZ is log E[Z] (plus the log volume):
	// the classic estimate log Σ L_i ΔX_i.
	LogZ, LogZErr, LogEZ float64

	// LogX is log X at termination, the expected log prior volume (of the
	// box's unit measure) inside the last threshold.
	LogX float64

	// ClusterLogZ holds, for every cluster of live points there was, by
	// its id (0 the first cluster, then in order of creation), log E[Z_p]
	// plus the log volume of the box: the evidence of each mode, the
	// reference's mode separation (Σ_p E[Z_p] = E[Z]; evidence found
	// before a split is shared in proportion to the split volumes).
	// ClusterLogZErr is the standard deviation of log Z_p,
	// √(log E[Z_p²] − 2·log E[Z_p]). DeadCluster holds the id of each dead
	// point's cluster. Without clustering there is one cluster, with
	// ClusterLogZ[0] = LogEZ.
	ClusterLogZ, ClusterLogZErr []float64
	DeadCluster                 []int

	// Clusterings counts the clustering passes over the live points and
	// Splits the clusters they split off (0 without clustering).
	Clusterings, Splits int

	// Kills counts the dead points (without the final live points);
	// RejectionKills those of the rejection phase; Steps the dynamic
	// steps (each kills ⌊N/2⌋ points); Rounds the rounds of Hamiltonian
	// slice sampling over all steps.
	Kills, RejectionKills, Steps, Rounds int

	// StepSize is the final time step dt.
	StepSize float64

	// EnergyEvals counts the rows passed to LogReward (prior draws) and
	// GradEvals the rows passed to GradLogReward (trajectory positions,
	// each with log R and its gradient).
	EnergyEvals, GradEvals int

	// Wall is the run's wall-clock time.
	Wall time.Duration
}

// Run runs gradient-guided nested sampling on e, which must implement
// energy.Gradient, with the uniform prior of opt, and returns log Ẑ with
// its error and equally weighted posterior samples.
//
// Randomness, all from rng, in this order: the N initial prior draws
// (coordinates in row order); in the rejection phase, prior draws one row
// at a time; in each dynamic step, the ⌊N/2⌋ starting points (uniform
// indices into the surviving live points), then per round the unit
// initial velocities of the active trajectories (d normal deviates each),
// and per trajectory step, for each trajectory inside the constraint in
// order, one uniform for the reservoir choice of a kept position (from its
// second kept position on) and then d normal deviates for the velocity
// noise (if σ_v > 0); finally one uniform for the systematic resampling.
// With clustering and more than one live cluster, each starting point is
// drawn as one uniform for its cluster (by the clusters' volumes) and then
// a uniform index into the cluster's live points; with a single cluster
// only the index is drawn, as without clustering. The clustering itself
// draws nothing. A run is a deterministic function of its seed.
func Run(e energy.Energy, opt Options, rng *rand.Rand) (*Result, error) {
	start := time.Now()
	o, err := opt.resolve(e)
	if err != nil {
		return nil, err
	}
	s := newSampler(e, o, rng)
	res, err := s.run()
	if err != nil {
		return nil, err
	}
	res.Wall = time.Since(start)
	return res, nil
}

// sampler holds a run's live and dead points and scratch memory.
type sampler struct {
	e   energy.Energy
	g   energy.Gradient
	o   Options
	rng *rand.Rand
	d   int

	live  []float32 // n live rows
	liveL []float64
	lab   []int // cluster of each live point
	cnt   []int // live points per cluster
	n     int

	sum evidence

	dead      []float32
	deadL     []float64
	deadLogW  []float64 // unnormalised: log L + log ΔX
	deadC     []int     // cluster ids
	dt        float64
	tried     int // prior draws in the rejection phase
	accepted  int // replacements in the rejection phase
	rejecting bool

	maxXL float64 // max over thresholds of L* + log X
	kills int
	steps int
	round int

	nextClustering int // clustering when the new live points reach it
	clusterings    int
	splits         int

	evals, gradEvals int

	h hss
}

func newSampler(e energy.Energy, o Options, rng *rand.Rand) *sampler {
	d := e.Dim()
	return &sampler{
		e: e, g: e.(energy.Gradient), o: o, rng: rng, d: d,
		live:      make([]float32, o.Live*d),
		liveL:     make([]float64, o.Live),
		lab:       make([]int, o.Live),
		cnt:       []int{0},
		sum:       newEvidence(),
		dt:        o.StepSize,
		rejecting: true,
		maxXL:     math.Inf(-1),

		nextClustering: o.Live,
	}
}

// drawPrior fills row with a draw from U([Lower, Upper]^d).
func (s *sampler) drawPrior(row []float32) {
	lo, w := s.o.Lower, s.o.Upper-s.o.Lower
	for j := range row {
		v := float32(lo + w*s.rng.Float64())
		if float64(v) > s.o.Upper { // rounding up past the edge
			v = float32(s.o.Upper)
		}
		row[j] = v
	}
}

func (s *sampler) run() (*Result, error) {
	d, N := s.d, s.o.Live
	for i := range N {
		s.drawPrior(s.live[i*d : (i+1)*d])
	}
	if err := s.e.LogReward(s.live, s.liveL); err != nil {
		return nil, fmt.Errorf("ggns: LogReward: %w", err)
	}
	s.evals += N
	for i, l := range s.liveL {
		if math.IsNaN(l) || math.IsInf(l, 1) {
			return nil, fmt.Errorf("ggns: initial prior draw %d: log R = %v at x = %v", i, l, s.live[i*d:(i+1)*d])
		}
	}
	s.n = N
	s.cnt[0] = N
	for {
		// One step of the reference's loop: the rejection phase while it
		// lasts, then one dynamic step; then the termination test, and
		// the clustering when due (also at the last step, before the
		// final kills, as the reference orders them).
		lastXL, err := s.step()
		if err != nil {
			return nil, err
		}
		if fresh := s.accepted + s.steps*(N/2); fresh >= s.nextClustering {
			s.nextClustering += N
			if !s.o.NoClustering {
				s.cluster()
			}
		}
		if lastXL-s.maxXL < math.Log(s.o.Tol) {
			break
		}
	}
	return s.finish(), nil
}

// kill moves live point i to the dead points, updating the evidence of
// its cluster with the live points the cluster had before the kill, and
// removes it by moving the last live point into its place.
func (s *sampler) kill(i int) {
	d := s.d
	s.record(i)
	last := s.n - 1
	if i != last {
		copy(s.live[i*d:(i+1)*d], s.live[last*d:(last+1)*d])
		s.liveL[i] = s.liveL[last]
		s.lab[i] = s.lab[last]
	}
	s.n--
}

// record adds live point i to the dead points with its weight and updates
// its cluster's moments and live count; a cluster left without live
// points dies (the clusters above it move down one index). The caller
// removes the point from the live arrays.
func (s *sampler) record(i int) {
	d := s.d
	l := s.liveL[i]
	p := s.lab[i]
	s.deadLogW = append(s.deadLogW, s.sum.kill(l, p, s.cnt[p]))
	s.deadC = append(s.deadC, s.sum.c[p].id)
	s.dead = append(s.dead, s.live[i*d:(i+1)*d]...)
	s.deadL = append(s.deadL, l)
	s.cnt[p]--
	if s.cnt[p] == 0 {
		s.sum.drop(p)
		s.cnt = append(s.cnt[:p], s.cnt[p+1:]...)
		for j := range s.n {
			if s.lab[j] > p {
				s.lab[j]--
			}
		}
	}
}

// cluster runs the reference's find_clusters: every cluster present at
// the start with at least ⌊Live/d⌋ live points is partitioned by
// knnClusters over its live points in increasing order of log R (at most
// half its size as the largest k); if that finds more than one group, the
// cluster splits (evidence.split), the first group keeping its index.
func (s *sampler) cluster() {
	d := s.d
	s.clusterings++
	k := len(s.cnt)
	minSize := s.o.Live / d
	var idx []int
	var x []float32
	for p := range k {
		if s.cnt[p] < minSize {
			continue
		}
		idx = idx[:0]
		for i := range s.n {
			if s.lab[i] == p {
				idx = append(idx, i)
			}
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(s.liveL[a], s.liveL[b]) })
		x = x[:0]
		for _, i := range idx {
			x = append(x, s.live[i*d:(i+1)*d]...)
		}
		m, labels := knnClusters(x, d, len(idx)/2)
		if m < 2 {
			continue
		}
		sizes := make([]int, m)
		for _, c := range labels {
			sizes[c]++
		}
		base := len(s.cnt)
		s.sum.split(p, sizes)
		s.cnt[p] = sizes[0]
		s.cnt = append(s.cnt, sizes[1:]...)
		for j, i := range idx {
			if c := labels[j]; c > 0 {
				s.lab[i] = base + c - 1
			}
		}
		s.splits += m - 1
	}
}

// lowest returns the index of the live point with the smallest log R (the
// first such).
func (s *sampler) lowest() int {
	k := 0
	for i := 1; i < s.n; i++ {
		if s.liveL[i] < s.liveL[k] {
			k = i
		}
	}
	return k
}

// threshold records L* + log X for the termination test and returns it.
func (s *sampler) threshold(lstar float64) float64 {
	xl := lstar + s.sum.logX()
	if xl > s.maxXL {
		s.maxXL = xl
	}
	return xl
}

// step runs the rejection phase while the acceptance fraction exceeds
// RejectionFraction, then one dynamic step, and returns the last L* + log X.
func (s *sampler) step() (float64, error) {
	d := s.d
	for s.rejecting {
		if float64(s.accepted) > 0 && float64(s.accepted)/float64(s.tried) <= s.o.RejectionFraction ||
			s.o.RejectionFraction >= 1 {
			s.rejecting = false
			break
		}
		k := s.lowest()
		lstar := s.liveL[k]
		s.kill(k)
		s.kills++
		row := s.live[s.n*d : (s.n+1)*d]
		var l [1]float64
		for draw := 0; ; draw++ {
			if draw == s.o.MaxRejectionDraws {
				return 0, fmt.Errorf("ggns: rejection iteration %d: no prior draw above log R = %v in %d draws (MaxRejectionDraws; RejectionFraction ≥ 1 skips the rejection phase)", s.kills, lstar, draw)
			}
			s.drawPrior(row)
			if err := s.e.LogReward(row, l[:]); err != nil {
				return 0, fmt.Errorf("ggns: LogReward: %w", err)
			}
			s.evals++
			s.tried++
			if math.IsNaN(l[0]) || math.IsInf(l[0], 1) {
				return 0, fmt.Errorf("ggns: rejection iteration %d, prior draw %d: log R = %v at x = %v", s.kills, draw, l[0], row)
			}
			if l[0] > lstar {
				break
			}
		}
		s.liveL[s.n] = l[0]
		s.lab[s.n] = 0 // one cluster until the first clustering
		s.cnt[0]++
		s.n++
		s.accepted++
		s.threshold(lstar)
	}
	return s.dynamicStep()
}

// dynamicStep kills the ⌊N/2⌋ lowest live points and replaces them by
// Hamiltonian slice sampling above the last one killed.
func (s *sampler) dynamicStep() (float64, error) {
	d, N := s.d, s.o.Live
	m := N / 2
	s.steps++
	// Sort the live points by log R (stable, ascending) and kill the
	// lowest m in order.
	perm := make([]int, s.n)
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		switch {
		case s.liveL[a] < s.liveL[b]:
			return -1
		case s.liveL[a] > s.liveL[b]:
			return 1
		}
		return 0
	})
	sorted := make([]float32, len(s.live))
	sortedL := make([]float64, len(s.liveL))
	sortedLab := make([]int, len(s.lab))
	for k, i := range perm {
		copy(sorted[k*d:(k+1)*d], s.live[i*d:(i+1)*d])
		sortedL[k] = s.liveL[i]
		sortedLab[k] = s.lab[i]
	}
	copy(s.live, sorted)
	copy(s.liveL, sortedL)
	copy(s.lab, sortedLab)
	var lstar float64
	for range m {
		// Kill from the front of the sorted rows, keeping their order.
		lstar = s.liveL[0]
		s.record(0)
		s.live = s.live[d:]
		s.liveL = s.liveL[1:]
		s.lab = s.lab[1:]
		s.n--
		s.kills++
	}
	// Re-home the survivors at the start of full-size buffers.
	live := make([]float32, N*d)
	liveL := make([]float64, N)
	lab := make([]int, N)
	copy(live, s.live[:s.n*d])
	copy(liveL, s.liveL[:s.n])
	copy(lab, s.lab[:s.n])
	s.live, s.liveL, s.lab = live, liveL, lab

	// Starting points: m draws, with replacement, from the survivors:
	// uniform over them with one cluster; with several, a cluster by its
	// volume E[X_p], then uniform over its live points (the reference's
	// multinomial allotment and get_samples_from_labels).
	x0 := make([]float32, m*d)
	x0Lab := make([]int, m)
	var members [][]int
	var cum []float64
	if k := len(s.cnt); k > 1 {
		members = make([][]int, k)
		for i := range s.n {
			members[s.lab[i]] = append(members[s.lab[i]], i)
		}
		cum = make([]float64, k)
		top := math.Inf(-1)
		for _, c := range s.sum.c {
			top = max(top, c.logX)
		}
		var t float64
		for p, c := range s.sum.c {
			t += math.Exp(c.logX - top)
			cum[p] = t
		}
	}
	for k := range m {
		var i int
		if members == nil {
			i = s.rng.IntN(s.n)
		} else {
			u := s.rng.Float64() * cum[len(cum)-1]
			p := 0
			for p < len(cum)-1 && cum[p] <= u {
				p++
			}
			i = members[p][s.rng.IntN(len(members[p]))]
		}
		copy(x0[k*d:(k+1)*d], s.live[i*d:(i+1)*d])
		x0Lab[k] = s.lab[i]
	}
	newX := make([]float32, m*d)
	newL := make([]float64, m)
	active := make([]bool, m)
	for k := range active {
		active[k] = true
	}
	var idx []int
	var ax, ox []float32
	var av []float64
	var oL []float64
	var ok []bool
	for r := 0; ; r++ {
		if r == s.o.MaxRounds {
			return 0, fmt.Errorf("ggns: dynamic step %d: %d of %d new points still not found after %d rounds of slice sampling (MaxRounds)", s.steps, count(active), m, r)
		}
		s.round++
		idx = idx[:0]
		for k, a := range active {
			if a {
				idx = append(idx, k)
			}
		}
		na := len(idx)
		ax = grow(ax, na*d)
		av = grow(av, na*d)
		ox = grow(ox, na*d)
		oL = grow(oL, na)
		ok = grow(ok, na)
		for a, k := range idx {
			copy(ax[a*d:(a+1)*d], x0[k*d:(k+1)*d])
			v := av[a*d : (a+1)*d]
			var q float64
			for j := range v {
				v[j] = s.rng.NormFloat64()
				q += v[j] * v[j]
			}
			q = 1 / math.Sqrt(q)
			for j := range v {
				v[j] *= q
			}
		}
		outFrac, err := s.h.run(s, ax, av, lstar, ox, oL, ok)
		if err != nil {
			return 0, err
		}
		for a, k := range idx {
			copy(newX[k*d:(k+1)*d], ox[a*d:(a+1)*d])
			newL[k] = oL[a]
			active[k] = !ok[a]
		}
		big := na >= max(2, m/2)
		switch {
		case outFrac > 0.15 && big:
			s.dt = min(max(s.dt*0.9, 1e-5), 10)
			for k := range active {
				active[k] = true
			}
		case outFrac < 0.05 && big:
			s.dt = min(max(s.dt*1.1, 1e-5), 10)
			for k := range active {
				active[k] = true
			}
		}
		if count(active) == 0 {
			break
		}
	}
	copy(s.live[s.n*d:], newX)
	copy(s.liveL[s.n:], newL)
	copy(s.lab[s.n:], x0Lab)
	for _, p := range x0Lab {
		s.cnt[p]++
	}
	s.n += m
	return s.threshold(lstar), nil
}

func count(b []bool) int {
	c := 0
	for _, v := range b {
		if v {
			c++
		}
	}
	return c
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// finish kills the final live points in increasing order of log R, with
// n, n−1, …, 1 live points, and assembles the result.
func (s *sampler) finish() *Result {
	d := s.d
	res := &Result{Options: s.o, Dim: d, Kills: s.kills, RejectionKills: s.accepted,
		Steps: s.steps, Rounds: s.round, StepSize: s.dt, EnergyEvals: s.evals, GradEvals: s.gradEvals}
	res.LogX = s.sum.logX()
	for s.n > 0 {
		s.kill(s.lowest())
	}
	logVol := float64(d) * math.Log(s.o.Upper-s.o.Lower)
	mean, sd := s.sum.meanSD()
	res.LogZ = mean + logVol
	res.LogZErr = sd
	res.LogEZ = s.sum.logZ + logVol
	res.ClusterLogZ = make([]float64, len(s.sum.dead))
	res.ClusterLogZErr = make([]float64, len(s.sum.dead))
	for _, c := range s.sum.dead {
		res.ClusterLogZ[c.id] = c.logZ + logVol
		res.ClusterLogZErr[c.id] = math.Sqrt(max(c.logZ2-2*c.logZ, 0))
	}
	res.DeadCluster = s.deadC
	res.Clusterings, res.Splits = s.clusterings, s.splits
	res.Dead, res.DeadLogR = s.dead, s.deadL
	w := s.deadLogW
	lse := logSumExp(w)
	for i := range w {
		w[i] -= lse
	}
	res.DeadLogW = w
	res.Samples = systematic(s.dead, w, d, s.o.Samples, s.rng.Float64())
	return res
}

func logSumExp(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, x)
	}
	if math.IsInf(m, 0) {
		return m
	}
	var t float64
	for _, x := range v {
		t += math.Exp(x - m)
	}
	return m + math.Log(t)
}

// systematic draws n rows of x (rows of d) by systematic resampling with
// normalised log-weights logW and offset u ∈ [0, 1).
func systematic(x []float32, logW []float64, d, n int, u float64) []float32 {
	out := make([]float32, 0, n*d)
	var cum float64
	i := 0
	for k := range n {
		t := (float64(k) + u) / float64(n)
		for i < len(logW)-1 && cum+math.Exp(logW[i]) <= t {
			cum += math.Exp(logW[i])
			i++
		}
		out = append(out, x[i*d:(i+1)*d]...)
	}
	return out
}
