package run

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/gfngo/gfn/tfevents"
)

// RunningFile marks a run in progress: Drive and Resume write it into
// the output directory when they start and remove it when they return.
// One that outlives its process (killed) names a process that is gone,
// which is how gfn view tells an interrupted run from a running one.
const RunningFile = "running.json"

// Running is the content of RunningFile.
type Running struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
}

// startLive marks the run as running and, with Options.TensorBoard,
// opens its event file: a fresh run (whose directory may hold the files
// of the run it replaces) starts one, a resumed run continues its own
// and writes the curve's points the files lack.
func (d *driver) startLive(fresh bool) error {
	dir := d.opt.OutDir
	if dir == "" {
		return nil
	}
	host, _ := os.Hostname()
	mark := filepath.Join(dir, RunningFile)
	if err := WriteJSON(mark, Running{PID: os.Getpid(), Host: host, Started: time.Now().UTC()}); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	err := d.openEvents(fresh)
	if err != nil {
		os.Remove(mark)
	}
	return err
}

func (d *driver) openEvents(fresh bool) error {
	dir := d.opt.OutDir
	if fresh {
		if err := tfevents.RemoveAll(dir); err != nil {
			return fmt.Errorf("run: removing the event files of the run %s held: %w", dir, err)
		}
	}
	if !d.opt.TensorBoard {
		return nil
	}
	var err error
	if fresh {
		d.tb, err = tfevents.Create(dir, time.Now())
	} else {
		d.tb, err = tfevents.Open(dir, time.Now())
	}
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	return d.events(d.cur.Rows)
}

// stopLive closes the event file and removes RunningFile.
func (d *driver) stopLive() {
	if d.tb != nil {
		d.tb.Close() // every record was written by one write call
		d.tb = nil
	}
	if d.opt.OutDir != "" {
		os.Remove(filepath.Join(d.opt.OutDir, RunningFile)) // gone already: nothing to do
	}
}

// live publishes the point row as it is taken: metrics.csv with the
// curve so far (replaced atomically, without the sync a checkpoint's
// files get: a crash loses at most this copy, which the resumed run
// writes again), and the row's event.
func (d *driver) live(row []float64) error {
	if d.opt.OutDir == "" {
		return nil
	}
	if err := writeUnsynced(filepath.Join(d.opt.OutDir, MetricsFile), d.cur.WriteCSV); err != nil {
		return err
	}
	return d.events([][]float64{row})
}

// events appends the rows whose step (the unit label) is after the event
// file's last step, each column but the label as a scalar.
func (d *driver) events(rows [][]float64) error {
	if d.tb == nil {
		return nil
	}
	now := time.Now()
	for _, r := range rows {
		step := int64(r[0])
		if step <= d.tb.LastStep() {
			continue
		}
		var vs []tfevents.Scalar
		for j, c := range d.cur.Columns[1:] {
			if v := r[j+1]; !math.IsNaN(v) {
				vs = append(vs, tfevents.Scalar{Tag: c.Name, Value: float32(v)})
			}
		}
		if err := d.tb.Scalars(step, now, vs); err != nil {
			return fmt.Errorf("run: %w", err)
		}
	}
	return nil
}

// writeUnsynced replaces path with what write produces through a
// temporary file and a rename, so that a reader sees the old file or the
// new one whole.
func writeUnsynced(path string, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("run: writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	err = write(bw)
	err = errors.Join(err, bw.Flush(), f.Close())
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("run: writing %s: %w", path, err)
	}
	return nil
}
