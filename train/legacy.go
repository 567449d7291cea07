package train

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safetensors"
)

// legacyKey is the metadata entry of a format-1 grid checkpoint.
const legacyKey = "gfn_train_state"

// legacyState is a format-1 checkpoint's metadata: the trainer's state
// (trainerState's fields, at the top level), its description, the
// training stream, and Run's record.
type legacyState struct {
	Version  int             `json:"version"`
	Env      json.RawMessage `json:"env"`
	Train    Config          `json:"train"`
	EnvName  string          `json:"env_name"`
	Finished bool            `json:"finished"`
	Resumed  int             `json:"resumed"`
	RNG      []byte          `json:"rng"`
	Run      *struct {
		EvalRNG         []byte  `json:"eval_rng"`
		EvalEvery       int     `json:"eval_every"`
		CurveExactLimit int     `json:"curve_exact_limit"`
		CurveSamples    int     `json:"curve_samples"`
		EvalSamples     int     `json:"eval_samples"`
		CheckpointEvery int     `json:"checkpoint_every"`
		Points          int     `json:"points"`
		Iterations      int     `json:"iterations"`
		LossCount       int     `json:"loss_count"`
		WallSeconds     float64 `json:"wall_seconds"`
	} `json:"run"`
}

// Migrate converts the checkpoint in dir, of the layout earlier versions
// wrote (format 1, "gfn_train_state"), to package run's format 2, in
// place, for env (the run's environment): Resume, Load and extension
// then take it, and the resumed run ends as the run never interrupted
// would have. Only checkpoints that Run wrote can be converted (those of
// Trainer.Save, and older ones, had no run record).
func Migrate(dir string, env discrete.Env) error {
	path := filepath.Join(dir, CheckpointFile)
	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	ts, meta, err := safetensors.Read(file)
	file.Close()
	if err != nil {
		return fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	raw, ok := meta[legacyKey]
	if !ok {
		return fmt.Errorf("train: %s is not a format-1 grid checkpoint (no %q metadata)", path, legacyKey)
	}
	old := legacyState{Train: DefaultConfig()}
	if err := json.Unmarshal([]byte(raw), &old); err != nil {
		return fmt.Errorf("train: checkpoint %s: run state: %w", path, err)
	}
	rec := old.Run
	switch {
	case old.Version != 1:
		return fmt.Errorf("train: checkpoint %s has state version %d; Migrate reads 1", path, old.Version)
	case rec == nil:
		return fmt.Errorf("train: the checkpoint %s has no run record (it was written by Trainer.Save): it cannot be converted", path)
	case fmt.Sprint(env) != old.EnvName:
		return fmt.Errorf("train: checkpoint %s is of environment %s, not %v", path, old.EnvName, env)
	}
	if err := checkNetworkSize(env, old.Train, ts); err != nil {
		return fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	f, err := newFamily(env, Stored{Env: old.Env, EnvName: old.EnvName, Train: old.Train, EvalSamples: rec.EvalSamples,
		CurveExactLimit: rec.CurveExactLimit, CurveSamples: rec.CurveSamples})
	if err != nil {
		return fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	wrap := func(err error) error { return fmt.Errorf("train: checkpoint %s: %w", path, err) }
	var legacy trainerState
	if err := json.Unmarshal([]byte(raw), &legacy); err != nil {
		return wrap(err)
	}
	if legacy.Buffer > 0 {
		// Format 1 did not count appends; the grid's buffer has none.
		ts = append(ts, u64Tensor(bufferPrefix+"count", []int{1}, []uint64{0}))
	}
	if err := restoreTrainer(f.t, ts, old.RNG, json.RawMessage(raw)); err != nil {
		return wrap(err)
	}
	if err := f.evalSrc.UnmarshalBinary(rec.EvalRNG); err != nil {
		return wrap(fmt.Errorf("train: evaluation stream: %w", err))
	}
	// The curve: 18 numbers a point, each distance with a presence flag
	// before it (0: NaN values follow).
	rows, err := legacyF64s(ts, "run.curve", rec.Points*18)
	if err != nil {
		return wrap(err)
	}
	r := run.Record{Curve: run.Curve{Columns: columns}, MeanUnits: rec.LossCount, Every: rec.EvalEvery,
		CheckpointEvery: rec.CheckpointEvery, Resumed: old.Resumed, WallSeconds: rec.WallSeconds, Finished: old.Finished}
	for i := 0; i < len(rows); i += 18 {
		v := rows[i : i+18]
		r.Curve.Rows = append(r.Curve.Rows, append(append(append([]float64{}, v[:8]...), v[9:12]...), v[13:]...))
	}
	sums, err := legacyF64s(ts, "run.loss_sums", 2)
	if err != nil {
		return wrap(err)
	}
	r.MeanSums = []float64{math.NaN(), math.NaN()}
	if rec.LossCount > 0 {
		r.MeanSums[0] = sums[0]
		if f.t.Teacher != nil {
			r.MeanSums[1] = sums[1]
		}
	}
	ns, err := u64s(ts, "run.iter_ns", rec.Iterations)
	if err != nil {
		return wrap(err)
	}
	for _, d := range ns {
		r.UnitNs = append(r.UnitNs, int64(d))
	}
	return run.Convert(dir, f, r)
}

// legacyF64s returns the n values of an F64 tensor (n = 0: absent).
func legacyF64s(ts []safetensors.Tensor, name string, n int) ([]float64, error) {
	if n == 0 {
		return nil, nil
	}
	x, ok := run.State{Tensors: ts}.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("train: no tensor %q (%d values expected)", name, n)
	}
	v, err := x.Float64s()
	if err == nil && len(v) != n {
		err = fmt.Errorf("train: tensor %q holds %d values, want %d", name, len(v), n)
	}
	return v, err
}
