package train

import (
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/safetensors"
)

// Checkpoint file names inside a run directory.
const (
	CheckpointFile = "checkpoint.safetensors"
	ConfigFile     = "config.json"
)

// CheckpointConfig is config.json: what is needed to rebuild the trainer.
type CheckpointConfig struct {
	Env         json.RawMessage `json:"env"`
	Train       Config          `json:"train"`
	Step        int             `json:"step"`
	GradSteps   int             `json:"grad_steps"`
	RewardCalls int             `json:"reward_calls"`
	ModesFound  []uint64        `json:"modes_found,omitempty"`
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

// tensors lists every tensor of the checkpoint: each agent's parameters
// (student.model.0.weight, ..., student.logZ) in PyTorch layout, so that
// student.model.* loads into the reference nn.Sequential, then the Adam
// states (student.optim.model.0.weight.exp_avg, ..., student.optim.step).
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
	return ts
}

// Save writes checkpoint.safetensors and config.json into dir, each
// atomically. envSpec is stored verbatim for LoadCheckpoint's builder.
func (t *Trainer) Save(dir string, envSpec any) error {
	spec, err := json.Marshal(envSpec)
	if err != nil {
		return err
	}
	cc := CheckpointConfig{Env: spec, Train: t.Cfg, Step: t.Step, GradSteps: t.GradSteps, RewardCalls: t.RewardCalls}
	for k := range t.ModesFound {
		cc.ModesFound = append(cc.ModesFound, k)
	}
	meta := map[string]string{"format": "pt", "producer": "gfn"}
	if err := safefile.Write(filepath.Join(dir, CheckpointFile), func(w io.Writer) error {
		return safetensors.Write(w, t.tensors(), meta)
	}); err != nil {
		return err
	}
	b, err := json.MarshalIndent(cc, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteBytes(filepath.Join(dir, ConfigFile), append(b, '\n'))
}

// Load reads a checkpoint directory written by Save. build turns the stored
// environment spec back into the environment.
func Load(dir string, build func(spec json.RawMessage) (discrete.Env, error)) (*Trainer, json.RawMessage, error) {
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, nil, fmt.Errorf("reading checkpoint: %w", err)
	}
	// Settings missing from older checkpoints keep their defaults.
	cc := CheckpointConfig{Train: DefaultConfig()}
	if err := json.Unmarshal(b, &cc); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", filepath.Join(dir, ConfigFile), err)
	}
	env, err := build(cc.Env)
	if err != nil {
		return nil, nil, err
	}
	t, err := New(env, cc.Train)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", filepath.Join(dir, ConfigFile), err)
	}
	f, err := os.Open(filepath.Join(dir, CheckpointFile))
	if err != nil {
		return nil, nil, fmt.Errorf("reading checkpoint: %w", err)
	}
	defer f.Close()
	ts, _, err := safetensors.Read(f)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", f.Name(), err)
	}
	for name, a := range t.agents() {
		if err := nn.LoadParams(name+".", a.Params(), ts); err != nil {
			return nil, nil, fmt.Errorf("checkpoint %s: %w", f.Name(), err)
		}
		if err := a.Opt.LoadState(name+".optim.", ts); err != nil {
			return nil, nil, fmt.Errorf("checkpoint %s: %w", f.Name(), err)
		}
	}
	if g := t.gafn; g != nil {
		for _, err := range []error{
			nn.LoadParams("rnd.", g.target.Params(), ts),
			nn.LoadParams("rnd.", g.pred.Params(), ts),
			g.opt.LoadState("rnd.optim.", ts),
		} {
			if err != nil {
				return nil, nil, fmt.Errorf("checkpoint %s: %w", f.Name(), err)
			}
		}
	}
	t.Step, t.GradSteps, t.RewardCalls = cc.Step, cc.GradSteps, cc.RewardCalls
	if t.ModesFound != nil {
		for _, k := range cc.ModesFound {
			t.ModesFound[k] = struct{}{}
		}
	}
	return t, cc.Env, nil
}
