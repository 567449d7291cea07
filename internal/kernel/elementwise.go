package kernel

import (
	"fmt"
	"math"
)

// Element-wise kernels of the layers, vectorised on amd64 with AVX2 (the
// vector body handles multiples of 8; Go handles the tail).

func useSIMD() bool { return simdElementwise && backend != BackendGo }

// AddTo sets dst[i] += src[i].
func AddTo(dst, src []float32) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("kernel: AddTo of %d into %d elements", len(src), len(dst)))
	}
	n := 0
	if useSIMD() && len(dst) >= 8 {
		n = len(dst) &^ 7
		addTo8(&dst[0], &src[0], n)
	}
	for i := n; i < len(dst); i++ {
		dst[i] += src[i]
	}
}

// Scale sets x[i] *= c.
func Scale(x []float32, c float32) {
	n := 0
	if useSIMD() && len(x) >= 8 {
		n = len(x) &^ 7
		scale8(&x[0], n, c)
	}
	for i := n; i < len(x); i++ {
		x[i] *= c
	}
}

// AddRows adds every row of src (rows of len(dst)) to dst, one row after
// the other: a bias gradient. Each element's sum is taken in row order, as
// repeated AddTo calls would, so the bits are the same; the SIMD path keeps
// the running sums in registers instead of loading and storing dst per row.
func AddRows(dst, src []float32) {
	cols := len(dst)
	if cols == 0 || len(src)%cols != 0 {
		panic(fmt.Sprintf("kernel: AddRows of %d values into rows of %d", len(src), cols))
	}
	rows := len(src) / cols
	if rows == 0 {
		return
	}
	n := 0
	if useSIMD() && cols >= 8 {
		n = cols &^ 7
		addRows8(&dst[0], &src[0], n, rows, cols)
	}
	for r := range rows {
		row := src[r*cols : (r+1)*cols]
		for j := n; j < cols; j++ {
			dst[j] += row[j]
		}
	}
}

// GatherSum sets dst to the sum of the rows idx[0], idx[1], … of table
// (rows of len(dst); negative indices are skipped): a one-hot layer's
// pre-activation. The sum starts from +0 and adds the rows in order, as
// clearing dst and calling AddTo per row would, so the bits are the same.
// An index past the table is a programmer error and panics.
func GatherSum(dst, table []float32, idx []int32) {
	cols := len(dst)
	var off [8]int // row offsets of the valid indices
	k := 0
	for _, j := range idx {
		if j < 0 {
			continue
		}
		if int(j+1)*cols > len(table) {
			panic(fmt.Sprintf("kernel: GatherSum row %d of a %d-value table with rows of %d", j, len(table), cols))
		}
		if k == len(off) || !useSIMD() || cols < 8 {
			k = -1 // many indices, or no SIMD: the plain loop
			break
		}
		off[k] = int(j) * cols
		k++
	}
	if k < 0 {
		clear(dst)
		for _, j := range idx {
			if j >= 0 {
				AddTo(dst, table[int(j)*cols:int(j+1)*cols])
			}
		}
		return
	}
	n := cols &^ 7
	if k == 0 {
		clear(dst)
		return
	}
	gatherSum8(&dst[0], &table[0], &off[0], k, n)
	for j := n; j < cols; j++ {
		var v float32
		for _, o := range off[:k] {
			v += table[o+j]
		}
		dst[j] = v
	}
}

// BiasLeakyReLU sets every row r of y (rows of len(b)) to
// LeakyReLU(y_r + b) with the given slope in (0, 1).
func BiasLeakyReLU(y, b []float32, slope float32) {
	cols := len(b)
	if cols == 0 || len(y)%cols != 0 {
		panic(fmt.Sprintf("kernel: BiasLeakyReLU of %d values with a bias of %d", len(y), cols))
	}
	for r := 0; r < len(y); r += cols {
		row := y[r : r+cols]
		n := 0
		if useSIMD() && cols >= 8 {
			n = cols &^ 7
			biasLeaky8(&row[0], &b[0], n, slope)
		}
		for i := n; i < cols; i++ {
			v := row[i] + b[i]
			row[i] = max(v, slope*v)
		}
	}
}

// LeakyReLUGrad sets d[i] *= slope where y[i] < 0 (y is the activation's
// output, which has the sign of its input).
func LeakyReLUGrad(d, y []float32, slope float32) {
	if len(d) != len(y) {
		panic(fmt.Sprintf("kernel: LeakyReLUGrad of %d gradients for %d outputs", len(d), len(y)))
	}
	n := 0
	if useSIMD() && len(d) >= 8 {
		n = len(d) &^ 7
		leakyGrad8(&d[0], &y[0], n, slope)
	}
	for i := n; i < len(d); i++ {
		if math.Signbit(float64(y[i])) {
			d[i] *= slope
		}
	}
}

// AdamCoef holds the per-step constants of an Adam update in float32.
type AdamCoef struct {
	B1, OneMinusB1, B2, OneMinusB2 float32
	Step                           float32 // lr / (1 - β1^t)
	SqrtBC2                        float32 // √(1 - β2^t)
	Eps                            float32
}

// Adam applies one update to parameters w with gradients g and moments m,
// v (all the same length), as torch.optim.Adam does in float32.
func Adam(w, g, m, v []float32, c AdamCoef) {
	if len(g) != len(w) || len(m) != len(w) || len(v) != len(w) {
		panic(fmt.Sprintf("kernel: Adam on %d parameters with %d gradients and %d/%d moments", len(w), len(g), len(m), len(v)))
	}
	n := 0
	if useSIMD() && len(w) >= 8 {
		n = len(w) &^ 7
		adam8(&w[0], &g[0], &m[0], &v[0], n, c.B1, c.OneMinusB1, c.B2, c.OneMinusB2, c.Step, c.SqrtBC2, c.Eps)
	}
	for i := n; i < len(w); i++ {
		gi := g[i]
		mi := c.B1*m[i] + c.OneMinusB1*gi
		vi := c.B2*v[i] + c.OneMinusB2*gi*gi
		m[i], v[i] = mi, vi
		w[i] -= c.Step * mi / (float32(math.Sqrt(float64(vi)))/c.SqrtBC2 + c.Eps)
	}
}

// SumSquares returns Σ float64(x[i])², in float64 (a gradient norm's sum).
// The vector path keeps 16 lane sums; the Go path sums in the same order,
// so every backend returns the same bits.
func SumSquares(x []float32) float64 {
	var lanes [16]float64
	n := len(x) &^ 15
	if useSIMD() && n > 0 {
		sumSq16(&x[0], n, &lanes)
	} else {
		for i := 0; i < n; i += 16 {
			v := (*[16]float32)(x[i : i+16])
			for l, f := range v {
				lanes[l] += float64(f) * float64(f)
			}
		}
	}
	var v [4]float64
	for l := range v {
		v[l] = (lanes[l] + lanes[4+l]) + (lanes[8+l] + lanes[12+l])
	}
	s := (v[0] + v[2]) + (v[1] + v[3])
	for _, f := range x[n:] {
		s += float64(f) * float64(f)
	}
	return s
}
