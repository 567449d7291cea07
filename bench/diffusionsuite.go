package bench

import (
	_ "embed"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/target"
)

// paperSuite holds the published numbers of the suite table's energies
// (mean ± std per method and task) with their sources, transcribed from
// docs/design/diffusion-suite-presets.md §2.1 (Sendera et al. 2024,
// Tables 1 and C.1). Blessing et al. 2024's tables could not be read
// (§2.2): gmm40, gmm40-50d and mos have no rows.
//
//go:embed paper_suite.csv
var paperSuite string

// SuitePaperRow is one published row of the suite table for a task.
// Funnel's log Z is 0, and Sendera et al. report Δ = |log Z − log Ẑ| of
// the ELBO: ELBO holds log Z − Δ. Their Δ^RW = |log Z − log Ẑ^RW| is
// DeltaLogZ. For LGCP (log Z unknown) ELBO and ELBOIS are their log Ẑ and
// log Ẑ^RW. W2 is their column headed W₂² (whether it holds W2 or its
// square is not stated).
type SuitePaperRow struct {
	Source, Method, Task string
	// Label is the method's name in the source.
	Label                       string
	ELBO, ELBOIS, DeltaLogZ, W2 Stat
	// Quoted rows are methods the table does not run.
	Quoted bool
	Note   string
}

// PaperSuite returns the published rows in the file's order.
func PaperSuite() []SuitePaperRow {
	rows, f := embeddedCSV("paper_suite.csv", paperSuite)
	var ps []SuitePaperRow
	for _, r := range rows[1:] {
		ps = append(ps, SuitePaperRow{Source: r[0], Method: r[1], Task: r[2],
			ELBO: Stat{f(r[3]), f(r[4])}, ELBOIS: Stat{f(r[5]), f(r[6])}, DeltaLogZ: Stat{f(r[7]), f(r[8])}, W2: Stat{f(r[9]), f(r[10])},
			Quoted: r[11] == "yes", Label: r[12], Note: r[13]})
	}
	return ps
}

// suiteColumn is a metric column of the suite table.
type suiteColumn struct {
	name   string
	get    func(DiffusionResult) float64
	paper  func(SuitePaperRow) Stat // nil: no published value
	prec   int
	higher bool // higher is better
}

var suiteColumns = []suiteColumn{
	{"ELBO", func(r DiffusionResult) float64 { return r.ELBO }, func(p SuitePaperRow) Stat { return p.ELBO }, 3, true},
	{"ELBO-IS", func(r DiffusionResult) float64 { return r.ELBOIS }, func(p SuitePaperRow) Stat { return p.ELBOIS }, 3, true},
	{"\\|Δ log Z\\|", func(r DiffusionResult) float64 { return r.DeltaLogZ }, func(p SuitePaperRow) Stat { return p.DeltaLogZ }, 3, false},
	{"EUBO", func(r DiffusionResult) float64 { return r.EUBO }, nil, 3, false},
	{"W2", func(r DiffusionResult) float64 { return r.W2 }, func(p SuitePaperRow) Stat { return p.W2 }, 2, false},
	{"EMC", func(r DiffusionResult) float64 { return r.EMC }, nil, 3, true},
	{"MMD", func(r DiffusionResult) float64 { return r.MMD }, nil, 4, false},
}

// suiteRivals are the GFlowNet methods the Teacher is compared with: the
// same sampler and objective, trained on-policy, with exploration or with
// a replay buffer.
var suiteRivals = []string{"tb", "eps", "prt", "per"}

// teacherVerdict compares the Teacher's runs with the best of the rival
// methods' on each column: its mean against the best rival mean, better
// or worse when they differ by more than twice the larger of the two
// stds (population stds over seeds), within noise otherwise. It returns
// nothing without Teacher runs or rivals.
func teacherVerdict(cols []suiteColumn, measured map[string][]DiffusionResult) []string {
	kept := func(rs []DiffusionResult, c suiteColumn) []float64 {
		var v []float64
		for _, r := range rs {
			if x := c.get(r); !r.Diverged() && !math.IsNaN(x) {
				v = append(v, x)
			}
		}
		return v
	}
	var out []string
	for _, c := range cols {
		tv := kept(measured["teacher"], c)
		if len(tv) == 0 {
			continue
		}
		best, bm, bs, bn := "", math.NaN(), 0.0, 0
		for _, m := range suiteRivals {
			v := kept(measured[m], c)
			if len(v) == 0 {
				continue
			}
			mean, std := meanStd(v)
			if best == "" || c.higher && mean > bm || !c.higher && mean < bm {
				best, bm, bs, bn = m, mean, std, len(v)
			}
		}
		if best == "" {
			continue
		}
		tm, ts := meanStd(tv)
		d := tm - bm
		if !c.higher {
			d = -d
		}
		verdict := "within noise of"
		switch {
		case len(tv) < 2 || bn < 2:
			verdict = "(one seed: no verdict) against"
		case d > 2*max(ts, bs):
			verdict = "better than"
		case -d > 2*max(ts, bs):
			verdict = "worse than"
		}
		out = append(out, fmt.Sprintf("%s %.*f %s %s's %.*f", c.name, c.prec, tm, verdict, best, c.prec, bm))
	}
	return out
}

// WriteSuiteMarkdown writes the suite table's results.md: per task (its
// preset, dimension and log Z), mean ± population std over seeds of the
// final evaluation's ELBO, ELBO-IS, |Δ log Z|, EUBO, W2, EMC and MMD, the
// published mean ± std beside a metric where a source reports it (†
// where ours lies outside its mean ± 2 std), the published methods this
// table does not run below ours, then the run times and the command. A
// task's columns without any value (EMC off the mixtures, everything
// needing exact samples or log Z on LGCP) are left out. Diverged runs
// (DiffusionResult.Diverged) are left out of the means and named below.
func WriteSuiteMarkdown(w io.Writer, rep DiffusionReport, rs []DiffusionResult) {
	paper := PaperSuite()
	byTask := map[string][]DiffusionResult{}
	for _, r := range rs {
		byTask[r.Task] = append(byTask[r.Task], r)
	}
	var tasks []string
	for _, t := range slices.Concat(SuiteTasks, DiffusionTasks) {
		if len(byTask[t]) > 0 {
			tasks = append(tasks, t)
		}
	}
	var order []string
	if t, err := DiffusionTableByName(rep.Table); err == nil {
		order = t.Methods
	}
	fmt.Fprintf(w, "# gfn bench diffusion --table %s\n", rep.Table)
	if rep.Quick {
		quickNote(w, "40 iterations of a 64-wide network on batches of 64 with T = 20")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The diffusion-sampler suite (issue 43), each energy at its preset (docs/design/diffusion-suite-presets.md). "+
		"Mean ± population std over a method's runs (one per seed) of the final evaluation of each run's Student, next to the "+
		"published mean ± std where a source reports the metric; † marks a measured mean outside the published mean ± 2 std. "+
		"ELBO and ELBO-IS estimate log Z from below (higher is better), EUBO from above; \\|Δ log Z\\| = \\|ELBO-IS − log Z\\| "+
		"where log Z is known (Sendera et al.'s Δ log Z^RW, Blessing et al.'s Δ log Z); W2 is the 2-Wasserstein distance to "+
		"as many exact samples; EMC the entropic mode coverage over a mixture's components (1: every mode equally, 0: one); "+
		"MMD the unbiased Gaussian-kernel MMD (√MMD², median-heuristic bandwidth) between 2,000 Student and 2,000 exact samples.")
	fmt.Fprintln(w, "\nPublished numbers: Sendera et al. 2024 (Tables 1 and C.1; 5 runs of 2,000 samples each). Their Δ log Z "+
		"(\\|log Z − ELBO\\|) appears as ELBO = log Z − Δ; ELBO-IS and \\|Δ log Z\\| tighten as samples grow, and our final "+
		"evaluation has more than their 2,000, so a † there may be the sample count, not the sampler. Their W column is headed W₂² "+
		"without saying whether it is squared. Rows: tb ↔ TB, eps ↔ TB + Expl., pis ↔ PIS; prt, per and teacher have no "+
		"published row. Blessing et al. 2024's numbers (gmm40, gmm40-50d, mos) could not be read: those tasks have no published "+
		"comparison and no †.")
	for _, task := range tasks {
		var rows []SuitePaperRow
		source := ""
		for _, p := range paper {
			if p.Task == task {
				rows = append(rows, p)
				source = p.Source
			}
		}
		dim, logZ := "?", "unknown"
		if e, err := energy.Named(task); err == nil {
			dim = strconv.Itoa(e.Dim())
			if lz, ok := e.(target.LogZer); ok && !math.IsNaN(lz.LogZ()) {
				logZ = strconv.FormatFloat(lz.LogZ(), 'g', 10, 64)
			}
		}
		presets := map[string]bool{}
		for _, r := range byTask[task] {
			presets[r.Preset] = true
		}
		var ps []string
		for p := range presets {
			ps = append(ps, p)
		}
		slices.Sort(ps)
		fmt.Fprintf(w, "\n## %s (d = %s, log Z = %s, preset %s)\n\n", task, dim, logZ, strings.Join(ps, ", "))
		if source != "" {
			fmt.Fprintf(w, "Published: %s.\n\n", source)
		} else {
			fmt.Fprintf(w, "No published numbers for %s (see above).\n\n", task)
		}
		measured := map[string][]DiffusionResult{}
		var methods []string
		for _, r := range byTask[task] {
			if _, ok := measured[r.Method]; !ok {
				methods = append(methods, r.Method)
			}
			measured[r.Method] = append(measured[r.Method], r)
		}
		slices.SortStableFunc(methods, func(a, b string) int { return rank(order, a) - rank(order, b) })
		paperOf := func(m string) *SuitePaperRow {
			for i := range rows {
				if rows[i].Method == m {
					return &rows[i]
				}
			}
			return nil
		}
		// The columns with a value in this task.
		var cols []suiteColumn
		for _, c := range suiteColumns {
			has := slices.ContainsFunc(byTask[task], func(r DiffusionResult) bool { return !math.IsNaN(c.get(r)) })
			if c.paper != nil {
				has = has || slices.ContainsFunc(rows, func(p SuitePaperRow) bool { return !math.IsNaN(c.paper(p).Mean) })
			}
			if has {
				cols = append(cols, c)
			}
		}
		head := []string{"method", "runs"}
		for _, c := range cols {
			head = append(head, c.name)
			if c.paper != nil && source != "" {
				head = append(head, c.name+" (published)")
			}
		}
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		var diverged []DiffusionResult
		var notes []string
		line := func(name, runs string, got []DiffusionResult, p *SuitePaperRow, quoted bool) {
			cells := []string{name, runs}
			for _, c := range cols {
				var v []float64
				for _, r := range got {
					if x := c.get(r); !math.IsNaN(x) {
						v = append(v, x)
					}
				}
				pub := Stat{math.NaN(), math.NaN()}
				if p != nil && c.paper != nil {
					pub = c.paper(*p)
				}
				mc := measuredCell(v, pub, c.prec)
				if quoted {
					mc = ""
				} else if len(got) == 0 {
					mc = "diverged"
				}
				cells = append(cells, mc)
				if c.paper != nil && source != "" {
					cells = append(cells, paperCell(pub, c.prec))
				}
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		}
		for _, m := range methods {
			var got []DiffusionResult
			div := 0
			for _, r := range measured[m] {
				if r.Diverged() {
					diverged = append(diverged, r)
					div++
				} else {
					got = append(got, r)
				}
			}
			runs := strconv.Itoa(len(got))
			if div > 0 {
				runs += fmt.Sprintf(" (+%d diverged)", div)
			}
			p := paperOf(m)
			name := m
			if p != nil && p.Note != "" {
				notes = append(notes, fmt.Sprintf("[%d] %s (%s): %s.", len(notes)+1, m, p.Label, p.Note))
				name += fmt.Sprintf(" [%d]", len(notes))
			}
			line(name, runs, got, p, false)
		}
		for i := range rows {
			p := &rows[i]
			if !p.Quoted || len(measured[p.Method]) > 0 {
				continue
			}
			name := p.Label
			if p.Note != "" {
				notes = append(notes, fmt.Sprintf("[%d] %s: %s.", len(notes)+1, p.Label, p.Note))
				name += fmt.Sprintf(" [%d]", len(notes))
			}
			line(name, "published, not run here", nil, p, true)
		}
		if len(notes) > 0 {
			fmt.Fprintln(w)
			for _, n := range notes {
				fmt.Fprintln(w, n)
			}
		}
		if len(diverged) > 0 {
			fmt.Fprintln(w)
			for _, r := range diverged {
				fmt.Fprintln(w, divergenceNote(r))
			}
		}
		if v := teacherVerdict(cols, measured); len(v) > 0 {
			fmt.Fprintf(w, "\nThe Teacher against the best of %s on each metric (better or worse: means more than twice the larger "+
				"std apart): %s.\n", strings.Join(suiteRivals, ", "), strings.Join(v, "; "))
		}
		samples := 0
		for _, r := range byTask[task] {
			samples = max(samples, r.Samples)
		}
		fmt.Fprintf(w, "\nFinal evaluation: %d Student samples (and as many exact ones where the energy has a sampler).\n", samples)
	}
	writeRunTimes(w, rep, tasks, byTask, len(rs))
}
