package energy

import (
	_ "embed"
	"fmt"
	"github.com/gfngo/gfn/internal/kernel"
	"math"
	"strconv"
	"strings"
	"sync"
)

// The LGCP's fixed parameters (Møller, Syversveen and Waagepetersen 1998,
// as used by Heng et al. 2020, Arbel et al. 2021 and their successors).
const (
	// LGCPSignalVariance is σ², the prior's marginal variance.
	LGCPSignalVariance = 1.91
	// LGCPBeta is β, the kernel's length scale on the unit square.
	LGCPBeta = 1.0 / 33
	// LGCPGrid is the default number of cells per side (d = 40² = 1,600).
	LGCPGrid = 40
)

// finpinesCSV is the Finnish pines point pattern on the unit square; see
// data/finpines.csv for its provenance.
//
//go:embed data/finpines.csv
var finpinesCSV string

// finpinesSHA256 is the SHA-256 of data/finpines.csv (checked by a test).
const finpinesSHA256 = "3ee3e453bbb6c322025e4f2bdf7351e5e175735b13e67e67c84f2f02fbcdfa6d"

// pinesPoints parses the embedded point pattern: lines starting with '#'
// and the header "x,y" are skipped.
func pinesPoints() ([][2]float64, error) {
	var pts [][2]float64
	for ln, line := range strings.Split(finpinesCSV, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line == "x,y" {
			continue
		}
		xs, ys, ok := strings.Cut(line, ",")
		x, err1 := strconv.ParseFloat(xs, 64)
		y, err2 := strconv.ParseFloat(ys, 64)
		if !ok || err1 != nil || err2 != nil || x < 0 || x > 1 || y < 0 || y > 1 {
			return nil, fmt.Errorf("energy: data/finpines.csv line %d = %q is not a point x,y in [0,1]²", ln+1, line)
		}
		pts = append(pts, [2]float64{x, y})
	}
	return pts, nil
}

// LGCP is the log-Gaussian Cox process posterior over the Finnish pines
// data (Møller, Syversveen and Waagepetersen 1998, "Log Gaussian Cox
// processes"), discretised as in Heng et al. 2020 ("Controlled sequential
// Monte Carlo") and used as a d = 1,600 benchmark by Arbel et al. 2021
// ("Annealed flow transport Monte Carlo", densities.LogGaussianCoxPines with
// use_whitened = False), Zhang & Chen 2022 (PIS), Vargas et al. 2023 (DDS),
// Sendera et al. 2024 and Blessing et al. 2024 ("Beyond ELBOs", targets
// lgcp.py). It is a Gradient and a LogZer (log Z unknown: NaN); it has no
// exact sampler.
//
// The unit square is cut into M×M cells (M = 40 by default, d = M²); cell
// (r, c) holds the n_{rc} of the 126 pines with ⌊M·x⌋ = r and ⌊M·y⌋ = c (a
// point on the upper or right edge goes to the last cell), and the state's
// coordinate M·r + c is the log-intensity x_{rc} of that cell. With
// a = 1/M² the cell area,
//
//	log R(x) = log N(x; μ·1, K) + Σ_i (x_i·n_i − a·exp(x_i)),
//	K_ij = σ²·exp(−‖g_i − g_j‖₂ / (M·β)),   μ = log 126 − σ²/2,
//
// where g_i = (r, c) are the integer cell indices, σ² = 1.91 and β = 1/33
// (the parameters of Møller et al. as the sources set them), so μ ≈ 3.8801.
// The Gaussian's normaliser −(d/2)·log 2π − ½·log det K is included, as in
// the sources, so that log Z is the log marginal likelihood of the counts
// (up to the Poisson terms' −Σ log n_i!, which the sources also omit). The
// gradient is
//
//	∇ log R(x) = −K⁻¹(x − μ) + n − a·exp(x).
//
// # Provenance
//
// The points are spatstat's finpines (R package spatstat.data) rescaled to
// the unit square, embedded from data/finpines.csv with their provenance
// and checksum; the 40×40 counts sum to 126. The sources compute in float32
// (JAX); this type computes in float64.
//
// # Cost
//
// NewLGCP factors K = L·Lᵀ (float64 Cholesky) and inverts L once; the factor
// is shared by every LGCP of the same grid size. A batch of B rows costs one
// banded product with L⁻¹ (B·d² multiply-adds) for log R, and one more with
// L⁻ᵀ for the gradient; both use every core.
type LGCP struct {
	p *lgcpParams // nil: the default 40×40 grid
}

type lgcpParams struct {
	grid   int
	counts []float64 // n_i, length d
	mu     float64
	area   float64
	logC   float64   // −(d/2)·log 2π − ½ log det K
	linv   []float64 // L⁻¹, row-major, lower triangular
	linvT  []float64 // L⁻ᵀ, row-major, upper triangular
	// linvP and linvTP are linv and linvT packed for bandNT
	// (kernel.PackQuads).
	linvP, linvTP []float64
	chol          []float64 // L (for tests)
	pool          sync.Pool // *lgcpScratch
}

type lgcpScratch struct{ r, w, g []float64 }

var lgcpCache sync.Map // grid → *lgcpParams (built once, under lgcpMu)
var lgcpMu sync.Mutex

// NewLGCP returns the LGCP target on a grid×grid lattice (d = grid²). The
// sources use 40 (Arbel et al., Sendera et al., Blessing et al.) and 32
// (Blessing et al.'s code allows it); any grid from 2 to 64 is accepted.
// The first call for a grid size factors its covariance (about a second at
// 40); later calls share it.
func NewLGCP(grid int) (LGCP, error) {
	p, err := lgcpFor(grid)
	if err != nil {
		return LGCP{}, err
	}
	return LGCP{p: p}, nil
}

func lgcpFor(grid int) (*lgcpParams, error) {
	if grid < 2 || grid > 64 {
		return nil, fmt.Errorf("energy: LGCP grid %d is not allowed: it must be between 2 and 64 cells per side", grid)
	}
	if p, ok := lgcpCache.Load(grid); ok {
		return p.(*lgcpParams), nil
	}
	lgcpMu.Lock()
	defer lgcpMu.Unlock()
	if p, ok := lgcpCache.Load(grid); ok {
		return p.(*lgcpParams), nil
	}
	p, err := newLGCPParams(grid)
	if err != nil {
		return nil, err
	}
	lgcpCache.Store(grid, p)
	return p, nil
}

func newLGCPParams(grid int) (*lgcpParams, error) {
	pts, err := pinesPoints()
	if err != nil {
		return nil, err
	}
	d := grid * grid
	p := &lgcpParams{
		grid:   grid,
		counts: make([]float64, d),
		mu:     math.Log(float64(len(pts))) - LGCPSignalVariance/2,
		area:   1 / float64(d),
	}
	for _, pt := range pts {
		r, c := int(math.Floor(pt[0]*float64(grid))), int(math.Floor(pt[1]*float64(grid)))
		p.counts[min(r, grid-1)*grid+min(c, grid-1)]++
	}
	k := lgcpCovariance(grid)
	l, err := cholesky(k, d)
	if err != nil {
		return nil, err
	}
	var halfLogDet float64
	for i := range d {
		halfLogDet += math.Log(l[i*d+i])
	}
	p.logC = -0.5*float64(d)*math.Log(2*math.Pi) - halfLogDet
	p.chol = l
	p.linv = invLower(l, d)
	p.linvT = transpose(p.linv, d)
	p.linvP, p.linvTP = kernel.PackQuads(p.linv, d), kernel.PackQuads(p.linvT, d)
	return p, nil
}

// lgcpCovariance returns the prior covariance K on a grid×grid lattice.
func lgcpCovariance(grid int) []float64 {
	d := grid * grid
	k := make([]float64, d*d)
	scale := float64(grid) * LGCPBeta
	for i := range d {
		ri, ci := i/grid, i%grid
		for j := range d {
			dr, dc := float64(ri-j/grid), float64(ci-j%grid)
			k[i*d+j] = LGCPSignalVariance * math.Exp(-math.Sqrt(dr*dr+dc*dc)/scale)
		}
	}
	return k
}

func (l LGCP) params() *lgcpParams {
	if l.p != nil {
		return l.p
	}
	p, err := lgcpFor(LGCPGrid)
	if err != nil {
		panic(err) // the embedded data or the fixed covariance is broken
	}
	return p
}

// Dim returns d = grid² (1,600 by default).
func (l LGCP) Dim() int {
	if l.p == nil {
		return LGCPGrid * LGCPGrid
	}
	return l.p.grid * l.p.grid
}

// String returns "lgcp" for the default 40×40 grid and "lgcp-grid32" (with
// the actual size) otherwise.
func (l LGCP) String() string {
	if l.p == nil || l.p.grid == LGCPGrid {
		return "lgcp"
	}
	return fmt.Sprintf("lgcp-grid%d", l.p.grid)
}

// LogZ returns NaN: no exact value is known, and no reference estimate is
// built in. Published estimates come from long SMC or sampler runs.
func (LGCP) LogZ() float64 { return math.NaN() }

// Counts returns the pine counts per cell, in state order (a copy).
func (l LGCP) Counts() []float64 { return append([]float64(nil), l.params().counts...) }

// Mean returns μ = log 126 − σ²/2, the prior mean of every coordinate.
func (l LGCP) Mean() float64 { return l.params().mu }

// LogReward implements Energy.
func (l LGCP) LogReward(x []float32, out []float64) error {
	p := l.params()
	n, err := Rows(p.grid*p.grid, x, out)
	if err != nil {
		return err
	}
	s := p.whiten(x, n)
	p.finish(x, n, s, out, nil)
	p.pool.Put(s)
	return nil
}

// GradLogReward implements Gradient.
func (l LGCP) GradLogReward(x []float32, logR, grad []float64) error {
	p := l.params()
	n, err := gradRows(p.grid*p.grid, x, logR, grad)
	if err != nil {
		return err
	}
	s := p.whiten(x, n)
	d := p.grid * p.grid
	// K⁻¹(x − μ) = L⁻ᵀ·w for every row: C = W·(L⁻ᵀ)ᵀ with the rows of L⁻ᵀ
	// nonzero on [i, d).
	bandNT(s.w[:n*d], n, p.linvT, p.linvTP, d, false, grad)
	p.finish(x, n, s, logR, grad)
	p.pool.Put(s)
	return nil
}

// whiten returns scratch holding r = x − μ and w = L⁻¹r for n rows.
func (p *lgcpParams) whiten(x []float32, n int) *lgcpScratch {
	d := p.grid * p.grid
	s, _ := p.pool.Get().(*lgcpScratch)
	if s == nil || len(s.r) < n*d {
		s = &lgcpScratch{r: make([]float64, n*d), w: make([]float64, n*d)}
	}
	for i, v := range x {
		s.r[i] = float64(v) - p.mu
	}
	bandNT(s.r[:n*d], n, p.linv, p.linvP, d, true, s.w)
	return s
}

// finish writes log R for n rows from the whitened residuals, and, if grad
// holds K⁻¹(x − μ), turns it into ∇ log R.
func (p *lgcpParams) finish(x []float32, n int, s *lgcpScratch, logR, grad []float64) {
	d := p.grid * p.grid
	for b := range n {
		w := s.w[b*d : (b+1)*d]
		xb := x[b*d : (b+1)*d]
		var quad, like float64
		for i, v := range w {
			quad += v * v
			xi := float64(xb[i])
			like += xi*p.counts[i] - p.area*math.Exp(xi)
		}
		logR[b] = p.logC - 0.5*quad + like
		if grad != nil {
			g := grad[b*d : (b+1)*d]
			for i, xi := range xb {
				g[i] = -g[i] + p.counts[i] - p.area*math.Exp(float64(xi))
			}
		}
	}
}
