package diffusion

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safetensors"
)

// legacyState is the "gfn_state" metadata of a checkpoint of an earlier
// gfn (format 1), as far as Migrate needs it.
type legacyState struct {
	Config      Config     `json:"config"`
	Task        string     `json:"task"`
	Preset      string     `json:"preset"`
	Dim         int        `json:"dim"`
	Step        int        `json:"step"`
	RewardCalls int        `json:"reward_calls"`
	Threshold   float64    `json:"threshold"`
	RNG         []byte     `json:"rng"`
	TeacherRNG  []byte     `json:"teacher_rng"`
	EvalRNG     []byte     `json:"eval_rng"`
	ExactRNG    []byte     `json:"exact_rng"`
	EvalSeconds float64    `json:"eval_seconds"`
	WallSeconds float64    `json:"wall_seconds"`
	LossSums    [3]float64 `json:"loss_sums"` // Student, Teacher, count since the last point
	// GradSums are the gradient norms' (Student, Teacher, count); nil in
	// checkpoints older than those columns.
	GradSums        *[3]float64 `json:"grad_sums"`
	Resumed         int         `json:"resumed"`
	EvalEvery       int         `json:"eval_every"`
	EvalSamples     int         `json:"eval_samples"`
	FinalSamples    int         `json:"final_samples"`
	CheckpointEvery int         `json:"checkpoint_every"`
	NoFigures       bool        `json:"no_figures"`
	Failed          string      `json:"failed"`
	EvalPending     bool        `json:"eval_pending"`
}

// legacyCurve maps the columns of a format-1 run.curve row to curveColumns:
// the old rows held step, reward_calls, student_loss, teacher_loss,
// teacher_logz, elbo, elbo_is, eubo, w2, student_logz, samples,
// wall_seconds, then (14 columns) the two gradient norms.
var legacyCurve = map[string]int{"step": 0, "reward_calls": 1, "student_loss": 2, "teacher_loss": 3, "teacher_logz": 4,
	"elbo": 5, "elbo_is": 6, "eubo": 7, "w2": 8, "student_logz": 9, "samples": 10, "wall_seconds": 11,
	"student_grad_norm": 12, "teacher_grad_norm": 13}

// Migrate converts the diffusion checkpoint of an earlier gfn (format 1)
// in dir, a run on the energy e, to the current format in place
// (run.Convert): the run resumes from it as it would have from the old
// one. Checkpoints written before the gradient-norm columns convert too;
// their earlier rows and the first row after the resume have no
// gradient norms.
func Migrate(dir string, e energy.Energy) error {
	path := filepath.Join(dir, run.CheckpointFile)
	fail := func(err error) error { return fmt.Errorf("diffusion: migrate %s: %w", path, err) }
	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("diffusion: %w", err)
	}
	ts, meta, err := safetensors.Read(file)
	file.Close()
	if err != nil {
		return fail(err)
	}
	raw, ok := meta["gfn_state"]
	if !ok {
		return fmt.Errorf("diffusion: migrate %s: not a format-1 diffusion checkpoint (no gfn_state metadata)", path)
	}
	var old legacyState
	if err := json.Unmarshal([]byte(raw), &old); err != nil {
		return fail(err)
	}
	st := Stored{Task: old.Task, Preset: old.Preset, Dim: old.Dim, EvalSamples: old.EvalSamples,
		FinalSamples: old.FinalSamples, Config: old.Config}
	t, err := trainerOf(&run.Checkpoint{Path: path, Tensors: ts}, st, e)
	if err != nil {
		return err
	}
	f := newFamily(t, st)
	if err := f.loadAgents(ts, path); err != nil {
		return err
	}
	for i, b := range [][]byte{old.RNG, old.TeacherRNG, old.EvalRNG, old.ExactRNG} {
		if err := f.Streams()[i].Src.UnmarshalBinary(b); err != nil {
			return fmt.Errorf("diffusion: migrate %s: random stream %q: %w", path, f.Streams()[i].Name, err)
		}
	}
	t.Step, t.RewardCalls, t.Threshold = old.Step, old.RewardCalls, old.Threshold
	if err := legacyBuffer(t, ts, path); err != nil {
		return err
	}
	rec := run.Record{Every: old.EvalEvery, CheckpointEvery: old.CheckpointEvery, Resumed: old.Resumed,
		WallSeconds: old.WallSeconds, EvalSeconds: old.EvalSeconds, Failed: old.Failed, EvalPending: old.EvalPending,
		NoFigures: old.NoFigures, Finished: t.Done() && old.Failed == "", MeanUnits: int(old.LossSums[2])}
	rows, err := legacyRows(ts, path)
	if err != nil {
		return err
	}
	rec.Curve = run.Curve{Columns: f.Layout().Columns, Rows: rows}
	ms, err := tensor(ts, "run.iter_ms").Float64s()
	if err != nil {
		return fail(err)
	}
	for _, v := range ms {
		rec.UnitNs = append(rec.UnitNs, int64(math.Round(v*1e6)))
	}
	// The sums of the next point's means: the Student's always summed
	// (NaN included), the Teacher's its defined values.
	nan := math.NaN()
	rec.MeanSums = []float64{nan, nan, nan, nan}
	if rec.MeanUnits > 0 {
		grad := old.GradSums
		if grad == nil {
			f.nanMeans |= 1<<2 | 1<<3
			grad = &[3]float64{nan, nan}
		}
		rec.MeanSums[0], rec.MeanSums[2] = old.LossSums[0], grad[0]
		if t.Teacher != nil {
			rec.MeanSums[1], rec.MeanSums[3] = old.LossSums[1], grad[1]
		}
		for j := 0; j < 4; j += 2 {
			if math.IsNaN(rec.MeanSums[j]) {
				f.nanMeans |= 1 << j
			}
		}
	}
	return run.Convert(dir, f, rec)
}

// tensor is the named tensor of ts (a zero tensor, which no accessor
// accepts, if there is none).
func tensor(ts []safetensors.Tensor, name string) safetensors.Tensor {
	x, _ := run.State{Tensors: ts}.Tensor(name)
	return x
}

// legacyRows reads a format-1 run.curve tensor (rows of 12 or 14) into
// rows of curveColumns.
func legacyRows(ts []safetensors.Tensor, path string) ([][]float64, error) {
	var rows [][]float64
	x := tensor(ts, "run.curve")
	v, err := x.Float64s()
	if err != nil || len(x.Shape) != 2 || (x.Shape[1] != 12 && x.Shape[1] != 14) || len(v) != x.Shape[0]*x.Shape[1] {
		return nil, fmt.Errorf("diffusion: migrate %s: no valid run record (tensor run.curve)", path)
	}
	k := x.Shape[1]
	for i := 0; i < len(v); i += k {
		row := make([]float64, len(curveColumns))
		for j, name := range curveColumns {
			row[j] = math.NaN()
			if m := legacyCurve[name]; m < k {
				row[j] = v[i+m]
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// legacyBuffer refills t's buffer from a format-1 checkpoint's entries
// (oldest first) and, with passes, the pass in progress ("buffer.pass":
// served, then the positions).
func legacyBuffer(t *Trainer, ts []safetensors.Tensor, path string) error {
	if t.buffer == nil {
		return nil
	}
	xs, err1 := tensor(ts, "buffer.x").Float32s()
	lr, err2 := tensor(ts, "buffer.log_r").Float64s()
	pr, err3 := tensor(ts, "buffer.priority").Float64s()
	d := t.Proc.Dim
	if err1 != nil || err2 != nil || err3 != nil || len(xs) != len(lr)*d || len(pr) != len(lr) || len(lr) > t.buffer.Cap {
		return fmt.Errorf("diffusion: migrate %s: no valid replay buffer", path)
	}
	for i := range lr {
		t.buffer.Append(xs[i*d:(i+1)*d], lr[i], pr[i])
	}
	if !t.buffer.Passes {
		return nil
	}
	p, err := tensor(ts, "buffer.pass").Int64s()
	if err != nil || len(p) < 1 {
		return fmt.Errorf("diffusion: migrate %s: no valid replay pass", path)
	}
	pos := make([]int, len(p)-1)
	for i := range pos {
		pos[i] = int(p[i+1])
	}
	if err := t.buffer.SetPass(pos, int(p[0])); err != nil {
		return fmt.Errorf("diffusion: migrate %s: %w", path, err)
	}
	return nil
}
