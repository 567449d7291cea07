package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// The array job of a quick grid table: one task per run, every path
// absolute, each task's fresh start the job's gfn train command.
func TestSlurmArrayWrite(t *testing.T) {
	out := t.TempDir()
	tb, _ := TableByName("tb")
	o := GridOptions{Out: filepath.Join(out, "grid"), Quick: true, Methods: []string{"tb", "teacher", "per"}, Grids: []Grid{{2, 8}}}
	tasks, err := TableSlurm(GridRun{tb, o})
	if err != nil || len(tasks) != 3 {
		t.Fatalf("%d tasks, %v", len(tasks), err)
	}
	a := SlurmArray{Name: "bench grid tb", Dir: filepath.Join(o.Out, "slurm"), Bin: "/opt/gfn/bin/gfn",
		Args: []string{"bench", "grid", "--table=tb", "--quick", "--out=" + o.Out}, CPUs: 2, MaxRunning: 2,
		Options: []string{"--time=0:10:00", "--partition=debug"}}
	if err := a.Write(tasks); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(a.Dir, SlurmScript))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != "#!/bin/sh" {
		t.Errorf("first line %q", lines[0])
	}
	// sbatch reads #SBATCH lines up to the first command.
	var directives []string
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "#SBATCH ") {
			break
		}
		directives = append(directives, strings.TrimPrefix(l, "#SBATCH "))
	}
	want := []string{"--job-name=gfn-bench-grid-tb", "--array=0-2%2", "--ntasks=1", "--cpus-per-task=2",
		"--output=" + filepath.Join(a.Dir, "logs", "%A_%a.out"), "--time=0:10:00", "--partition=debug"}
	if !slices.Equal(directives, want) {
		t.Errorf("#SBATCH lines\n%q\nwant\n%q", directives, want)
	}
	if fi, err := os.Stat(filepath.Join(a.Dir, SlurmLogs)); err != nil || !fi.IsDir() {
		t.Errorf("no logs directory for the tasks' output: %v", err)
	}
	for _, l := range []string{
		`export GOMAXPROCS="${SLURM_CPUS_PER_TASK:-2}"`,
		`exec /opt/gfn/bin/gfn bench grid --table=tb --quick --out=` + o.Out + ` --slurm-task "$SLURM_ARRAY_TASK_ID"`,
		"#   sbatch " + filepath.Join(a.Dir, SlurmScript),
		"#   /opt/gfn/bin/gfn bench grid --table=tb --quick --out=" + o.Out + " --collect-only",
	} {
		if !slices.Contains(lines, l) {
			t.Errorf("script lacks the line %s:\n%s", l, b)
		}
	}
	b, err = os.ReadFile(filepath.Join(a.Dir, SlurmList))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(rows) != 1+len(tasks) || rows[0] != "task\trun\tdir\tfresh start" {
		t.Fatalf("task list:\n%s", b)
	}
	jobs := tb.Jobs(o)
	for i, r := range rows[1:] {
		f := strings.Split(r, "\t")
		argv := strings.Fields(f[3]) // no argument needs quoting here
		if f[0] != string(rune('0'+i)) || f[1] != tasks[i].Name || f[2] != jobs[i].Dir || !filepath.IsAbs(f[2]) ||
			!slices.Equal(argv, append([]string{a.Bin}, jobs[i].Args...)) || argv[slices.Index(argv, "--out")+1] != f[2] {
			t.Errorf("task %d: %q", i, f)
		}
	}

	bad := a
	bad.Dir = "slurm"
	if err := bad.Write(tasks); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Errorf("relative directory: %v", err)
	}
	bad.Dir = filepath.Join(out, "my runs")
	if err := bad.Write(tasks); err == nil || !strings.HasPrefix(err.Error(), "bench: ") || !strings.Contains(err.Error(), "space") {
		t.Errorf("directory with a space: %v", err)
	}
	if err := a.Write(nil); err == nil {
		t.Error("an array of no runs was written")
	}
}

// Task i of the array does run i alone, as its directory calls for: the
// fresh start, the resumption of an interrupted run, or nothing for a
// finished one.
func TestSlurmRunTaskBiochem(t *testing.T) {
	o := BiochemOptions{Out: t.TempDir(), Quick: true, Seeds: 2, Tasks: []string{"tfbind8"}, Methods: []string{"tb", "eps", "teacher-per"}}
	jobs, _ := BiochemJobs(o)
	tasks, err := TableSlurm(BiochemRun{O: o})
	if err != nil || len(tasks) != len(jobs) {
		t.Fatalf("%d tasks for %d jobs, %v", len(tasks), len(jobs), err)
	}
	a := SlurmArray{Name: "bench biochem", Dir: filepath.Join(o.Dir(), "slurm"), Bin: "/opt/gfn"}
	if err := a.Write(tasks); err != nil {
		t.Fatal(err)
	}
	interruptRun(t, jobs[2])
	var calls atomic.Int32
	ran := make(chan []string, 100)
	var log bytes.Buffer
	run := fakeBiochemRun(jobs, &calls, ran)
	for _, c := range []struct {
		i    int
		want []string // nil: nothing runs
	}{
		{2, []string{"train", "--resume", jobs[2].Dir, "--quiet"}},
		{0, jobs[0].Args},
		{0, nil},
		{2, nil},
		{5, jobs[5].Args},
	} {
		calls.Store(0)
		if err := a.RunTask(context.Background(), tasks, c.i, run, &log); err != nil {
			t.Fatalf("task %d: %v", c.i, err)
		}
		if c.want == nil {
			if calls.Load() != 0 {
				t.Errorf("task %d ran %q, its run had finished", c.i, <-ran)
			}
			continue
		}
		if got := <-ran; calls.Load() != 1 || !slices.Equal(got, c.want) {
			t.Errorf("task %d: %d runs, %q; want %q", c.i, calls.Load(), got, c.want)
		}
	}
	for i, j := range jobs {
		_, err := os.Stat(filepath.Join(j.Dir, "summary.json"))
		if done := err == nil; done != (i == 0 || i == 2 || i == 5) {
			t.Errorf("run %d (%s) finished: %v", i, j.Dir, done)
		}
	}
	for _, want := range []string{"task 2 of 6, tfbind8 teacher-per seed 0 (resumed): done in", "task 0 of 6, tfbind8 tb seed 0: already done"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	// A failed run fails its task.
	if err := a.RunTask(context.Background(), tasks, 1, run, &log); err == nil || !strings.Contains(err.Error(), "boom") || !strings.HasPrefix(err.Error(), "bench: ") {
		t.Errorf("failed run: %v", err)
	}
	if err := a.RunTask(context.Background(), tasks, 6, run, &log); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("task 6 of 6: %v", err)
	}
	// Another selection than the script's is refused rather than run
	// under the wrong index.
	o.Methods = []string{"tb", "teacher-per"}
	other, _ := TableSlurm(BiochemRun{O: o})
	if err := a.RunTask(context.Background(), other, 1, run, &log); err == nil || !strings.Contains(err.Error(), "write it again") {
		t.Errorf("changed table: %v", err)
	}
}

// The alpha table's α = 0.5 task copies the main table's finished
// Teacher run instead of training again; an interrupted diffusion run is
// resumed.
func TestSlurmRunTaskDiffusion(t *testing.T) {
	out := t.TempDir()
	mainTable, _ := DiffusionTableByName("main")
	alpha, _ := DiffusionTableByName("alpha")
	o := DiffusionOptions{Out: out, Quick: true, Tasks: []string{"25gmm"}, Methods: []string{"tb", "teacher"}}
	tasks, err := TableSlurm(DiffusionRun{T: mainTable, O: o})
	if err != nil || len(tasks) != 2 {
		t.Fatalf("%d tasks, %v", len(tasks), err)
	}
	var calls atomic.Int32
	ran := make(chan []string, 100)
	var log bytes.Buffer
	a := SlurmArray{Name: "bench diffusion main", Dir: filepath.Join(o.Dir(mainTable), "slurm")}
	os.MkdirAll(tasks[1].Dir, 0o755)
	os.WriteFile(filepath.Join(tasks[1].Dir, "checkpoint.safetensors"), nil, 0o644)
	if err := a.RunTask(context.Background(), tasks, 1, fakeDiffusionRun(&calls, ran), &log); err != nil {
		t.Fatal(err)
	}
	if got := <-ran; !slices.Equal(got, []string{"train", "--resume", tasks[1].Dir, "--quiet"}) {
		t.Errorf("interrupted teacher run: ran %q", got)
	}
	o.Methods = nil
	atasks, err := TableSlurm(DiffusionRun{T: alpha, O: o})
	if err != nil || len(atasks) != 2 || !strings.Contains(atasks[1].Name, "alpha0.5") {
		t.Fatalf("alpha tasks %v, %v", atasks, err)
	}
	calls.Store(0)
	a = SlurmArray{Name: "bench diffusion alpha", Dir: filepath.Join(o.Dir(alpha), "slurm")}
	if err := a.RunTask(context.Background(), atasks, 1, fakeDiffusionRun(&calls, ran), &log); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(atasks[1].Dir, "summary.json")); calls.Load() != 0 || err != nil {
		t.Errorf("alpha 0.5: %d runs, summary %v; want main's run copied", calls.Load(), err)
	}
	if _, err := TableSlurm(DiffusionRun{T: alpha, O: DiffusionOptions{Out: out, Preset: "fast"}}); err == nil || !strings.HasPrefix(err.Error(), "bench: ") {
		t.Errorf("unknown preset: %v", err)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/opt/gfn":          "/opt/gfn",
		"--methods=tb,eps":  "--methods=tb,eps",
		"":                  "''",
		"my runs":           "'my runs'",
		"it's":              `'it'\''s'`,
		"$HOME":             `'$HOME'`,
		"--slurm-args=a b":  "'--slurm-args=a b'",
		"%A_%a.out":         "%A_%a.out",
		"teacher-alpha0.5/": "teacher-alpha0.5/",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
