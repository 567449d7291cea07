package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/safetensors"
)

// Format is the version of the checkpoint layout this package writes and
// reads. Format 1 was each family's own layout (metadata "gfn_train_state",
// "gfn_state", "gfn_seq_state"), refused with a word on converting it.
const Format = 2

// Checkpoint metadata keys: the header as JSON, and its CRC-32C.
const (
	headerKey    = "gfn"
	headerCRCKey = "gfn_crc32c"
	unitNsTensor = "run.unit_ns"
)

// castagnoli is CRC-32C's table (hardware-accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is a checkpoint's description and the driver's state besides
// tensors. A safetensors reader sees it as the "gfn" metadata entry.
type Header struct {
	Format int    `json:"format"`
	Kind   string `json:"kind"`
	Unit   string `json:"unit"`
	// Done and Total are the units done and planned.
	Done  int `json:"done"`
	Total int `json:"total"`
	// Finished: written with the final outputs. Failed: after the error
	// it holds (a resume continues). EvalPending: the evaluation after
	// unit Done failed, and a resume takes it first.
	Finished    bool   `json:"finished,omitempty"`
	Failed      string `json:"failed,omitempty"`
	EvalPending bool   `json:"eval_pending,omitempty"`
	Resumed     int    `json:"resumed,omitempty"`
	// WallSeconds and EvalSeconds are the run's times so far.
	WallSeconds float64 `json:"wall_seconds"`
	EvalSeconds float64 `json:"eval_seconds"`
	// The resolved cadence and checkpoint interval a resume keeps.
	Every           int  `json:"eval_every"`
	CheckpointEvery int  `json:"checkpoint_every"`
	NoFigures       bool `json:"no_figures,omitempty"`
	TensorBoard     bool `json:"tensorboard,omitempty"`
	// Columns name the run.curve tensor's columns.
	Columns []string `json:"columns"`
	// MeanSums are the sums behind the next point's means, over
	// MeanUnits units (NaN sums are stored as null).
	MeanSums  []*float64 `json:"mean_sums"`
	MeanUnits int        `json:"mean_units"`
	// Streams are the random streams' states by name.
	Streams map[string][]byte `json:"streams"`
	Agents  []string          `json:"agents"`
	// Config is the family's description (Layout.Config); State its own
	// state (Family.Save).
	Config json.RawMessage `json:"config,omitempty"`
	State  json.RawMessage `json:"state,omitempty"`
	// CRC is the CRC-32C of each tensor's data, by name.
	CRC map[string]string `json:"crc32c"`
}

// Checkpoint is a checkpoint read and verified by Open.
type Checkpoint struct {
	Path    string
	Header  Header
	Tensors []safetensors.Tensor
}

// Tensor returns the named tensor.
func (c *Checkpoint) Tensor(name string) (safetensors.Tensor, bool) {
	return State{Tensors: c.Tensors}.Tensor(name)
}

// LegacyError reports a checkpoint in a family's own earlier layout.
type LegacyError struct {
	Path string
	Key  string // its metadata entry: "gfn_train_state", "gfn_state" or "gfn_seq_state"
}

// Error names the file and what converts it.
func (e *LegacyError) Error() string {
	return fmt.Sprintf("run: %s is a checkpoint of an earlier gfn (format 1, %s); convert it with: gfn migrate %s", e.Path, e.Key, filepath.Dir(e.Path))
}

// Open reads the checkpoint in dir and verifies it: its header's
// checksum and every tensor's. A corrupt byte anywhere is an error
// naming the file and, in tensor data, the tensor.
func Open(dir string) (*Checkpoint, error) {
	path := filepath.Join(dir, CheckpointFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	defer f.Close()
	ts, meta, err := safetensors.Read(f)
	if err != nil {
		return nil, fmt.Errorf("run: checkpoint %s: %w", path, err)
	}
	raw, ok := meta[headerKey]
	if !ok {
		for _, k := range []string{"gfn_train_state", "gfn_state", "gfn_seq_state"} {
			if _, ok := meta[k]; ok {
				return nil, &LegacyError{Path: path, Key: k}
			}
		}
		return nil, fmt.Errorf("run: %s is not a gfn checkpoint (no %q metadata)", path, headerKey)
	}
	if want := crcHex([]byte(raw)); meta[headerCRCKey] != want {
		return nil, fmt.Errorf("run: checkpoint %s: the header's checksum is %q, its content's %s: the file is corrupt", path, meta[headerCRCKey], want)
	}
	c := &Checkpoint{Path: path, Tensors: ts}
	if err := json.Unmarshal([]byte(raw), &c.Header); err != nil {
		return nil, fmt.Errorf("run: checkpoint %s: header: %w", path, err)
	}
	if c.Header.Format != Format {
		return nil, fmt.Errorf("run: checkpoint %s has format %d; this build reads %d", path, c.Header.Format, Format)
	}
	for _, x := range ts {
		want, ok := c.Header.CRC[x.Name]
		if !ok {
			return nil, fmt.Errorf("run: checkpoint %s: tensor %q has no checksum: the file is corrupt", path, x.Name)
		}
		if got := crcHex(x.Data); got != want {
			return nil, fmt.Errorf("run: checkpoint %s: tensor %q has checksum %s, recorded %s: the file is corrupt", path, x.Name, got, want)
		}
	}
	if len(ts) != len(c.Header.CRC) {
		return nil, fmt.Errorf("run: checkpoint %s holds %d tensors, its header lists %d: the file is corrupt", path, len(ts), len(c.Header.CRC))
	}
	return c, nil
}

func crcHex(b []byte) string {
	return strconv.FormatUint(uint64(crc32.Checksum(b, castagnoli)), 16)
}

// writeCheckpoint writes h and the tensors atomically into dir, then
// config.json (the header without streams, sums and checksums, for
// people and scripts).
func writeCheckpoint(dir string, h *Header, ts []safetensors.Tensor) error {
	h.Format = Format
	h.CRC = make(map[string]string, len(ts))
	for _, x := range ts {
		if _, dup := h.CRC[x.Name]; dup {
			panic("run: two checkpoint tensors named " + x.Name)
		}
		h.CRC[x.Name] = crcHex(x.Data)
	}
	raw, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("run: checkpoint: %w", err)
	}
	meta := map[string]string{"format": "pt", "producer": "gfn", headerKey: string(raw), headerCRCKey: crcHex(raw)}
	path := filepath.Join(dir, CheckpointFile)
	if err := safefile.Write(path, func(w io.Writer) error { return safetensors.Write(w, ts, meta) }); err != nil {
		return fmt.Errorf("run: checkpoint: %w", err)
	}
	return WriteJSON(filepath.Join(dir, ConfigFile), struct {
		Kind     string          `json:"kind"`
		Unit     string          `json:"unit"`
		Done     int             `json:"done"`
		Total    int             `json:"total"`
		Finished bool            `json:"finished,omitempty"`
		Resumed  int             `json:"resumed,omitempty"`
		Config   json.RawMessage `json:"config,omitempty"`
	}{h.Kind, h.Unit, h.Done, h.Total, h.Finished, h.Resumed, h.Config})
}

// agentTensors lists a's parameters and Adam state.
func agentTensors(a Agent) []safetensors.Tensor {
	ts := nn.ParamTensors(a.Name+".", a.params())
	if a.Opt != nil {
		ts = append(ts, a.Opt.StateTensors(a.Name+".optim.")...)
	}
	return ts
}

func (a Agent) params() []*nn.Param {
	if a.Params != nil {
		return a.Params
	}
	return a.Opt.Params()
}

// loadAgent sets a's parameters and Adam state from ts.
func loadAgent(a Agent, ts []safetensors.Tensor) error {
	if err := nn.LoadParams(a.Name+".", a.params(), ts); err != nil {
		return err
	}
	if a.Opt != nil {
		return a.Opt.LoadState(a.Name+".optim.", ts)
	}
	return nil
}

// ErrFinished is wrapped by Resume's error for a finished run whose
// budget was not raised.
var ErrFinished = errors.New("run: the run is finished")

// Record is the driver's part of a run that Convert writes beside a
// family's state: what a checkpoint of an earlier layout held of it.
type Record struct {
	// Curve holds the points so far (its columns must be the family's
	// layout's).
	Curve Curve
	// UnitNs are the units' durations in nanoseconds.
	UnitNs []int64
	// MeanSums are the sums of Step's values since the last point (NaN:
	// none defined) over MeanUnits units.
	MeanSums  []float64
	MeanUnits int
	// Every and CheckpointEvery are the resolved intervals; Resumed,
	// WallSeconds, EvalSeconds, Finished, Failed and EvalPending as in
	// Header.
	Every, CheckpointEvery   int
	Resumed                  int
	WallSeconds, EvalSeconds float64
	Finished                 bool
	Failed                   string
	EvalPending, NoFigures   bool
}

// Convert writes the checkpoint of family f, restored by its family from
// a checkpoint of an earlier layout, with the driver's part rec, into dir
// (replacing the old one atomically): the conversion behind gfn migrate.
func Convert(dir string, f Family, rec Record) error {
	d, err := newDriver(nil, f, Options{OutDir: dir, EvalEvery: rec.Every, CheckpointEvery: rec.CheckpointEvery, NoFigures: rec.NoFigures})
	if err != nil {
		return err
	}
	if len(rec.MeanSums) != len(d.sums) {
		return fmt.Errorf("run: convert: %d mean sums, the layout has %d means", len(rec.MeanSums), len(d.sums))
	}
	for j, s := range rec.MeanSums {
		d.sums[j], d.defd[j] = s, !math.IsNaN(s)
		if math.IsNaN(s) {
			d.sums[j] = 0
		}
	}
	if rec.Curve.Len() > 0 && len(rec.Curve.Columns) != len(d.cur.Columns) {
		return fmt.Errorf("run: convert: the curve has %d columns, the layout %d", len(rec.Curve.Columns), len(d.cur.Columns))
	}
	d.cur.Rows = rec.Curve.Rows
	d.n, d.ns = rec.MeanUnits, rec.UnitNs
	d.h.Every, d.h.CheckpointEvery, d.h.NoFigures = d.cad.Every, rec.CheckpointEvery, rec.NoFigures
	d.h.Resumed, d.h.EvalSeconds, d.h.Failed, d.h.EvalPending = rec.Resumed, rec.EvalSeconds, rec.Failed, rec.EvalPending
	d.clk = Clock{Start: time.Now(), Before: rec.WallSeconds}
	if err := d.checkpoint(rec.Finished); err != nil {
		return err
	}
	return nil
}
