package ot

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// sqdist is the ground cost |a − b|², summed in coordinate order. The
// explicit float64 conversion forbids fusing into FMA, so that the cost of
// a pair has the same bits on every GOAMD64 level.
func sqdist(a, b []float64) float64 {
	var s float64
	for k, ak := range a {
		t := ak - b[k]
		s += float64(t * t)
	}
	return s
}

// scanner finds, for every row i of x, the m columns j of y with the
// smallest keys c_ij − w_j (c_ij = |x_i − y_j|²), visiting all n² pairs:
// the brute-force search used where a k-d tree would prune too little.
//
// To go fast it ranks pairs by |x_i|² + |y_j|² − 2 x_i·y_j, which is c_ij
// up to a rounding error below margin(i) (cancellation, at most a few
// ulps of |x_i|² + |y_j|²); the candidates' costs are then recomputed
// exactly, and callers lower their bounds by twice the margin. Rows are
// split over goroutines; each row's result depends only on the row, so
// not on the number of goroutines.
type scanner struct {
	x, y   []float64
	d, n   int
	m      int
	nx, ny []float64 // squared norms
	nyMax  float64

	cnt  []int32   // number of candidates found per row
	col  []int32   // n×m candidate columns, row-major
	cost []float64 // their exact costs c_ij
}

func newScanner(x, y []float64, d, m int) *scanner {
	n := len(x) / d
	m = min(m, n)
	sc := &scanner{
		x: x, y: y, d: d, n: n, m: m,
		nx:   make([]float64, n),
		ny:   make([]float64, n),
		cnt:  make([]int32, n),
		col:  make([]int32, n*m),
		cost: make([]float64, n*m),
	}
	zero := make([]float64, d)
	for i := range n {
		sc.nx[i] = sqdist(x[i*d:(i+1)*d], zero)
		sc.ny[i] = sqdist(y[i*d:(i+1)*d], zero)
		sc.nyMax = max(sc.nyMax, sc.ny[i])
	}
	return sc
}

// margin bounds the error of row i's approximate costs: the dot-product
// form errs by at most about (2d+6)·2⁻⁵³·(|x_i|² + |y_j|²); this is four
// times that.
func (sc *scanner) margin(i int) float64 {
	return float64(4*(sc.d+4)) * 0x1p-52 * (sc.nx[i] + sc.nyMax)
}

const (
	tileRows  = 4   // rows sharing each loaded y_j
	blockCols = 256 // columns whose costs are computed before selection
	chunkRows = 32  // rows a goroutine claims at a time
)

// run does one pass with weights w (nil: all 0).
func (sc *scanner) run(w []float64) {
	nchunk := (sc.n + chunkRows - 1) / chunkRows
	workers := min(runtime.GOMAXPROCS(0), nchunk)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			ws := newScanWork(sc.m)
			for {
				c := int(next.Add(1) - 1)
				if c >= nchunk {
					return
				}
				hi := min((c+1)*chunkRows, sc.n)
				for i := c * chunkRows; i < hi; i += tileRows {
					sc.tile(ws, i, min(i+tileRows, hi), w)
				}
			}
		})
	}
	wg.Wait()
}

// scanWork is one goroutine's scratch: the cost block and a bounded
// max-heap of candidates per tile row.
type scanWork struct {
	buf [tileRows * blockCols]float64
	sel [tileRows]candidates
}

func newScanWork(m int) *scanWork {
	ws := new(scanWork)
	for t := range tileRows {
		ws.sel[t].reset(m)
	}
	return ws
}

// tile processes rows [i0, i1), at most tileRows of them.
func (sc *scanner) tile(ws *scanWork, i0, i1 int, w []float64) {
	nt := i1 - i0
	for t := range nt {
		ws.sel[t].reset(sc.m)
	}
	for j0 := 0; j0 < sc.n; j0 += blockCols {
		nb := min(blockCols, sc.n-j0)
		sc.costs(ws.buf[:], i0, nt, j0, nb)
		for t := range nt {
			sel := &ws.sel[t]
			row := ws.buf[t*blockCols : t*blockCols+nb]
			th := sel.th
			for jj, c := range row {
				key := c
				if w != nil {
					key -= w[j0+jj]
				}
				if key < th {
					sel.insert(key, int32(j0+jj), c)
					th = sel.th
				}
			}
		}
	}
	d, m := sc.d, sc.m
	for t := range nt {
		i := i0 + t
		sel := &ws.sel[t]
		k := sel.size
		sc.cnt[i] = int32(k)
		xi := sc.x[i*d : (i+1)*d]
		for q := range k {
			j := sel.cols[q]
			sc.col[i*m+q] = j
			sc.cost[i*m+q] = sqdist(xi, sc.y[int(j)*d:(int(j)+1)*d])
		}
	}
}

// costs fills buf[t*blockCols+jj] with the approximate c_{i0+t, j0+jj}
// for t < nt, jj < nb, from dot products four rows by two columns at a
// time (eight independent sums, each y and x value loaded once per pair).
func (sc *scanner) costs(buf []float64, i0, nt, j0, nb int) {
	d := sc.d
	x, y := sc.x, sc.y
	if nt < tileRows {
		for t := range nt {
			xi := x[(i0+t)*d : (i0+t+1)*d]
			for jj := range nb {
				buf[t*blockCols+jj] = sqdist(xi, y[(j0+jj)*d:(j0+jj+1)*d])
			}
		}
		return
	}
	x0 := x[i0*d : (i0+1)*d]
	x1 := x[(i0+1)*d : (i0+2)*d][:len(x0)]
	x2 := x[(i0+2)*d : (i0+3)*d][:len(x0)]
	x3 := x[(i0+3)*d : (i0+4)*d][:len(x0)]
	n0, n1, n2, n3 := sc.nx[i0], sc.nx[i0+1], sc.nx[i0+2], sc.nx[i0+3]
	jj := 0
	for ; jj+1 < nb; jj += 2 {
		ya := y[(j0+jj)*d : (j0+jj+1)*d][:len(x0)]
		yb := y[(j0+jj+1)*d : (j0+jj+2)*d][:len(x0)]
		var a0, a1, a2, a3, b0, b1, b2, b3 float64
		for k := range x0 {
			p, q := ya[k], yb[k]
			a0 += x0[k] * p
			b0 += x0[k] * q
			a1 += x1[k] * p
			b1 += x1[k] * q
			a2 += x2[k] * p
			b2 += x2[k] * q
			a3 += x3[k] * p
			b3 += x3[k] * q
		}
		na, nb := sc.ny[j0+jj], sc.ny[j0+jj+1]
		buf[jj] = n0 + na - 2*a0
		buf[blockCols+jj] = n1 + na - 2*a1
		buf[2*blockCols+jj] = n2 + na - 2*a2
		buf[3*blockCols+jj] = n3 + na - 2*a3
		buf[jj+1] = n0 + nb - 2*b0
		buf[blockCols+jj+1] = n1 + nb - 2*b1
		buf[2*blockCols+jj+1] = n2 + nb - 2*b2
		buf[3*blockCols+jj+1] = n3 + nb - 2*b3
	}
	for ; jj < nb; jj++ {
		yj := y[(j0+jj)*d : (j0+jj+1)*d]
		buf[jj] = sqdist(x0, yj)
		buf[blockCols+jj] = sqdist(x1, yj)
		buf[2*blockCols+jj] = sqdist(x2, yj)
		buf[3*blockCols+jj] = sqdist(x3, yj)
	}
}
