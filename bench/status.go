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

	"github.com/gfngo/gfn/progress"
	"github.com/gfngo/gfn/run"
)

// RunState is where one run of a table stands, read from its directory.
type RunState struct {
	// Run labels the run ("25gmm teacher seed 1"), Kind without its seed
	// ("25gmm teacher"); Dir is its directory.
	Run, Kind, Dir string
	Seed           int
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
func runState(kind, dir string, seed int, st RunStatus) RunState {
	r := RunState{Run: fmt.Sprintf("%s seed %d", kind, seed), Kind: kind, Dir: dir, Seed: seed, Status: st}
	for _, f := range []string{"summary.json", run.CheckpointFile} {
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

// Left estimates the wall time the unfinished run r still needs from the
// mean wall time of the finished runs of its kind (other seeds), scaled
// by the share its checkpoint has left; ok is false without such runs.
func Left(r RunState, rs []RunState) (seconds float64, ok bool) {
	var sum float64
	n := 0
	for _, f := range rs {
		if f.Status == RunDone && f.Kind == r.Kind {
			sum += f.WallSeconds
			n++
		}
	}
	if n == 0 || r.Status == RunDone {
		return 0, n > 0
	}
	left := 1.0
	if r.Status == RunResume && r.Done >= 0 && r.Total > 0 {
		left = max(0, 1-float64(r.Done)/float64(r.Total))
	}
	return sum / float64(n) * left, true
}

// WriteStatus writes a table's runs, one line each, after a count of
// finished, interrupted (or running) and unstarted runs and an estimate of
// the wall time left (Left, summed); now dates the last writes.
func WriteStatus(w io.Writer, name string, rs []RunState, now time.Time) error {
	var done, resume, fresh, unknown int
	var wall, left float64
	for _, r := range rs {
		switch r.Status {
		case RunDone:
			done++
			wall += r.WallSeconds
			continue
		case RunResume:
			resume++
		default:
			fresh++
		}
		if l, ok := Left(r, rs); ok {
			left += l
		} else {
			unknown++
		}
	}
	dur := func(s float64) string { return progress.Duration(time.Duration(s * float64(time.Second))) }
	fmt.Fprintf(w, "%s: %d runs, %d finished (%s of wall time), %d with a checkpoint (interrupted or running), %d not started\n",
		name, len(rs), done, dur(wall), resume, fresh)
	if done < len(rs) {
		fmt.Fprintf(w, "left: about %s of one lane's wall time by the finished runs of the same kind", dur(left))
		if unknown > 0 {
			fmt.Fprintf(w, ", and %d runs of kinds none has finished", unknown)
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tstatus\tprogress\tleft (est.)\tlast write")
	for _, r := range rs {
		status, prog, last, est := "not started", "", "", ""
		if l, ok := Left(r, rs); ok && r.Status != RunDone {
			est = dur(l)
		}
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Run, status, prog, est, last)
	}
	return tw.Flush()
}
