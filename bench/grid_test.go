package bench

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestMarkdownGolden(t *testing.T) {
	f, err := os.Open("testdata/results.csv")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ReadResultsCSV(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	WriteMarkdown(&buf, "tb", false, rs)
	checkGolden(t, "testdata/results.md.golden", buf.Bytes())
	// The CSV round-trips.
	checkCSVRoundTrip(t, rs, WriteResultsCSV, ReadResultsCSV)
}

func TestTablesUseKnownMethodsAndPaperNumbers(t *testing.T) {
	paper := PaperGrid()
	for _, tb := range GridTables {
		for _, m := range tb.Methods {
			if _, ok := GridMethods[m]; !ok {
				t.Errorf("table %s: method %q has no preset", tb.Name, m)
			}
			if tb.Name == "local-search" || tb.Name == "multi" {
				continue // local search on the grid is a figure in the paper; multi is not in it
			}
			for _, g := range tb.Grids {
				if _, ok := paper[paperKey(tb.Name, m, g)]; !ok {
					t.Errorf("table %s: no paper number for %s %v", tb.Name, m, g)
				}
			}
		}
	}
	if p := paper[paperKey("tb", "teacher", Grid{2, 128})]; p.ModesMean != 676 || p.L1Mean != 2.13 || p.L1Scale != 1e-5 {
		t.Errorf("Table 1 Teacher d2 H128: %+v", p)
	}
}

// A fake runner: writes a summary.json where gfn train would.
func fakeRun(calls *atomic.Int32) Runner {
	return func(ctx context.Context, args []string) error {
		calls.Add(1)
		dir := args[slices.Index(args, "--out")+1]
		if strings.Contains(dir, "gafn") {
			return errors.New("boom")
		}
		os.MkdirAll(dir, 0o755)
		return os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"modes_found": 3, "modes_total": 9, "empirical_l1": 0.5, "reward_calls": 100, "steps": 10, "wall_seconds": 1}`), 0o644)
	}
}

func TestRunGridIsResumable(t *testing.T) {
	tb, _ := TableByName("tb")
	o := GridOptions{Out: t.TempDir(), Jobs: 2, Quick: true, Grids: []Grid{{2, 8}}}
	jobs := tb.Jobs(o)
	if len(jobs) != 6 {
		t.Fatalf("%d quick jobs, want 6 (6 methods × 1 grid × 1 seed)", len(jobs))
	}
	if !slices.Contains(jobs[0].Args, "--reward-calls") || !slices.Contains(jobs[0].Args, "4800") {
		t.Errorf("quick job args %v lack the reduced budget", jobs[0].Args)
	}
	var calls atomic.Int32
	var log bytes.Buffer
	rs, err := runGridTable(context.Background(), tb, o, fakeRun(&calls), &log)
	if err == nil || !strings.Contains(err.Error(), "gafn") {
		t.Errorf("the failing run was not reported: %v", err)
	}
	if calls.Load() != 6 || len(rs) != 5 {
		t.Errorf("%d runs, %d results", calls.Load(), len(rs))
	}
	calls.Store(0)
	rs, _ = runGridTable(context.Background(), tb, o, fakeRun(&calls), &log)
	if calls.Load() != 1 || len(rs) != 5 { // only the failed one is retried
		t.Errorf("resumed: %d runs, %d results", calls.Load(), len(rs))
	}
	if !strings.Contains(log.String(), "5 already done") {
		t.Errorf("log:\n%s", log.String())
	}
	calls.Store(0)
	o.CollectOnly = true
	rs, err = runGridTable(context.Background(), tb, o, fakeRun(&calls), &log)
	if err != nil || calls.Load() != 0 || len(rs) != 5 {
		t.Errorf("collect only: %d runs, %d results, %v", calls.Load(), len(rs), err)
	}
	// Running a subset still collects every finished run of the table.
	o.CollectOnly, o.Methods = false, []string{"tb"}
	rs, err = runGridTable(context.Background(), tb, o, fakeRun(&calls), &log)
	if err != nil || calls.Load() != 0 || len(rs) != 5 {
		t.Errorf("--methods tb: %d runs, %d results (want the table's 5), %v", calls.Load(), len(rs), err)
	}
	// So does a default run after a diagnostic method ran with --methods,
	// and the figures draw the same runs.
	o.Methods = []string{"prt-paper"}
	if _, err = runGridTable(context.Background(), tb, o, fakeRun(&calls), &log); err != nil {
		t.Fatal(err)
	}
	o.Methods, o.CollectOnly = nil, true
	rs, err = runGridTable(context.Background(), tb, o, fakeRun(&calls), &log)
	if err != nil || len(rs) != 6 || rs[5].Method != "prt-paper" {
		t.Errorf("default collect after prt-paper: %d results, %v", len(rs), err)
	}
	var methods []string
	for _, j := range tb.TableJobs(o) {
		if !slices.Contains(methods, j.Method) {
			methods = append(methods, j.Method)
		}
	}
	if want := append(slices.Clone(tb.Methods), "prt-paper"); !slices.Equal(methods, want) {
		t.Errorf("table jobs' methods %v, want %v (the table's and prt-paper, which ran here)", methods, want)
	}
	if _, err := TableByName("table9"); err == nil {
		t.Error("unknown table accepted")
	}
}

// A grid run interrupted after a periodic checkpoint (a checkpoint and no
// summary) is continued with gfn train --resume, before the fresh runs.
func TestRunGridResumesInterruptedRuns(t *testing.T) {
	tb, _ := TableByName("tb")
	o := GridOptions{Out: t.TempDir(), Jobs: 1, Quick: true, Grids: []Grid{{2, 8}}, Methods: []string{"tb", "teacher"}}
	jobs := tb.Jobs(o)
	if i := slices.Index(jobs[0].Args, "--checkpoint-every"); i < 0 || jobs[0].Args[i+1] != "1000" {
		t.Fatalf("grid runs do not checkpoint periodically: %v", jobs[0].Args)
	}
	interrupted := jobs[1].Dir
	os.MkdirAll(interrupted, 0o755)
	os.WriteFile(filepath.Join(interrupted, "checkpoint.safetensors"), []byte("x"), 0o644)
	var got [][]string
	run := func(_ context.Context, args []string) error {
		got = append(got, args)
		dir := args[slices.Index(args, "--out")+1:]
		if args[1] == "--resume" {
			dir = args[2:]
		}
		return os.WriteFile(filepath.Join(dir[0], "summary.json"), []byte(`{"modes_found": 1, "reward_calls": 1, "steps": 1, "wall_seconds": 1}`), 0o644)
	}
	os.MkdirAll(jobs[0].Dir, 0o755)
	var log bytes.Buffer
	if _, err := runGridTable(context.Background(), tb, o, run, &log); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.Equal(got[0], []string{"train", "--resume", interrupted, "--quiet"}) || !slices.Equal(got[1], jobs[0].Args) {
		t.Errorf("runs %v, want the resume of %s first, then %v", got, interrupted, jobs[0].Args)
	}
	if !strings.Contains(log.String(), "1 to resume, 1 to start") || !strings.Contains(log.String(), "teacher d2 H8 seed 0 (resumed) done in") {
		t.Errorf("log:\n%s", log.String())
	}
}

func TestFmtDuration(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{{0, "0s"}, {42.4, "42s"}, {59.6, "1m00s"}, {185, "3m05s"}, {3720, "1h02m"}, {90000, "25h00m"}} {
		if got := fmtDuration(c.s); got != c.want {
			t.Errorf("fmtDuration(%v) = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestL1ScaleBorrowsGridUnit(t *testing.T) {
	paper := PaperGrid()
	for _, c := range []struct {
		table, method string
		g             Grid
		want          float64
	}{
		{"tb", "teacher", Grid{Dim: 4, Side: 32}, 1e-6},
		{"tb", "teacher", Grid{Dim: 2, Side: 128}, 1e-5},
		// No paper numbers for local search: the grid's Table 1 unit.
		{"local-search", "teacher-ls", Grid{Dim: 4, Side: 32}, 1e-6},
		{"local-search", "tb-ls", Grid{Dim: 2, Side: 128}, 1e-5},
		// A grid the paper never reports: the default.
		{"tb", "tb", Grid{Dim: 3, Side: 7}, 1e-5},
	} {
		if got := l1Scale(paper, c.table, c.method, c.g); got != c.want {
			t.Errorf("l1Scale(%s, %s, %v) = %g, want %g", c.table, c.method, c.g, got, c.want)
		}
	}
}

// A run's peak memory and buffer size go from its summary.json through
// results.csv to the Markdown table (the largest over seeds).
func TestGridMemoryColumns(t *testing.T) {
	dir := t.TempDir()
	var jobs []GridJob
	for s, js := range []string{
		`{"modes_found": 3, "reward_calls": 96000, "steps": 6000, "wall_seconds": 60, "peak_rss_mib": 140.5, "buffer_entries": 5000}`,
		`{"modes_found": 5, "reward_calls": 96000, "steps": 6000, "wall_seconds": 70, "peak_rss_mib": 151.2, "buffer_entries": 4000}`,
	} {
		d := filepath.Join(dir, fmt.Sprint(s))
		os.Mkdir(d, 0o755)
		os.WriteFile(filepath.Join(d, "summary.json"), []byte(js), 0o644)
		jobs = append(jobs, GridJob{Method: "per", Grid: Grid{6, 64}, Seed: s, Dir: d})
	}
	rs, err := collectGrid("large", jobs)
	if err != nil || len(rs) != 2 || rs[1].PeakRSSMiB != 151.2 || rs[0].BufferEntries != 5000 {
		t.Fatalf("collected %+v, %v", rs, err)
	}
	var csvBuf bytes.Buffer
	if err := WriteResultsCSV(&csvBuf, rs); err != nil {
		t.Fatal(err)
	}
	again, err := ReadResultsCSV(&csvBuf)
	if err != nil || again[1].PeakRSSMiB != 151.2 || again[0].BufferEntries != 5000 {
		t.Fatalf("round trip %+v, %v", again, err)
	}
	var md bytes.Buffer
	WriteMarkdown(&md, "large", false, again)
	if !strings.Contains(md.String(), "| 65 | 151 | 5000 |") {
		t.Errorf("table lacks the mean wall 65, the peak 151 MiB and 5000 entries:\n%s", md.String())
	}
}

// The large grids run with d4 H32's budget, as the paper's appendix says,
// on d=6 too (the reference's formula gives it 96,000); a finished run of
// another budget is refused, not averaged in.
func TestLargeGridsBudget(t *testing.T) {
	for _, name := range []string{"large", "multi"} {
		tb, _ := TableByName(name)
		jobs := tb.Jobs(GridOptions{Out: t.TempDir(), Seeds: 1})
		for _, j := range jobs {
			if i := slices.Index(j.Args, "--reward-calls"); i < 0 || j.Args[i+1] != "384000" || j.RewardCalls != 384000 {
				t.Errorf("%s %s %v: args %v", name, j.Method, j.Grid, j.Args)
			}
		}
		q := tb.Jobs(GridOptions{Out: t.TempDir(), Quick: true})
		if i := slices.Index(q[0].Args, "--reward-calls"); i < 0 || q[0].Args[i+1] != "19200" {
			t.Errorf("%s --quick: args %v", name, q[0].Args)
		}
	}
	tb, _ := TableByName("large")
	o := GridOptions{Out: t.TempDir(), Seeds: 1, Methods: []string{"teacher"}, Grids: []Grid{{6, 32}}}
	j := tb.Jobs(o)[0]
	os.MkdirAll(j.Dir, 0o755)
	os.WriteFile(filepath.Join(j.Dir, "summary.json"), []byte(`{"modes_found": 5, "reward_calls": 96000}`), 0o644)
	if _, err := collectGrid("large", []GridJob{j}); err == nil || !strings.Contains(err.Error(), "a run of 96000 reward calls, but the table's runs have 384000") {
		t.Errorf("a 96,000-call run collected into the large table: %v", err)
	}
	os.WriteFile(filepath.Join(j.Dir, "summary.json"), []byte(`{"modes_found": 5, "reward_calls": 384000}`), 0o644)
	if rs, err := collectGrid("large", []GridJob{j}); err != nil || len(rs) != 1 || rs[0].Modes != 5 {
		t.Errorf("collect: %v, %v", rs, err)
	}
	// The tb table keeps each grid's reference budget.
	t1, _ := TableByName("tb")
	if j := t1.Jobs(GridOptions{Out: t.TempDir(), Seeds: 1})[0]; slices.Contains(j.Args, "--reward-calls") || j.RewardCalls != 0 {
		t.Errorf("tb table job %v", j.Args)
	}
}
