package bench

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// Large grids log no L1 during training; their figures must still be drawn
// (modes) without the empty L1 plot, as on a real d4 H64 table.
func TestGridFiguresSkipsL1WithoutData(t *testing.T) {
	root := t.TempDir()
	const header = "step,reward_calls,grad_steps,modes,student_loss,student_l1,student_empirical_l1,wall_seconds\n"
	runs := []struct {
		method string
		grid   Grid
		csv    string
	}{
		{"teacher", Grid{4, 64}, header + "0,0,0,0,,,,0\n10,160,10,3,1.5,,,1\n20,320,20,7,1.2,,,2\n"},
		{"tb", Grid{4, 64}, header + "0,0,0,0,,,,0\n10,160,10,1,1.7,,,1\n20,320,20,2,1.4,,,2\n"},
		{"tb", Grid{2, 8}, header + "0,0,0,0,,0.9,,0\n10,160,10,1,1.7,0.5,,1\n"},
		// Unfinished (no summary): its partial curve must not be drawn
		// (nor cut the mean curve of its method to its length).
		{"per", Grid{6, 32}, header + "0,0,0,0,,,,0\n10,160,10,1,1.7,,,1\n"},
	}
	var jobs []GridJob
	for i, r := range runs {
		d := filepath.Join(root, strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "metrics.csv"), []byte(r.csv), 0o644); err != nil {
			t.Fatal(err)
		}
		if r.grid != (Grid{6, 32}) {
			os.WriteFile(filepath.Join(d, "summary.json"), []byte("{}"), 0o644)
		}
		jobs = append(jobs, GridJob{Method: r.method, Grid: r.grid, Dir: d})
	}
	out := filepath.Join(root, "figures")
	files, err := GridFigures(out, jobs)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	want := []string{"d2-H8-l1.png", "d2-H8-modes.png", "d4-H64-modes.png"}
	if !slices.Equal(files, want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	for _, f := range want {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "d4-H64-l1.png")); !os.IsNotExist(err) {
		t.Errorf("empty L1 figure written: %v", err)
	}
}
