package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/progress"
	"github.com/gfngo/gfn/seqtrain"
	"github.com/gfngo/gfn/train"
)

// RunState is where one run of a table stands, read from its directory.
type RunState struct {
	// Run labels the run ("25gmm teacher seed 1"); Dir is its directory.
	Run, Dir string
	Seed     int
	// Status is what the directory calls for: done (summary.json),
	// resume (a checkpoint and no summary) or fresh (nothing usable).
	Status RunStatus
	// Done of Total Units is the progress the checkpoint of an
	// unfinished run records (Done is -1 if it cannot be read).
	Done, Total int
	Unit        string
	// WallSeconds is a finished run's wall time from its summary.
	WallSeconds float64
	// Updated is the time of the latest summary or checkpoint write: a
	// checkpoint written minutes ago is most likely a run in progress.
	Updated time.Time
}

// DiffusionStatus reports every run of table t in o's directory (all of
// its methods and tasks, not only those of o): all its seeds, or o.Seeds
// of them and any other seed's runs that have files.
func DiffusionStatus(t DiffusionTable, o DiffusionOptions) ([]RunState, error) {
	if err := o.validate(t); err != nil {
		return nil, err
	}
	var rs []RunState
	for _, j := range t.allJobs(o, t.Jobs(o)) {
		st, _ := j.Next()
		r := runState(fmt.Sprintf("%s %s seed %d", j.Task, j.Method, j.Seed), j.Dir, j.Seed, st, diffusion.CheckpointFile)
		if st == RunResume {
			r.Unit, r.Done = "iteration", -1
			if _, _, cfg, step, err := diffusion.ReadState(j.Dir); err == nil {
				r.Done, r.Total = step, cfg.Iterations
			}
		}
		rs = append(rs, r)
	}
	return asked(rs, o.Seeds), nil
}

// GridStatus reports every run of table t in o's directory, as
// DiffusionStatus.
func GridStatus(t GridTable, o GridOptions) ([]RunState, error) {
	var rs []RunState
	for _, j := range t.allJobs(o, t.Jobs(o)) {
		st, _ := j.Next()
		r := runState(fmt.Sprintf("%s %v seed %d", j.Method, j.Grid, j.Seed), j.Dir, j.Seed, st, train.CheckpointFile)
		if st == RunResume {
			r.Unit, r.Done = "reward call", -1
			if cc, err := train.ReadCheckpoint(j.Dir); err == nil {
				r.Done, r.Total = cc.RewardCalls, cc.Train.RewardCalls
			}
		}
		rs = append(rs, r)
	}
	return asked(rs, o.Seeds), nil
}

// BiochemStatus reports every run in o's directory, as DiffusionStatus.
func BiochemStatus(o BiochemOptions) ([]RunState, error) {
	jobs, err := BiochemJobs(o)
	if err != nil {
		return nil, err
	}
	all, err := allBiochemJobs(o, jobs)
	if err != nil {
		return nil, err
	}
	var rs []RunState
	for _, j := range all {
		st, _ := j.Next()
		r := runState(fmt.Sprintf("%s %s seed %d", j.Task, j.Method, j.Seed), j.Dir, j.Seed, st, seqtrain.CheckpointFile)
		if st == RunResume {
			r.Unit, r.Done = "round", -1
			if _, cfg, round, err := seqtrain.ReadState(j.Dir); err == nil {
				r.Done, r.Total = round, cfg.Rounds
			}
		}
		rs = append(rs, r)
	}
	return asked(rs, o.Seeds), nil
}

// asked drops the unstarted runs of seeds beyond the first seeds (all
// seeds if 0).
func asked(rs []RunState, seeds int) []RunState {
	if seeds == 0 {
		return rs
	}
	return slices.DeleteFunc(rs, func(r RunState) bool { return r.Status == RunFresh && r.Seed >= seeds })
}

// runState reads what the three kinds of run share: the summary's wall
// time and the times of the last writes.
func runState(run, dir string, seed int, st RunStatus, checkpoint string) RunState {
	r := RunState{Run: run, Dir: dir, Seed: seed, Status: st}
	for _, f := range []string{"summary.json", checkpoint} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil && fi.ModTime().After(r.Updated) {
			r.Updated = fi.ModTime()
		}
	}
	if st == RunDone {
		var s struct {
			WallSeconds float64 `json:"wall_seconds"`
		}
		if b, err := os.ReadFile(filepath.Join(dir, "summary.json")); err == nil && json.Unmarshal(b, &s) == nil {
			r.WallSeconds = s.WallSeconds
		}
	}
	return r
}

// WriteStatus writes a table's runs, one line each, after a count of
// finished, interrupted (or running) and unstarted runs; now dates the
// last writes.
func WriteStatus(w io.Writer, name string, rs []RunState, now time.Time) error {
	var done, resume, fresh int
	var wall float64
	for _, r := range rs {
		switch r.Status {
		case RunDone:
			done++
			wall += r.WallSeconds
		case RunResume:
			resume++
		default:
			fresh++
		}
	}
	fmt.Fprintf(w, "%s: %d runs, %d finished (%s of wall time), %d with a checkpoint (interrupted or running), %d not started\n",
		name, len(rs), done, progress.Duration(time.Duration(wall*float64(time.Second))), resume, fresh)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tstatus\tprogress\tlast write")
	for _, r := range rs {
		status, prog, last := "not started", "", ""
		if !r.Updated.IsZero() {
			last = progress.Duration(now.Sub(r.Updated).Round(time.Second)) + " ago"
		}
		switch r.Status {
		case RunDone:
			status, prog = "finished", "in "+progress.Duration(time.Duration(r.WallSeconds*float64(time.Second)))
		case RunResume:
			status, prog = "checkpoint", "checkpoint unreadable"
			if r.Done >= 0 && r.Total > 0 {
				prog = fmt.Sprintf("%s %d of %d (%.0f%%)", r.Unit, r.Done, r.Total, 100*float64(r.Done)/float64(r.Total))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Run, status, prog, last)
	}
	return tw.Flush()
}
