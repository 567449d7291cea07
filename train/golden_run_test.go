package train_test

// Golden runs: short runs of every grid method through Run, whose outputs
// (summary.json, metrics.csv, the curve's float64 values, a hash of the
// final parameters and counters) must stay bit for bit what they were when
// testdata/golden/<kernel backend>/<case>.json was recorded.
//
// The data pin results before a refactor of the run drivers: a refactor
// that changes how Run is called adapts goldenRun (and, for renamed
// outputs, goldenSummaryRenames and goldenCurveRenames) at the top of this
// file, never the recorded data. A change that alters results on purpose
// must say so and re-record:
//
//	go test -run TestGoldenRun ./train -update-golden -golden-backends=all
//
// Results differ by kernel backend (each rounds differently); the test
// compares on the backend in use (kernel.Name(), "go" under -tags purego)
// and skips a backend with no recorded data. -golden-backends=all runs
// every backend this machine has (kernel.Use), as TestGridGolden does.
// The results do not depend on GOMAXPROCS (go test -cpu 1,2 checks it).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/train"
)

// ---------------------------------------------------------------------
// The adapter: the only code a refactor of Run should need to change.
// ---------------------------------------------------------------------

// goldenCase is one recorded run: a method of the grid table, as the
// edit of the base configuration goldenConfig.
type goldenCase struct {
	name string
	edit func(*train.Config, *train.RunOptions)
}

// goldenGrid is the environment of every case: 256 cells, 4 modes, small
// enough for exact distances at every curve point.
func goldenGrid(t *testing.T) *hypergrid.Grid {
	g, err := hypergrid.New(2, 16, hypergrid.Deceptive)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// goldenConfig is the base of every case: a small network and batch, 160
// iterations of the on-policy methods (320 with a buffer, fewer with local
// search), a curve point every 40 iterations (80 with a buffer: 5
// points), 2,000 final samples.
func goldenConfig() (train.Config, train.RunOptions) {
	cfg := train.DefaultConfig()
	cfg.Hidden = []int{32, 32}
	cfg.Batch = 16
	cfg.RewardCalls = 160 * cfg.Batch
	cfg.Seed = 11
	opt := train.RunOptions{EvalSamples: 2000}
	opt.EvalEvery = 40
	return cfg, opt
}

// goldenRun runs c with its outputs in dir and returns what the golden
// files record: summary.json and metrics.csv as Run wrote them, the curve
// (Result.Curve, flattened by goldenFlatten), and goldenParamHash of the
// final trainer.
func goldenRun(t *testing.T, c goldenCase, dir string) goldenOutput {
	t.Helper()
	cfg, opt := goldenConfig()
	opt.OutDir = dir
	c.edit(&cfg, &opt)
	if cfg.Buffer.Priority != "" && opt.EvalEvery == 40 {
		opt.EvalEvery = 80 // twice the iterations: still 5 points
	}
	res, err := train.Run(context.Background(), goldenGrid(t), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	return goldenOutput{
		Summary:   goldenReadFile(t, filepath.Join(dir, "summary.json")),
		CurveCSV:  goldenReadFile(t, filepath.Join(dir, "metrics.csv")),
		Curve:     goldenPoints(res.Curve),
		ParamHash: goldenParamHash(res.Trainer),
	}
}

// goldenPoint is a curve point as Result.Curve held it when the data
// were recorded (a []train.Point): the exact distances as nested
// objects, null where not computed.
type goldenPoint struct {
	Step         int              `json:"step"`
	RewardCalls  int              `json:"reward_calls"`
	GradSteps    int              `json:"grad_steps"`
	Modes        int              `json:"modes"`
	StudentLoss  float64          `json:"student_loss"`
	TeacherLoss  float64          `json:"teacher_loss"`
	StudentLogZ  float64          `json:"student_logz"`
	TeacherLogZ  float64          `json:"teacher_logz"`
	StudentExact *goldenDistances `json:"student_exact,omitempty"`
	TeacherExact *goldenDistances `json:"teacher_exact,omitempty"`
	StudentEmp   float64          `json:"student_empirical_l1"`
	WallSeconds  float64          `json:"wall_seconds"`
}

type goldenDistances struct {
	L1 float64 `json:"l1"`
	TV float64 `json:"tv"`
	KL float64 `json:"kl"`
}

// goldenPoints reads the run's curve (a run.Curve) as goldenPoints.
func goldenPoints(c *run.Curve) []goldenPoint {
	ps := make([]goldenPoint, c.Len())
	for i := range ps {
		v := func(name string) float64 { return c.Value(i, name) }
		dist := func(who string) *goldenDistances {
			if math.IsNaN(v(who + "_l1")) {
				return nil
			}
			return &goldenDistances{v(who + "_l1"), v(who + "_tv"), v(who + "_kl")}
		}
		ps[i] = goldenPoint{int(v("step")), int(v("reward_calls")), int(v("grad_steps")), int(v("modes")),
			v("student_loss"), v("teacher_loss"), v("student_logz"), v("teacher_logz"), dist("student"), dist("teacher"),
			v("student_empirical_l1"), v("wall_seconds")}
	}
	return ps
}

// goldenParamHash is the SHA-256 of every parameter value (float32 bits,
// little-endian) of the Student and then each Teacher, in Params() order,
// followed by the counters (uint64 each): iterations, gradient steps,
// reward calls, modes found, and each agent's Adam steps.
func goldenParamHash(tr *train.Trainer) string {
	h := sha256.New()
	agents := append([]*train.Agent{tr.Student}, tr.Teachers...)
	if len(tr.Teachers) == 0 && tr.Teacher != nil {
		agents = append(agents, tr.Teacher)
	}
	var b [8]byte
	for _, a := range agents {
		for _, p := range a.Params() {
			for _, v := range p.Value {
				binary.LittleEndian.PutUint32(b[:4], math.Float32bits(v))
				h.Write(b[:4])
			}
		}
	}
	counters := []int{tr.Step, tr.GradSteps, tr.RewardCalls, len(tr.ModesFound)}
	for _, a := range agents {
		counters = append(counters, a.Opt.Steps)
	}
	for _, c := range counters {
		binary.LittleEndian.PutUint64(b[:], uint64(c))
		h.Write(b[:])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// goldenSummaryRenames maps a summary key path of today's outputs to the
// recorded one (new name -> recorded name, e.g. "true_log_z": "true_logz" after
// the planned rename); goldenCurveRenames the same for curve fields (a
// Result.Curve path without its point index) and metrics.csv columns.
// goldenNewKeys lists keys (same naming, after renames) that the outputs
// gained on purpose and that the recorded data therefore lack.
var (
	goldenSummaryRenames = map[string]string{"task": "env", "log_z": "student_logz", "true_log_z": "true_logz"}
	goldenCurveRenames   = map[string]string{}
	// The driver's fields (package run): the family, its unit, and the
	// timings under their new names (wall-clock values, not compared).
	goldenNewKeys = map[string]bool{"family": true, "unit": true, "ms_per_step_mean": true, "ms_per_step_early": true,
		"ms_per_step_late": true}
)

// goldenCases are the grid methods (bench.GridMethods' names), each in a
// short run of goldenConfig.
var goldenCases = []goldenCase{
	{"tb", func(c *train.Config, _ *train.RunOptions) { c.Method = train.MethodTB }},
	// ε = 0.1: the table's 0.01 changes no sample of so short a run (the
	// untrained policy is near uniform).
	{"eps", func(c *train.Config, _ *train.RunOptions) { c.Method, c.Eps = train.MethodTB, 0.1 }},
	{"teacher", func(*train.Config, *train.RunOptions) {}},
	{"db", func(c *train.Config, _ *train.RunOptions) { c.Method, c.Objective = train.MethodTB, train.ObjectiveDB }},
	{"db-teacher", func(c *train.Config, _ *train.RunOptions) { c.Objective = train.ObjectiveDB }},
	{"prt", func(c *train.Config, _ *train.RunOptions) {
		c.Method, c.Buffer.Priority = train.MethodTB, replay.Reward
	}},
	{"per", func(c *train.Config, _ *train.RunOptions) {
		c.Method, c.Buffer.Priority = train.MethodTB, replay.Teacher
	}},
	{"teacher-per", func(c *train.Config, _ *train.RunOptions) { c.Buffer.Priority = replay.Teacher }},
	{"gafn", func(c *train.Config, _ *train.RunOptions) { c.Method = train.MethodGAFN }},
	// Local search: iterations 14 and 15 of every 16 (tb: Student
	// batches; teacher: Teacher batches).
	{"tb-ls", func(c *train.Config, _ *train.RunOptions) { c.Method, c.LS.On = train.MethodTB, true }},
	{"teacher-ls", func(c *train.Config, _ *train.RunOptions) { c.LS.On = true }},
	{"teacher-k3", func(c *train.Config, _ *train.RunOptions) { c.Teachers = 3 }},
	{"teacher-k3-none", func(c *train.Config, _ *train.RunOptions) { c.Teachers, c.TeacherSplit = 3, teacher.None }},
	// The curve's empirical L1 (exact distances only at the end).
	{"teacher-empirical-curve", func(_ *train.Config, o *train.RunOptions) { o.CurveExactLimit, o.CurveSamples = 1, 1000 }},
}

// ---------------------------------------------------------------------
// The machinery (the same in train, diffusion and seqtrain).
// ---------------------------------------------------------------------

var (
	updateGolden   = flag.Bool("update-golden", false, "rewrite the golden files of TestGoldenRun instead of comparing")
	goldenBackends = flag.String("golden-backends", "", `kernel backends of TestGoldenRun: "" the one in use, "all" every one this machine has, or a comma-separated list`)
)

// goldenOutput is what a golden case records.
type goldenOutput struct {
	Summary, CurveCSV []byte
	Curve             any // the curve points, flattened by reflection
	ParamHash         string
}

// goldenFile is a testdata/golden file: every value as a string, numbers
// as strconv.FormatFloat(v, 'g', -1, 64) (exact: it round-trips).
type goldenFile struct {
	Case string `json:"case"`
	// Kernel is summary.json's kernel (checked apart from the summary).
	Kernel string `json:"kernel"`
	// Params is goldenParamHash.
	Params string `json:"params"`
	// Summary is summary.json flattened (key paths joined by "."), less
	// the wall-clock fields (goldenTiming) and kernel.
	Summary map[string]string `json:"summary"`
	// CurveCSV is metrics.csv as "<row>.<column>" -> cell (rows from 0
	// after the header), less the wall_seconds column.
	CurveCSV map[string]string `json:"curve_csv"`
	// Curve is the curve's values, "<point>.<field path>" -> value.
	Curve map[string]string `json:"curve"`
}

func goldenReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// goldenTiming reports whether a key's last element is a wall-clock
// measurement, which no two runs share.
func goldenTiming(key string) bool {
	last := key[strings.LastIndex(key, ".")+1:]
	switch {
	case last == "wall_seconds", last == "train_seconds", last == "eval_seconds", last == "peak_rss_mib",
		strings.HasPrefix(last, "ms_per_iter_"), strings.HasPrefix(last, "ms_per_round_"):
		return true
	}
	return false
}

// goldenFloat formats v exactly.
func goldenFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// goldenNumber canonicalises a JSON number: its float64 value exactly,
// integers beyond float64's as written.
func goldenNumber(n json.Number) string {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil && (i > 1<<53 || i < -(1<<53)) {
			return s
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil && u > 1<<53 {
			return s
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return goldenFloat(v)
}

// goldenFlattenJSON flattens a JSON document into key path -> value.
func goldenFlattenJSON(b []byte) (map[string]string, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		join := func(k string) string {
			if prefix == "" {
				return k
			}
			return prefix + "." + k
		}
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(join(k), x)
			}
		case []any:
			if len(v) == 0 {
				out[prefix] = "[]"
			}
			for i, x := range v {
				walk(join(strconv.Itoa(i)), x)
			}
		case json.Number:
			out[prefix] = goldenNumber(v)
		case string:
			out[prefix] = v
		case bool:
			out[prefix] = strconv.FormatBool(v)
		case nil:
			out[prefix] = "null"
		}
	}
	walk("", v)
	return out, nil
}

// goldenFlatten flattens a Go value by reflection: struct fields by their
// JSON names (embedded structs inline), slice elements by index, nil
// pointers as "null", floats exactly ("NaN", "+Inf" included).
func goldenFlatten(v any) map[string]string {
	out := map[string]string{}
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		join := func(k string) string {
			if prefix == "" {
				return k
			}
			return prefix + "." + k
		}
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				out[prefix] = "null"
				return
			}
			walk(prefix, v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if !f.IsExported() {
					continue
				}
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "-" {
					continue
				}
				if f.Anonymous && name == "" {
					walk(prefix, v.Field(i))
					continue
				}
				if name == "" {
					name = f.Name
				}
				walk(join(name), v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			if v.Len() == 0 {
				out[prefix] = "[]"
			}
			for i := range v.Len() {
				walk(join(strconv.Itoa(i)), v.Index(i))
			}
		case reflect.Map:
			for _, k := range v.MapKeys() {
				walk(join(fmt.Sprint(k.Interface())), v.MapIndex(k))
			}
		case reflect.Float32, reflect.Float64:
			out[prefix] = goldenFloat(v.Float())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			out[prefix] = strconv.FormatInt(v.Int(), 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			out[prefix] = strconv.FormatUint(v.Uint(), 10)
		case reflect.Bool:
			out[prefix] = strconv.FormatBool(v.Bool())
		case reflect.String:
			out[prefix] = v.String()
		default:
			out[prefix] = fmt.Sprint(v.Interface())
		}
	}
	walk("", reflect.ValueOf(v))
	return out
}

// goldenRecord turns a run's outputs into the golden file's content,
// renames applied.
func goldenRecord(t *testing.T, name string, o goldenOutput) goldenFile {
	t.Helper()
	f := goldenFile{Case: name, Params: o.ParamHash, Summary: map[string]string{}, CurveCSV: map[string]string{}, Curve: map[string]string{}}
	sum, err := goldenFlattenJSON(o.Summary)
	if err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	for k, v := range sum {
		switch {
		case k == "kernel":
			f.Kernel = v
		case goldenTiming(k):
		default:
			if r, ok := goldenSummaryRenames[k]; ok {
				k = r
			}
			f.Summary[k] = v
		}
	}
	rows, err := csv.NewReader(bytes.NewReader(o.CurveCSV)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("metrics.csv: %v (%d rows)", err, len(rows))
	}
	header := rows[0]
	for i, row := range rows[1:] {
		for j, cell := range row {
			col := header[j]
			if goldenTiming(col) {
				continue
			}
			if r, ok := goldenCurveRenames[col]; ok {
				col = r
			}
			f.CurveCSV[strconv.Itoa(i)+"."+col] = cell
		}
	}
	for k, v := range goldenFlatten(o.Curve) {
		i, field, _ := strings.Cut(k, ".")
		if goldenTiming(field) {
			continue
		}
		if r, ok := goldenCurveRenames[field]; ok {
			field = r
		}
		f.Curve[i+"."+field] = v
	}
	return f
}

// goldenDiff lists the differences of got from want, section by section,
// keys in sorted order: each with both values.
func goldenDiff(got, want goldenFile) []string {
	var diffs []string
	if got.Kernel != want.Kernel {
		diffs = append(diffs, fmt.Sprintf("kernel: got %q, recorded %q", got.Kernel, want.Kernel))
	}
	if got.Params != want.Params {
		diffs = append(diffs, fmt.Sprintf("params (hash of the final parameters and counters): got %s, recorded %s", got.Params, want.Params))
	}
	section := func(name string, g, w map[string]string) {
		keys := map[string]bool{}
		for k := range g {
			keys[k] = true
		}
		for k := range w {
			keys[k] = true
		}
		for _, k := range goldenSortedKeys(keys) {
			gv, gok := g[k]
			wv, wok := w[k]
			switch {
			case gok && !wok && goldenNewKeys[k]:
			case !wok:
				diffs = append(diffs, fmt.Sprintf("%s key %s: got %q, not recorded (a new key: list it in goldenNewKeys or rename it in the adapter)", name, k, gv))
			case !gok:
				diffs = append(diffs, fmt.Sprintf("%s key %s: missing, recorded %q", name, k, wv))
			case gv != wv:
				diffs = append(diffs, fmt.Sprintf("%s key %s: got %s, recorded %s", name, k, gv, wv))
			}
		}
	}
	section("summary", got.Summary, want.Summary)
	section("metrics.csv", got.CurveCSV, want.CurveCSV)
	section("curve", got.Curve, want.Curve)
	return diffs
}

// goldenSortedKeys sorts keys with their numeric path elements as numbers.
func goldenSortedKeys(keys map[string]bool) []string {
	out := make([]string, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b string) int {
		as, bs := strings.Split(a, "."), strings.Split(b, ".")
		for i := range min(len(as), len(bs)) {
			x, errx := strconv.Atoi(as[i])
			y, erry := strconv.Atoi(bs[i])
			switch {
			case errx == nil && erry == nil && x != y:
				return x - y
			case as[i] != bs[i]:
				return strings.Compare(as[i], bs[i])
			}
		}
		return len(as) - len(bs)
	})
	return out
}

// goldenBackendList resolves -golden-backends.
func goldenBackendList(t *testing.T) []kernel.Backend {
	switch *goldenBackends {
	case "":
		return []kernel.Backend{kernel.Name()}
	case "all":
		return kernel.Available()
	}
	var out []kernel.Backend
	for _, b := range strings.Split(*goldenBackends, ",") {
		if !slices.Contains(kernel.Available(), kernel.Backend(b)) {
			t.Fatalf("-golden-backends: backend %q is not available on this machine (available: %v)", b, kernel.Available())
		}
		out = append(out, kernel.Backend(b))
	}
	return out
}

// TestGoldenRun runs every golden case and compares its outputs with the
// recorded ones (or records them, with -update-golden).
func TestGoldenRun(t *testing.T) {
	for _, b := range goldenBackendList(t) {
		t.Run(string(b), func(t *testing.T) {
			prev := kernel.Use(b)
			defer kernel.Use(prev)
			dir := filepath.Join("testdata", "golden", string(b))
			if !*updateGolden {
				if _, err := os.Stat(dir); err != nil {
					t.Skipf("no golden data recorded for kernel backend %s (%s missing): record them with -update-golden on a machine with it", b, dir)
				}
			} else if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, c := range goldenCases {
				t.Run(c.name, func(t *testing.T) {
					got := goldenRecord(t, c.name, goldenRun(t, c, t.TempDir()))
					if got.Kernel != string(b) {
						t.Errorf("summary.json kernel %q, want the backend in use %q", got.Kernel, b)
					}
					path := filepath.Join(dir, c.name+".json")
					if *updateGolden {
						js, err := json.MarshalIndent(got, "", "  ")
						if err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(path, append(js, '\n'), 0o644); err != nil {
							t.Fatal(err)
						}
						return
					}
					var want goldenFile
					if err := json.Unmarshal(goldenReadFile(t, path), &want); err != nil {
						t.Fatalf("%s: %v", path, err)
					}
					if diffs := goldenDiff(got, want); len(diffs) > 0 {
						more := ""
						if len(diffs) > 1 {
							n := min(len(diffs)-1, 8)
							more = fmt.Sprintf("\n%d more differences, first:\n  %s", len(diffs)-1, strings.Join(diffs[1:1+n], "\n  "))
						}
						t.Errorf("%s: results differ from %s: first difference: %s%s", c.name, path, diffs[0], more)
					}
				})
			}
		})
	}
}
