package bench

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/seqtrain"
)

// SeqSpeedCase is one sequence-task configuration to time: a biochem
// task at its reference settings (seqtrain.ForTask) with a method.
type SeqSpeedCase struct {
	Name   string
	Task   string // a biochem.Names entry
	Method seqtrain.Method
}

// SeqSpeedCases are the sequence rows of `gfn bench speed`: the Teacher +
// PER round of the two widest tasks (SSR width 1,024), whose rounds cost
// the most.
var SeqSpeedCases = []SeqSpeedCase{
	{"seq sehstr teacher-per", "sehstr", seqtrain.TeacherPER},
	{"seq qm9str teacher-per", "qm9str", seqtrain.TeacherPER},
}

// SeqSpeedOptions size the measurement.
type SeqSpeedOptions struct {
	Rounds int // timed rounds (default 6)
	Warmup int // untimed rounds first (default 6: the buffer then replays)
	Seed   uint64
	// Precision is the policies' (seqtrain.Config.Precision).
	Precision nn.Precision
}

// SeqSpeedResult is the timing of one sequence case.
type SeqSpeedResult struct {
	Case             SeqSpeedCase
	Precision        nn.Precision
	Width            int
	Rounds           int
	MedianMs, MeanMs float64 // per timed round
}

// SeqSpeed times o.Rounds training rounds of case c after o.Warmup, with
// the library's trainer as gfn train runs it.
func SeqSpeed(ctx context.Context, c SeqSpeedCase, o SeqSpeedOptions) (SeqSpeedResult, error) {
	if o.Rounds <= 0 {
		o.Rounds = 6
	}
	if o.Warmup <= 0 {
		o.Warmup = 6
	}
	task, err := biochem.Named(c.Task)
	if err != nil {
		return SeqSpeedResult{}, err
	}
	cfg := seqtrain.ForTask(task)
	cfg.Method, cfg.Seed, cfg.Precision = c.Method, o.Seed, o.Precision
	cfg.Rounds = o.Warmup + o.Rounds
	t, err := seqtrain.New(task, cfg)
	if err != nil {
		return SeqSpeedResult{}, err
	}
	r := SeqSpeedResult{Case: c, Precision: o.Precision, Width: cfg.Policy.Hidden, Rounds: o.Rounds}
	ms := make([]float64, 0, o.Rounds)
	for i := range o.Warmup + o.Rounds {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		t0 := time.Now()
		if _, err := t.Iterate(); err != nil {
			return r, err
		}
		if i >= o.Warmup {
			ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
		}
	}
	r.MedianMs, r.MeanMs = medianMean(ms)
	return r, nil
}

// medianMean returns the median and the mean of ms (sorted in place).
func medianMean(ms []float64) (median, mean float64) {
	for _, v := range ms {
		mean += v
	}
	mean /= float64(len(ms))
	sort.Float64s(ms)
	median = ms[len(ms)/2]
	if len(ms)%2 == 0 {
		median = (ms[len(ms)/2-1] + ms[len(ms)/2]) / 2
	}
	return median, mean
}

// WriteSeqSpeedTable prints sequence results as a Markdown table.
func WriteSeqSpeedTable(w io.Writer, rs []SeqSpeedResult) {
	fmt.Fprintln(w, "| configuration | precision | SSR width | ms/round median | ms/round mean |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.0f |\n", r.Case.Name, r.Precision, r.Width, r.MedianMs, r.MeanMs)
	}
	rounds := 0
	if len(rs) > 0 {
		rounds = rs[0].Rounds
	}
	fmt.Fprintf(w, "\nSequence rows: the task's reference settings (seqtrain.ForTask: 32 online and 32 replayed samples per round),\n%d timed rounds after 6 of warm-up; kernels %s, bf16 kernel %s.\n", rounds, kernel.Name(), kernel.BF16Kernel())
}
