package bench

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// readColumns reads the named columns of the metrics.csv in dir as
// numbers (an empty or unparsable cell is NaN). The required columns must
// be there; an optional one that is not is left out of the map. (The csv
// reader refuses rows of another length than the header's.)
func readColumns(dir string, required, optional []string) (map[string][]float64, error) {
	path := filepath.Join(dir, "metrics.csv")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		return nil, fmt.Errorf("bench: %s: unreadable or empty (%v)", path, err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	out := map[string][]float64{}
	read := func(k string) {
		v := make([]float64, len(rows)-1)
		for r, row := range rows[1:] {
			x, err := strconv.ParseFloat(row[col[k]], 64)
			if err != nil {
				x = math.NaN()
			}
			v[r] = x
		}
		out[k] = v
	}
	for _, k := range required {
		if _, ok := col[k]; !ok {
			return nil, fmt.Errorf("bench: %s has no %s column", path, k)
		}
		read(k)
	}
	for _, k := range optional {
		if _, ok := col[k]; ok {
			read(k)
		}
	}
	return out, nil
}
