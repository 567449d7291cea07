package bench

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gfngo/gfn/task"
)

// paperGrid holds the paper's grid results (mean ± std per table, method
// and grid), transcribed from the LaTeX source with each table's label.
//
//go:embed paper_grid.csv
var paperGrid string

// GridMethods are the rows of the paper's grid tables as gfn train flags.
var GridMethods = map[string][]string{
	"tb":      {"--method", "tb"},
	"eps":     {"--method", "tb", "--eps", "0.01"},
	"gafn":    {"--method", "gafn", "--gafn-scale", "0.01"},
	"prt":     {"--method", "tb", "--buffer", "reward"},
	"per":     {"--method", "tb", "--buffer", "teacher"},
	"teacher": {"--method", "teacher"},
	// PRT and PER as the paper's numbers were (apparently) produced: with
	// the reference's buffer pairing bug before its commit 77091bf.
	"prt-paper": {"--method", "tb", "--buffer", "reward", "--buffer-pairing", "completion"},
	"per-paper": {"--method", "tb", "--buffer", "teacher", "--buffer-pairing", "completion"},
	// PRT with ties in a fixed pseudo-random order, nearer the reference's
	// unstable argsort than oldest-first (a diagnostic of the large grids).
	"prt-hash":       {"--method", "tb", "--buffer", "reward", "--buffer-ties", "hash"},
	"db":             {"--method", "tb", "--objective", "db"},
	"db-eps":         {"--method", "tb", "--objective", "db", "--eps", "0.01"},
	"db-per":         {"--method", "tb", "--objective", "db", "--buffer", "teacher"},
	"db-teacher":     {"--method", "teacher", "--objective", "db"},
	"tb-ls":          {"--method", "tb", "--ls"},
	"teacher-ls":     {"--method", "teacher", "--ls"},
	"tb-ls-per":      {"--method", "tb", "--ls", "--buffer", "teacher"},
	"teacher-ls-per": {"--method", "teacher", "--ls", "--buffer", "teacher"},
	// Several Teachers (issue 17; the paper's future work): K take the T
	// slots in turn, sharing R_T by their probabilities of x, or each
	// with the whole R_T (none: independent Teachers).
	"teacher-k2":      {"--method", "teacher", "--teachers", "2"},
	"teacher-k3":      {"--method", "teacher", "--teachers", "3"},
	"teacher-k3-none": {"--method", "teacher", "--teachers", "3", "--teacher-split", "none"},
}

func init() {
	for _, c := range []string{"0", "9", "19", "29"} {
		GridMethods["teacher-c"+c] = []string{"--method", "teacher", "--C", c}
	}
	for _, a := range []string{"0.0", "0.5"} {
		GridMethods["teacher-alpha"+a] = []string{"--method", "teacher", "--alpha", a}
	}
	for _, n := range []string{"1", "3", "5", "10"} {
		GridMethods["teacher-nmc"+n] = []string{"--method", "teacher", "--n-mc", n}
	}
}

// Grid is a hypergrid configuration.
type Grid struct{ Dim, Side int }

// String returns the grid as "d2 H128".
func (g Grid) String() string { return fmt.Sprintf("d%d H%d", g.Dim, g.Side) }

// GridTable is one table of the paper: its methods, grids and seeds, and
// the reward calls of every run if the table sets them (0: each grid's
// reference budget, task.RewardCalls).
type GridTable struct {
	Name        string
	Methods     []string
	Grids       []Grid
	Seeds       int
	RewardCalls int
}

// largeCalls is the budget of the large grids: the paper's appendix runs
// them with "the same experimental settings we used for the grid with
// (d=4, H=32)", 384,000 reward calls, where the reference's formula gives
// d=6 only 96,000.
const largeCalls = 384000

var (
	table1Grids = []Grid{{2, 128}, {2, 256}, {4, 16}, {4, 32}}
	ablGrids    = []Grid{{2, 256}, {4, 32}}
)

// GridTables are the tables `gfn bench grid --table` reproduces.
var GridTables = []GridTable{
	{"tb", []string{"tb", "eps", "gafn", "prt", "per", "teacher"}, table1Grids, 5, 0},
	{"db", []string{"db", "db-eps", "db-per", "db-teacher"}, table1Grids, 3, 0},
	{"large", []string{"tb", "eps", "teacher", "gafn", "prt", "per"}, []Grid{{4, 64}, {6, 32}, {4, 128}, {6, 64}}, 3, largeCalls},
	{"ablation-c", []string{"teacher-c0", "teacher-c9", "teacher-c19", "teacher-c29"}, ablGrids, 3, 0},
	{"ablation-alpha", []string{"teacher-alpha0.0", "teacher-alpha0.5"}, ablGrids, 3, 0},
	{"ablation-nmc", []string{"teacher-nmc1", "teacher-nmc3", "teacher-nmc5", "teacher-nmc10"}, ablGrids, 3, 0},
	{"local-search", []string{"tb-ls", "teacher-ls", "tb-ls-per", "teacher-ls-per"}, table1Grids, 3, 0},
	// Not in the paper: the multi-Teacher against the single one at the
	// same reward budget, the large table's.
	{"multi", []string{"teacher", "teacher-k3", "teacher-k3-none"}, []Grid{{4, 64}, {6, 32}, {6, 64}}, 3, largeCalls},
}

// TableByName finds a table.
func TableByName(name string) (GridTable, error) {
	return tableByName(GridTables, name, func(t GridTable) string { return t.Name })
}

// tableByName finds the table called name in tables, or names the ones
// there are.
func tableByName[T any](tables []T, name string, nameOf func(T) string) (T, error) {
	var names []string
	for _, t := range tables {
		if nameOf(t) == name {
			return t, nil
		}
		names = append(names, nameOf(t))
	}
	var zero T
	return zero, fmt.Errorf("bench: table %q is unknown (allowed: %s)", name, strings.Join(names, ", "))
}

// GridJob is one training run of a table.
type GridJob struct {
	Method string
	Grid   Grid
	Seed   int
	Dir    string
	Args   []string // gfn train arguments
	// RewardCalls is the budget the table sets (0: the grid's default, or
	// a --quick run); a finished run of another budget is not collected.
	RewardCalls int
}

// GridOptions shape a table run.
type GridOptions struct {
	Out         string // directory of the table's runs and results
	Seeds       int    // 0: the table's default
	Jobs        int    // concurrent runs (≥ 1)
	Quick       bool   // 1 seed, 1/20 of the budget, small evaluation: a smoke run
	EvalSamples int    // 0: 100,000 (2,000 with Quick)
	Methods     []string
	Grids       []Grid
	CollectOnly bool // aggregate the finished runs, run nothing
}

// Jobs lists the runs of table t.
func (t GridTable) Jobs(o GridOptions) []GridJob {
	seeds := t.Seeds
	if o.Seeds > 0 {
		seeds = o.Seeds
	}
	if o.Quick && o.Seeds == 0 {
		seeds = 1
	}
	methods, grids := t.Methods, t.Grids
	if len(o.Methods) > 0 {
		methods = o.Methods
	}
	if len(o.Grids) > 0 {
		grids = o.Grids
	}
	eval := o.EvalSamples
	if eval == 0 {
		eval = 100000
		if o.Quick {
			eval = 2000
		}
	}
	var jobs []GridJob
	for _, g := range grids {
		for _, m := range methods {
			for s := range seeds {
				dir := filepath.Join(o.Out, fmt.Sprintf("%s-d%d-H%d-seed%d", m, g.Dim, g.Side, s))
				args := []string{"train", "--dim", strconv.Itoa(g.Dim), "--side", strconv.Itoa(g.Side),
					"--seed", strconv.Itoa(s), "--out", dir, "--quiet", "--eval-samples", strconv.Itoa(eval),
					"--checkpoint-every", strconv.Itoa(gridCheckpointEvery)}
				calls := t.RewardCalls // checked on collection, as the table sets it
				switch {
				case o.Quick:
					q := calls
					if q == 0 {
						q = task.RewardCalls(task.Spec{Task: "hypergrid", Dim: g.Dim, Side: g.Side})
					}
					args = append(args, "--reward-calls", strconv.Itoa(q/20))
					calls = 0
				case calls > 0:
					args = append(args, "--reward-calls", strconv.Itoa(calls))
				}
				jobs = append(jobs, GridJob{m, g, s, dir, append(args, GridMethods[m]...), calls})
			}
		}
	}
	return jobs
}

// gridCheckpointEvery is the runs' --checkpoint-every: a run interrupted
// (a session's end, a crash, scancel) continues from its last checkpoint
// instead of starting again, which matters for the large grids' runs of
// tens of minutes. A checkpoint costs milliseconds against the 1,000
// iterations between two.
const gridCheckpointEvery = 1000

// allJobs returns the jobs of every run of the table in its directory: the
// table's methods and grids (and any other grids of o) with as many seeds
// as o or the table asks, the same for every other method of GridMethods
// with a run directory there (a diagnostic such as prt-paper, run before
// with --methods), and the jobs of o it lacks.
func (t GridTable) allJobs(o GridOptions, jobs []GridJob) []GridJob {
	whole := o
	whole.Methods, whole.Seeds = slices.Clone(t.Methods), max(o.Seeds, t.Seeds)
	var extra []string
	for m := range GridMethods {
		// "<method>-d": teacher-d… is not teacher-k3-d….
		if slices.Contains(whole.Methods, m) {
			continue
		}
		if found, _ := filepath.Glob(filepath.Join(o.Out, m+"-d*-H*-seed*")); len(found) > 0 {
			extra = append(extra, m)
		}
	}
	slices.Sort(extra)
	whole.Methods = append(whole.Methods, extra...)
	whole.Grids = slices.Clone(t.Grids)
	for _, g := range o.Grids {
		if !slices.Contains(whole.Grids, g) {
			whole.Grids = append(whole.Grids, g)
		}
	}
	return collected(t.Jobs(whole), jobs, func(j GridJob) string { return j.Dir })
}

// TableJobs returns the jobs of every run of the table in o.Out, as
// RunGrid collects them (o's own, the table's, and those of other methods
// run there before): what the figures draw.
func (t GridTable) TableJobs(o GridOptions) []GridJob { return t.allJobs(o, t.Jobs(o)) }

// Runner runs one gfn command line (the CLI execs itself; tests fake it).
type Runner func(ctx context.Context, args []string) error

// GridResult is one finished run (a row of results.csv).
type GridResult struct {
	Table, Method        string
	Grid                 Grid
	Seed                 int
	Modes                int
	ModesTotal           float64
	EmpiricalL1, ExactL1 float64 // NaN when not computed
	RewardCalls, Steps   int
	WallSeconds          float64
	// PeakRSSMiB is the run's peak resident set (NaN if its summary has
	// none); BufferEntries what its replay buffer held at the end.
	PeakRSSMiB    float64
	BufferEntries int
}

// collectGrid reads the summaries of the jobs that have finished.
func collectGrid(table string, jobs []GridJob) ([]GridResult, error) {
	var rs []GridResult
	for _, j := range jobs {
		b, err := os.ReadFile(filepath.Join(j.Dir, "summary.json"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var s struct {
			ModesFound   int      `json:"modes_found"`
			ModesTotal   float64  `json:"modes_total"`
			EmpiricalL1  *float64 `json:"empirical_l1"`
			StudentExact *struct {
				L1 *float64 `json:"l1"`
			} `json:"student_exact"`
			RewardCalls   int      `json:"reward_calls"`
			Steps         int      `json:"steps"`
			Wall          float64  `json:"wall_seconds"`
			PeakRSS       *float64 `json:"peak_rss_mib"`
			BufferEntries int      `json:"buffer_entries"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("bench: %s: %w", filepath.Join(j.Dir, "summary.json"), err)
		}
		if j.RewardCalls > 0 && s.RewardCalls != j.RewardCalls {
			return nil, fmt.Errorf("bench: %s: a run of %d reward calls, but the table's runs have %d (an older or --quick run? move it away to run it again)",
				j.Dir, s.RewardCalls, j.RewardCalls)
		}
		r := GridResult{Table: table, Method: j.Method, Grid: j.Grid, Seed: j.Seed, Modes: s.ModesFound, ModesTotal: s.ModesTotal,
			EmpiricalL1: math.NaN(), ExactL1: math.NaN(), RewardCalls: s.RewardCalls, Steps: s.Steps, WallSeconds: s.Wall,
			PeakRSSMiB: math.NaN(), BufferEntries: s.BufferEntries}
		if s.PeakRSS != nil {
			r.PeakRSSMiB = *s.PeakRSS
		}
		if s.EmpiricalL1 != nil {
			r.EmpiricalL1 = *s.EmpiricalL1
		}
		if s.StudentExact != nil && s.StudentExact.L1 != nil {
			r.ExactL1 = *s.StudentExact.L1
		}
		rs = append(rs, r)
	}
	return rs, nil
}

var resultsHeader = []string{"table", "method", "dim", "side", "seed", "modes", "modes_total", "empirical_l1", "exact_l1", "reward_calls", "steps", "wall_seconds", "peak_rss_mib", "buffer_entries"}

// WriteResultsCSV writes results.csv.
func WriteResultsCSV(w io.Writer, rs []GridResult) error {
	cw := csv.NewWriter(w)
	cw.Write(resultsHeader)
	f := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 8, 64)
	}
	for _, r := range rs {
		cw.Write([]string{r.Table, r.Method, strconv.Itoa(r.Grid.Dim), strconv.Itoa(r.Grid.Side), strconv.Itoa(r.Seed),
			strconv.Itoa(r.Modes), f(r.ModesTotal), f(r.EmpiricalL1), f(r.ExactL1), strconv.Itoa(r.RewardCalls), strconv.Itoa(r.Steps), f(r.WallSeconds),
			f(r.PeakRSSMiB), strconv.Itoa(r.BufferEntries)})
	}
	cw.Flush()
	return cw.Error()
}

// ReadResultsCSV reads what WriteResultsCSV wrote, also files from before
// the peak_rss_mib and buffer_entries columns (read as unknown and 0).
func ReadResultsCSV(r io.Reader) ([]GridResult, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if old := len(resultsHeader) - 2; len(rows) > 0 && slices.Equal(rows[0], resultsHeader[:old]) {
		rows[0] = resultsHeader
		for i := 1; i < len(rows); i++ {
			rows[i] = append(rows[i], "", "0")
		}
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.WriteAll(rows)
	return readResults(&buf, resultsHeader, func(row []string, c *cells) GridResult {
		return GridResult{Table: row[0], Method: row[1], Grid: Grid{c.int(row[2]), c.int(row[3])}, Seed: c.int(row[4]), Modes: c.int(row[5]),
			ModesTotal: c.float(row[6]), EmpiricalL1: c.float(row[7]), ExactL1: c.float(row[8]), RewardCalls: c.int(row[9]), Steps: c.int(row[10]), WallSeconds: c.float(row[11]),
			PeakRSSMiB: c.float(row[12]), BufferEntries: c.int(row[13])}
	})
}

// cells parses a row's numbers, keeping the first error.
type cells struct{ err error }

func (c *cells) int(s string) int {
	v, err := strconv.Atoi(s)
	if err != nil && c.err == nil {
		c.err = err
	}
	return v
}

// optionalInt parses s; an empty cell is 0 (a count that does not apply).
func (c *cells) optionalInt(s string) int {
	if s == "" {
		return 0
	}
	return c.int(s)
}

// float parses s; an empty cell is NaN (a value not computed).
func (c *cells) float(s string) float64 {
	if s == "" {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && c.err == nil {
		c.err = err
	}
	return v
}

// readResults reads a results.csv with the given header, one T per row.
func readResults[T any](r io.Reader, header []string, parse func(row []string, c *cells) T) ([]T, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || !slices.Equal(rows[0], header) {
		return nil, fmt.Errorf("bench: results.csv: header must be %s", strings.Join(header, ","))
	}
	var rs []T
	for i, row := range rows[1:] {
		var c cells
		v := parse(row, &c)
		if c.err != nil {
			return nil, fmt.Errorf("bench: results.csv line %d: %w", i+2, c.err)
		}
		rs = append(rs, v)
	}
	return rs, nil
}

// PaperEntry is one cell group of the paper's tables.
type PaperEntry struct {
	Ref                    string
	ModesMean, ModesStd    float64
	L1Mean, L1Std, L1Scale float64 // L1 in units of L1Scale; NaN if not reported
}

// PaperGrid returns the paper's numbers keyed by table/method/grid.
func PaperGrid() map[string]PaperEntry {
	rows, err := csv.NewReader(strings.NewReader(paperGrid)).ReadAll()
	if err != nil {
		panic("bench: embedded paper_grid.csv: " + err.Error())
	}
	m := map[string]PaperEntry{}
	f := func(s string) float64 {
		if s == "" {
			return math.NaN()
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			panic("bench: embedded paper_grid.csv: " + err.Error())
		}
		return v
	}
	for _, r := range rows[1:] {
		m[paperKey(r[0], r[2], Grid{int(f(r[3])), int(f(r[4]))})] = PaperEntry{r[1], f(r[5]), f(r[6]), f(r[7]), f(r[8]), f(r[9])}
	}
	return m
}

// paperKey names a paper number; the "-paper" presets (the reference's
// buffer bug) compare against their method's row.
func paperKey(table, method string, g Grid) string {
	return table + "/" + strings.TrimSuffix(method, "-paper") + "/" + g.String()
}

// l1Scale is the unit of the L1 columns for grid g: the paper's unit for this
// table, else the unit the paper uses for g in any table (so tables without
// paper numbers, like local search, print L1 in the same unit as Table 1),
// else 1e-5.
func l1Scale(paper map[string]PaperEntry, table, method string, g Grid) float64 {
	if p, ok := paper[paperKey(table, method, g)]; ok && !math.IsNaN(p.L1Scale) {
		return p.L1Scale
	}
	suffix := "/" + g.String()
	keys := make([]string, 0, len(paper))
	for k := range paper {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic choice if tables ever disagree
	for _, k := range keys {
		if p := paper[k]; strings.HasSuffix(k, suffix) && !math.IsNaN(p.L1Scale) {
			return p.L1Scale
		}
	}
	return 1e-5
}

func meanStd(v []float64) (mean, std float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(v))) // population std, as numpy's default
}

// WriteMarkdown writes one table per grid: mean ± std over seeds of modes
// and empirical L1 (in the paper's units) next to the paper's numbers.
func WriteMarkdown(w io.Writer, table string, quick bool, rs []GridResult) {
	paper := PaperGrid()
	byGrid := map[Grid][]GridResult{}
	var grids []Grid
	for _, r := range rs {
		if _, ok := byGrid[r.Grid]; !ok {
			grids = append(grids, r.Grid)
		}
		byGrid[r.Grid] = append(byGrid[r.Grid], r)
	}
	sort.Slice(grids, func(i, j int) bool {
		if grids[i].Dim != grids[j].Dim {
			return grids[i].Dim < grids[j].Dim
		}
		return grids[i].Side < grids[j].Side
	})
	fmt.Fprintf(w, "# gfn bench grid --table %s\n", table)
	if quick {
		quickNote(w, "1/20 of the reward-call budget and 2,000 evaluation samples")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Mean ± std (population) over seeds; L1 is the empirical L1 of fresh Student samples, in the paper's units.")
	for _, g := range grids {
		var methods []string
		seen := map[string]bool{}
		for _, r := range byGrid[g] {
			if !seen[r.Method] {
				seen[r.Method] = true
				methods = append(methods, r.Method)
			}
		}
		scale := l1Scale(paper, table, methods[0], g)
		ref := ""
		for _, m := range methods {
			if p, ok := paper[paperKey(table, m, g)]; ok {
				ref = p.Ref
				break
			}
		}
		fmt.Fprintf(w, "\n## %v\n\n", g)
		if ref != "" {
			fmt.Fprintf(w, "Paper: %s.\n\n", ref)
		}
		fmt.Fprintf(w, "| method | runs | modes | modes (paper) | L1 ×%g | L1 ×%g (paper) | wall (s, mean) | peak RSS (MiB, max) | buffer entries (max) |\n", scale, scale)
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
		for _, m := range methods {
			var modes, l1, wall []float64
			mem, buf := math.NaN(), 0
			for _, r := range byGrid[g] {
				if r.Method != m {
					continue
				}
				if !math.IsNaN(r.PeakRSSMiB) && !(r.PeakRSSMiB <= mem) {
					mem = r.PeakRSSMiB
				}
				buf = max(buf, r.BufferEntries)
				modes = append(modes, float64(r.Modes))
				if !math.IsNaN(r.EmpiricalL1) {
					l1 = append(l1, r.EmpiricalL1/scale)
				}
				wall = append(wall, r.WallSeconds)
			}
			mm, ms := meanStd(modes)
			wm, _ := meanStd(wall)
			l1s := "–"
			if len(l1) > 0 {
				lm, ls := meanStd(l1)
				l1s = fmt.Sprintf("%.3f ± %.3f", lm, ls)
			}
			pm, pl := "–", "–"
			if p, ok := paper[paperKey(table, m, g)]; ok {
				pm = fmt.Sprintf("%.1f ± %.1f", p.ModesMean, p.ModesStd)
				if !math.IsNaN(p.L1Mean) {
					pl = fmt.Sprintf("%.3f ± %.3f", p.L1Mean, p.L1Std)
				}
			}
			mems, bufs := "–", "–"
			if !math.IsNaN(mem) {
				mems = fmt.Sprintf("%.0f", mem)
			}
			if buf > 0 {
				bufs = strconv.Itoa(buf)
			}
			fmt.Fprintf(w, "| %s | %d | %.1f ± %.1f | %s | %s | %s | %.0f | %s | %s |\n", m, len(modes), mm, ms, pm, l1s, pl, wm, mems, bufs)
		}
	}
	// The table's cost: runs go J at a time, so its elapsed time is about
	// this sum divided by J.
	fmt.Fprintf(w, "\n## Run time\n\n| grid | runs | sum of run wall times |\n|---|---|---|\n")
	var total float64
	for _, g := range grids {
		var sum float64
		for _, r := range byGrid[g] {
			sum += r.WallSeconds
		}
		total += sum
		fmt.Fprintf(w, "| %v | %d | %s |\n", g, len(byGrid[g]), fmtDuration(sum))
	}
	fmt.Fprintf(w, "| all | %d | %s |\n", len(rs), fmtDuration(total))
}

// fmtDuration prints seconds as 1h02m, 3m05s or 42s.
func fmtDuration(s float64) string {
	d := time.Duration(math.Round(s)) * time.Second
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}
