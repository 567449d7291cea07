package diffusion_test

// Golden runs: short runs of every diffusion method through Run on 25GMM,
// whose outputs (summary.json, metrics.csv, the curve's float64 values, a
// hash of the final parameters and counters) must stay bit for bit what
// they were when testdata/golden/<kernel backend>/<case>.json was
// recorded.
//
// The data pin results before a refactor of the run drivers: a refactor
// that changes how Run is called adapts goldenRun (and, for renamed
// outputs, goldenSummaryRenames and goldenCurveRenames) at the top of this
// file, never the recorded data. A change that alters results on purpose
// must say so and re-record:
//
//	go test -run TestGoldenRun ./diffusion -update-golden -golden-backends=all
//
// Results differ by kernel backend (each rounds differently); the test
// compares on the backend in use (kernel.Name(), "go" under -tags purego)
// and skips a backend with no recorded data. -golden-backends=all runs
// every backend this machine has (kernel.Use), as TestDiffusionGolden does.
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

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/run"
)

// ---------------------------------------------------------------------
// The adapter: the only code a refactor of Run should need to change.
// ---------------------------------------------------------------------

// goldenCase is one recorded run: a method of the diffusion table from a
// preset ("paper" or "reference", PresetFor on 25GMM), shrunk by
// goldenShrink, then edited.
type goldenCase struct {
	name   string
	preset string
	method diffusion.Method
	edit   func(*diffusion.Config)
}

// goldenShrink makes a preset's configuration a short run: 121
// iterations of batches of 64 trajectories of 10 steps on a network of
// width 32, a buffer of 1,000, the learning rates' milestone at iteration
// 80 (where the preset has milestones), the exploration decayed to 0 at
// iteration 80, local search every 30 iterations with chains of 20 MALA
// steps.
func goldenShrink(c *diffusion.Config) {
	c.Steps, c.Batch, c.Iterations = 10, 64, 121
	c.Net.Hidden = 32
	c.BufferCap = 1000
	if len(c.Milestones) > 0 {
		c.Milestones = []int{-40}
	}
	c.ExploreDecay = 80
	c.LSEvery = 30
	c.LS.Steps, c.LS.BurnIn = 20, 10
	c.Seed = 5
}

// goldenOptions are the evaluation settings: a curve point after
// iterations 0, 40, 80 and 120 of 200 samples, 400 final samples.
func goldenOptions() diffusion.RunOptions {
	return diffusion.RunOptions{Options: run.Options{EvalEvery: 40, NoFigures: true}, Task: "25gmm", EvalSamples: 200, FinalSamples: 400}
}

// goldenRun runs c with its outputs in dir and returns what the golden
// files record: summary.json and metrics.csv as Run wrote them, the curve
// (Result.Curve as the recorded []Point flattened: a map per point from
// the point's JSON names, goldenPointNames, to its values), and
// goldenParamHash of the final trainer.
func goldenRun(t *testing.T, c goldenCase, dir string) goldenOutput {
	t.Helper()
	cfg, err := diffusion.PresetFor(c.preset, "25gmm", c.method)
	if err != nil {
		t.Fatal(err)
	}
	goldenShrink(&cfg)
	if c.edit != nil {
		c.edit(&cfg)
	}
	opt := goldenOptions()
	opt.OutDir, opt.Preset = dir, c.preset
	res, err := diffusion.Run(context.Background(), energy.GMM25{}, cfg, opt)
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

// goldenPointNames are the JSON names of the recorded curve points'
// fields by the curve's column (the Student's log Z was the point's
// log_z).
var goldenPointNames = map[string]string{"student_logz": "log_z"}

// goldenPoints is the curve as the recorded points: one map per point.
func goldenPoints(c *run.Curve) []map[string]float64 {
	var out []map[string]float64
	for i := range c.Len() {
		p := map[string]float64{}
		for _, name := range c.Names() {
			key := name
			if k, ok := goldenPointNames[name]; ok {
				key = k
			}
			p[key] = c.Value(i, name)
		}
		out = append(out, p)
	}
	return out
}

// goldenParamHash is the SHA-256 of every parameter value (float32 bits,
// little-endian) of the Student and then the Teacher, in Params() order,
// followed by the counters (uint64 each): iterations, reward calls, the
// threshold's float64 bits, and each agent's Adam steps.
func goldenParamHash(tr *diffusion.Trainer) string {
	h := sha256.New()
	agents := []*diffusion.Agent{tr.Student}
	if tr.Teacher != nil {
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
	counters := []uint64{uint64(tr.Step), uint64(tr.RewardCalls), math.Float64bits(tr.Threshold)}
	for _, a := range agents {
		counters = append(counters, uint64(a.Opt.Steps))
	}
	for _, c := range counters {
		binary.LittleEndian.PutUint64(b[:], c)
		h.Write(b[:])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// goldenSummaryRenames maps a summary key path of today's outputs to the
// recorded one (new name -> recorded name, e.g. "log_z_student": "log_z");
// goldenCurveRenames the same for curve fields (a Result.Curve path
// without its point index) and metrics.csv columns. goldenNewKeys lists
// keys (same naming, after renames) that the outputs gained on purpose and
// that the recorded data therefore lack.
var (
	goldenSummaryRenames = map[string]string{}
	goldenCurveRenames   = map[string]string{}
	// The driver's summary fields (run.Summary) that the recorded runs
	// lacked; its timings, renamed from ms_per_iter_*, are wall-clock.
	goldenNewKeys = map[string]bool{"family": true, "unit": true, "ms_per_step_mean": true, "ms_per_step_early": true, "ms_per_step_late": true,
		// The suite metrics (issue 43): computed from the final evaluation's
		// samples, drawing nothing.
		"emc": true, "delta_log_z": true, "mmd": true, "mmd_bandwidth": true, "mmd_samples": true}
)

// goldenCases are the methods of the diffusion table (paper preset), local
// search, the authors' buffer passes and the reference preset.
var goldenCases = []goldenCase{
	{"tb", "paper", diffusion.MethodTB, nil},
	{"eps", "paper", diffusion.MethodEps, nil},
	{"prt", "paper", diffusion.MethodPRT, nil},
	{"per", "paper", diffusion.MethodPER, nil},
	{"teacher", "paper", diffusion.MethodTeacher, nil},
	{"pis", "paper", diffusion.MethodPIS, nil},
	{"per-ls", "paper", diffusion.MethodPER, func(c *diffusion.Config) { c.LocalSearch = true }},
	{"teacher-ls", "paper", diffusion.MethodTeacher, func(c *diffusion.Config) { c.LocalSearch = true }},
	{"teacher-passes", "paper", diffusion.MethodTeacher, func(c *diffusion.Config) { c.BufferCap, c.BufferPasses = 200, true }},
	// The released code's settings: its network (Fourier features), cycle
	// STSB, the Teacher's time encoder clipped.
	{"teacher-reference", "reference", diffusion.MethodTeacher, nil},
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
