package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gfngo/gfn/biochem"
)

// ObjectiveTask is one task of the objectives table: its gfn train
// arguments at the paper's budget and at a --quick one, the objectives it
// takes, and the method without and with the Teacher.
type ObjectiveTask struct {
	Name string
	// Args and Quick are the task's arguments (without method, objective
	// and seed) for a full run and a smoke run.
	Args, Quick []string
	Objectives  []string
	// Without and With are the --method of the rows without and with the
	// Teacher (the sequences replay by loss in both, as the paper's
	// Teacher + PER row).
	Without, With string
	// Extra are further arguments of an objective's runs.
	Extra map[string][]string
	// Published names the task whose published rows stand beside this
	// one's (its own name if empty); Comparable says the runs use the
	// publication's settings, so that a mean outside its mean ± 2 std
	// is marked †.
	Published  string
	Comparable bool
}

// published is the task whose published rows stand beside t's.
func (t ObjectiveTask) published() string {
	if t.Published != "" {
		return t.Published
	}
	return t.Name
}

// seqObjectiveTask is a sequence task of the objectives table.
func seqObjectiveTask(name string) ObjectiveTask {
	t, err := biochem.Named(name)
	if err != nil {
		panic("bench: " + err.Error())
	}
	rounds, every, samples := biochemQuick(t.Settings())
	// Every row with the paper's ssr policy (db and subtb with its flow
	// head), so that the tb rows compare with the paper's tables.
	return ObjectiveTask{Name: name, Args: []string{"--task", name},
		Quick:      []string{"--task", name, "--rounds", strconv.Itoa(rounds), "--eval-every", strconv.Itoa(every), "--eval-samples", strconv.Itoa(samples)},
		Objectives: []string{"tb", "db", "subtb", "vargrad"}, Without: "per", With: "teacher-per"}
}

// freeStateRewards are the grid rows' extra arguments of the objectives
// that score every visited state: at the paper's reward-call budget they
// would take a hundredth of the others' trajectories (d2 H128: about 50
// iterations), so the table compares them at equal terminal queries.
var freeStateRewards = map[string][]string{
	"mdb": {"--free-state-rewards"}, "fl-db": {"--free-state-rewards"}, "fl-subtb": {"--free-state-rewards"},
}

// ObjectiveTasks are the objectives table's tasks, in the order they run:
// the grids at the paper's budgets, the diffusion samplers' paper preset,
// TFbind8 and QM9str (with the ssr policy). Only the objectives each
// family has run.
var ObjectiveTasks = []ObjectiveTask{
	{Name: "d2H128", Args: []string{"--dim", "2", "--side", "128"},
		Quick:      []string{"--dim", "2", "--side", "128", "--reward-calls", "4800", "--eval-samples", "2000"},
		Objectives: []string{"tb", "db", "subtb", "vargrad", "fm", "mdb", "fl-db", "fl-subtb"}, Without: "tb", With: "teacher", Extra: freeStateRewards},
	{Name: "d4H16", Args: []string{"--dim", "4", "--side", "16"},
		Quick:      []string{"--dim", "4", "--side", "16", "--reward-calls", "4800", "--eval-samples", "2000"},
		Objectives: []string{"tb", "db", "subtb", "vargrad", "fm", "mdb", "fl-db", "fl-subtb"}, Without: "tb", With: "teacher", Extra: freeStateRewards},
	{Name: "25gmm", Args: []string{"--task", "25gmm", "--preset", "paper"},
		Quick:      append([]string{"--task", "25gmm", "--preset", "paper"}, quickDiffusionArgs...),
		Objectives: []string{"tb", "db", "subtb", "vargrad", "fl-db", "fl-subtb"}, Without: "tb", With: "teacher"},
	{Name: "manywell", Args: []string{"--task", "manywell", "--preset", "paper"},
		Quick:      append([]string{"--task", "manywell", "--preset", "paper"}, quickDiffusionArgs...),
		Objectives: []string{"tb", "db", "subtb", "vargrad", "fl-db", "fl-subtb"}, Without: "tb", With: "teacher"},
	seqObjectiveTask("tfbind8"),
	seqObjectiveTask("qm9str"),
	// Sendera et al.'s settings (preset sendera) for their published
	// objectives: TB, VarGrad with exploration, FL-SubTB, so that their
	// Table 1 is a test of these rows (†), not only a guide. Last, so that
	// adding them left the other tasks' job indices as they were.
	senderaObjectiveTask("25gmm"),
	senderaObjectiveTask("manywell"),
}

// senderaObjectiveTask is task at Sendera et al.'s settings, with their
// published objectives.
func senderaObjectiveTask(task string) ObjectiveTask {
	args := []string{"--task", task, "--preset", "sendera"}
	// Their evaluation: 2,000 samples for every metric.
	full := append(slices.Clone(args), "--final-samples", strconv.Itoa(suiteFinalSamples))
	return ObjectiveTask{Name: task + "-sendera", Args: full, Quick: append(slices.Clone(args), quickDiffusionArgs...),
		Objectives: []string{"tb", "vargrad", "fl-subtb"}, Without: "tb", With: "teacher",
		Extra:     map[string][]string{"vargrad": {"--explore-all"}}, // their VarGrad + Expl.
		Published: task, Comparable: true}
}

// ObjectivesOptions shape a run of the objectives table.
type ObjectivesOptions struct {
	Out         string // the root directory: runs and results go to Out/objectives
	Seeds       int    // 0: 3 (1 with Quick)
	Quick       bool   // 1 seed and each task's smoke budget
	Tasks       []string
	Objectives  []string
	CollectOnly bool
}

// ObjectivesRun is the objectives table as RunTable takes it: every
// objective of every task, without and with the Teacher.
type ObjectivesRun struct {
	O       ObjectivesOptions
	Command string // the command line, quoted in results.md
}

// Name is "bench objectives".
func (r ObjectivesRun) Name() string { return "bench objectives" }

// Dir is Out/objectives.
func (r ObjectivesRun) Dir() string { return filepath.Join(r.O.Out, "objectives") }

// Seeds is the seeds asked.
func (r ObjectivesRun) Seeds() int { return r.seeds() }

func (r ObjectivesRun) seeds() int {
	switch {
	case r.O.Seeds > 0:
		return r.O.Seeds
	case r.O.Quick:
		return 1
	}
	return 3
}

// ObjectiveTaskByName finds a task of the table.
func ObjectiveTaskByName(name string) (ObjectiveTask, error) {
	return tableByName(ObjectiveTasks, name, func(t ObjectiveTask) string { return t.Name })
}

// Jobs lists the asked runs, seed by seed.
func (r ObjectivesRun) Jobs() ([]Job, error) {
	var jobs []Job
	for s := range r.seeds() {
		for _, t := range ObjectiveTasks {
			if len(r.O.Tasks) > 0 && !slices.Contains(r.O.Tasks, t.Name) {
				continue
			}
			for _, obj := range t.Objectives {
				if len(r.O.Objectives) > 0 && !slices.Contains(r.O.Objectives, obj) {
					continue
				}
				for _, m := range []string{t.Without, t.With} {
					jobs = append(jobs, r.job(t, obj, m, s))
				}
			}
		}
	}
	return jobs, nil
}

// All lists every run of the table for the seeds asked.
func (r ObjectivesRun) All() ([]Job, error) {
	all := ObjectivesRun{O: ObjectivesOptions{Out: r.O.Out, Seeds: r.O.Seeds, Quick: r.O.Quick}}
	return all.Jobs()
}

// job is one run: task t, objective obj, method m, seed s.
func (r ObjectivesRun) job(t ObjectiveTask, obj, m string, s int) Job {
	dir := filepath.Join(r.Dir(), fmt.Sprintf("%s-%s-%s-seed%d", t.Name, obj, m, s))
	args := []string{"train"}
	if r.O.Quick {
		args = append(args, t.Quick...)
	} else {
		args = append(args, t.Args...)
	}
	args = append(args, "--objective", obj, "--method", m)
	args = append(args, t.Extra[obj]...)
	args = append(args, "--seed", strconv.Itoa(s), "--out", dir, "--quiet")
	return Job{Label: fmt.Sprintf("%s %s %s", t.Name, obj, m), Seed: s, Dir: dir, Args: args}
}

// objectiveResult is one finished run's final numbers (NaN: not
// measured by its family).
type objectiveResult struct {
	task, objective, method string
	seed                    int
	modes, modesTotal       float64
	l1, logZErr             float64 // the grid's exact (or empirical) L1; |log Z estimate − true log Z|
	elbo, eubo              float64
	// dELBO and dIS are |log Z − ELBO| and |log Z − ELBO-IS| where the
	// true log Z is known (Sendera et al.'s Δ log Z and Δ log Z^RW).
	dELBO, dIS float64
	wall       float64
}

// objectiveSummary holds the keys the objectives table reads of any
// family's summary.json.
type objectiveSummary struct {
	ModesFound   *float64 `json:"modes_found"`
	ModesTotal   *float64 `json:"modes_total"`
	LogZ         *float64 `json:"log_z"`
	TrueLogZ     *float64 `json:"true_log_z"`
	ELBO         *float64 `json:"elbo"`
	ELBOIS       *float64 `json:"elbo_is"`
	LogZErr      *float64 `json:"log_z_err"`
	EUBO         *float64 `json:"eubo"`
	EmpiricalL1  *float64 `json:"empirical_l1"`
	WallSeconds  float64  `json:"wall_seconds"`
	StudentExact *struct {
		L1 float64 `json:"l1"`
	} `json:"student_exact"`
}

// collect reads the finished runs of jobs.
func (r ObjectivesRun) collect(jobs []Job) ([]objectiveResult, error) {
	var rs []objectiveResult
	val := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	for _, j := range jobs {
		b, err := os.ReadFile(filepath.Join(j.Dir, "summary.json"))
		if err != nil {
			continue // not finished
		}
		var s objectiveSummary
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("bench: %s: %w", j.Dir, err)
		}
		f := strings.Fields(j.Label)
		res := objectiveResult{task: f[0], objective: f[1], method: f[2], seed: j.Seed,
			modes: val(s.ModesFound), modesTotal: val(s.ModesTotal), elbo: val(s.ELBO), eubo: val(s.EUBO),
			l1: val(s.EmpiricalL1), logZErr: math.Abs(val(s.LogZ) - val(s.TrueLogZ)), wall: s.WallSeconds,
			dELBO: math.NaN(), dIS: math.NaN()}
		if s.LogZErr != nil {
			// The sequences' error of their importance-sampled estimate
			// (their flow objectives learn no log Z).
			res.logZErr = *s.LogZErr
		}
		if s.ELBOIS != nil { // the diffusion samplers: Sendera et al.'s two Δ log Z
			res.dELBO, res.dIS = math.Abs(val(s.TrueLogZ)-val(s.ELBO)), math.Abs(val(s.TrueLogZ)-val(s.ELBOIS))
		}
		if s.StudentExact != nil {
			res.l1 = s.StudentExact.L1
		}
		rs = append(rs, res)
	}
	return rs, nil
}

// Write aggregates the finished runs into results.csv and results.md.
func (r ObjectivesRun) Write() (string, []string, error) {
	all, err := r.All()
	if err != nil {
		return "", nil, err
	}
	rs, err := r.collect(all)
	if err != nil {
		return "", nil, err
	}
	cell := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 10, 64)
	}
	writeCSV := func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"task", "objective", "method", "seed", "modes_found", "modes_total", "l1", "log_z_err", "elbo", "eubo", "delta_log_z_elbo", "delta_log_z_is", "wall_seconds"})
		for _, x := range rs {
			cw.Write([]string{x.task, x.objective, x.method, strconv.Itoa(x.seed), cell(x.modes), cell(x.modesTotal), cell(x.l1),
				cell(x.logZErr), cell(x.elbo), cell(x.eubo), cell(x.dELBO), cell(x.dIS), cell(x.wall)})
		}
		cw.Flush()
		return cw.Error()
	}
	var md bytes.Buffer
	r.markdown(&md, rs)
	if err := writeResults(r.Dir(), writeCSV, md.String()); err != nil {
		return "", nil, err
	}
	figs, err := objectiveFigures(filepath.Join(r.Dir(), "figures"), all)
	return md.String(), append([]string{"results.csv", "results.md"}, prefixed("figures/", figs)...), err
}

// markdown writes one table per task: each objective without and with the
// Teacher, mean ± std over the seeds of the numbers the task's family
// measures.
func (r ObjectivesRun) markdown(w io.Writer, rs []objectiveResult) {
	fmt.Fprintf(w, "# Objectives, with and without the Teacher\n\n")
	if r.O.Quick {
		fmt.Fprintf(w, "**--quick: one seed at a smoke budget (a fraction of the paper's); these numbers test the pipeline, not the objectives.**\n\n")
	}
	if r.Command != "" {
		fmt.Fprintf(w, "`%s`; mean ± std over the finished seeds (their count in brackets).\n\n", r.Command)
	}
	for _, t := range ObjectiveTasks {
		var rows []objectiveResult
		for _, x := range rs {
			if x.task == t.Name {
				rows = append(rows, x)
			}
		}
		if len(rows) == 0 {
			continue
		}
		cols := []struct {
			name string
			get  func(objectiveResult) float64
			prec int
		}{
			{"modes found", func(x objectiveResult) float64 { return x.modes }, 1},
			{"L1", func(x objectiveResult) float64 { return x.l1 }, -1},
			{"ELBO", func(x objectiveResult) float64 { return x.elbo }, 3},
			{"EUBO", func(x objectiveResult) float64 { return x.eubo }, 3},
			{"log Z error", func(x objectiveResult) float64 { return x.logZErr }, 3},
			{"Δ log Z", func(x objectiveResult) float64 { return x.dELBO }, 3},
			{"Δ log Z (IS)", func(x objectiveResult) float64 { return x.dIS }, 3},
		}
		var used []int
		for i, c := range cols {
			if slices.ContainsFunc(rows, func(x objectiveResult) bool { return !math.IsNaN(c.get(x)) }) {
				used = append(used, i)
			}
		}
		fmt.Fprintf(w, "## %s\n\n| objective | method |", t.Name)
		for _, i := range used {
			fmt.Fprintf(w, " %s |", cols[i].name)
		}
		fmt.Fprintf(w, " wall per run |\n|---|---|%s---|\n", strings.Repeat("---|", len(used)))
		for _, obj := range t.Objectives {
			for _, m := range []string{t.Without, t.With} {
				var sel []objectiveResult
				for _, x := range rows {
					if x.objective == obj && x.method == m {
						sel = append(sel, x)
					}
				}
				if len(sel) == 0 {
					continue
				}
				fmt.Fprintf(w, "| %s | %s (%d) |", obj, m, len(sel))
				for _, i := range used {
					var v []float64
					for _, x := range sel {
						if g := cols[i].get(x); !math.IsNaN(g) {
							v = append(v, g)
						}
					}
					mean, std := meanStd(v)
					dagger := ""
					if p, ok := publishedFor(t.published(), obj); ok && t.Comparable && len(v) > 0 {
						switch cols[i].name {
						case "Δ log Z":
							dagger = outside(mean, p.delta, p.deltaSD)
						case "Δ log Z (IS)":
							dagger = outside(mean, p.deltaIS, p.deltaISSD)
						}
					}
					if p := cols[i].prec; p < 0 { // spans decades (the grids' L1): 3 significant digits
						fmt.Fprintf(w, " %.3g ± %.2g%s |", mean, std, dagger)
					} else {
						fmt.Fprintf(w, " %.*f ± %.*f%s |", p, mean, p, std, dagger)
					}
				}
				var wall []float64
				for _, x := range sel {
					wall = append(wall, x.wall)
				}
				mw, _ := meanStd(wall)
				fmt.Fprintf(w, " %s |\n", fmtDuration(mw))
			}
		}
		var pub []publishedObjective
		for _, p := range publishedObjectives {
			if p.task == t.published() {
				pub = append(pub, p)
			}
		}
		for _, p := range pub {
			fmt.Fprintf(w, "| %s | published |", p.label)
			for _, i := range used {
				switch cols[i].name {
				case "Δ log Z":
					fmt.Fprintf(w, " %.3f ± %.3f |", p.delta, p.deltaSD)
				case "Δ log Z (IS)":
					fmt.Fprintf(w, " %.3f ± %.3f |", p.deltaIS, p.deltaISSD)
				default:
					fmt.Fprintf(w, " |")
				}
			}
			fmt.Fprintf(w, " |\n")
		}
		if len(pub) > 0 {
			fmt.Fprintf(w, "\nPublished: %s. Their Δ log Z is |log Z − log Ẑ| of the ELBO estimate, Δ log Z (IS) the importance-weighted one's (ours: ELBO and ELBO-IS, the final evaluation). ", publishedSource)
			if t.Comparable {
				fmt.Fprintf(w, "These runs use their settings (preset sendera; VarGrad with their exploration): † marks a mean outside their mean ± 2 std.\n")
			} else {
				fmt.Fprintf(w, "Their settings are not this table's (batch 300, 25,000 iterations, their network and σ²; exploration on VarGrad): a guide, not a test (the %s-sendera rows are the test).\n", t.Name)
			}
		}
		// The figure objectiveFigures draws from the same runs.
		fmt.Fprintf(w, "\n![%s: each objective's curve without and with the Teacher](figures/%s.png)\n\n", t.Name, t.Name)
	}
}

// publishedObjective is one published row of the objectives table:
// Δ log Z and Δ log Z^RW, mean and std, for an objective of the table
// (its label as published).
type publishedObjective struct {
	task, objective, label string
	delta, deltaSD         float64
	deltaIS, deltaISSD     float64
}

// publishedSource names where publishedObjectives come from.
const publishedSource = "Sendera et al. 2024, \"Improved off-policy training of diffusion samplers\" (NeurIPS 2024), Table 1, mean ± std over 5 runs"

// publishedObjectives are Sendera et al.'s rows for this table's
// objectives on its diffusion tasks (docs/design/diffusion-suite-presets.md,
// section 2.1).
var publishedObjectives = []publishedObjective{
	{"25gmm", "tb", "TB", 1.176, 0.109, 1.071, 0.112},
	{"25gmm", "vargrad", "VarGrad + Expl.", 0.615, 0.241, 0.487, 0.250},
	{"25gmm", "fl-subtb", "FL-SubTB", 1.127, 0.010, 1.020, 0.010},
	{"manywell", "tb", "TB", 4.01, 0.04, 2.67, 0.02},
	{"manywell", "vargrad", "VarGrad + Expl.", 4.01, 0.05, 2.69, 0.06},
	{"manywell", "fl-subtb", "FL-SubTB", 3.98, 0.07, 2.72, 0.05},
}

// publishedFor is the published row of objective obj on task, if any.
func publishedFor(task, obj string) (publishedObjective, bool) {
	for _, p := range publishedObjectives {
		if p.task == task && p.objective == obj {
			return p, true
		}
	}
	return publishedObjective{}, false
}

// outside is " †" when v lies outside mean ± 2 std.
func outside(v, mean, std float64) string {
	if math.Abs(v-mean) > 2*std {
		return " †"
	}
	return ""
}
