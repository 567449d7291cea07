package run

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/safetensors"
)

// The files of a run directory.
//
// MetricsFile is the curve, a CSV row per evaluation point; SummaryFile
// the final evaluation as JSON, written only by a finished run (tools
// such as gfn bench take it to mean the run is done). CheckpointFile
// holds everything a resumed run needs, so that one atomic rename keeps
// a checkpoint consistent; ConfigFile repeats the settings and counters
// for people and is written after it.
const (
	MetricsFile    = "metrics.csv"
	SummaryFile    = "summary.json"
	CheckpointFile = "checkpoint.safetensors"
	ConfigFile     = "config.json"
)

// Cell formats v for a CSV cell: strconv's 'g' format with digits
// significant digits, and the empty cell for NaN (a value not computed).
func Cell(v float64, digits int) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', digits, 64)
}

// WriteCSV writes header and then rows to w as encoding/csv writes
// records: comma-separated, quoted where a cell needs it, "\n" line ends.
// The error is the first the writer returned.
func WriteCSV(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	cw.Write(header)
	for _, row := range rows {
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// Nullable is v for a JSON number, nil (null) where JSON has no number:
// NaN (a metric not computed) and ±Inf. The pointer is to a copy.
func Nullable(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// WriteJSON replaces path atomically with v as JSON indented by two
// spaces and ended by a newline. An error (v not encodable, the write
// failed) leaves the previous file as it was.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteBytes(path, append(b, '\n'))
}

// WriteCheckpoint replaces path atomically with the safetensors file of
// ts whose metadata are the run's state under key (JSON, of the family's
// own layout; the key tells the families' checkpoints apart) beside
// "format": "pt", which PyTorch's loaders ask for, and "producer": "gfn".
func WriteCheckpoint(path string, ts []safetensors.Tensor, key string, state []byte) error {
	meta := map[string]string{"format": "pt", "producer": "gfn", key: string(state)}
	return safefile.Write(path, func(w io.Writer) error { return safetensors.Write(w, ts, meta) })
}

// WriteOutputs writes a finished run's outputs into dir in this order:
// MetricsFile (curve writes its CSV), SummaryFile (summary as by
// WriteJSON), then the final checkpoint (checkpoint). The summary marks
// the run finished for tools, so it comes only after the curve is
// complete; a crash before the final checkpoint leaves the last periodic
// one, from which the resumed run writes the same outputs again. The
// first error stops it.
func WriteOutputs(dir string, curve func(io.Writer) error, summary any, checkpoint func() error) error {
	if err := safefile.Write(filepath.Join(dir, MetricsFile), curve); err != nil {
		return err
	}
	if err := WriteJSON(filepath.Join(dir, SummaryFile), summary); err != nil {
		return err
	}
	return checkpoint()
}
