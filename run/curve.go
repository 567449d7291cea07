package run

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/gfngo/gfn/safetensors"
)

// Curve is a run's training curve: one row of float64 values per point,
// a value per column (NaN: not computed). It has one code path to CSV
// (metrics.csv) and one to a checkpoint tensor.
type Curve struct {
	Columns []Column
	Rows    [][]float64
	// Digits is the significant digits of a CSV cell (0: 10).
	Digits int
}

// Len is the number of points.
func (c *Curve) Len() int { return len(c.Rows) }

// Index is the position of the named column, or -1.
func (c *Curve) Index(name string) int {
	for i, col := range c.Columns {
		if col.Name == name {
			return i
		}
	}
	return -1
}

// Value is the named column of point i (NaN if there is no such column).
func (c *Curve) Value(i int, name string) float64 {
	if j := c.Index(name); j >= 0 {
		return c.Rows[i][j]
	}
	return math.NaN()
}

// Column is the named column over all points (nil if there is none).
func (c *Curve) Column(name string) []float64 {
	j := c.Index(name)
	if j < 0 {
		return nil
	}
	v := make([]float64, len(c.Rows))
	for i, r := range c.Rows {
		v[i] = r[j]
	}
	return v
}

// Last is the named column of the last point (NaN without points).
func (c *Curve) Last(name string) float64 {
	if len(c.Rows) == 0 {
		return math.NaN()
	}
	return c.Value(len(c.Rows)-1, name)
}

// Names lists the column names.
func (c *Curve) Names() []string {
	names := make([]string, len(c.Columns))
	for i, col := range c.Columns {
		names[i] = col.Name
	}
	return names
}

// WriteCSV writes the curve as CSV: the column names, then a row per
// point; integer columns as integers, the others with Digits significant
// digits, NaN as an empty cell.
func (c *Curve) WriteCSV(w io.Writer) error {
	digits := c.Digits
	if digits == 0 {
		digits = 10
	}
	rows := make([][]string, len(c.Rows))
	for i, r := range c.Rows {
		row := make([]string, len(r))
		for j, v := range r {
			if c.Columns[j].Int && !math.IsNaN(v) {
				row[j] = strconv.FormatInt(int64(v), 10)
			} else {
				row[j] = Cell(v, digits)
			}
		}
		rows[i] = row
	}
	return WriteCSV(w, c.Names(), rows)
}

// curveTensor is the checkpoint tensor of the curve's rows.
const curveTensor = "run.curve"

func (c *Curve) tensor() safetensors.Tensor {
	flat := make([]float64, 0, len(c.Rows)*len(c.Columns))
	for _, r := range c.Rows {
		flat = append(flat, r...)
	}
	return safetensors.F64(curveTensor, []int{len(c.Rows), len(c.Columns)}, flat)
}

// setRows reads the rows of a checkpoint's curve tensor, whose columns
// are names (the header's); a column the layout has and the checkpoint
// lacks reads NaN, so that families may add columns.
func (c *Curve) setRows(x safetensors.Tensor, names []string) error {
	v, err := x.Float64s()
	if err != nil {
		return err
	}
	k := len(names)
	if k == 0 || len(v)%k != 0 {
		return fmt.Errorf("run: tensor %s holds %d values, not rows of %d columns", curveTensor, len(v), k)
	}
	at := make([]int, len(c.Columns))
	for j, col := range c.Columns {
		at[j] = -1
		for m, n := range names {
			if n == col.Name {
				at[j] = m
			}
		}
	}
	c.Rows = c.Rows[:0]
	for i := 0; i < len(v); i += k {
		row := make([]float64, len(c.Columns))
		for j, m := range at {
			row[j] = math.NaN()
			if m >= 0 {
				row[j] = v[i+m]
			}
		}
		c.Rows = append(c.Rows, row)
	}
	return nil
}
