package bench

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/diffusion"
)

// TestPaperSuite: the published rows parse, belong to the suite's tasks,
// and carry the spec's numbers (two spot checks per task).
func TestPaperSuite(t *testing.T) {
	rows := PaperSuite()
	if len(rows) != 16 {
		t.Fatalf("%d rows, want 16", len(rows))
	}
	for _, r := range rows {
		if !slices.Contains(SuiteTasks, r.Task) || r.Source == "" || r.Label == "" {
			t.Errorf("row %+v", r)
		}
		if !r.Quoted && !slices.Contains([]string{"tb", "eps", "pis"}, r.Method) {
			t.Errorf("row %s %s is not quoted but no table method", r.Task, r.Method)
		}
	}
	find := func(task, m string) SuitePaperRow {
		i := slices.IndexFunc(rows, func(r SuitePaperRow) bool { return r.Task == task && r.Method == m })
		if i < 0 {
			t.Fatalf("no row %s %s", task, m)
		}
		return rows[i]
	}
	if r := find("funnel", "eps"); r.ELBO != (Stat{-0.749, 0.015}) || r.DeltaLogZ != (Stat{0.226, 0.138}) || r.W2 != (Stat{21.3, 4.0}) {
		t.Errorf("funnel eps %+v", r)
	}
	if r := find("lgcp", "tb"); r.ELBO != (Stat{336.70, 56.22}) || r.ELBOIS != (Stat{379.50, 49.99}) || !math.IsNaN(r.W2.Mean) {
		t.Errorf("lgcp tb %+v", r)
	}
}

// TestSuiteTable: the suite table's jobs take each task's default preset,
// its results.md puts the published numbers beside ours with † where ours
// lies outside their mean ± 2 std, drops the columns a task cannot have,
// and results.csv keeps the suite metrics.
func TestSuiteTable(t *testing.T) {
	tb, err := DiffusionTableByName("suite")
	if err != nil {
		t.Fatal(err)
	}
	o := DiffusionOptions{Out: t.TempDir()}
	if err := o.validate(tb); err != nil {
		t.Fatal(err)
	}
	jobs := tb.Jobs(o)
	if len(jobs) != 3*5*7 {
		t.Fatalf("%d jobs, want 105", len(jobs))
	}
	for _, j := range jobs {
		if j.Preset != diffusion.DefaultPreset(j.Task) || !slices.Contains(j.Args, j.Preset) {
			t.Errorf("%s %s: preset %q, args %q", j.Task, j.Method, j.Preset, j.Args)
		}
		if c, _ := diffusion.Preset(j.Preset, j.Task); j.Method != "smc" && j.Iterations != c.Iterations {
			t.Errorf("%s %s: %d iterations, preset %d", j.Task, j.Method, j.Iterations, c.Iterations)
		}
		// Sendera et al.'s evaluation size for the trained methods.
		if final := strings.Contains(strings.Join(j.Args, " "), "--final-samples 2000"); final != (j.Method != "smc") {
			t.Errorf("%s %s: args %q", j.Task, j.Method, j.Args)
		}
	}
	for _, bad := range []DiffusionOptions{{Preset: "paper"}, {Tasks: []string{"nope"}}, {Methods: []string{"ggns"}}} {
		if err := bad.validate(tb); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}

	nan := math.NaN()
	r := func(task, m string, seed int, elbo, elboIS, dlz, w2, emc, mmd float64) DiffusionResult {
		return DiffusionResult{Table: "suite", Task: task, Method: m, Preset: diffusion.DefaultPreset(task), Seed: seed, Steps: 25001,
			ELBO: elbo, ELBOIS: elboIS, EUBO: nan, W2: w2, DeltaLogZ: dlz, EMC: emc, MMD: mmd, Samples: 10000,
			StartELBO: nan, Last: DiffusionEval{ELBO: nan, ELBOIS: nan, EUBO: nan, W2: nan}, WallSeconds: 10, MsPerIterMean: 1}
	}
	rs := []DiffusionResult{
		// Funnel TB: ELBO −0.70 ± 0.01 within −0.690 ± 2·0.018; |Δ log Z|
		// 0.70 outside 0.239 ± 2·0.192 = [−0.145, 0.623].
		r("funnel", "tb", 0, -0.69, -0.70, 0.70, 22, nan, 0.1),
		r("funnel", "tb", 1, -0.71, -0.70, 0.70, 22, nan, 0.1),
		r("lgcp", "teacher", 0, 400, 420, nan, nan, nan, nan),
		r("gmm40", "tb", 0, -1, -0.5, 0.5, 3, 0.9, 0.05),
		// SMC: its log Z estimate in both columns, published on the funnel.
		r("funnel", "smc", 0, -0.2, -0.2, 0.2, 25, nan, 0.16),
	}
	var md bytes.Buffer
	WriteSuiteMarkdown(&md, DiffusionReport{Table: "suite", Jobs: 2}, rs)
	out := md.String()
	for _, want := range []string{
		"## funnel (d = 10, log Z = 0, preset sendera)",
		"| tb | 2 | -0.700 ± 0.010 | -0.690 ± 0.018 | -0.700 ± 0.000 |  | 0.700 ± 0.000 † | 0.239 ± 0.192 | 22.00 ± 0.00 | 22.40 ± 4.00 | 0.1000 ± 0.0000 |",
		"| TB + Expl. + LS [3] | published, not run here |",
		"## lgcp (d = 1600, log Z = unknown, preset sendera)",
		"| method | runs | ELBO | ELBO (published) | ELBO-IS | ELBO-IS (published) |\n",
		"| teacher | 1 | 400.000 ± 0.000 |  | 420.000 ± 0.000 |  |",
		"| DIS | published, not run here |  | 299.830 ± 0.670 |  | 361.150 ± 6.480 |",
		"## gmm40 (d = 2, log Z = 0, preset blessing)",
		"No published numbers for gmm40",
		"| smc [1] | 1 | -0.200 ± 0.000 | -0.561 ± 0.801 | -0.200 ± 0.000 |",
		"| method | runs | ELBO | ELBO-IS | \\|Δ log Z\\| | W2 | EMC | MMD |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("results.md lacks %q:\n%s", want, out)
		}
	}

	var buf bytes.Buffer
	if err := WriteDiffusionCSV(&buf, rs); err != nil {
		t.Fatal(err)
	}
	back, err := ReadDiffusionCSV(&buf)
	if err != nil || len(back) != len(rs) {
		t.Fatalf("%d rows, %v", len(back), err)
	}
	if g := back[3]; g.EMC != 0.9 || g.MMD != 0.05 || g.DeltaLogZ != 0.5 || !math.IsNaN(back[2].EMC) {
		t.Errorf("read back %+v", g)
	}
	// A results.csv from before the suite columns reads with NaN there.
	var old bytes.Buffer
	WriteDiffusionCSV(&old, rs[:1])
	lines := strings.Split(strings.TrimSpace(old.String()), "\n")
	for i := range lines {
		lines[i] = lines[i][:strings.LastIndex(lines[i][:strings.LastIndex(lines[i][:strings.LastIndex(lines[i], ",")], ",")], ",")]
	}
	v3, err := ReadDiffusionCSV(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err != nil || len(v3) != 1 || !math.IsNaN(v3[0].EMC) || !math.IsNaN(v3[0].MMD) || v3[0].ELBO != -0.69 {
		t.Errorf("version-3 file: %+v, %v", v3, err)
	}
}

// TestTeacherVerdict: the Teacher's mean against the best rival's per
// metric, in the metric's direction, with fixed values: better where the
// means are more than twice the larger std apart, worse likewise, within
// noise otherwise, no verdict on one seed, diverged runs left out.
func TestTeacherVerdict(t *testing.T) {
	res := func(m string, elbo, eubo, w2 float64) DiffusionResult {
		return DiffusionResult{Method: m, ELBO: elbo, EUBO: eubo, W2: w2, EMC: math.NaN(), MMD: math.NaN(), DeltaLogZ: math.NaN(), ELBOIS: math.NaN()}
	}
	measured := map[string][]DiffusionResult{
		// ELBO: 1.0 ± 0.08 against tb's 0.5 (the best rival): better.
		// EUBO: 2.0 against per's 1.0 (lower is better): worse.
		// W2: 3.0 against eps's 3.05 ± 0.04: within noise.
		"teacher": {res("teacher", 0.9, 1.9, 2.98), res("teacher", 1.0, 2.0, 3.0), res("teacher", 1.1, 2.1, 3.02)},
		"tb":      {res("tb", 0.4, 3, 5), res("tb", 0.5, 3, 5), res("tb", 0.6, 3, 5)},
		"eps":     {res("eps", 0.1, 3, 3.0), res("eps", 0.2, 3, 3.1), res("eps", 0.15, 3, 3.05)},
		"per":     {res("per", 0, 0.9, 9), res("per", 0, 1.0, 9), res("per", 0, 1.1, 9)},
	}
	diverged := res("teacher", -50, 90, 90)
	diverged.DivergedAt = 100
	measured["teacher"] = append(measured["teacher"], diverged)
	cols := suiteColumns[:0:0]
	for _, c := range suiteColumns {
		if c.name == "ELBO" || c.name == "EUBO" || c.name == "W2" {
			cols = append(cols, c)
		}
	}
	got := teacherVerdict(cols, measured)
	want := []string{"ELBO 1.000 better than tb's 0.500", "EUBO 2.000 worse than per's 1.000", "W2 3.00 within noise of eps's 3.05"}
	if !slices.Equal(got, want) {
		t.Fatalf("verdicts %q, want %q", got, want)
	}
	measured["teacher"] = measured["teacher"][:1]
	if got := teacherVerdict(cols[:1], measured); len(got) != 1 || !strings.Contains(got[0], "one seed: no verdict") {
		t.Fatalf("one seed: %q", got)
	}
	delete(measured, "teacher")
	if got := teacherVerdict(cols, measured); got != nil {
		t.Fatalf("no Teacher runs: %q", got)
	}
}
