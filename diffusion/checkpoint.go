package diffusion

import (
	"encoding/json"
	"fmt"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safetensors"
	"github.com/gfngo/gfn/timenet"
)

// open reads and verifies the diffusion checkpoint in dir (run.Open).
func open(dir string) (*run.Checkpoint, Stored, error) {
	ck, err := run.Open(dir)
	if err != nil {
		return nil, Stored{}, err
	}
	if k := ck.Header.Kind; k != "diffusion" {
		return nil, Stored{}, fmt.Errorf("diffusion: %s is a %s checkpoint, not a diffusion one", ck.Path, k)
	}
	var st Stored
	if err := json.Unmarshal(ck.Header.Config, &st); err != nil {
		return nil, Stored{}, fmt.Errorf("diffusion: checkpoint %s: configuration: %w", ck.Path, err)
	}
	st.Done = ck.Header.Done
	return ck, st, nil
}

// ReadCheckpoint returns what the checkpoint in dir records of its run:
// the task, preset, dimension, evaluation settings, configuration and the
// iterations done.
func ReadCheckpoint(dir string) (Stored, error) {
	_, st, err := open(dir)
	return st, err
}

// trainerOf builds the untrained trainer of the run that ck holds, for
// the energy e, after checking that e is of the run's dimension and that
// the file holds the weights its network needs: a corrupt width must not
// build a network larger than the file, nor a corrupt batch size draw a
// batch (the threshold is stored, not sampled).
func trainerOf(ck *run.Checkpoint, st Stored, e energy.Energy) (*Trainer, error) {
	if e == nil {
		return nil, fmt.Errorf("diffusion: no energy")
	}
	if e.Dim() != st.Dim {
		return nil, fmt.Errorf("diffusion: the checkpoint %s is of dimension %d, energy %s of %d", ck.Path, st.Dim, energyName(e), e.Dim())
	}
	need, err := timenet.NumParams(st.Config.Net, st.Dim)
	if err != nil {
		return nil, fmt.Errorf("diffusion: the checkpoint %s: %w", ck.Path, err)
	}
	have := 0.0
	for _, x := range ck.Tensors {
		if x.DType == "F32" {
			have += float64(x.NumElements())
		}
	}
	if need > have {
		return nil, fmt.Errorf("diffusion: the checkpoint %s: its network %+v needs %.4g weights, the file holds %.4g float32 values", ck.Path, st.Config.Net, need, have)
	}
	return newTrainer(e, st.Config)
}

// Load rebuilds the trainer of the checkpoint in dir for the energy e
// (which must be the run's), with every parameter, optimiser state,
// buffer entry, counter and random stream as they were.
func Load(dir string, e energy.Energy) (*Trainer, error) {
	f, _, err := load(dir, e)
	if err != nil {
		return nil, err
	}
	return f.t, nil
}

// load is Load's family and checkpoint.
func load(dir string, e energy.Energy) (*family, *run.Checkpoint, error) {
	ck, st, err := open(dir)
	if err != nil {
		return nil, nil, err
	}
	t, err := trainerOf(ck, st, e)
	if err != nil {
		return nil, nil, err
	}
	f := newFamily(t, st)
	if _, err := run.Restore(ck, f); err != nil {
		return nil, nil, err
	}
	return f, ck, nil
}

// loadAgents sets the agents' parameters and Adam states from the
// tensors of the checkpoint path.
func (f *family) loadAgents(ts []safetensors.Tensor, path string) error {
	for _, a := range f.Agents() {
		if err := nn.LoadParams(a.Name+".", a.Opt.Params(), ts); err != nil {
			return fmt.Errorf("diffusion: checkpoint %s: %w", path, err)
		}
		if err := a.Opt.LoadState(a.Name+".optim.", ts); err != nil {
			return fmt.Errorf("diffusion: checkpoint %s: %w", path, err)
		}
	}
	return nil
}

// storedCurve is the curve that ck holds (its run.curve tensor).
func storedCurve(ck *run.Checkpoint) (*run.Curve, error) {
	c := &run.Curve{}
	for _, name := range ck.Header.Columns {
		c.Columns = append(c.Columns, run.Column{Name: name})
	}
	x, ok := ck.Tensor("run.curve")
	v, err := x.Float64s()
	if k := len(c.Columns); !ok || err != nil || k == 0 || len(v)%k != 0 {
		return nil, fmt.Errorf("diffusion: checkpoint %s: no valid curve", ck.Path)
	}
	for i := 0; i < len(v); i += len(c.Columns) {
		c.Rows = append(c.Rows, v[i:i+len(c.Columns)])
	}
	return c, nil
}
