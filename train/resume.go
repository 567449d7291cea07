package train

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/gfngo/gfn/metrics"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safefile"
	"github.com/gfngo/gfn/safetensors"
)

// checkpoint writes the run's state after its current iteration into
// OutDir: the checkpoint (CheckpointFile, then ConfigFile) and, for a
// periodic one, the curve so far as metrics.csv, so that a long run can be
// watched. finished marks the final checkpoint.
func (r *runner) checkpoint(finished bool) error {
	t, res := r.t, r.res
	evalRNG, err := r.evalSrc.MarshalBinary()
	if err != nil {
		return fmt.Errorf("train: checkpoint: evaluation stream: %w", err)
	}
	rec := &runRecord{EvalRNG: evalRNG, EvalEvery: r.every, CurveExactLimit: r.limit, CurveSamples: r.curveSamples,
		EvalSamples: r.opt.EvalSamples, CheckpointEvery: r.opt.CheckpointEvery, Points: len(res.Curve), Iterations: len(r.iterDur), LossCount: r.nLoss,
		WallSeconds: r.clock.Seconds(), resumed: r.resumed}
	ts := []safetensors.Tensor{safetensors.F64(tensorLossSums, []int{2}, []float64{r.sLoss, r.tLoss})}
	if n := len(res.Curve); n > 0 {
		rows := make([]float64, 0, n*curveCols)
		for _, p := range res.Curve {
			rows = appendCurveRow(rows, p)
		}
		ts = append(ts, safetensors.F64(tensorCurve, []int{n, curveCols}, rows))
	}
	if n := len(r.iterDur); n > 0 {
		ts = append(ts, i64Tensor(tensorIterNs, []int{n}, r.iterDur))
	}
	if err := t.save(r.opt.OutDir, r.spec, rec, ts, finished); err != nil {
		return err
	}
	r.checkpointed = t.Step
	if finished {
		return nil
	}
	return safefile.Write(filepath.Join(r.opt.OutDir, run.MetricsFile), func(w io.Writer) error { return WriteCurve(w, res.Curve) })
}

// restore continues the run st and ts describe (checked by compatible).
func (r *runner) restore(st *trainState, ts []safetensors.Tensor) error {
	dir := r.opt.ResumeFrom
	name := filepath.Join(dir, CheckpointFile)
	if err := r.t.restore(st, ts, name); err != nil {
		return err
	}
	wrap := func(err error) error { return fmt.Errorf("train: checkpoint %s: %w", name, err) }
	rec := st.Run
	if err := r.evalSrc.UnmarshalBinary(rec.EvalRNG); err != nil {
		return wrap(fmt.Errorf("train: evaluation stream: %w", err))
	}
	rows, err := f64s(ts, tensorCurve, rec.Points*curveCols)
	if err != nil {
		return wrap(err)
	}
	for i := 0; i < len(rows); i += curveCols {
		r.res.Curve = append(r.res.Curve, pointOf(rows[i:i+curveCols]))
	}
	ns, err := i64s(ts, tensorIterNs, rec.Iterations)
	if err != nil {
		return wrap(err)
	}
	for _, d := range ns {
		r.iterDur = append(r.iterDur, time.Duration(d))
	}
	sums, err := f64s(ts, tensorLossSums, 2)
	if err != nil {
		return wrap(err)
	}
	r.sLoss, r.tLoss, r.nLoss = sums[0], sums[1], rec.LossCount
	r.clock.Before = rec.WallSeconds
	r.resumed = st.Resumed + 1
	r.checkpointed = r.t.Step
	if filepath.Clean(r.opt.OutDir) == filepath.Clean(dir) {
		return tidy(dir, st)
	}
	return nil
}

// tidy repairs what a crash during a checkpoint may have left in dir:
// temporary files of interrupted writes, and a config.json older than
// the checkpoint (the crash fell between the two renames).
func tidy(dir string, st *trainState) error {
	for _, f := range []string{CheckpointFile, ConfigFile, run.MetricsFile, run.SummaryFile} {
		tmp, _ := filepath.Glob(filepath.Join(dir, "."+f+".tmp*"))
		for _, name := range tmp {
			os.Remove(name) // leftovers only: a failure changes nothing
		}
	}
	var cc CheckpointConfig
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err == nil && json.Unmarshal(b, &cc) == nil && cc.Step == st.Step && cc.RewardCalls == st.RewardCalls {
		return nil
	}
	return writeConfig(dir, st.CheckpointConfig)
}

// writeOutputs writes metrics.csv, summary.json and the final checkpoint,
// in this order (run.WriteOutputs): summary.json marks a finished run for
// tools (bench grid skips such runs), and a crash before the final
// checkpoint leaves the last periodic one, from which Resume writes the
// same outputs again.
func (r *runner) writeOutputs() error {
	res := r.res
	return run.WriteOutputs(r.opt.OutDir, func(w io.Writer) error { return WriteCurve(w, res.Curve) }, res.Summary,
		func() error { return r.checkpoint(true) })
}

// appendCurveRow encodes a curve point as curveCols numbers: the counters,
// losses and log Z's, then each exact distance as a presence flag and L1,
// TV, KL, then the empirical L1 and the wall-clock time.
func appendCurveRow(row []float64, p Point) []float64 {
	row = append(row, float64(p.Step), float64(p.RewardCalls), float64(p.GradSteps), float64(p.Modes),
		p.StudentLoss, p.TeacherLoss, p.StudentLogZ, p.TeacherLogZ)
	for _, d := range []*metrics.Distances{p.StudentExact, p.TeacherExact} {
		if d == nil {
			row = append(row, 0, math.NaN(), math.NaN(), math.NaN())
			continue
		}
		row = append(row, 1, d.L1, d.TV, d.KL)
	}
	return append(row, p.StudentEmpiricalL1, p.WallSeconds)
}

// pointOf decodes appendCurveRow's numbers.
func pointOf(v []float64) Point {
	p := Point{Step: int(v[0]), RewardCalls: int(v[1]), GradSteps: int(v[2]), Modes: int(v[3]),
		StudentLoss: v[4], TeacherLoss: v[5], StudentLogZ: v[6], TeacherLogZ: v[7],
		StudentEmpiricalL1: v[16], WallSeconds: v[17]}
	dist := func(u []float64) *metrics.Distances {
		if u[0] == 0 {
			return nil
		}
		return &metrics.Distances{L1: u[1], TV: u[2], KL: u[3]}
	}
	p.StudentExact, p.TeacherExact = dist(v[8:12]), dist(v[12:16])
	return p
}
