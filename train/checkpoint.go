package train

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safetensors"
)

// Checkpoint file names inside a run directory (package run's).
const (
	CheckpointFile = run.CheckpointFile
	ConfigFile     = run.ConfigFile
)

// trainerState is the trainer's part of a checkpoint besides its agents
// and random stream: the counters, and the lengths of the lists stored
// as tensors (modes found, their finders, the replay buffer). Format 1
// used the same JSON names.
type trainerState struct {
	Step        int `json:"step"`
	GradSteps   int `json:"grad_steps"`
	RewardCalls int `json:"reward_calls"`
	// StateRewardCalls is Trainer.StateRewardCalls (0 in earlier files).
	StateRewardCalls int `json:"state_reward_calls,omitempty"`
	Modes            int `json:"modes"`              // entries of state.modes_found
	ModesBy          int `json:"modes_by,omitempty"` // (key, agents) pairs of state.modes_by
	Buffer           int `json:"buffer"`             // entries of state.buffer.*
}

// Tensor names of the trainer's lists.
const (
	tensorModes   = "state.modes_found" // I64 (uint64 bits), sorted
	tensorModesBy = "state.modes_by"    // I64 pairs (key, agent bits), by key
	bufferPrefix  = "state.buffer."     // replay.Buffer.Tensors
)

// runAgents lists the networks with their optimisers in checkpoint
// order: the Student, the Teachers ("teacher", "teacher1", ...) and
// GAFN's RND networks ("rnd": the fixed target and the predictor with
// its Adam). Parameters are stored in PyTorch's layout under the names
// (student.model.0.weight, ..., student.logZ, student.optim.*), so that
// student.model.* loads into the reference nn.Sequential.
func (t *Trainer) runAgents() []run.Agent {
	as := []run.Agent{t.Student.Checkpointed("student")}
	for k, a := range t.Teachers {
		name := "teacher" // the first Teacher keeps the single Teacher's name
		if k > 0 {
			name = fmt.Sprintf("teacher%d", k)
		}
		as = append(as, a.Checkpointed(name))
	}
	if g := t.gafn; g != nil {
		as = append(as, run.Agent{Name: "rnd", Params: slices.Concat(g.target.Params(), g.pred.Params()), Opt: g.opt})
	}
	return as
}

// state is the trainer's counters, modes and replay buffer.
func (t *Trainer) state() (run.State, error) {
	st := trainerState{Step: t.Step, GradSteps: t.GradSteps, RewardCalls: t.RewardCalls, StateRewardCalls: t.StateRewardCalls, Modes: len(t.ModesFound), ModesBy: len(t.ModesBy)}
	var ts []safetensors.Tensor
	// Empty lists are left out: the counts say so.
	if modes := slices.Sorted(maps.Keys(t.ModesFound)); len(modes) > 0 {
		ts = append(ts, u64Tensor(tensorModes, []int{len(modes)}, modes))
	}
	if len(t.ModesBy) > 0 {
		var pairs []uint64
		for _, k := range slices.Sorted(maps.Keys(t.ModesBy)) {
			pairs = append(pairs, k, t.ModesBy[k])
		}
		ts = append(ts, u64Tensor(tensorModesBy, []int{len(t.ModesBy), 2}, pairs))
	}
	if t.buffer != nil {
		st.Buffer = t.buffer.Len()
		ts = append(ts, t.buffer.Tensors(bufferPrefix)...)
	}
	js, err := json.Marshal(st)
	return run.State{JSON: js, Tensors: ts}, err
}

// setState sets the counters, modes and buffer of t, fresh from New.
func (t *Trainer) setState(s run.State) error {
	var st trainerState
	if err := json.Unmarshal(s.JSON, &st); err != nil {
		return fmt.Errorf("train: checkpoint state: %w", err)
	}
	t.Step, t.GradSteps, t.RewardCalls, t.StateRewardCalls = st.Step, st.GradSteps, st.RewardCalls, st.StateRewardCalls
	modes, err := u64s(s.Tensors, tensorModes, st.Modes)
	if err != nil {
		return err
	}
	if t.ModesFound != nil {
		for _, k := range modes {
			t.ModesFound[k] = struct{}{}
		}
	}
	if t.ModesBy != nil && st.ModesBy > 0 {
		if st.ModesBy > len(t.ModesFound) {
			return fmt.Errorf("train: %d attributed modes of %d found", st.ModesBy, len(t.ModesFound))
		}
		pairs, err := u64s(s.Tensors, tensorModesBy, 2*st.ModesBy)
		if err != nil {
			return err
		}
		for i := 0; i < len(pairs); i += 2 {
			t.ModesBy[pairs[i]] = pairs[i+1]
		}
	}
	switch {
	case t.buffer == nil && st.Buffer > 0:
		return fmt.Errorf("train: %d buffer entries, but the settings have no buffer", st.Buffer)
	case t.buffer == nil:
		return nil
	}
	// Re-adding the entries oldest first rebuilds the sampling order
	// exactly (ranks break ties oldest first, or by the hashed key).
	if err := t.buffer.Restore(bufferPrefix, s.Tensors); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if t.buffer.Len() != st.Buffer {
		return fmt.Errorf("train: %d buffer entries, the state says %d", t.buffer.Len(), st.Buffer)
	}
	return nil
}

// ReadCheckpoint reads what the checkpoint in dir stores of its run (the
// environment's spec and name, the settings) without building it: what
// a CLI needs to rebuild the environment for Resume or Load. Counters
// and progress are in the checkpoint's header (run.Open).
func ReadCheckpoint(dir string) (Stored, error) {
	ck, err := run.Open(dir)
	if err != nil {
		return Stored{}, err
	}
	return storedOf(ck)
}

// storedOf decodes a grid checkpoint's configuration.
func storedOf(ck *run.Checkpoint) (Stored, error) {
	if ck.Header.Kind != "grid" {
		return Stored{}, fmt.Errorf("train: %s is a %s checkpoint, not a grid one", ck.Path, ck.Header.Kind)
	}
	// Settings missing from a configuration keep their defaults.
	st := Stored{Train: DefaultConfig()}
	if err := json.Unmarshal(ck.Header.Config, &st); err != nil {
		return Stored{}, fmt.Errorf("train: checkpoint %s: configuration: %w", ck.Path, err)
	}
	return st, nil
}

// openRun opens dir's grid checkpoint for env and checks, before
// anything is allocated, that env is the run's and that the checkpoint
// holds the networks its settings describe.
func openRun(dir string, env discrete.Env) (*run.Checkpoint, Stored, error) {
	ck, err := run.Open(dir)
	if err != nil {
		return nil, Stored{}, err
	}
	st, err := storedOf(ck)
	if err != nil {
		return nil, Stored{}, err
	}
	if name := fmt.Sprint(env); name != st.EnvName {
		return nil, Stored{}, fmt.Errorf("train: checkpoint %s is of environment %s, not %s", ck.Path, st.EnvName, name)
	}
	if err := checkNetworkSize(env, st.Train, ck.Tensors); err != nil {
		return nil, Stored{}, fmt.Errorf("train: checkpoint %s: %w", ck.Path, err)
	}
	return ck, st, nil
}

// Load returns the trainer of the checkpoint in dir (written by Run or
// Resume) on env, which must be the checkpoint's environment, with every
// parameter, optimiser state, the training stream, buffer entry and
// counter as they were: its further iterations are those the run would
// have made.
func Load(dir string, env discrete.Env) (*Trainer, error) {
	ck, st, err := openRun(dir, env)
	if err != nil {
		return nil, err
	}
	t, err := New(env, st.Train)
	if err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: %w", ck.Path, err)
	}
	b, ok := ck.Header.Streams["train"]
	if !ok {
		return nil, fmt.Errorf("train: checkpoint %s: no random stream %q", ck.Path, "train")
	}
	err = restoreTrainer(t, ck.Tensors, b, ck.Header.State)
	if err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: %w", ck.Path, err)
	}
	return t, nil
}

// restoreTrainer sets t's agents, training stream and state.
func restoreTrainer(t *Trainer, ts []safetensors.Tensor, stream []byte, state json.RawMessage) error {
	for _, a := range t.runAgents() {
		params := a.Params
		if params == nil {
			params = a.Opt.Params()
		}
		if err := errors.Join(nn.LoadParams(a.Name+".", params, ts), a.Opt.LoadState(a.Name+".optim.", ts)); err != nil {
			return err
		}
	}
	if err := t.src.UnmarshalBinary(stream); err != nil {
		return fmt.Errorf("train: random stream: %w", err)
	}
	return t.setState(run.State{JSON: state, Tensors: ts})
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

// u64s returns the n values of an I64 tensor (n = 0: absent, as the
// writers leave out empty lists) or an error naming it.
func u64s(ts []safetensors.Tensor, name string, n int) ([]uint64, error) {
	if n == 0 {
		return nil, nil
	}
	x, ok := run.State{Tensors: ts}.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("train: no tensor %q (%d values expected)", name, n)
	}
	if n < 0 || x.DType != "I64" || x.NumElements() != n || len(x.Data) != 8*n {
		return nil, fmt.Errorf("train: tensor %q is %s of shape %v, want %d values of I64", name, x.DType, x.Shape, n)
	}
	v := make([]uint64, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(x.Data[8*i:])
	}
	return v, nil
}

// u64Tensor stores uint64 values (keys) by their bits.
func u64Tensor(name string, shape []int, v []uint64) safetensors.Tensor {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return safetensors.Tensor{Name: name, DType: "I64", Shape: shape, Data: b}
}
