package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"sort"
	"sync/atomic"
	"time"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/internal/procstat"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/timenet"
)

// DiffusionSpeedCase is one diffusion-sampler configuration to time.
type DiffusionSpeedCase struct {
	Name   string
	Task   string // 25gmm or manywell
	Method diffusion.Method
	// Steady lets every state pass the threshold (a threshold of −∞), as
	// nearly every state does once the Student has learned: the cost of a
	// Teacher iteration for most of a run. A fresh run's first iterations
	// train the Teacher, and score the Teacher's samples, only on the
	// states above the untrained Student's 90th percentile (about a tenth
	// of a batch), so they cost about half as much.
	Steady bool
	// Preset is the diffusion preset the case runs ("": reference).
	Preset string
}

// preset returns the case's preset.
func (c DiffusionSpeedCase) preset() string {
	if c.Preset == "" {
		return "reference"
	}
	return c.Preset
}

// DiffusionSpeedCases are the diffusion rows of `gfn bench speed`: on-policy
// TB and the Teacher on both tasks, reference preset; the Teacher both in a
// fresh run's first iterations and in the steady state; then LGCP (d =
// 1,600) at the sendera preset.
var DiffusionSpeedCases = []DiffusionSpeedCase{
	{"diffusion 25gmm tb", "25gmm", diffusion.MethodTB, false, ""},
	{"diffusion 25gmm teacher", "25gmm", diffusion.MethodTeacher, false, ""},
	{"diffusion 25gmm teacher, steady", "25gmm", diffusion.MethodTeacher, true, ""},
	{"diffusion manywell tb", "manywell", diffusion.MethodTB, false, ""},
	{"diffusion manywell teacher", "manywell", diffusion.MethodTeacher, false, ""},
	{"diffusion manywell teacher, steady", "manywell", diffusion.MethodTeacher, true, ""},
	// The suite's largest target (d = 1,600) at its own preset: the PIS
	// network of width 64, batch 300, T = 100 (issue 43's speed question).
	{"diffusion lgcp tb (sendera)", "lgcp", diffusion.MethodTB, false, "sendera"},
	{"diffusion lgcp teacher, steady (sendera)", "lgcp", diffusion.MethodTeacher, true, "sendera"},
	// The paper preset's Teacher (PIS network: width 64 on 25gmm, 256 on
	// manywell; batch 300), whose runs the paper's diffusion table takes,
	// and its TB on 25gmm: the same network, batch and T as lgcp's row, so
	// their GFLOP/s compare the 2-D and the 1,600-D cases per FLOP.
	{"diffusion 25gmm tb (paper)", "25gmm", diffusion.MethodTB, false, "paper"},
	{"diffusion 25gmm teacher, steady (paper)", "25gmm", diffusion.MethodTeacher, true, "paper"},
	{"diffusion manywell teacher, steady (paper)", "manywell", diffusion.MethodTeacher, true, "paper"},
}

// DiffusionSpeedOptions size the measurement.
type DiffusionSpeedOptions struct {
	Iterations int // timed iterations (default 8)
	Warmup     int // untimed iterations first (default 4: one Teacher cycle, which fills the buffer)
	Seed       uint64
	// Batch, Hidden and Steps replace the case's preset's (reference:
	// 500, 256, 100) when positive (tests use small ones).
	Batch, Hidden, Steps int
	// Precision is the networks' (diffusion.Config.Precision).
	Precision nn.Precision
}

// DiffusionSpeedResult is the timing of one diffusion case.
type DiffusionSpeedResult struct {
	Case                 DiffusionSpeedCase
	Precision            nn.Precision
	Batch, Hidden, Steps int
	Iterations           int
	MedianMs, MeanMs     float64 // per timed iteration
	// GFLOPPerIter is the mean work of a timed iteration's network passes
	// (see WriteDiffusionSpeedTable), GFLOPS that work over the timed
	// iterations' total time; both NaN if the count failed.
	GFLOPPerIter, GFLOPS float64
	// PeakRSSMiB is the process's peak resident set (VmHWM) at the end of
	// the timed iterations; PeakReset says whether the peak was reset
	// before the case (else it includes earlier cases). NaN if unknown.
	PeakRSSMiB float64
	PeakReset  bool
}

// DiffusionSpeed times o.Iterations training iterations of case c (after
// o.Warmup), with the library's trainer as gfn train runs it. The network
// passes are counted in a second run of the same iterations (same seed,
// so the same batches and buffer draws) whose networks are wrapped by a
// counter, so that the timed run is exactly the library's.
func DiffusionSpeed(ctx context.Context, c DiffusionSpeedCase, o DiffusionSpeedOptions) (DiffusionSpeedResult, error) {
	if o.Iterations <= 0 {
		o.Iterations = 8
	}
	if o.Warmup <= 0 {
		o.Warmup = 4
	}
	e, err := energy.Named(c.Task)
	if err != nil {
		return DiffusionSpeedResult{}, err
	}
	cfg, err := diffusion.Preset(c.preset(), c.Task)
	if err != nil {
		return DiffusionSpeedResult{}, err
	}
	cfg.Method, cfg.Seed, cfg.Precision = c.Method, o.Seed, o.Precision
	cfg.Iterations = o.Warmup + o.Iterations
	// The learning-rate milestones count from the end of a full run: a
	// timing of a few iterations has none (they do not change its cost).
	cfg.Milestones = nil
	if o.Batch > 0 {
		cfg.Batch = o.Batch
	}
	if o.Hidden > 0 {
		cfg.Net.Hidden = o.Hidden
	}
	if o.Steps > 0 {
		cfg.Steps = o.Steps
	}
	r := DiffusionSpeedResult{Case: c, Precision: o.Precision, Batch: cfg.Batch, Hidden: cfg.Net.Hidden, Steps: cfg.Steps, Iterations: o.Iterations,
		GFLOPPerIter: math.NaN(), GFLOPS: math.NaN(), PeakRSSMiB: math.NaN()}
	if r.Hidden == 0 {
		r.Hidden = timenet.DefaultHidden
	}
	// The previous case's memory goes back to the OS before the peak is
	// reset, so that the peak is this case's.
	runtime.GC()
	debug.FreeOSMemory()
	r.PeakReset = procstat.ResetPeakRSS()

	iterate := func(t *diffusion.Trainer, timed []float64) error {
		for i := range o.Warmup + o.Iterations {
			if err := ctx.Err(); err != nil {
				return err
			}
			t0 := time.Now()
			if _, err := t.Iterate(); err != nil {
				return err
			}
			if i >= o.Warmup && timed != nil {
				timed[i-o.Warmup] = float64(time.Since(t0).Microseconds()) / 1000
			}
		}
		return nil
	}
	newTrainer := func() (*diffusion.Trainer, error) {
		t, err := diffusion.New(e, cfg)
		if err == nil && c.Steady {
			t.Threshold = math.Inf(-1)
		}
		return t, err
	}
	t, err := newTrainer()
	if err != nil {
		return r, err
	}
	ms := make([]float64, o.Iterations)
	if err := iterate(t, ms); err != nil {
		return r, err
	}
	r.PeakRSSMiB = procstat.PeakRSSMiB()
	var total float64
	for _, v := range ms {
		total += v
	}
	r.MeanMs = total / float64(len(ms))
	sort.Float64s(ms)
	r.MedianMs = ms[len(ms)/2]
	if len(ms)%2 == 0 {
		r.MedianMs = (ms[len(ms)/2-1] + ms[len(ms)/2]) / 2
	}

	// The counting run.
	ct, err := newTrainer()
	if err != nil {
		return r, err
	}
	outs := 2 * e.Dim() // the output columns the nets compute
	if s, ok := ct.Student.Model.(timenet.OutputSetter); ok {
		outs = s.Outputs()
	}
	n := newFlopCounter(cfg.Net, e.Dim(), outs)
	ct.Student.Model = n.wrap(ct.Student.Model)
	if ct.Teacher != nil {
		ct.Teacher.Model = n.wrap(ct.Teacher.Model)
	}
	for range o.Warmup {
		if _, err := ct.Iterate(); err != nil {
			return r, err
		}
	}
	n.reset()
	for range o.Iterations {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		if _, err := ct.Iterate(); err != nil {
			return r, err
		}
	}
	// Every iteration trains the Student on a batch: at least one forward
	// and one backward pass over its Steps·Batch rows. Fewer counted rows
	// mean the trainer ran passes the wrapper did not see.
	if min(n.fwdRows.Load(), n.bwdRows.Load()) >= int64(o.Iterations*cfg.Steps*cfg.Batch) {
		gflop := n.flops() / 1e9
		r.GFLOPPerIter = gflop / float64(o.Iterations)
		r.GFLOPS = gflop / (total / 1000)
	}
	return r, nil
}

// flopCounter counts the multiply-adds of the network passes of the
// reference architecture (see WriteDiffusionSpeedTable for the formula).
type flopCounter struct {
	perRow, perBlock  float64 // forward multiply-adds per row and per time block
	fwdRows, fwdBlock atomic.Int64
	bwdRows, bwdBlock atomic.Int64
}

// newFlopCounter counts the passes of nets of configuration c on states of
// dimension d that compute outs output columns (2d, or d for a fixed
// variance's drift alone: timenet.OutputSetter).
func newFlopCounter(c timenet.Config, d, outs int) *flopCounter {
	h, H, S, tau, L := c.Hidden, c.Harmonics, c.StateEmb, c.TimeEmb, c.JointLayers
	if c.Arch == timenet.PIS {
		h = cmp.Or(h, timenet.DefaultHidden)
		H, L = cmp.Or(H, h), cmp.Or(L, timenet.DefaultJointLayers)
		return &flopCounter{
			// State Linear(d,h), L hidden h×h joint layers, the h×2d
			// output; once per time step Linear(2H,h)+Linear(h,h).
			perRow:   float64(d*h + L*h*h + h*outs),
			perBlock: float64(2*H*h + h*h),
		}
	}
	if h == 0 {
		h = timenet.DefaultHidden
	}
	if H == 0 {
		H = h
	}
	if S == 0 {
		S = h
	}
	if tau == 0 {
		tau = h
	}
	if L == 0 {
		L = timenet.DefaultJointLayers
	}
	return &flopCounter{
		// State branch Linear(d,h)+Linear(h,S); the first joint layer's S×h
		// state half; L−1 hidden h×h layers; the h×2d output layer.
		perRow: float64(d*h + h*S + S*h + (L-1)*h*h + h*outs),
		// Once per time step: Linear(2H,h)+Linear(h,τ) of the time branch
		// and the first joint layer's τ×h time half.
		perBlock: float64(2*H*h + h*tau + tau*h),
	}
}

func (n *flopCounter) reset() {
	n.fwdRows.Store(0)
	n.fwdBlock.Store(0)
	n.bwdRows.Store(0)
	n.bwdBlock.Store(0)
}

// flops is 2 per multiply-add, backward passes counted twice (the input
// and the weight gradients).
func (n *flopCounter) flops() float64 {
	fwd := float64(n.fwdRows.Load())*n.perRow + float64(n.fwdBlock.Load())*n.perBlock
	bwd := float64(n.bwdRows.Load())*n.perRow + float64(n.bwdBlock.Load())*n.perBlock
	return 2 * (fwd + 2*bwd)
}

// recorder is a net that can record a sequence of passes and treat them
// as one (timenet's Recorder, declared here by its methods).
type recorder interface {
	timenet.Net
	Record(rows int)
	EndRecord() *nn.Matrix
}

// wrap returns net with its passes counted. A net that records passes
// stays one, so that the trainer takes the same path.
func (n *flopCounter) wrap(net timenet.Net) timenet.Net {
	c := &countedNet{Net: net, n: n}
	if r, ok := net.(recorder); ok {
		return &countedRecorder{countedNet: c, rec: r}
	}
	return c
}

// countedNet counts the rows and time blocks of every pass.
type countedNet struct {
	timenet.Net
	n      *flopCounter
	blocks int // of the pass Backward applies to
}

func (c *countedNet) Forward(x *nn.Matrix, t []float32) *nn.Matrix {
	c.n.fwdRows.Add(int64(x.Rows))
	c.n.fwdBlock.Add(int64(len(t)))
	c.blocks = len(t)
	return c.Net.Forward(x, t)
}

func (c *countedNet) Backward(dy *nn.Matrix) {
	c.n.bwdRows.Add(int64(dy.Rows))
	c.n.bwdBlock.Add(int64(c.blocks))
	c.Net.Backward(dy)
}

func (c *countedNet) Clone() timenet.Net { return c.n.wrap(c.Net.Clone()) }

// countedRecorder is a countedNet over a Recorder: recorded passes are
// counted as they run; ending a recording computes nothing, and Backward
// then covers every recorded block.
type countedRecorder struct {
	*countedNet
	rec       recorder
	recording bool
	recBlocks int
}

func (c *countedRecorder) Forward(x *nn.Matrix, t []float32) *nn.Matrix {
	if c.recording {
		c.recBlocks += len(t)
	}
	return c.countedNet.Forward(x, t)
}

func (c *countedRecorder) Record(rows int) {
	c.recording, c.recBlocks = true, 0
	c.rec.Record(rows)
}

func (c *countedRecorder) EndRecord() *nn.Matrix {
	c.recording = false
	c.blocks = c.recBlocks
	return c.rec.EndRecord()
}

// WriteDiffusionSpeedTable prints diffusion results as a Markdown table,
// with the FLOP formula and the kernels in use.
func WriteDiffusionSpeedTable(w io.Writer, rs []DiffusionSpeedResult) {
	fmt.Fprintln(w, "| configuration | batch × T, width | ms/iter median | ms/iter mean | GFLOP/iter | GFLOP/s | peak RSS (MiB) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	cumulative := false
	for _, r := range rs {
		rss := "?"
		if !math.IsNaN(r.PeakRSSMiB) {
			rss = fmt.Sprintf("%.0f", r.PeakRSSMiB)
			if !r.PeakReset {
				rss += " *"
				cumulative = true
			}
		}
		gf, gfs := "?", "?"
		if !math.IsNaN(r.GFLOPS) {
			gf, gfs = fmt.Sprintf("%.1f", r.GFLOPPerIter), fmt.Sprintf("%.1f", r.GFLOPS)
		}
		fmt.Fprintf(w, "| %s | %d × %d, %d | %.0f | %.0f | %s | %s | %s |\n", withPrecision(r.Case.Name, r.Precision), r.Batch, r.Steps, r.Hidden, r.MedianMs, r.MeanMs, gf, gfs, rss)
	}
	iters := 0
	if len(rs) > 0 {
		iters = rs[0].Iterations
	}
	fmt.Fprintf(w, "\nDiffusion rows: reference preset unless the row names another, %d timed iterations after one Teacher cycle (4) of warm-up; kernels %s.\n", iters, kernel.Name())
	fmt.Fprintln(w, "GFLOP counts the network passes the trainer runs (counted by wrapping the networks, in a second run of the")
	fmt.Fprintln(w, "same iterations): 2 FLOP per multiply-add, a pass over r rows at b time steps costing")
	fmt.Fprintln(w, "r·(d·h + h² + h² + h² + h·2d) + b·(2H·h + h² + h²) multiply-adds (state branch Linear(d,h)+Linear(h,h),")
	fmt.Fprintln(w, "the state half of the joint Linear(2h,h), Linear(h,h), Linear(h,2d); the time branch with H = h")
	fmt.Fprintln(w, "harmonics and the time half of the joint layer once per step), forward 1×, backward 2×. GFLOP/s is that work")
	fmt.Fprintln(w, "over the timed iterations' time, which also includes sampling noise, log-densities, rewards and Adam.")
	fmt.Fprintln(w, "Rows of a preset with the PIS network (sendera) count r·(d·h + 2h² + h·2d) + b·(2H·h + h²) (state")
	fmt.Fprintln(w, "Linear(d,h), two joint h×h layers, Linear(h,2d); the time branch once per step). A fixed variance at d ≥ 16")
	fmt.Fprintln(w, "computes the drift columns alone (timenet.OutputSetter): h·d for the output layer instead of h·2d.")
	if cumulative {
		fmt.Fprintln(w, "* The peak could not be reset: it includes earlier cases.")
	}
}
