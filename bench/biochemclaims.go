package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Relation is how a Claim compares a method with others on one metric.
type Relation int

const (
	// Better holds when the method's mean is better than each other
	// method's: more modes, a higher ELBO, a lower EUBO.
	Better Relation = iota
	// ClearlyBetter holds when the method is better by more than the sum
	// of the two standard deviations: the mean ± std bands are apart.
	ClearlyBetter
	// Comparable holds when the means differ by at most the sum of the
	// standard deviations: the mean ± std bands overlap.
	Comparable
)

// String returns better, clearly better or comparable.
func (r Relation) String() string {
	switch r {
	case Better:
		return "better"
	case ClearlyBetter:
		return "clearly better"
	case Comparable:
		return "comparable"
	}
	return fmt.Sprintf("Relation(%d)", int(r))
}

// claimMetric is a final value a claim compares.
type claimMetric struct {
	get          func(BiochemResult) float64
	higherBetter bool
	prec         int
	phrase       [3]string // by Relation
}

// claimMetrics are the metrics of the claims: "modes" (modes found in
// training), "elbo" and "eubo".
var claimMetrics = map[string]claimMetric{
	"modes": {func(r BiochemResult) float64 { return float64(r.ModesSeen) }, true, 1,
		[3]string{"finds more modes than", "finds clearly more modes than", "finds about as many modes as"}},
	"elbo": {func(r BiochemResult) float64 { return r.ELBO }, true, 3,
		[3]string{"has a higher ELBO than", "has a clearly higher ELBO than", "has an ELBO comparable to"}},
	"eubo": {func(r BiochemResult) float64 { return r.EUBO }, false, 3,
		[3]string{"has a lower EUBO than", "has a clearly lower EUBO than", "has an EUBO comparable to"}},
}

// Claim is one mechanical check of a statement of the paper: that Method
// relates to each method of Than by Rel, on Metric ("modes", "elbo" or
// "eubo") of the final evaluations of Task's runs.
type Claim struct {
	// Statement is the paper's statement the claim checks (several claims
	// check one statement).
	Statement string
	Task      string
	Metric    string
	Method    string
	Than      []string
	Rel       Relation
}

// Text is the claim as a sentence, such as "Teacher + PER finds more
// modes than PER on rna".
func (c Claim) Text() string {
	phrase := c.Metric + " " + c.Rel.String() + " than"
	if m, ok := claimMetrics[c.Metric]; ok && int(c.Rel) >= 0 && int(c.Rel) < len(m.phrase) {
		phrase = m.phrase[c.Rel]
	}
	names := make([]string, len(c.Than))
	for i, t := range c.Than {
		names[i] = methodName(t)
	}
	return fmt.Sprintf("%s %s %s on %s", methodName(c.Method), phrase, joinAnd(names), c.Task)
}

// joinAnd joins "a", "a and b", "a, b and c".
func joinAnd(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// Verdict is the outcome of a claim.
type Verdict int

const (
	// NotEnoughRuns: a method of the claim has fewer than ClaimMinRuns
	// runs with the metric.
	NotEnoughRuns Verdict = iota
	// Holds: every method has enough runs and the claim's relation holds
	// against each method of Than.
	Holds
	// Fails: every method has enough runs and the relation fails against
	// some method of Than.
	Fails
)

// String returns "yes", "no" or "not enough runs".
func (v Verdict) String() string {
	switch v {
	case Holds:
		return "yes"
	case Fails:
		return "no"
	case NotEnoughRuns:
		return "not enough runs"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// ClaimMinRuns is the number of runs (seeds) every method of a claim
// needs for a verdict: a mean ± std needs two.
const ClaimMinRuns = 2

// ClaimCheck is a claim with its verdict and the numbers it rests on.
type ClaimCheck struct {
	Claim
	Verdict Verdict
	// Detail gives the numbers: "(a ± b vs c ± d)", with the other
	// methods' names when there are several, or the runs missing.
	Detail string
}

// Check judges the claim on the results rs (of any tasks and methods).
func (c Claim) Check(rs []BiochemResult) ClaimCheck {
	out := ClaimCheck{Claim: c}
	m, ok := claimMetrics[c.Metric]
	if !ok {
		out.Detail = fmt.Sprintf("(unknown metric %q)", c.Metric)
		return out
	}
	vals := func(method string) []float64 {
		var got []BiochemResult
		for _, r := range rs {
			if r.Task == c.Task && r.Method == method {
				got = append(got, r)
			}
		}
		return values(got, m.get)
	}
	// Runs first: a claim lacking some is not judged.
	var short []string
	for _, method := range append([]string{c.Method}, c.Than...) {
		if n := len(vals(method)); n < ClaimMinRuns {
			short = append(short, fmt.Sprintf("%s has %d", methodName(method), n))
		}
	}
	if len(short) > 0 {
		out.Detail = fmt.Sprintf("(%s; %d needed)", strings.Join(short, ", "), ClaimMinRuns)
		return out
	}
	ma, sa := meanStd(vals(c.Method))
	cell := func(mean, std float64) string { return fmt.Sprintf("%.*f ± %.*f", m.prec, mean, m.prec, std) }
	holds := true
	var others []string
	for _, t := range c.Than {
		mb, sb := meanStd(vals(t))
		gain := ma - mb // how much better the method is
		if !m.higherBetter {
			gain = -gain
		}
		switch c.Rel {
		case Better:
			holds = holds && gain > 0
		case ClearlyBetter:
			holds = holds && gain > sa+sb
		case Comparable:
			holds = holds && max(gain, -gain) <= sa+sb
		default:
			holds = false
		}
		if len(c.Than) == 1 {
			others = append(others, cell(mb, sb))
		} else {
			others = append(others, methodName(t)+" "+cell(mb, sb))
		}
	}
	out.Verdict = Fails
	if holds {
		out.Verdict = Holds
	}
	out.Detail = fmt.Sprintf("(%s vs %s)", cell(ma, sa), strings.Join(others, ", "))
	return out
}

// CheckClaims judges each claim on the results rs.
func CheckClaims(claims []Claim, rs []BiochemResult) []ClaimCheck {
	out := make([]ClaimCheck, len(claims))
	for i, c := range claims {
		out[i] = c.Check(rs)
	}
	return out
}

// The paper's statements on the sequence-design figure (§5.3; the claims
// listed in shared/reference/biochem.md).
const (
	stmtTeacherBuffers  = "The Teacher improves mode discovery with both buffers (Teacher + PRT over PRT, Teacher + PER over PER)"
	stmtTeacherOnPolicy = "The Teacher beats the on-policy methods (TB, ε-exploration) on every task"
	stmtTFBind8         = "On TFbind8 the Teacher's advantage shows in EUBO and modes, while its ELBO is comparable to PER's and PRT's"
	stmtRNA             = "On L14-RNA1 the Teacher beats PER and PRT in ELBO, EUBO and modes"
	stmtPERPRTSmall     = "PER and PRT differ little on QM9, TFbind8 and sEH"
	stmtPERLarge        = "PER is clearly better than PRT on the larger task, L14-RNA1"
	stmtTeacherPERBest  = "Teacher + PER is best overall"
)

// BiochemClaims are the paper's statements on the sequence-design figure
// as mechanical claims on the final values of the runs, in the paper's
// order of statements and, within one, of tasks (QM9, sEH, TFbind8,
// L14-RNA1) and metrics (modes, ELBO, EUBO).
var BiochemClaims = biochemClaims()

func biochemClaims() []Claim {
	var cs []Claim
	add := func(stmt, task, metric, method string, rel Relation, than ...string) {
		cs = append(cs, Claim{Statement: stmt, Task: task, Metric: metric, Method: method, Than: than, Rel: rel})
	}
	teachers := []string{"teacher-prt", "teacher-per"}
	metrics := []string{"modes", "elbo", "eubo"}
	for _, task := range biochemPaperOrder {
		add(stmtTeacherBuffers, task, "modes", "teacher-prt", Better, "prt")
		add(stmtTeacherBuffers, task, "modes", "teacher-per", Better, "per")
	}
	for _, task := range biochemPaperOrder {
		for _, t := range teachers {
			add(stmtTeacherOnPolicy, task, "modes", t, Better, "tb", "eps")
		}
	}
	for _, t := range teachers {
		add(stmtTFBind8, "tfbind8", "modes", t, Better, "prt", "per")
		add(stmtTFBind8, "tfbind8", "eubo", t, Better, "prt", "per")
		add(stmtTFBind8, "tfbind8", "elbo", t, Comparable, "prt", "per")
	}
	for _, t := range teachers {
		for _, m := range metrics {
			add(stmtRNA, "rna", m, t, Better, "prt", "per")
		}
	}
	for _, task := range []string{"qm9str", "tfbind8", "sehstr"} {
		for _, m := range metrics {
			add(stmtPERPRTSmall, task, m, "per", Comparable, "prt")
		}
	}
	for _, m := range metrics {
		add(stmtPERLarge, "rna", m, "per", ClearlyBetter, "prt")
	}
	for _, task := range biochemPaperOrder {
		for _, m := range metrics {
			add(stmtTeacherPERBest, task, m, "teacher-per", Better, slices.DeleteFunc(slices.Clone(BiochemMethods), func(x string) bool { return x == "teacher-per" })...)
		}
	}
	return cs
}

// The appendix's statements on TFbind8.
const (
	stmtAlpha    = "Mixing with α = 0.5 yields significantly better performance on TFbind8 (than the other α)"
	stmtLSTeach  = "The Teacher without local search still outperforms the Student with local search (both with PER)"
	stmtLSSynerg = "Local search with the Teacher further improves the EUBO"
)

// biochemAlphaClaims are the α appendix's statement as claims: Teacher +
// PER with α = 0.5 clearly better than with α = 0 and α = 1 in modes,
// ELBO and EUBO.
var biochemAlphaClaims = func() []Claim {
	var cs []Claim
	for _, m := range []string{"modes", "elbo", "eubo"} {
		cs = append(cs, Claim{Statement: stmtAlpha, Task: "tfbind8", Metric: m, Method: "teacher-per-alpha0.5", Than: []string{"teacher-per-alpha0", "teacher-per-alpha1"}, Rel: ClearlyBetter})
	}
	return cs
}()

// biochemLSClaims are the local-search appendix's statements as claims.
var biochemLSClaims = func() []Claim {
	var cs []Claim
	for _, m := range []string{"modes", "elbo", "eubo"} {
		cs = append(cs, Claim{Statement: stmtLSTeach, Task: "tfbind8", Metric: m, Method: "teacher-per", Than: []string{"per-ls"}, Rel: Better})
	}
	for _, m := range []string{"teacher-per-ls", "teacher-per-tls"} {
		cs = append(cs, Claim{Statement: stmtLSSynerg, Task: "tfbind8", Metric: "eubo", Method: m, Than: []string{"teacher-per"}, Rel: Better})
	}
	return cs
}()

// writeClaims writes the Claims section: the checks of the tasks that
// have runs, grouped by the paper's statement, with a tally.
func writeClaims(w io.Writer, checks []ClaimCheck, tasks []string) {
	fmt.Fprintln(w, "\n## Claims")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Each line checks one claim of the paper on the final values above (the paper's claims are about its "+
		"curves over the whole training; figure.png draws these runs' curves), mechanically: \"more\", "+
		"\"higher\" and \"lower\" compare the means; \"clearly\" asks that the mean ± std bands be apart (the means "+
		"differ by more than the sum of the stds); \"comparable\" and \"about as many\" that they overlap. A verdict needs "+
		"%d runs of every method it involves. Claims about tasks without runs are left out.\n", ClaimMinRuns)
	var kept []ClaimCheck
	for _, c := range checks {
		if slices.Contains(tasks, c.Task) {
			kept = append(kept, c)
		}
	}
	count := map[Verdict]int{}
	for _, c := range kept {
		count[c.Verdict]++
	}
	fmt.Fprintf(w, "\nOf %d claims: %d hold, %d fail, %d lack runs.\n", len(kept), count[Holds], count[Fails], count[NotEnoughRuns])
	stmt := ""
	for _, c := range kept {
		if c.Statement != stmt {
			stmt = c.Statement
			fmt.Fprintf(w, "\n### %s\n\n", stmt)
		}
		fmt.Fprintf(w, "- %s: **%s** %s\n", c.Text(), c.Verdict, c.Detail)
	}
}
