package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/progress"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/safetensors"
	"github.com/gfngo/gfn/tfevents"
)

// Options control Drive's outputs, checkpoints and progress. The zero
// value trains, evaluates and writes nothing.
type Options struct {
	// OutDir receives metrics.csv, summary.json, the checkpoint,
	// config.json and the figures; empty writes nothing.
	OutDir string
	// EvalEvery is the number of units between curve points (0: the
	// family's default). A resumed run keeps its own; another value is
	// an error.
	EvalEvery int
	// CheckpointEvery, if positive, writes a checkpoint every that many
	// units. Whatever it is, a run with an OutDir checkpoints when it is
	// cancelled, when a recoverable error stops it, and at the end. A
	// resumed run keeps its own when this is 0.
	CheckpointEvery int
	// NoFigures skips the PNG figures.
	NoFigures bool
	// Progress, if set, receives a progress bar (ProgressTTY: redrawn in
	// place).
	Progress    io.Writer
	ProgressTTY bool
	// AfterCheckpoint, if set, is called after each periodic checkpoint
	// with the units done; an error stops the run there (tests simulate
	// a kill with it).
	AfterCheckpoint func(done int) error
	// TensorBoard, with an OutDir, also appends every curve point to a
	// TensorBoard event file there (package tfevents): each column but
	// the unit label as a scalar at the label's step. A resumed run keeps
	// it on.
	TensorBoard bool
}

// Summary holds the fields every family's summary.json shares; a
// family's summary embeds it and the driver fills it.
type Summary struct {
	Family string `json:"family"`
	Unit   string `json:"unit"`
	// Steps is the number of units done.
	Steps int `json:"steps"`
	// Times in seconds (Train: the units alone; Eval: the curve's
	// points and the final evaluation) and per unit in milliseconds: the
	// mean over all units and over the first and the last tenth.
	WallSeconds    float64 `json:"wall_seconds"`
	TrainSeconds   float64 `json:"train_seconds"`
	EvalSeconds    float64 `json:"eval_seconds"`
	MsPerStepMean  float64 `json:"ms_per_step_mean"`
	MsPerStepEarly float64 `json:"ms_per_step_early"`
	MsPerStepLate  float64 `json:"ms_per_step_late"`
	Resumed        int     `json:"resumed,omitempty"`
	Kernel         string  `json:"kernel"`
	// Precision is the precision of the networks' hidden-layer products
	// when it is not float32 ("bf16"), and BF16Kernel the bfloat16 kernel
	// that ran them (kernel.BF16Kernel: "amx" or "avx512bf16"). Both are
	// left out for float32 runs (SetPrecision), whose summaries are as
	// before.
	Precision  string `json:"precision,omitempty"`
	BF16Kernel string `json:"bf16_kernel,omitempty"`
}

// SetPrecision records p, the precision of the run's hidden-layer
// products: for nn.BF16 its name and kernel.BF16Kernel, nothing for
// nn.FP32.
func (s *Summary) SetPrecision(p nn.Precision) {
	s.Precision, s.BF16Kernel = "", ""
	if p != nn.FP32 {
		s.Precision, s.BF16Kernel = p.String(), kernel.BF16Kernel()
	}
}

// Base returns s; through embedding, a family's summary has it too.
func (s *Summary) Base() *Summary { return s }

// Baser is a summary that embeds Summary.
type Baser interface {
	Base() *Summary
}

// Outcome is what Drive and Resume return besides the files.
type Outcome struct {
	Curve   *Curve
	Summary any
}

// Interrupted is the error of a run whose context was cancelled: it
// names how far the run got and where its checkpoint is (Dir empty:
// none was written). It wraps the context's error.
type Interrupted struct {
	Unit        string
	Done, Total int
	Dir         string
	Err         error
}

// Error says where the run stopped and where its checkpoint is.
func (e *Interrupted) Error() string {
	s := fmt.Sprintf("run: interrupted at %s %d of %d", e.Unit, e.Done, e.Total)
	if e.Dir != "" {
		s += " (checkpoint in " + e.Dir + ")"
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the context's error.
func (e *Interrupted) Unwrap() error { return e.Err }

// driver is one run in progress.
type driver struct {
	ctx  context.Context
	f    Family
	opt  Options
	lay  Layout
	cad  Cadence
	h    Header
	cur  Curve
	sums []float64
	defd []bool // a defined value went into sums[j]
	n    int    // units since the last point
	ns   []int64
	clk  Clock

	meanAt, wallAt int
	meanCol        []int
	lastPoint      int // units done at the last point; -1: none
	checkpointed   int // units done at the last checkpoint written
	tb             *tfevents.Writer
}

// Drive trains f from its current state to the end of its budget,
// taking the curve's points, checkpointing as opt says, and writing the
// outputs: metrics.csv, summary.json, the final checkpoint, then the
// figures. A cancelled ctx stops it between units with an *Interrupted
// error, after a checkpoint when opt.OutDir is set.
func Drive(ctx context.Context, f Family, opt Options) (*Outcome, error) {
	d, err := newDriver(ctx, f, opt)
	if err != nil {
		return nil, err
	}
	d.h.Every, d.h.CheckpointEvery, d.h.NoFigures = d.cad.Every, opt.CheckpointEvery, opt.NoFigures
	d.h.TensorBoard = opt.TensorBoard
	if err := d.startLive(true); err != nil {
		return nil, err
	}
	defer d.stopLive()
	if d.cad.AtStart {
		if err := d.point(); err != nil {
			return nil, d.evalFailed(err)
		}
	}
	return d.loop()
}

func newDriver(ctx context.Context, f Family, opt Options) (*driver, error) {
	if opt.CheckpointEvery < 0 {
		return nil, fmt.Errorf("run: checkpoint interval %d must be >= 0 (0: at the end, on cancel and on failure only)", opt.CheckpointEvery)
	}
	if opt.EvalEvery < 0 {
		return nil, fmt.Errorf("run: evaluation interval %d must be >= 0 (0: the family's default)", opt.EvalEvery)
	}
	// An unusable directory is reported now, not at the first checkpoint.
	if opt.OutDir != "" {
		if err := safefile.CheckDir(opt.OutDir); err != nil {
			return nil, err
		}
	}
	lay := f.Layout()
	d := &driver{ctx: ctx, f: f, opt: opt, lay: lay, cad: lay.Cadence, lastPoint: -1, checkpointed: -1, clk: Clock{Start: time.Now()}}
	if opt.EvalEvery > 0 {
		d.cad.Every = opt.EvalEvery
	}
	if d.cad.Every <= 0 {
		d.cad.Every = 1
	}
	d.cur = Curve{Columns: lay.Columns, Digits: lay.Digits}
	d.wallAt = d.cur.Index("wall_seconds")
	for _, m := range lay.Means {
		j := d.cur.Index(m)
		if j < 0 {
			panic("run: mean " + m + " is not a column of the layout")
		}
		d.meanCol = append(d.meanCol, j)
	}
	d.sums, d.defd = make([]float64, len(lay.Means)), make([]bool, len(lay.Means))
	d.h.Kind, d.h.Unit, d.h.Columns = lay.Kind, lay.Unit, d.cur.Names()
	return d, nil
}

// Resume continues the run of checkpoint c (from Open) with f, which the
// family built from c's configuration (its budget possibly raised: a
// finished run is extended then, and its curve continues). The result
// of a run resumed from a periodic checkpoint equals the uninterrupted
// run's, wall-clock times aside. opt.OutDir empty means c's directory.
func Resume(ctx context.Context, c *Checkpoint, f Family, opt Options) (*Outcome, error) {
	h := c.Header
	dir := filepath.Dir(c.Path)
	if opt.OutDir == "" {
		opt.OutDir = dir
	}
	if opt.EvalEvery != 0 && opt.EvalEvery != h.Every {
		return nil, fmt.Errorf("run: resume from %s: evaluation interval %d differs from the run's %d (the curve would change; 0 keeps the run's)", dir, opt.EvalEvery, h.Every)
	}
	opt.EvalEvery = h.Every
	if opt.CheckpointEvery == 0 {
		opt.CheckpointEvery = h.CheckpointEvery
	}
	opt.NoFigures = opt.NoFigures || h.NoFigures
	opt.TensorBoard = opt.TensorBoard || h.TensorBoard
	d, err := newDriver(ctx, f, opt)
	if err != nil {
		return nil, err
	}
	if h.Kind != d.lay.Kind {
		return nil, fmt.Errorf("run: %s is a %s checkpoint, not a %s one", c.Path, h.Kind, d.lay.Kind)
	}
	if err := d.restore(c); err != nil {
		return nil, err
	}
	if h.Finished && f.Done() {
		done, total := f.Progress()
		return nil, &finishedError{dir: dir, unit: h.Unit, done: done, total: total}
	}
	if filepath.Clean(opt.OutDir) == filepath.Clean(dir) {
		tidy(dir)
	}
	d.h.TensorBoard = opt.TensorBoard
	if err := d.startLive(false); err != nil {
		return nil, err
	}
	defer d.stopLive()
	if h.EvalPending {
		if err := d.point(); err != nil {
			return nil, d.evalFailed(err)
		}
	}
	return d.loop()
}

// restore sets the driver and the family from c.
func (d *driver) restore(c *Checkpoint) error {
	h := c.Header
	wrap := func(err error) error { return fmt.Errorf("run: checkpoint %s: %w", c.Path, err) }
	for _, a := range d.f.Agents() {
		if err := loadAgent(a, c.Tensors); err != nil {
			return wrap(err)
		}
	}
	for _, s := range d.f.Streams() {
		b, ok := h.Streams[s.Name]
		if !ok {
			return fmt.Errorf("run: checkpoint %s: no random stream %q", c.Path, s.Name)
		}
		if err := s.Src.UnmarshalBinary(b); err != nil {
			return fmt.Errorf("run: checkpoint %s: random stream %q: %w", c.Path, s.Name, err)
		}
	}
	var own []safetensors.Tensor
	for _, x := range c.Tensors {
		switch x.Name {
		case curveTensor:
			if err := d.cur.setRows(x, h.Columns); err != nil {
				return wrap(err)
			}
		case unitNsTensor:
			v, err := x.Int64s()
			if err != nil {
				return wrap(err)
			}
			d.ns = v
		default:
			own = append(own, x)
		}
	}
	if err := d.f.Restore(State{JSON: h.State, Tensors: own}); err != nil {
		return err
	}
	if len(h.MeanSums) != len(d.sums) {
		return fmt.Errorf("run: checkpoint %s: %d mean sums, the layout has %d means", c.Path, len(h.MeanSums), len(d.sums))
	}
	for j, s := range h.MeanSums {
		d.sums[j], d.defd[j] = 0, s != nil
		if s != nil {
			d.sums[j] = *s
		}
	}
	d.n = h.MeanUnits
	d.h = h
	d.h.Resumed++
	d.h.Failed, d.h.Finished = "", false
	d.clk.Before = h.WallSeconds
	done, _ := d.f.Progress()
	d.checkpointed = done
	if d.cur.Len() > 0 {
		d.lastPoint = int(d.cur.Rows[d.cur.Len()-1][0]) + d.cad.Base
	}
	return nil
}

// tidy removes what a crash during a write may have left in dir.
func tidy(dir string) {
	for _, f := range []string{CheckpointFile, ConfigFile, MetricsFile, SummaryFile} {
		tmp, _ := filepath.Glob(filepath.Join(dir, "."+f+".tmp*"))
		for _, name := range tmp {
			os.Remove(name) // leftovers only: a failure changes nothing
		}
	}
}

// loop trains to the end, then finishes.
func (d *driver) loop() (*Outcome, error) {
	f, opt := d.f, d.opt
	status, _ := f.(Statuser)
	var bar *progress.Bar
	if opt.Progress != nil {
		done, total := f.Progress()
		bar = progress.New(opt.Progress, "train", total, opt.ProgressTTY)
		bar.From(done)
	}
	for !f.Done() {
		if err := d.ctx.Err(); err != nil {
			return nil, d.interrupted(err)
		}
		t0 := time.Now()
		v, err := f.Step()
		if err != nil {
			return nil, d.failed(err)
		}
		d.ns = append(d.ns, int64(time.Since(t0)))
		for j, x := range v {
			if !math.IsNaN(x) {
				d.sums[j] += x
				d.defd[j] = true
			}
		}
		d.n++
		done, _ := f.Progress()
		if d.cad.due(done) || (d.cad.AtEnd && f.Done()) {
			if err := d.point(); err != nil {
				return nil, d.evalFailed(err)
			}
		}
		if opt.OutDir != "" && opt.CheckpointEvery > 0 && done%opt.CheckpointEvery == 0 && !f.Done() {
			if err := d.checkpoint(false); err != nil {
				return nil, err
			}
			if opt.AfterCheckpoint != nil {
				if err := opt.AfterCheckpoint(done); err != nil {
					return nil, err
				}
			}
		}
		if bar != nil {
			s := ""
			if status != nil {
				s = status.Status()
			}
			bar.Update(done, s)
		}
	}
	if d.cad.AtEnd {
		if done, _ := f.Progress(); d.lastPoint != done {
			if err := d.point(); err != nil {
				return nil, d.evalFailed(err)
			}
		}
	}
	if bar != nil {
		bar.Finish()
		fmt.Fprintln(opt.Progress, "evaluating the final state")
	}
	return d.finish()
}

// point takes the curve's point after the current unit. A failed
// evaluation leaves the random streams as they were.
func (d *driver) point() error {
	snap := d.snapshot()
	t0 := time.Now()
	done, _ := d.f.Progress()
	row := make([]float64, len(d.cur.Columns))
	for j := range row {
		row[j] = math.NaN()
	}
	row[0] = float64(done - d.cad.Base)
	for j, c := range d.meanCol {
		if d.defd[j] && d.n > 0 {
			row[c] = d.sums[j] / float64(d.n)
		}
	}
	if err := d.f.Point(row); err != nil {
		d.undo(snap)
		d.h.EvalPending = true
		return err
	}
	if d.wallAt >= 0 {
		row[d.wallAt] = d.clk.Seconds()
	}
	d.h.EvalPending = false
	d.h.EvalSeconds += time.Since(t0).Seconds()
	d.cur.Rows = append(d.cur.Rows, row)
	clear(d.sums)
	clear(d.defd)
	d.n = 0
	d.lastPoint = done
	return d.live(row)
}

// snapshot and undo save and restore every random stream.
func (d *driver) snapshot() [][]byte {
	var s [][]byte
	for _, st := range d.f.Streams() {
		b, _ := st.Src.MarshalBinary() // a PCG's never fails
		s = append(s, b)
	}
	return s
}

func (d *driver) undo(s [][]byte) {
	for i, st := range d.f.Streams() {
		if err := st.Src.UnmarshalBinary(s[i]); err != nil {
			panic("run: restoring a stream it saved: " + err.Error())
		}
	}
}

// recoverable reports whether err leaves a state worth a checkpoint.
func (d *driver) recoverable(err error) bool {
	r, ok := d.f.(Recoverer)
	return ok && r.Recoverable(err) && d.opt.OutDir != ""
}

// failed returns err, after a checkpoint when it is recoverable.
func (d *driver) failed(err error) error {
	if !d.recoverable(err) {
		return err
	}
	d.h.Failed = err.Error()
	done, _ := d.f.Progress()
	return SaveFailure(err, func() error { return d.checkpoint(false) }, d.lay.Unit, done, d.opt.OutDir)
}

// evalFailed is failed for an evaluation (point or final) whose streams
// were restored: a resume does it again.
func (d *driver) evalFailed(err error) error { return d.failed(err) }

// interrupted checkpoints a cancelled run and says so.
func (d *driver) interrupted(err error) error {
	done, total := d.f.Progress()
	e := &Interrupted{Unit: d.lay.Unit, Done: done, Total: total, Err: err}
	if d.opt.OutDir == "" {
		return e
	}
	if d.checkpointed != done {
		if cerr := d.checkpoint(false); cerr != nil {
			return CheckpointFailed(e, cerr)
		}
	}
	e.Dir = d.opt.OutDir
	return e
}

// checkpoint writes the run's state after the current unit; periodic
// ones write the curve so far too, so that a long run can be watched.
func (d *driver) checkpoint(finished bool) error {
	f := d.f
	var ts []safetensors.Tensor
	d.h.Agents = d.h.Agents[:0]
	for _, a := range f.Agents() {
		ts = append(ts, agentTensors(a)...)
		d.h.Agents = append(d.h.Agents, a.Name)
	}
	st, err := f.Save()
	if err != nil {
		return err
	}
	ts = append(ts, st.Tensors...)
	ts = append(ts, d.cur.tensor(), safetensors.I64(unitNsTensor, []int{len(d.ns)}, d.ns))
	h := &d.h
	h.Done, h.Total = f.Progress()
	h.Finished = finished
	h.WallSeconds = d.clk.Seconds()
	h.State = st.JSON
	if h.Config, err = json.Marshal(d.lay.Config); err != nil {
		return fmt.Errorf("run: checkpoint: configuration: %w", err)
	}
	h.Streams = map[string][]byte{}
	for _, s := range f.Streams() {
		h.Streams[s.Name], _ = s.Src.MarshalBinary()
	}
	h.MeanSums, h.MeanUnits = make([]*float64, len(d.sums)), d.n
	for j, s := range d.sums {
		if d.defd[j] {
			h.MeanSums[j] = Nullable(s)
		}
	}
	if err := writeCheckpoint(d.opt.OutDir, h, ts); err != nil {
		return err
	}
	d.checkpointed = h.Done
	if finished {
		return nil
	}
	return safefile.Write(filepath.Join(d.opt.OutDir, MetricsFile), d.cur.WriteCSV)
}

// finish runs the final evaluation and writes the outputs.
func (d *driver) finish() (*Outcome, error) {
	snap := d.snapshot()
	t0 := time.Now()
	s, err := d.f.Finish(&d.cur)
	if err != nil {
		d.undo(snap) // a resume evaluates again from the same streams
		return nil, d.evalFailed(err)
	}
	// The final evaluation counts as evaluation too (an exact W2 of
	// 10,000 samples can outlast the training).
	d.h.EvalSeconds += time.Since(t0).Seconds()
	if b, ok := s.(Baser); ok {
		c := b.Base()
		c.Family, c.Unit = d.lay.Kind, d.lay.Unit
		c.Steps, _ = d.f.Progress()
		var sum time.Duration
		for _, ns := range d.ns {
			sum += time.Duration(ns)
		}
		c.TrainSeconds, c.EvalSeconds = sum.Seconds(), d.h.EvalSeconds
		durs := make([]time.Duration, len(d.ns))
		for i, ns := range d.ns {
			durs[i] = time.Duration(ns)
		}
		c.MsPerStepEarly, c.MsPerStepLate, c.MsPerStepMean = IterStats(durs)
		c.Resumed, c.Kernel = d.h.Resumed, string(kernel.Name())
		c.WallSeconds = d.clk.Seconds()
	}
	out := &Outcome{Curve: &d.cur, Summary: s}
	dir := d.opt.OutDir
	if dir == "" {
		return out, nil
	}
	if err := WriteOutputs(dir, d.cur.WriteCSV, s, func() error { return d.checkpoint(true) }); err != nil {
		return nil, err
	}
	if fg, ok := d.f.(Figurer); ok && !d.opt.NoFigures {
		if err := fg.Figures(dir, &d.cur); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NewStream returns a PCG stream seeded by seed and the stream number
// id, the way every family seeds its named streams.
func NewStream(seed, id uint64) (*rand.PCG, *rand.Rand) {
	src := rand.NewPCG(seed, id)
	return src, rand.New(src)
}

// IsInterrupted reports whether err is a cancelled run's.
func IsInterrupted(err error) (*Interrupted, bool) {
	var e *Interrupted
	ok := errors.As(err, &e)
	return e, ok
}

// finishedError is Resume's error for a finished run whose budget was
// not raised; it matches ErrFinished.
type finishedError struct {
	dir, unit   string
	done, total int
}

func (e *finishedError) Error() string {
	return fmt.Sprintf("run: the run in %s is finished (%d of %d %ss): raise its budget to extend it", e.dir, e.done, e.total, e.unit)
}

func (e *finishedError) Is(target error) bool { return target == ErrFinished }

// Restore sets f's agents, random streams and own state from checkpoint
// c without training (a family's Load), and returns the checkpoint's
// curve in f's layout.
func Restore(c *Checkpoint, f Family) (*Curve, error) {
	d, err := newDriver(context.Background(), f, Options{})
	if err != nil {
		return nil, err
	}
	if c.Header.Kind != d.lay.Kind {
		return nil, fmt.Errorf("run: %s is a %s checkpoint, not a %s one", c.Path, c.Header.Kind, d.lay.Kind)
	}
	if err := d.restore(c); err != nil {
		return nil, err
	}
	return &d.cur, nil
}
