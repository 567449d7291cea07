package view

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
)

// MaxMetricsBytes bounds the metrics.csv a Scanner reads; a larger file
// is reported unreadable rather than read.
const MaxMetricsBytes = 64 << 20

// Metrics is a run's curve as metrics.csv holds it: the column names and
// a row of values per point, NaN for an empty cell (not computed).
type Metrics struct {
	Columns []string
	Rows    [][]float64
}

// Column returns the named column over all rows (nil if there is none).
func (m *Metrics) Column(name string) []float64 {
	for j, c := range m.Columns {
		if c == name {
			v := make([]float64, len(m.Rows))
			for i, r := range m.Rows {
				v[i] = r[j]
			}
			return v
		}
	}
	return nil
}

// Last is the last row's value of the named column (NaN without rows or
// without the column).
func (m *Metrics) Last(name string) float64 {
	if v := m.Column(name); len(v) > 0 {
		return v[len(v)-1]
	}
	return math.NaN()
}

// ParseMetrics reads a metrics.csv: a header of distinct, non-empty
// column names, then rows of as many cells, each a number or empty. It
// refuses, naming the line and the cell, what a half-written or corrupt
// file holds: no header, a row of another length, a cell that is not a
// number, a last line without its newline.
func ParseMetrics(b []byte) (*Metrics, error) {
	if len(b) == 0 {
		return nil, errors.New("view: empty file (no header)")
	}
	if b[len(b)-1] != '\n' {
		return nil, fmt.Errorf("view: line %d has no end: the file is half-written", bytes.Count(b, []byte{'\n'})+1)
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("view: header: %w", err)
	}
	m := &Metrics{Columns: append([]string(nil), head...)}
	seen := map[string]bool{}
	for j, c := range m.Columns {
		if c == "" {
			return nil, fmt.Errorf("view: header: column %d has no name", j+1)
		}
		if seen[c] {
			return nil, fmt.Errorf("view: header: column %q appears twice", c)
		}
		seen[c] = true
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return m, nil
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
				return nil, fmt.Errorf("view: line %d has %d cells, the header %d: the file is half-written or corrupt", pe.Line, len(rec), len(m.Columns))
			}
			return nil, err
		}
		row := make([]float64, len(rec))
		for j, cell := range rec {
			if cell == "" {
				row[j] = math.NaN()
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				return nil, fmt.Errorf("view: line %d, column %s: %q is not a number", line, m.Columns[j], cell)
			}
			row[j] = v
		}
		m.Rows = append(m.Rows, row)
	}
}

// ReadMetrics reads and parses the metrics.csv at path (at most
// MaxMetricsBytes).
func ReadMetrics(path string) (*Metrics, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxMetricsBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxMetricsBytes {
		return nil, fmt.Errorf("view: %s is larger than %d bytes", path, MaxMetricsBytes)
	}
	return ParseMetrics(b)
}
