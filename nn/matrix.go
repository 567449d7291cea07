package nn

import "fmt"

// Matrix is a dense row-major float32 matrix.
type Matrix struct {
	Rows, Cols int
	Data       []float32
}

// NewMatrix returns a zeroed rows×cols matrix.
func NewMatrix(rows, cols int) *Matrix {
	return &Matrix{Rows: rows, Cols: cols, Data: make([]float32, rows*cols)}
}

// Resize sets the shape, reusing the backing array when it is large enough.
// The contents are unspecified afterwards.
func (m *Matrix) Resize(rows, cols int) {
	n := rows * cols
	if cap(m.Data) < n {
		m.Data = make([]float32, n, n+n/4)
	}
	m.Rows, m.Cols, m.Data = rows, cols, m.Data[:n]
}

// Row returns row i as a slice aliasing the matrix.
func (m *Matrix) Row(i int) []float32 { return m.Data[i*m.Cols : (i+1)*m.Cols] }

// At returns element (i, j).
func (m *Matrix) At(i, j int) float32 { return m.Data[i*m.Cols+j] }

// Zero sets every element to 0.
func (m *Matrix) Zero() { clear(m.Data) }

// MatMul sets (or with accumulate, adds to) dst = op(a)·op(b) in float32.
// dst must already have the result's shape.
func MatMul(dst *Matrix, a *Matrix, transA bool, b *Matrix, transB bool, accumulate bool) {
	matMul(FP32, dst, a, transA, b, transB, accumulate)
}

// MatMul is the package's MatMul in precision p, for networks built from
// their own layers (as nn's Linear does with its SetPrecision). Check p
// first: on a CPU without AVX512_BF16 or AMX-BF16, BF16 runs the slow
// portable kernel.
func (p Precision) MatMul(dst *Matrix, a *Matrix, transA bool, b *Matrix, transB bool, accumulate bool) {
	matMul(p, dst, a, transA, b, transB, accumulate)
}

// matMul is MatMul in precision p.
func matMul(p Precision, dst *Matrix, a *Matrix, transA bool, b *Matrix, transB bool, accumulate bool) {
	m, k := a.Rows, a.Cols
	if transA {
		m, k = k, m
	}
	kb, n := b.Rows, b.Cols
	if transB {
		kb, n = n, kb
	}
	if k != kb || dst.Rows != m || dst.Cols != n {
		panic(fmt.Sprintf("nn: MatMul shapes %d×%d (T=%v) · %d×%d (T=%v) -> %d×%d", a.Rows, a.Cols, transA, b.Rows, b.Cols, transB, dst.Rows, dst.Cols))
	}
	p.gemm(transA, transB, m, n, k, a.Data, a.Cols, b.Data, b.Cols, dst.Data, dst.Cols, accumulate)
}
