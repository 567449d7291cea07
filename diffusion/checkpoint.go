package diffusion

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/safetensors"
	"github.com/gfngo/gfn/timenet"
)

// Checkpoint files inside a run directory. CheckpointFile alone holds
// everything a resumed run needs (the run state is its "gfn_state"
// metadata entry), so that one atomic rename keeps it consistent;
// ConfigFile repeats the settings for reading by eye.
const (
	CheckpointFile = run.CheckpointFile
	ConfigFile     = run.ConfigFile
	stateKey       = "gfn_state"
)

// tensors lists the checkpoint's tensors: each agent's parameters under
// student. and teacher. with the reference state_dict's names (so
// {k[8:]: v for k in f if k.startswith("student.")} minus logZ loads into
// the reference GFN's networks), its log Z, its Adam state under
// <agent>.optim., and the replay buffer's entries oldest first.
func (t *Trainer) tensors() []safetensors.Tensor {
	var ts []safetensors.Tensor
	for name, a := range t.agents() {
		ts = append(ts, nn.ParamTensors(name+".", a.Params())...)
		ts = append(ts, a.Opt.StateTensors(name+".optim.")...)
	}
	if t.buffer != nil {
		d := t.Proc.Dim
		var xs []float32
		var lr, pr []float64
		t.buffer.Each(func(_ uint64, x []float32, logR, p float64) {
			xs = append(xs, x...)
			lr, pr = append(lr, logR), append(pr, p)
		})
		ts = append(ts, safetensors.F32("buffer.x", []int{len(lr), d}, xs),
			safetensors.F64("buffer.log_r", []int{len(lr)}, lr), safetensors.F64("buffer.priority", []int{len(lr)}, pr))
		if t.buffer.Passes {
			pos, served := t.buffer.Pass()
			p := make([]int64, len(pos)+1)
			p[0] = int64(served)
			for i, v := range pos {
				p[i+1] = int64(v)
			}
			ts = append(ts, safetensors.I64("buffer.pass", []int{len(p)}, p))
		}
	}
	return ts
}

// agents yields the named agents in checkpoint order.
func (t *Trainer) agents() iter.Seq2[string, *Agent] {
	return func(yield func(string, *Agent) bool) {
		if !yield("student", t.Student) || t.Teacher == nil {
			return
		}
		yield("teacher", t.Teacher)
	}
}

// checkpoint writes the run's state atomically.
func (r *runner) checkpoint() error {
	t := r.t
	st := &r.st
	st.Step, st.RewardCalls, st.Threshold = t.Step, t.RewardCalls, t.Threshold
	st.WallSeconds = r.clock.Seconds()
	var err error
	for _, s := range []struct {
		dst *[]byte
		src encoding.BinaryMarshaler
	}{{&st.RNG, t.src}, {&st.TeacherRNG, t.teacherSrc}, {&st.EvalRNG, r.evalSrc}, {&st.ExactRNG, r.exactSrc}} {
		if *s.dst, err = s.src.MarshalBinary(); err != nil {
			return err
		}
	}
	state, err := json.Marshal(st)
	if err != nil {
		return err
	}
	dir := r.opt.OutDir
	var rows []float64
	for _, p := range st.Curve {
		rows = append(rows, curveRow(p)...)
	}
	ts := append(t.tensors(), safetensors.F64("run.curve", []int{len(st.Curve), curveCols}, rows),
		safetensors.F64("run.iter_ms", []int{len(st.IterMs)}, st.IterMs))
	if err := run.WriteCheckpoint(filepath.Join(dir, CheckpointFile), ts, stateKey, state); err != nil {
		return fmt.Errorf("diffusion: checkpoint: %w", err)
	}
	// The curve so far, so that a long run can be watched.
	if err := safefile.Write(filepath.Join(dir, run.MetricsFile), func(w io.Writer) error { return WriteCurve(w, st.Curve) }); err != nil {
		return err
	}
	return run.WriteJSON(filepath.Join(dir, ConfigFile), struct {
		Task   string `json:"task"`
		Preset string `json:"preset,omitempty"`
		Step   int    `json:"step"`
		Config Config `json:"config"`
	}{st.Task, st.Preset, st.Step, st.Config})
}

// ReadState returns the task, preset, configuration and iteration of the
// checkpoint in dir.
func ReadState(dir string) (task, preset string, cfg Config, step int, err error) {
	st, _, err := readCheckpoint(dir)
	if err != nil {
		return "", "", Config{}, 0, err
	}
	return st.Task, st.Preset, st.Config, st.Step, nil
}

func readCheckpoint(dir string) (*runState, []safetensors.Tensor, error) {
	f, err := os.Open(filepath.Join(dir, CheckpointFile))
	if err != nil {
		return nil, nil, fmt.Errorf("diffusion: %w", err)
	}
	defer f.Close()
	ts, meta, err := safetensors.Read(f)
	if err != nil {
		return nil, nil, fmt.Errorf("diffusion: %s: %w", f.Name(), err)
	}
	raw, ok := meta[stateKey]
	if !ok {
		return nil, nil, fmt.Errorf("diffusion: %s is not a diffusion checkpoint (no %s metadata)", f.Name(), stateKey)
	}
	var st runState
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return nil, nil, fmt.Errorf("diffusion: %s: run state: %w", f.Name(), err)
	}
	return &st, ts, nil
}

// Load rebuilds the trainer of the checkpoint in dir for the energy e
// (which must be the run's), with every parameter, optimiser state,
// buffer entry, counter and random stream as they were.
func Load(dir string, e energy.Energy) (*Trainer, error) {
	t, _, err := load(dir, e)
	return t, err
}

func load(dir string, e energy.Energy) (*Trainer, *runState, error) {
	st, ts, err := readCheckpoint(dir)
	if err != nil {
		return nil, nil, err
	}
	if e.Dim() != st.Dim {
		return nil, nil, fmt.Errorf("diffusion: the checkpoint in %s is of dimension %d, energy %s of %d", dir, st.Dim, energyName(e), e.Dim())
	}
	// The settings come from the file: a corrupt width must not build a
	// network larger than the parameters the file holds, nor a corrupt
	// batch size draw a batch (the threshold is stored).
	need, err := timenet.NumParams(st.Config.Net, st.Dim)
	if err != nil {
		return nil, nil, fmt.Errorf("diffusion: the checkpoint in %s: %w", dir, err)
	}
	have := 0.0
	for _, x := range ts {
		if x.DType == "F32" {
			have += float64(x.NumElements())
		}
	}
	if need > have {
		return nil, nil, fmt.Errorf("diffusion: the checkpoint in %s: its network %+v needs %.4g weights, the file holds %.4g float32 values", dir, st.Config.Net, need, have)
	}
	t, err := newTrainer(e, st.Config)
	if err != nil {
		return nil, nil, err
	}
	for name, a := range t.agents() {
		if err := nn.LoadParams(name+".", a.Params(), ts); err != nil {
			return nil, nil, err
		}
		if err := a.Opt.LoadState(name+".optim.", ts); err != nil {
			return nil, nil, err
		}
	}
	for _, s := range []struct {
		src encoding.BinaryUnmarshaler
		b   []byte
	}{{t.src, st.RNG}, {t.teacherSrc, st.TeacherRNG}} {
		if err := s.src.UnmarshalBinary(s.b); err != nil {
			return nil, nil, fmt.Errorf("diffusion: checkpoint random stream: %w", err)
		}
	}
	t.Step, t.RewardCalls, t.Threshold = st.Step, st.RewardCalls, st.Threshold
	byName := map[string]safetensors.Tensor{}
	for _, x := range ts {
		byName[x.Name] = x
	}
	curve := byName["run.curve"]
	rows, err1 := curve.Float64s()
	ms, err2 := byName["run.iter_ms"].Float64s()
	cols := curveCols
	if len(curve.Shape) == 2 {
		cols = curve.Shape[1]
	}
	if err1 != nil || err2 != nil || (cols != curveCols && cols != oldCurveCols) || len(rows)%cols != 0 {
		return nil, nil, fmt.Errorf("diffusion: the checkpoint in %s has no valid run record", dir)
	}
	for i := 0; i < len(rows); i += cols {
		st.Curve = append(st.Curve, pointOf(rows[i:i+cols]))
	}
	st.IterMs = ms
	if t.buffer != nil {
		xs, err1 := byName["buffer.x"].Float32s()
		lr, err2 := byName["buffer.log_r"].Float64s()
		pr, err3 := byName["buffer.priority"].Float64s()
		if err1 != nil || err2 != nil || err3 != nil || len(xs) != len(lr)*st.Dim || len(pr) != len(lr) {
			return nil, nil, fmt.Errorf("diffusion: the checkpoint in %s has no valid replay buffer", dir)
		}
		d := st.Dim
		for i := range lr {
			t.buffer.Append(xs[i*d:(i+1)*d], lr[i], pr[i])
		}
		if t.buffer.Passes {
			// served, then the pass's positions.
			p, err := byName["buffer.pass"].Int64s()
			if err != nil || len(p) < 1 {
				return nil, nil, fmt.Errorf("diffusion: the checkpoint in %s has no valid replay pass", dir)
			}
			pos := make([]int, len(p)-1)
			for i := range pos {
				pos[i] = int(p[i+1])
			}
			if err := t.buffer.SetPass(pos, int(p[0])); err != nil {
				return nil, nil, fmt.Errorf("diffusion: the checkpoint in %s: %w", dir, err)
			}
		}
	}
	return t, st, nil
}

// Resume continues the run whose checkpoint is in dir, writing into
// opt.OutDir (dir if empty), with the run's own evaluation and checkpoint
// settings (opt's are ignored but for OutDir, Progress and ProgressTTY).
// A run resumed from a periodic checkpoint ends
// with the same parameters, metrics and samples as one never interrupted
// (wall-clock columns aside).
func Resume(ctx context.Context, dir string, e energy.Energy, opt RunOptions) (*Result, error) {
	t, st, err := load(dir, e)
	if err != nil {
		return nil, err
	}
	if t.Done() && st.Failed == "" {
		return nil, fmt.Errorf("diffusion: the run in %s is finished (%d of %d iterations)", dir, t.Step, t.Cfg.Iterations)
	}
	if opt.OutDir == "" {
		opt.OutDir = dir
	}
	if c := opt.ResumeDriftClip; c != 0 {
		if !(c > 0) || math.IsInf(c, 0) {
			return nil, fmt.Errorf("diffusion: resume drift clip %v must be finite and > 0", c)
		}
		t.Cfg.DriftClip, t.Proc.Clip, st.Config.DriftClip = c, c, c
	}
	opt.Task, opt.Preset = st.Task, st.Preset
	opt.EvalEvery, opt.EvalSamples, opt.FinalSamples = st.EvalEvery, st.EvalSamples, st.FinalSamples
	opt.CheckpointEvery, opt.NoFigures = st.CheckpointEvery, st.NoFigures
	r := newRunner(ctx, t, opt)
	for _, s := range []struct {
		src encoding.BinaryUnmarshaler
		b   []byte
	}{{r.evalSrc, st.EvalRNG}, {r.exactSrc, st.ExactRNG}} {
		if err := s.src.UnmarshalBinary(s.b); err != nil {
			return nil, fmt.Errorf("diffusion: checkpoint random stream: %w", err)
		}
	}
	st.Resumed++
	st.Failed = ""
	r.st = *st
	r.clock = run.Clock{Start: time.Now(), Before: st.WallSeconds}
	return r.run()
}
