package seqtrain

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safetensors"
)

// legacyKey is the metadata entry of a checkpoint of an earlier gfn
// (format 1, this package's own layout).
const legacyKey = "gfn_seq_state"

// legacyState is a format-1 checkpoint's run state.
type legacyState struct {
	Config      Config        `json:"config"`
	Task        string        `json:"task"`
	Round       int           `json:"round"`
	RewardCalls int           `json:"reward_calls"`
	SeenModes   int           `json:"seen_modes"`
	RNG         []byte        `json:"rng"`
	EvalRNG     []byte        `json:"eval_rng"`
	Curve       []legacyPoint `json:"curve"`
	TrainSecs   float64       `json:"train_seconds"`
	EvalSeconds float64       `json:"eval_seconds"`
	WallSeconds float64       `json:"wall_seconds"`
	LossSums    [3]float64    `json:"loss_sums"`
	Resumed     int           `json:"resumed"`
	EvalEvery   int           `json:"eval_every"`
	EvalSamples int           `json:"eval_samples"`
	CheckEvery  int           `json:"checkpoint_every"`
	NoFigures   bool          `json:"no_figures,omitempty"`
	Failed      string        `json:"failed,omitempty"`
}

// legacyPoint is a format-1 curve point (null: NaN).
type legacyPoint struct {
	Round       int      `json:"round"`
	RewardCalls int      `json:"reward_calls"`
	StudentLoss *float64 `json:"student_loss"`
	TeacherLoss *float64 `json:"teacher_loss"`
	WallSeconds *float64 `json:"wall_seconds"`
	ModesSeen   int      `json:"modes_seen"`
	ModesEval   int      `json:"modes_eval"`
	ELBO        *float64 `json:"elbo"`
	EUBO        *float64 `json:"eubo"`
	LogZ        *float64 `json:"log_z"`
	LogZEst     *float64 `json:"log_z_est"`
	LogZErr     *float64 `json:"log_z_err"`
	Pearson     *float64 `json:"pearson"`
	Samples     int      `json:"samples"`
}

func (p legacyPoint) row() []float64 {
	f := func(x *float64) float64 {
		if x == nil {
			return math.NaN()
		}
		return *x
	}
	return []float64{float64(p.Round), float64(p.RewardCalls), f(p.StudentLoss), f(p.TeacherLoss), float64(p.ModesSeen),
		float64(p.ModesEval), f(p.ELBO), f(p.EUBO), f(p.LogZ), f(p.LogZEst), f(p.LogZErr), f(p.Pearson), float64(p.Samples), f(p.WallSeconds)}
}

// Migrate converts the checkpoint in dir, written by an earlier gfn in
// this package's own layout (format 1), to the checkpoint of package run
// (format 2), in place: its trainer, streams and run record restored for
// task, as gfn migrate does. A format-2 checkpoint is left as it is. A
// run trained with Config.Model cannot be converted (its network is not
// the stored policy's).
func Migrate(dir string, task Task) error {
	_, err := run.Open(dir)
	var legacy *run.LegacyError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &legacy):
		return err
	case legacy.Key != legacyKey:
		return fmt.Errorf("seqtrain: %s is not a sequence run's checkpoint (metadata %s)", legacy.Path, legacy.Key)
	}
	f, rec, err := readLegacy(dir, task)
	if err != nil {
		return err
	}
	return run.Convert(dir, f, rec)
}

// readLegacy rebuilds the family of a format-1 checkpoint and the
// driver's record of its run.
func readLegacy(dir string, task Task) (*family, run.Record, error) {
	path := filepath.Join(dir, run.CheckpointFile)
	file, err := os.Open(path)
	if err != nil {
		return nil, run.Record{}, fmt.Errorf("seqtrain: %w", err)
	}
	defer file.Close()
	ts, meta, err := safetensors.Read(file)
	if err != nil {
		return nil, run.Record{}, fmt.Errorf("seqtrain: checkpoint %s: %w", path, err)
	}
	var st legacyState
	if err := json.Unmarshal([]byte(meta[legacyKey]), &st); err != nil {
		return nil, run.Record{}, fmt.Errorf("seqtrain: checkpoint %s: state: %w", path, err)
	}
	if err := checkNetworkSize(ts, st.Config, task, path); err != nil {
		return nil, run.Record{}, err
	}
	f, err := newFamily(task, st.Config, st.Task, st.EvalSamples)
	if err != nil {
		return nil, run.Record{}, err
	}
	bad := func(what string, err error) (*family, run.Record, error) {
		return nil, run.Record{}, fmt.Errorf("seqtrain: checkpoint %s: %s: %w", path, what, err)
	}
	for _, a := range f.Agents() {
		if err := nn.LoadParams(a.Name+".", a.Opt.Params(), ts); err != nil {
			return bad(a.Name, err)
		}
		if err := a.Opt.LoadState(a.Name+".optim.", ts); err != nil {
			return bad(a.Name, err)
		}
	}
	if err := f.t.src.UnmarshalBinary(st.RNG); err != nil {
		return bad("random stream", err)
	}
	if err := f.evalSrc.UnmarshalBinary(st.EvalRNG); err != nil {
		return bad("evaluation stream", err)
	}
	// The counters and the seen objects are stored as format 2 stores
	// them; the replay buffer had I64 tokens.
	js, _ := json.Marshal(counters{st.Round, st.RewardCalls, st.SeenModes})
	if err := f.restoreCounters(run.State{JSON: js, Tensors: ts}); err != nil {
		return nil, run.Record{}, err
	}
	if buf := f.t.buffer(); buf != nil {
		w := f.t.env.StateLen()
		get := func(name string) safetensors.Tensor { x, _ := run.State{Tensors: ts}.Tensor(name); return x }
		xs, err1 := get("buffer.x").Int64s()
		bk, err2 := get("buffer.key").Int64s()
		blr, err3 := get("buffer.log_r").Float64s()
		pr, err4 := get("buffer.priority").Float64s()
		if err := errors.Join(err1, err2, err3, err4); err != nil || len(xs) != len(bk)*w || len(blr) != len(bk) || len(pr) != len(bk) {
			return nil, run.Record{}, fmt.Errorf("seqtrain: checkpoint %s: replay buffer: %v (%d keys, %d tokens, %d log-rewards, %d priorities)", path, err, len(bk), len(xs), len(blr), len(pr))
		}
		x := make([]int32, w)
		for i := range bk {
			for j := range w {
				x[j] = int32(xs[i*w+j])
			}
			buf.Set(uint64(bk[i]), x, blr[i], pr[i])
		}
	}
	t := f.t
	rec := run.Record{Every: st.EvalEvery, CheckpointEvery: st.CheckEvery, Resumed: st.Resumed, WallSeconds: st.WallSeconds,
		EvalSeconds: st.EvalSeconds, Failed: st.Failed, NoFigures: st.NoFigures, MeanUnits: int(st.LossSums[2]),
		MeanSums: []float64{st.LossSums[0], math.NaN()}}
	rec.Curve.Columns = columns
	for _, p := range st.Curve {
		rec.Curve.Rows = append(rec.Curve.Rows, p.row())
	}
	if t.Teacher != nil {
		rec.MeanSums[1] = st.LossSums[1]
	}
	if rec.MeanUnits == 0 {
		rec.MeanSums = []float64{math.NaN(), math.NaN()}
	}
	// Format 1 kept the training time, not each round's: spread it evenly.
	if t.Round > 0 {
		per := int64(st.TrainSecs * float64(time.Second) / float64(t.Round))
		for range t.Round {
			rec.UnitNs = append(rec.UnitNs, per)
		}
	}
	failed := st.Failed != ""
	rec.Finished = t.Done() && !failed
	// The evaluation after round t.Round−1 failed: its point is missing.
	last := t.Round - 1
	due := t.Done() || last > 0 && st.EvalEvery > 0 && last%st.EvalEvery == 0
	rec.EvalPending = failed && due && (len(st.Curve) == 0 || st.Curve[len(st.Curve)-1].Round != last)
	return f, rec, nil
}
