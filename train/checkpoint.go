package train

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safetensors"
)

// Checkpoint file names inside a run directory.
//
// CheckpointFile alone holds everything (parameters, optimiser states, the
// random streams, the replay buffer, the counters and, from Run, the
// curve so far), so one atomic rename keeps a checkpoint consistent: a
// crash leaves either the previous checkpoint or the new one, never a
// mixture. ConfigFile repeats the settings and counters for people and
// older readers; it is written after CheckpointFile, so after a crash
// between the two renames it may be one checkpoint behind, and Load,
// ReadCheckpoint and Resume then ignore it (Resume in place rewrites it).
const (
	CheckpointFile = run.CheckpointFile
	ConfigFile     = run.ConfigFile
)

// stateKey is the CheckpointFile metadata entry holding the run state as
// JSON. It differs from package diffusion's, so that neither package takes
// the other's checkpoints for its own.
const stateKey = "gfn_train_state"

// checkpointVersion numbers the layout of the run state; 0 is a checkpoint
// from before it existed (parameters, optimiser states and config.json).
const checkpointVersion = 1

// CheckpointConfig is config.json, and what ReadCheckpoint reports: what
// the checkpoint is and how far its run got.
type CheckpointConfig struct {
	// Env is RunOptions.EnvSpec (Save's envSpec) as JSON, for the
	// builder of Load and Resume.
	Env json.RawMessage `json:"env"`
	// Train is the training configuration.
	Train Config `json:"train"`
	// Step, GradSteps and RewardCalls are the trainer's counters, and
	// ModesFound its modes' keys, sorted, after iteration Step.
	Step        int      `json:"step"`
	GradSteps   int      `json:"grad_steps"`
	RewardCalls int      `json:"reward_calls"`
	ModesFound  []uint64 `json:"modes_found,omitempty"`
	// EnvName is the environment's fmt.Sprint, compared on resume.
	EnvName string `json:"env_name,omitempty"`
	// Resumable reports that the checkpoint holds Run's record (curve,
	// timings, evaluation stream), which resuming needs; Trainer.Save
	// alone writes none.
	Resumable bool `json:"resumable,omitempty"`
	// Finished reports that Run wrote the checkpoint with its final
	// outputs: the budget is spent and there is nothing left to resume.
	Finished bool `json:"finished,omitempty"`
	// Resumed counts the times the run was resumed.
	Resumed int `json:"resumed,omitempty"`
}

// trainState is the CheckpointFile metadata entry: the checkpoint's
// description and the state that is not a tensor. Lists (modes, buffer,
// curve, timings) are tensors; the counts here check them.
type trainState struct {
	Version int `json:"version"`
	CheckpointConfig
	RNG   []byte `json:"rng"`   // the training stream's PCG state
	Modes int    `json:"modes"` // entries of state.modes_found
	// ModesBy is the number of (key, agents) pairs of state.modes_by.
	ModesBy int        `json:"modes_by,omitempty"`
	Buffer  int        `json:"buffer"` // entries of state.buffer.*
	Run     *runRecord `json:"run,omitempty"`
}

// runRecord is Run's part of a checkpoint: what a resumed run needs to
// write the same curve and summary as an uninterrupted one.
type runRecord struct {
	EvalRNG []byte `json:"eval_rng"` // the curve's sampling stream
	// The resolved evaluation settings: changing them would change the
	// curve.
	EvalEvery       int `json:"eval_every"`
	CurveExactLimit int `json:"curve_exact_limit"`
	CurveSamples    int `json:"curve_samples"`
	EvalSamples     int `json:"eval_samples"`
	// CheckpointEvery is the interval a resumed run keeps by default.
	CheckpointEvery int `json:"checkpoint_every"`
	Points          int `json:"points"`     // rows of run.curve
	Iterations      int `json:"iterations"` // entries of run.iter_ns
	// LossCount is the number of iterations since the last curve point,
	// whose loss sums are in run.loss_sums.
	LossCount   int     `json:"loss_count"`
	WallSeconds float64 `json:"wall_seconds"` // wall-clock time of the run so far
	resumed     int     // stored as CheckpointConfig.Resumed
}

// Tensor names of the resume-only state. Readers that load parameters by
// name (nn.LoadParams, Python's student.model.* prefix) do not see them.
const (
	tensorModes    = "state.modes_found" // I64 (uint64 bits), sorted
	tensorModesBy  = "state.modes_by"    // I64 pairs (key, agent bits), by key
	tensorBufKey   = "state.buffer.key"  // I64 (uint64 bits), oldest first
	tensorBufX     = "state.buffer.x"    // I32, one row per entry
	tensorBufLogR  = "state.buffer.log_r"
	tensorBufPrio  = "state.buffer.priority"
	tensorCurve    = "run.curve"     // F64, curveCols per point
	tensorIterNs   = "run.iter_ns"   // I64, duration of each iteration
	tensorLossSums = "run.loss_sums" // F64: Student, Teacher since the last point
	curveCols      = 18
)

// agents yields the named agents in checkpoint order.
func (t *Trainer) agents() iter.Seq2[string, *Agent] {
	return func(yield func(string, *Agent) bool) {
		if !yield("student", t.Student) {
			return
		}
		// The first Teacher keeps the single Teacher's name.
		for k, a := range t.Teachers {
			name := "teacher"
			if k > 0 {
				name = fmt.Sprintf("teacher%d", k)
			}
			if !yield(name, a) {
				return
			}
		}
	}
}

// tensors lists every tensor of the checkpoint: each agent's parameters
// (student.model.0.weight, ..., student.logZ) in PyTorch layout, so that
// student.model.* loads into the reference nn.Sequential, then the Adam
// states (student.optim.model.0.weight.exp_avg, ..., student.optim.step),
// GAFN's RND networks and their Adam, then the resume-only state: the
// modes found and the replay buffer's entries, oldest first.
func (t *Trainer) tensors() []safetensors.Tensor {
	var ts []safetensors.Tensor
	for name, a := range t.agents() {
		ts = append(ts, nn.ParamTensors(name+".", a.Params())...)
	}
	for name, a := range t.agents() {
		ts = append(ts, a.Opt.StateTensors(name+".optim.")...)
	}
	if g := t.gafn; g != nil {
		ts = append(ts, nn.ParamTensors("rnd.", g.target.Params())...)
		ts = append(ts, nn.ParamTensors("rnd.", g.pred.Params())...)
		ts = append(ts, g.opt.StateTensors("rnd.optim.")...)
	}
	// Empty lists are left out: the counts in the run state say so.
	if modes := t.sortedModes(); len(modes) > 0 {
		ts = append(ts, i64Tensor(tensorModes, []int{len(modes)}, modes))
	}
	if len(t.ModesBy) > 0 {
		var pairs []uint64
		for _, k := range slices.Sorted(maps.Keys(t.ModesBy)) {
			pairs = append(pairs, k, t.ModesBy[k])
		}
		ts = append(ts, i64Tensor(tensorModesBy, []int{len(t.ModesBy), 2}, pairs))
	}
	if t.buffer != nil && t.buffer.Len() > 0 {
		n, w := t.buffer.Len(), t.bufferWidth()
		keys := make([]uint64, 0, n)
		xs := make([]int32, 0, n*w)
		logR := make([]float64, 0, n)
		prio := make([]float64, 0, n)
		t.buffer.Each(func(key uint64, x []int32, lr, p float64) {
			keys, xs = append(keys, key), append(xs, x...)
			logR, prio = append(logR, lr), append(prio, p)
		})
		ts = append(ts, i64Tensor(tensorBufKey, []int{n}, keys), i32Tensor(tensorBufX, []int{n, w}, xs),
			safetensors.F64(tensorBufLogR, []int{n}, logR), safetensors.F64(tensorBufPrio, []int{n}, prio))
	}
	return ts
}

// sortedModes lists the keys of the modes found in increasing order, so
// that a checkpoint's bytes do not depend on map order.
func (t *Trainer) sortedModes() []uint64 {
	return slices.Sorted(maps.Keys(t.ModesFound))
}

// Save writes the trainer's complete state into dir: every parameter and
// optimiser state, the random stream, the replay buffer, the counters and
// the modes found, as CheckpointFile and then ConfigFile, each atomically.
// Load on the result gives a trainer whose further iterations are those
// this one would have made. envSpec is stored verbatim for Load's
// builder. A checkpoint from Save alone has no run record: Resume needs
// one written by Run.
func (t *Trainer) Save(dir string, envSpec any) error {
	spec, err := json.Marshal(envSpec)
	if err != nil {
		return fmt.Errorf("train: environment spec %v cannot be stored: %w", envSpec, err)
	}
	return t.save(dir, spec, nil, nil, false)
}

// save writes the checkpoint; rec and runTensors are Run's record (nil
// from Save), finished marks Run's final checkpoint.
func (t *Trainer) save(dir string, spec json.RawMessage, rec *runRecord, runTensors []safetensors.Tensor, finished bool) error {
	rng, err := t.src.MarshalBinary()
	if err != nil {
		return fmt.Errorf("train: checkpoint: random stream: %w", err)
	}
	st := trainState{Version: checkpointVersion, RNG: rng, Run: rec, Modes: len(t.ModesFound), ModesBy: len(t.ModesBy)}
	if t.buffer != nil {
		st.Buffer = t.buffer.Len()
	}
	st.CheckpointConfig = t.describe(spec)
	st.Resumable, st.Finished = rec != nil, finished
	if rec != nil {
		st.Resumed = rec.resumed
	}
	meta, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("train: checkpoint: %w", err)
	}
	ts := append(t.tensors(), runTensors...)
	if err := run.WriteCheckpoint(filepath.Join(dir, CheckpointFile), ts, stateKey, meta); err != nil {
		return fmt.Errorf("train: checkpoint: %w", err)
	}
	cc := st.CheckpointConfig
	cc.ModesFound = t.sortedModes()
	return writeConfig(dir, cc)
}

// describe is the checkpoint's description without the modes list.
func (t *Trainer) describe(spec json.RawMessage) CheckpointConfig {
	return CheckpointConfig{Env: spec, Train: t.Cfg, Step: t.Step, GradSteps: t.GradSteps, RewardCalls: t.RewardCalls,
		EnvName: fmt.Sprint(t.Env)}
}

func writeConfig(dir string, cc CheckpointConfig) error {
	if err := run.WriteJSON(filepath.Join(dir, ConfigFile), cc); err != nil {
		return fmt.Errorf("train: checkpoint: %w", err)
	}
	return nil
}

// readCheckpoint reads dir's checkpoint. The state of a checkpoint from
// before the run state existed (version 0) comes from ConfigFile.
func readCheckpoint(dir string) (*trainState, []safetensors.Tensor, error) {
	name := filepath.Join(dir, CheckpointFile)
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, fmt.Errorf("train: reading checkpoint: %w", err)
	}
	defer f.Close()
	ts, meta, err := safetensors.Read(f)
	if err != nil {
		return nil, nil, fmt.Errorf("train: checkpoint %s: %w", name, err)
	}
	// Settings missing from older checkpoints keep their defaults.
	st := &trainState{CheckpointConfig: CheckpointConfig{Train: DefaultConfig()}}
	raw, ok := meta[stateKey]
	if !ok {
		cname := filepath.Join(dir, ConfigFile)
		b, err := os.ReadFile(cname)
		if err != nil {
			return nil, nil, fmt.Errorf("train: reading checkpoint: %w", err)
		}
		if err := json.Unmarshal(b, &st.CheckpointConfig); err != nil {
			return nil, nil, fmt.Errorf("train: checkpoint %s: %w", cname, err)
		}
		return st, ts, nil
	}
	if err := json.Unmarshal([]byte(raw), st); err != nil {
		return nil, nil, fmt.Errorf("train: checkpoint %s: run state: %w", name, err)
	}
	if st.Version != checkpointVersion {
		return nil, nil, fmt.Errorf("train: checkpoint %s has state version %d; this build reads %d", name, st.Version, checkpointVersion)
	}
	modes, err := u64s(ts, tensorModes, st.Modes)
	if err != nil {
		return nil, nil, fmt.Errorf("train: checkpoint %s: %w", name, err)
	}
	st.ModesFound = modes
	return st, ts, nil
}

// ReadCheckpoint describes the checkpoint in dir (settings, environment
// spec, counters, whether it can be resumed or is finished) from
// CheckpointFile, which is authoritative, or from ConfigFile for
// checkpoints written before the run state existed.
func ReadCheckpoint(dir string) (CheckpointConfig, error) {
	st, _, err := readCheckpoint(dir)
	if err != nil {
		return CheckpointConfig{}, err
	}
	return st.CheckpointConfig, nil
}

// Load reads a checkpoint directory written by Save or Run and returns its
// trainer, with every parameter, optimiser state, random stream, buffer
// entry and counter as they were (older checkpoints restore parameters,
// optimiser states and counters). build turns the stored environment
// spec back into the environment.
func Load(dir string, build func(spec json.RawMessage) (discrete.Env, error)) (*Trainer, json.RawMessage, error) {
	st, ts, err := readCheckpoint(dir)
	if err != nil {
		return nil, nil, err
	}
	env, err := build(st.Env)
	if err != nil {
		return nil, nil, err
	}
	if st.EnvName != "" && fmt.Sprint(env) != st.EnvName {
		return nil, nil, fmt.Errorf("train: checkpoint %s: its spec %s builds %v, but the checkpoint was of %s", dir, st.Env, env, st.EnvName)
	}
	if err := checkNetworkSize(env, st.Train, ts); err != nil {
		return nil, nil, fmt.Errorf("train: checkpoint %s: %w", filepath.Join(dir, CheckpointFile), err)
	}
	t, err := New(env, st.Train)
	if err != nil {
		return nil, nil, fmt.Errorf("train: checkpoint %s: %w", filepath.Join(dir, ConfigFile), err)
	}
	if err := t.restore(st, ts, filepath.Join(dir, CheckpointFile)); err != nil {
		return nil, nil, err
	}
	return t, st.Env, nil
}

// checkNetworkSize reports an error if the Student network that cfg's
// widths give on env has more weights than ts holds float32 values: the
// checkpoint must hold them all, and a corrupt width must not make New
// allocate its size before loading finds the mismatch.
func checkNetworkSize(env discrete.Env, cfg Config, ts []safetensors.Tensor) error {
	have := 0.0
	for _, x := range ts {
		if x.DType == "F32" {
			have += float64(x.NumElements())
		}
	}
	fenv, err := featurized(env)
	if err != nil {
		return err
	}
	need, in := 0.0, float64(fenv.FeatureLen())
	for _, w := range append(slices.Clone(cfg.Hidden), env.NumActions()) {
		need += (in + 1) * float64(w)
		in = float64(w)
	}
	need *= float64(1 + cfg.numTeachers()) // the Teachers' networks too
	if need > have {
		return fmt.Errorf("train: hidden widths %v need %.4g weights, the checkpoint holds %.4g float32 values", cfg.Hidden, need, have)
	}
	return nil
}

// restore sets t (fresh from New with the checkpoint's environment and
// settings) to the state st and ts describe; name is the file, for errors.
func (t *Trainer) restore(st *trainState, ts []safetensors.Tensor, name string) error {
	wrap := func(err error) error { return fmt.Errorf("train: checkpoint %s: %w", name, err) }
	for name, a := range t.agents() {
		if err := nn.LoadParams(name+".", a.Params(), ts); err != nil {
			return wrap(err)
		}
		if err := a.Opt.LoadState(name+".optim.", ts); err != nil {
			return wrap(err)
		}
	}
	if g := t.gafn; g != nil {
		for _, err := range []error{
			nn.LoadParams("rnd.", g.target.Params(), ts),
			nn.LoadParams("rnd.", g.pred.Params(), ts),
			g.opt.LoadState("rnd.optim.", ts),
		} {
			if err != nil {
				return wrap(err)
			}
		}
	}
	t.Step, t.GradSteps, t.RewardCalls = st.Step, st.GradSteps, st.RewardCalls
	if t.ModesFound != nil {
		for _, k := range st.ModesFound {
			t.ModesFound[k] = struct{}{}
		}
	}
	if t.ModesBy != nil && st.ModesBy > 0 {
		if st.ModesBy > len(t.ModesFound) {
			return wrap(fmt.Errorf("train: %d attributed modes of %d found", st.ModesBy, len(t.ModesFound)))
		}
		pairs, err := u64s(ts, tensorModesBy, 2*st.ModesBy)
		if err != nil {
			return wrap(err)
		}
		for i := 0; i < len(pairs); i += 2 {
			t.ModesBy[pairs[i]] = pairs[i+1]
		}
	}
	if st.Version == 0 {
		return nil // no random stream or buffer was stored
	}
	if err := t.src.UnmarshalBinary(st.RNG); err != nil {
		return wrap(fmt.Errorf("train: random stream: %w", err))
	}
	if st.Buffer > 0 && t.buffer == nil {
		return wrap(fmt.Errorf("train: %d buffer entries, but the settings have no buffer", st.Buffer))
	}
	if t.buffer == nil || st.Buffer == 0 {
		return nil
	}
	n, w := st.Buffer, t.bufferWidth()
	if n > t.buffer.Cap {
		return wrap(fmt.Errorf("train: %d buffer entries exceed the capacity %d", n, t.buffer.Cap))
	}
	keys, err := u64s(ts, tensorBufKey, n)
	if err != nil {
		return wrap(err)
	}
	xs, err := i32s(ts, tensorBufX, n*w)
	if err != nil {
		return wrap(err)
	}
	logR, err := f64s(ts, tensorBufLogR, n)
	if err != nil {
		return wrap(err)
	}
	prio, err := f64s(ts, tensorBufPrio, n)
	if err != nil {
		return wrap(err)
	}
	// Re-adding oldest first rebuilds the sampling order exactly (ranks
	// break ties oldest first, or by the hashed key).
	for i := range n {
		t.buffer.Add(keys[i], xs[i*w:(i+1)*w], logR[i], prio[i])
	}
	if t.buffer.Len() != n {
		return wrap(fmt.Errorf("train: buffer entries repeat a key: %d distinct of %d", t.buffer.Len(), n))
	}
	return nil
}

// tensorNamed finds a tensor; ts is short enough for a scan.
func tensorNamed(ts []safetensors.Tensor, name string) (safetensors.Tensor, bool) {
	for _, x := range ts {
		if x.Name == name {
			return x, true
		}
	}
	return safetensors.Tensor{}, false
}

// The decoders below return the n values of a tensor (n = 0: absent, as
// the writers leave out empty lists) or an error naming it.

func rawTensor(ts []safetensors.Tensor, name, dtype string, n int) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	x, ok := tensorNamed(ts, name)
	if !ok {
		return nil, fmt.Errorf("train: no tensor %q (%d values expected)", name, n)
	}
	if x.DType != dtype || x.NumElements() != n {
		return nil, fmt.Errorf("train: tensor %q is %s of shape %v, want %d values of %s", name, x.DType, x.Shape, n, dtype)
	}
	return x.Data, nil
}

func u64s(ts []safetensors.Tensor, name string, n int) ([]uint64, error) {
	b, err := rawTensor(ts, name, "I64", n)
	if err != nil || n == 0 {
		return nil, err
	}
	v := make([]uint64, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return v, nil
}

func i64s(ts []safetensors.Tensor, name string, n int) ([]int64, error) {
	u, err := u64s(ts, name, n)
	v := make([]int64, len(u))
	for i, x := range u {
		v[i] = int64(x)
	}
	return v, err
}

func i32s(ts []safetensors.Tensor, name string, n int) ([]int32, error) {
	b, err := rawTensor(ts, name, "I32", n)
	if err != nil || n == 0 {
		return nil, err
	}
	v := make([]int32, n)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

func f64s(ts []safetensors.Tensor, name string, n int) ([]float64, error) {
	if _, err := rawTensor(ts, name, "F64", n); err != nil || n == 0 {
		return nil, err
	}
	x, _ := tensorNamed(ts, name)
	return x.Float64s()
}

// i64Tensor stores uint64 values (keys) by their bits.
func i64Tensor[T ~uint64 | ~int64](name string, shape []int, v []T) safetensors.Tensor {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return safetensors.Tensor{Name: name, DType: "I64", Shape: shape, Data: b}
}

func i32Tensor(name string, shape []int, v []int32) safetensors.Tensor {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return safetensors.Tensor{Name: name, DType: "I32", Shape: shape, Data: b}
}
