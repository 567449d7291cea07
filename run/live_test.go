package run_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/tfevents"
)

// eventSteps lists the steps of the summary events in dir's event files
// and checks each event's values against metrics.csv's columns.
func eventSteps(t *testing.T, dir string) []int64 {
	t.Helper()
	files, err := tfevents.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	var steps []int64
	for _, p := range files {
		evs, err := tfevents.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 || evs[0].FileVersion != tfevents.FileVersion {
			t.Fatalf("%s does not begin with its file version", p)
		}
		for _, e := range evs[1:] {
			steps = append(steps, e.Step)
			for _, v := range e.Values {
				if v.Tag == "step" {
					t.Errorf("step %d: the unit label is a scalar too", e.Step)
				}
			}
		}
	}
	return steps
}

// TestTensorBoard: a run killed after a checkpoint, resumed from an
// earlier one, then extended, writes each curve point once, with the
// curve's values; RunningFile is there while it trains only.
func TestTensorBoard(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(t.TempDir(), "at2")
	kill := errors.New("killed")
	opt := run.Options{OutDir: dir, CheckpointEvery: 2, TensorBoard: true, NoFigures: true,
		AfterCheckpoint: func(done int) error {
			if _, err := os.Stat(filepath.Join(dir, run.RunningFile)); err != nil {
				t.Errorf("after unit %d: %v", done, err)
			}
			switch done {
			case 2:
				b, _ := os.ReadFile(filepath.Join(dir, run.CheckpointFile))
				return os.WriteFile(saved, b, 0o644)
			case 6:
				return kill
			}
			return nil
		}}
	if _, err := run.Drive(context.Background(), newToy(toyConfig{Mean: 3, Budget: 9, Seed: 7}), opt); !errors.Is(err, kill) {
		t.Fatalf("Drive: %v, want the simulated kill", err)
	}
	if got := fmt.Sprint(eventSteps(t, dir)); got != "[0 2 4 6]" {
		t.Fatalf("steps before the kill %s, want [0 2 4 6]", got)
	}
	// Back to the checkpoint after unit 2: the points 4 and 6 are in the
	// event file already.
	b, _ := os.ReadFile(saved)
	os.WriteFile(filepath.Join(dir, run.CheckpointFile), b, 0o644)
	if err := toyResume(context.Background(), dir, 0, run.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(eventSteps(t, dir)); got != "[0 2 4 6 8 9]" {
		t.Errorf("steps after the resume %s, want [0 2 4 6 8 9]", got)
	}
	if _, err := os.Stat(filepath.Join(dir, run.RunningFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after the run: %v", run.RunningFile, err)
	}
	if err := toyResume(context.Background(), dir, 4, run.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(eventSteps(t, dir)); got != "[0 2 4 6 8 9 10 12 13]" {
		t.Errorf("steps after the extension %s", got)
	}
	// The last event's values are the curve's last row (as float32).
	files, _ := tfevents.Files(dir)
	evs, _ := tfevents.ReadFile(files[len(files)-1])
	c, err := run.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := run.Restore(c, newToy(toyConfig{Mean: 3, Budget: 13, Seed: 7}))
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	for _, v := range last.Values {
		if want := float32(cur.Last(v.Tag)); v.Value != want {
			t.Errorf("step %d %s = %v, want %v", last.Step, v.Tag, v.Value, want)
		}
	}
	if len(last.Values) != 3 {
		t.Errorf("last event: %+v, want loss, error and wall_seconds", last.Values)
	}
	// A fresh run in the directory replaces the event files.
	os.Remove(filepath.Join(dir, run.SummaryFile))
	if _, err := run.Drive(context.Background(), newToy(toyConfig{Mean: 3, Budget: 3, Seed: 7}), run.Options{OutDir: dir, TensorBoard: true, NoFigures: true}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(eventSteps(t, dir)); got != "[0 2 3]" {
		t.Errorf("steps of the fresh run %s, want [0 2 3]", got)
	}
}

// Without the option no event file is written.
func TestNoTensorBoard(t *testing.T) {
	dir := t.TempDir()
	if _, err := run.Drive(context.Background(), newToy(toyConfig{Mean: 3, Budget: 3, Seed: 7}), run.Options{OutDir: dir, NoFigures: true}); err != nil {
		t.Fatal(err)
	}
	if files, _ := tfevents.Files(dir); len(files) != 0 {
		t.Errorf("event files %v", files)
	}
}
