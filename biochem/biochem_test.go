package biochem

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// sharedData is the project's shared task data, the source of the embedded
// files; tests that compare against it skip when it is absent.
const sharedData = "../../shared/data"

// shared returns the path of a shared data file, skipping the test if the
// directory is absent.
func shared(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(sharedData, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared data not available: %v", err)
	}
	return p
}

// readLines returns the non-empty lines of a shared file.
func readLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(shared(t, name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for l := range strings.SplitSeq(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// readTSV returns the rows of a shared tab-separated file, header dropped.
func readTSV(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open(shared(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		if !first {
			rows = append(rows, strings.Split(sc.Text(), "\t"))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// mustTask returns a task of Names or fails.
func mustTask(t *testing.T, name string) *Task {
	t.Helper()
	task, err := Named(name)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// fakeRNA is the RNA task with a stand-in fitness (the GC fraction), for the
// tests of everything but the fitness.
func fakeRNA() *Task {
	return newRNA(func(x []int32) float64 {
		gc := 0
		for _, tok := range x {
			if tok == 1 || tok == 2 {
				gc++
			}
		}
		return float64(gc) / float64(len(x))
	})
}

// allTasks returns the four tasks, RNA with the stand-in fitness.
func allTasks(t *testing.T) []*Task {
	return []*Task{mustTask(t, "tfbind8"), mustTask(t, "qm9str"), mustTask(t, "sehstr"), fakeRNA()}
}

// score returns the raw score of one string.
func score(t *testing.T, task *Task, s string) float64 {
	t.Helper()
	x, err := task.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, 1)
	if err := task.Score(x, 1, out); err != nil {
		t.Fatal(err)
	}
	return out[0]
}

// reward returns R = exp(log R) of rows xs.
func reward(t *testing.T, task *Task, xs []int32) []float64 {
	t.Helper()
	n := len(xs) / task.Length()
	out := make([]float64, n)
	if err := task.LogReward(xs, n, out); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		out[i] = math.Exp(out[i])
	}
	return out
}

// relClose reports |a-b| <= tol·|b|.
func relClose(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Abs(b) }

func TestNamed(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"tfbind8", "tfbind8"}, {"TFBind8", "tfbind8"}, {"qm9str", "qm9str"}, {"sehstr", "sehstr"},
	} {
		task, err := Named(c.name)
		if err != nil {
			t.Fatalf("Named(%q): %v", c.name, err)
		}
		if task.Name() != c.want {
			t.Errorf("Named(%q).Name() = %q, want %q", c.name, task.Name(), c.want)
		}
	}
	if a, b := mustTask(t, "qm9str"), mustTask(t, "qm9str"); a != b {
		t.Error("two Named calls built two qm9str tasks; the data would be decoded twice")
	}
	_, err := Named("tfbind10")
	if err == nil || !strings.Contains(err.Error(), `"tfbind10"`) || !strings.Contains(err.Error(), "tfbind8, qm9str, sehstr, rna") {
		t.Errorf("Named(tfbind10) error %v, want one naming the task and the allowed names", err)
	}
	for _, name := range []string{"rna", "l14-rna1", "L14-RNA1"} {
		if task, err := Named(name); err != nil || task.Name() != "rna" {
			t.Errorf("Named(%q) = %v, %v; want the rna task", name, task, err)
		}
	}
}

func TestShape(t *testing.T) {
	for _, c := range []struct {
		task        *Task
		n, a        int
		strings     uint64
		modes, stor int
		exact       bool
	}{
		{mustTask(t, "tfbind8"), 8, 4, 65536, 328, 0, true},
		{mustTask(t, "qm9str"), 5, 11, 161051, 805, 0, true},
		{mustTask(t, "sehstr"), 6, 18, 34012224, 129, 2048, false},
		{fakeRNA(), 14, 4, 268435456, 8967, 2048, false},
	} {
		task := c.task
		if task.Length() != c.n || len(task.Alphabet()) != c.a || task.NumStrings() != c.strings {
			t.Errorf("%s: length %d, alphabet %d, strings %d; want %d, %d, %d", task.Name(), task.Length(), len(task.Alphabet()), task.NumStrings(), c.n, c.a, c.strings)
		}
		if got := task.NumModes(); got != c.modes {
			t.Errorf("%s: %d modes, want %d", task.Name(), got, c.modes)
		}
		if got := len(task.Modes()) / task.Length(); got != c.modes {
			t.Errorf("%s: Modes has %d rows, want %d", task.Name(), got, c.modes)
		}
		if task.NumStoredSamples() != c.stor || task.ExactTarget() != c.exact {
			t.Errorf("%s: %d stored samples, exact %v; want %d, %v", task.Name(), task.NumStoredSamples(), task.ExactTarget(), c.stor, c.exact)
		}
		if math.IsNaN(task.LogZ()) {
			t.Errorf("%s: log Z unknown", task.Name())
		}
		if !slices.IsSorted(task.Alphabet()) {
			t.Errorf("%s: alphabet %v is not sorted, so tokens are not the reference's one-hot columns", task.Name(), task.Alphabet())
		}
	}
}

func TestSettings(t *testing.T) {
	// The settings rows of discovery/exps/*/settings.yaml.
	for _, c := range []struct {
		task *Task
		want Settings
	}{
		{mustTask(t, "tfbind8"), Settings{2000, 0.01, 50, 20, 10, 1e-3, 128, 2048}},
		{mustTask(t, "qm9str"), Settings{1000, 0.01, 20, 20, 100, 1e-3, 1024, 2048}},
		{mustTask(t, "sehstr"), Settings{2000, 0.05, 50, 6, 10, 1e-3, 1024, 2048}},
		{fakeRNA(), Settings{2000, 0.01, 50, 40, 10, 1e-3, 128, 2048}},
	} {
		if got := c.task.Settings(); got != c.want {
			t.Errorf("%s: settings %+v, want %+v", c.task.Name(), got, c.want)
		}
	}
}

func TestEncodeDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, task := range allTasks(t) {
		x := make([]int32, task.Length())
		for range 200 {
			for i := range x {
				x[i] = int32(rng.IntN(len(task.Alphabet())))
			}
			s := task.Decode(x)
			y, err := task.Encode(s)
			if err != nil || !slices.Equal(x, y) {
				t.Fatalf("%s: Encode(Decode(%v)) = %v, %v", task.Name(), x, y, err)
			}
			if got := task.Index(x); task.Decode(unindexed(task, got)) != s {
				t.Fatalf("%s: Index(%v) = %d does not decode back", task.Name(), x, got)
			}
		}
		short := strings.Repeat(task.Alphabet()[0], task.Length()-1)
		if _, err := task.Encode(short); err == nil || !strings.Contains(err.Error(), "length") {
			t.Errorf("%s: Encode(%q) error %v, want a length error", task.Name(), short, err)
		}
		bad := strings.Repeat(task.Alphabet()[0], task.Length()-1) + "Z"
		_, err := task.Encode(bad)
		if err == nil || !strings.Contains(err.Error(), `'Z'`) || !strings.Contains(err.Error(), "position "+strconv.Itoa(task.Length()-1)) {
			t.Errorf("%s: Encode(%q) error %v, want one naming 'Z' and its position", task.Name(), bad, err)
		}
	}
	tf := mustTask(t, "tfbind8")
	a, _ := tf.Encode("ACGTTGCA")
	b, err := tf.Encode("01233210")
	if err != nil || !slices.Equal(a, b) || !slices.Equal(a, []int32{0, 1, 2, 3, 3, 2, 1, 0}) {
		t.Errorf("tfbind8: ACGTTGCA = %v, 01233210 = %v (%v); want both 0 1 2 3 3 2 1 0", a, b, err)
	}
}

// unindexed is the row numbered i.
func unindexed(task *Task, i uint64) []int32 {
	x := make([]int32, task.Length())
	unindex(i, len(task.Alphabet()), x)
	return x
}

func TestErrors(t *testing.T) {
	task := mustTask(t, "qm9str")
	out := make([]float64, 2)
	xs := []int32{0, 1, 2, 3, 4, 0, 1, 11, 3, 4}
	for _, f := range []func([]int32, int, []float64) error{task.Score, task.LogReward, task.RealReward} {
		if err := f(xs, 2, out); err == nil || !strings.Contains(err.Error(), "token 11 at position 2") || !strings.Contains(err.Error(), "row 1") {
			t.Errorf("bad token: error %v, want one naming token 11, position 2, row 1", err)
		}
		if err := f(xs[:5], 2, out); err == nil {
			t.Error("2 rows from 5 tokens: no error")
		}
		if err := f(xs[:5], 1, out[:0]); err == nil {
			t.Error("1 row into 0 outputs: no error")
		}
	}
	if _, err := mustTask(t, "sehstr").TargetSamples(2049, nil); err == nil || !strings.Contains(err.Error(), "2048") {
		t.Errorf("2049 sEH target samples: error %v, want one naming the 2048 stored", err)
	}
}

func TestTFBind8(t *testing.T) {
	task := mustTask(t, "tfbind8")
	// Known values, embedded data only.
	for s, want := range map[string]float32{"AAAAAAAA": 0.5247495, "AAAAAAAC": 0.36651134} {
		if got := score(t, task, s); got != float64(want) {
			t.Errorf("y(%s) = %v, want %v", s, got, want)
		}
	}

	rows := readTSV(t, "tfbind8/tfbind8_all.tsv")
	if len(rows) != 65536 {
		t.Fatalf("%d rows in the tsv", len(rows))
	}
	ys := make([]float64, len(rows))
	xs := make([]int32, 0, 8*len(rows))
	ymax := 0.0
	for i, r := range rows {
		x, err := task.Encode(r[1])
		if err != nil {
			t.Fatal(err)
		}
		xi, err := task.Encode(r[0])
		if err != nil || !slices.Equal(x, xi) {
			t.Fatalf("row %d: seq %s = %v, x_idx %s = %v (%v)", i, r[1], x, r[0], xi, err)
		}
		y, err := strconv.ParseFloat(r[2], 32)
		if err != nil {
			t.Fatal(err)
		}
		ys[i] = y
		ymax = max(ymax, max(y, 1e-3))
		xs = append(xs, x...)
	}
	got := make([]float64, len(rows))
	if err := task.Score(xs, len(rows), got); err != nil {
		t.Fatal(err)
	}
	rs := reward(t, task, xs)
	var z float64
	nmax := 0
	for i, y := range ys {
		if got[i] != y {
			t.Fatalf("%s: y = %v, tsv %v", rows[i][1], got[i], y)
		}
		want := max(10*math.Pow(max(y, 1e-3), 20)/math.Pow(ymax, 20), 1e-20)
		if !relClose(rs[i], want, 1e-12) {
			t.Fatalf("%s: R = %v, want %v", rows[i][1], rs[i], want)
		}
		z += want
		if y == 1 {
			nmax++
			if !relClose(rs[i], 10, 1e-14) {
				t.Errorf("%s: y = 1 but R = %v", rows[i][1], rs[i])
			}
		}
	}
	if ymax != 1 || nmax != 2 {
		t.Errorf("max y %v at %d strings, want 1 at a string and its reverse complement", ymax, nmax)
	}
	if lz := task.LogZ(); !relClose(lz, math.Log(z), 1e-12) {
		t.Errorf("log Z %.15g, brute force %.15g", lz, math.Log(z))
	}
	checkModes(t, task, "tfbind8/modes_tfbind8.txt")
}

// checkModes checks that the task's modes are the strings of a shared file.
func checkModes(t *testing.T, task *Task, file string) {
	t.Helper()
	lines := readLines(t, file)
	set := map[string]bool{}
	for _, l := range lines {
		x, err := task.Encode(l)
		if err != nil {
			t.Fatal(err)
		}
		if !task.IsMode(x) {
			t.Errorf("%s: %s of %s is not a mode", task.Name(), l, file)
		}
		set[task.Decode(x)] = true
	}
	if len(set) != task.NumModes() {
		t.Errorf("%s: %d distinct modes in %s, %d in the task", task.Name(), len(set), file, task.NumModes())
	}
}

func TestQM9Str(t *testing.T) {
	task := mustTask(t, "qm9str")
	top, _ := task.Encode("11111")
	if got := score(t, task, "11111"); got != 17.374774932861328 {
		t.Errorf("r(11111) = %v, want 17.374774932861328", got)
	}
	if r := reward(t, task, top)[0]; !relClose(r, 100+1e-12, 1e-14) {
		t.Errorf("R(11111) = %v, want 100 + 1e-12", r)
	}

	rows := readTSV(t, "qm9str/qm9str_x_to_r.tsv")
	if len(rows) != 161051 {
		t.Fatalf("%d rows in the tsv", len(rows))
	}
	type scored struct {
		s string
		r float64
	}
	all := make([]scored, len(rows))
	xs := make([]int32, 0, 5*len(rows))
	rmax := math.Inf(-1)
	for i, row := range rows {
		x, err := task.Encode(row[0])
		if err != nil {
			t.Fatal(err)
		}
		r, err := strconv.ParseFloat(row[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		all[i] = scored{row[0], r}
		rmax = max(rmax, r)
		xs = append(xs, x...)
	}
	got := make([]float64, len(rows))
	if err := task.Score(xs, len(rows), got); err != nil {
		t.Fatal(err)
	}
	rs := reward(t, task, xs)
	var z float64
	for i, a := range all {
		if got[i] != a.r {
			t.Fatalf("%s: r = %v, tsv %v", a.s, got[i], a.r)
		}
		want := 100*math.Pow(max(a.r, 1e-3), 20)/math.Pow(rmax, 20) + 1e-12
		if !relClose(rs[i], want, 1e-12) {
			t.Fatalf("%s: R = %v, want %v", a.s, rs[i], want)
		}
		z += want
	}
	if lz := task.LogZ(); !relClose(lz, math.Log(z), 1e-12) {
		t.Errorf("log Z %.15g, brute force %.15g", lz, math.Log(z))
	}
	checkModes(t, task, "qm9str/modes_percentile_0.005.txt")
	// The modes are the 805 strings of largest r (0.5% of 161,051).
	sort.Slice(all, func(i, j int) bool { return all[i].r > all[j].r })
	if all[0].s != "11111" {
		t.Errorf("max r at %s, want 11111", all[0].s)
	}
	if all[804].r == all[805].r {
		t.Errorf("tie at the 805th largest r, %v", all[804].r)
	}
	for _, a := range all[:805] {
		x, _ := task.Encode(a.s)
		if !task.IsMode(x) {
			t.Errorf("%s (r = %v, among the 805 largest) is not a mode", a.s, a.r)
		}
	}
}

// gbtTree is one tree of the shared JSON, for an independent evaluation.
type gbtTree struct {
	Value       []float64 `json:"value"`
	Feature     []int     `json:"feature"`
	Threshold   []float64 `json:"threshold"`
	MissingLeft []int     `json:"missing_left"`
	Left        []int     `json:"left"`
	Right       []int     `json:"right"`
	IsLeaf      []int     `json:"is_leaf"`
}

// sklearnPredict follows sklearn's HistGradientBoostingRegressor.predict
// literally on the 108-dim one-hot vector of s: baseline, then each tree
// added in order, walking left when x[f] <= threshold or x[f] is NaN and
// missing_left.
func sklearnPredict(baseline float64, trees []gbtTree, s string) float64 {
	const symbols = "0123456789abcdefghijklmnopqrstuvwxyz"
	feat := make([]float64, 108)
	for pos, c := range s {
		feat[18*pos+strings.IndexRune(symbols, c)] = 1
	}
	p := baseline
	for _, tr := range trees {
		i := 0
		for tr.IsLeaf[i] == 0 {
			v := feat[tr.Feature[i]]
			if (math.IsNaN(v) && tr.MissingLeft[i] == 1) || v <= tr.Threshold[i] {
				i = tr.Left[i]
			} else {
				i = tr.Right[i]
			}
		}
		p += tr.Value[i]
	}
	return p
}

func TestSEHStr(t *testing.T) {
	task := mustTask(t, "sehstr")
	if p := score(t, task, "ag550c"); p != sehMax || math.Abs(p-7.033253) > 5e-7 {
		t.Errorf("p(ag550c) = %.17g, want sehMax %.17g ≈ 7.033253", p, float64(sehMax))
	}
	modes := task.Modes()
	weakest := math.Inf(1)
	ps := make([]float64, len(modes)/6)
	if err := task.Score(modes, len(ps), ps); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		weakest = min(weakest, p)
	}
	if math.Abs(weakest-6.8183017) > 5e-8 {
		t.Errorf("weakest mode p = %.9g, want 6.8183017", weakest)
	}
	x, _ := task.Encode("ag550c")
	if r := reward(t, task, x)[0]; !relClose(r, 10, 1e-14) {
		t.Errorf("R(ag550c) = %v, want 10", r)
	}

	// An independent evaluation of the shared JSON.
	b, err := os.ReadFile(shared(t, "sehstr/sehstr_gbtr_trees.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Baseline float64   `json:"baseline"`
		Trees    []gbtTree `json:"trees"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	strs := append(readLines(t, "sehstr/modes_tanimoto_div0.4_percentile_0.0001.txt"), readLines(t, "sehstr/true_samples_beta6_true_samples.txt")...)
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 6)
	for range 3000 {
		for i := range buf {
			buf[i] = "0123456789abcdefgh"[rng.IntN(18)]
		}
		strs = append(strs, string(buf))
	}
	xs := make([]int32, 0, 6*len(strs))
	for _, s := range strs {
		x, err := task.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x...)
	}
	got := make([]float64, len(strs))
	if err := task.Score(xs, len(strs), got); err != nil {
		t.Fatal(err)
	}
	rs := reward(t, task, xs)
	for i, s := range strs {
		want := sklearnPredict(g.Baseline, g.Trees, s)
		if got[i] != want {
			t.Fatalf("p(%s) = %.17g, sklearn walk %.17g", s, got[i], want)
		}
		wantR := max(math.Pow(max(want, 1e-3), 6)*10/math.Pow(7.033253064721926, 6), 1e-32)
		if !relClose(rs[i], wantR, 1e-12) {
			t.Fatalf("R(%s) = %v, want %v", s, rs[i], wantR)
		}
	}
	checkModes(t, task, "sehstr/modes_tanimoto_div0.4_percentile_0.0001.txt")
}

func TestSEHLogZSampled(t *testing.T) {
	// Z = 18^6·E_uniform[R], estimated from uniform strings.
	task := mustTask(t, "sehstr")
	const n = 100000
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([]int32, 6*n)
	for i := range xs {
		xs[i] = int32(rng.IntN(18))
	}
	rs := reward(t, task, xs)
	var sum, sq float64
	for _, r := range rs {
		sum += r
		sq += r * r
	}
	mean := sum / n
	se := math.Sqrt((sq/n-mean*mean)/n) / mean // relative standard error
	est := math.Log(34012224 * mean)
	lz := task.LogZ()
	if math.Abs(est-lz) > 4*se {
		t.Errorf("sampled log Z %.5f ± %.5f, sehLogZ %.5f", est, se, lz)
	}
}

// chiSquare checks n exact target draws of an enumerable task against its
// probabilities, pooling strings expected fewer than 5 times.
func chiSquare(t *testing.T, task *Task, n int, seed uint64) {
	t.Helper()
	xs, err := task.TargetSamples(n, rand.New(rand.NewPCG(seed, 7)))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[uint64]int{}
	for r := 0; r < len(xs); r += task.Length() {
		counts[task.Index(xs[r:r+task.Length()])]++
	}
	lz := task.LogZ()
	x := make([]int32, task.Length())
	lr := make([]float64, 1)
	var chi2, poolE float64
	poolO, bins := 0, 0
	for i := range task.NumStrings() {
		unindex(i, len(task.Alphabet()), x)
		if err := task.LogReward(x, 1, lr); err != nil {
			t.Fatal(err)
		}
		e := float64(n) * math.Exp(lr[0]-lz)
		o := counts[i]
		if e < 5 {
			poolE += e
			poolO += o
			continue
		}
		chi2 += (float64(o) - e) * (float64(o) - e) / e
		bins++
	}
	if poolE > 0 {
		chi2 += (float64(poolO) - poolE) * (float64(poolO) - poolE) / poolE
		bins++
	}
	df := float64(bins - 1)
	if chi2 > df+5*math.Sqrt(2*df) {
		t.Errorf("%s: chi-square %.1f with %v degrees of freedom", task.Name(), chi2, df)
	}
	t.Logf("%s: chi-square %.1f, %v degrees of freedom", task.Name(), chi2, df)
}

func TestTargetSamples(t *testing.T) {
	chiSquare(t, mustTask(t, "tfbind8"), 200000, 1)
	chiSquare(t, mustTask(t, "qm9str"), 50000, 2)

	// The same seed gives the same draws.
	task := mustTask(t, "tfbind8")
	a, _ := task.TargetSamples(100, rand.New(rand.NewPCG(9, 9)))
	b, _ := task.TargetSamples(100, rand.New(rand.NewPCG(9, 9)))
	if !slices.Equal(a, b) {
		t.Error("TargetSamples differs for the same seed")
	}

	// The stored sets, in file order.
	for _, c := range []struct {
		task     *Task
		file     string
		distinct int
	}{
		{mustTask(t, "sehstr"), "sehstr/true_samples_beta6_true_samples.txt", 0},
		{fakeRNA(), "rna/L14_RNA1_true_samples_beta40_true_samples.txt", 692},
	} {
		xs, err := c.task.TargetSamples(2048, nil)
		if err != nil {
			t.Fatal(err)
		}
		lines := readLines(t, c.file)
		if len(lines) != 2048 {
			t.Fatalf("%s: %d lines", c.file, len(lines))
		}
		set := map[string]bool{}
		for r, l := range lines {
			got := c.task.Decode(xs[r*c.task.Length() : (r+1)*c.task.Length()])
			if got != l {
				t.Fatalf("%s: sample %d is %s, file %s", c.task.Name(), r, got, l)
			}
			set[l] = true
		}
		if c.distinct > 0 && len(set) != c.distinct {
			t.Errorf("%s: %d distinct stored samples, want %d", c.task.Name(), len(set), c.distinct)
		}
	}
}

func TestRNA(t *testing.T) {
	task := fakeRNA()
	// R from a fitness: the largest fitness, 1.0545394628439608 (GGGGGCCCCGCGCG
	// per ViennaRNA), gets R ≈ 10 through the reference's scale.
	r := rnaBase()
	d := &taskData{logScale: math.Log(rnaScale)}
	if got := math.Exp(r.logReward(d, 1.0545394628439608)); math.Abs(got-10) > 1e-5 {
		t.Errorf("R(max fitness) = %v, want 10", got)
	}
	for _, f := range []float64{0.3, 0.9, 1e-5} {
		want := math.Pow(max(f, 1e-3), 40)*1.1953257013780185 + 1e-12
		if got := math.Exp(r.logReward(d, f)); !relClose(got, want, 1e-12) {
			t.Errorf("R(f = %v) = %v, want %v", f, got, want)
		}
	}
	lz := task.LogZ()
	if want := math.Log(math.Exp(5.220212936401367) + math.Pow(4, 14)*1e-12); !relClose(lz, want, 1e-14) {
		t.Errorf("log Z %.17g, want %.17g", lz, want)
	}
	checkModes(t, task, "rna/L14_RNA1_modes_hammingball_dist1_percentile_0.0001.txt")

	// The constants against info.csv.
	f, err := os.Open(shared(t, "rna/L14_RNA1_info.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rec := range recs[1:] {
		if rec[0] != "40" {
			continue
		}
		found = true
		if rec[3] != strconv.FormatFloat(rnaLogZScaled, 'g', -1, 64) || rec[5] != strconv.FormatFloat(rnaScale, 'g', -1, 64) {
			t.Errorf("info.csv beta 40: logz_scaled %s, scale %s; constants %v, %v", rec[3], rec[5], rnaLogZScaled, rnaScale)
		}
	}
	if !found {
		t.Error("no beta-40 row in info.csv")
	}
}

func TestRNAFitness(t *testing.T) {
	task := mustTask(t, "rna")
	// ViennaRNA 2.7.1's duplexfold gives GGGGGCCCCGCGCG, the best of the
	// modes, -38.4 kcal/mol, fitness 1.0545394628439608 (shared/data
	// PROVENANCE.md).
	f := score(t, task, "GGGGGCCCCGCGCG")
	if math.Abs(f-1.0545394628439608) > 1e-12 {
		t.Errorf("f(GGGGGCCCCGCGCG) = %.17g, want 1.0545394628439608", f)
	}
	x, _ := task.Encode("GGGGGCCCCGCGCG")
	want := math.Pow(f, 40)*1.1953257013780185 + 1e-12
	if r := reward(t, task, x)[0]; !relClose(r, want, 1e-12) || math.Abs(r-10) > 1e-5 {
		t.Errorf("R(GGGGGCCCCGCGCG) = %v, want %v ≈ 10", r, want)
	}
}

func TestRealReward(t *testing.T) {
	task := mustTask(t, "qm9str")
	// Find a string of negative r: its real reward is the clamp.
	x := make([]int32, 5)
	out := make([]float64, 1)
	for i := range task.NumStrings() {
		unindex(i, 11, x)
		if err := task.Score(x, 1, out); err != nil {
			t.Fatal(err)
		}
		if out[0] < 0 {
			break
		}
	}
	if out[0] >= 0 {
		t.Fatal("no string with r < 0")
	}
	if err := task.RealReward(x, 1, out); err != nil || out[0] != 1e-3 {
		t.Errorf("real reward of %s = %v (%v), want 1e-3", task.Decode(x), out[0], err)
	}
	if err := task.LogReward(x, 1, out); err != nil || math.IsInf(out[0], 0) || math.IsNaN(out[0]) {
		t.Errorf("log R of %s = %v (%v), want finite", task.Decode(x), out[0], err)
	}
	want := math.Log(100*math.Pow(1e-3/17.374774932861328, 20) + 1e-12)
	if !relClose(out[0], want, 1e-12) {
		t.Errorf("log R of %s = %v, want %v", task.Decode(x), out[0], want)
	}
}
