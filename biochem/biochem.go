package biochem

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
)

// Names lists the tasks Named knows, by their canonical names.
var Names = []string{"tfbind8", "qm9str", "sehstr", "rna"}

// aliases maps other accepted task names to canonical ones.
var aliases = map[string]string{"l14-rna1": "rna", "l14_rna1": "rna"}

// ScoreMin is the reference code's scale_reward_min: every raw score is
// clamped to at least ScoreMin before the reward exponent, and the
// evaluation's "real reward" is max(score, ScoreMin).
const ScoreMin = 1e-3

// Settings is the reference code's settings row of a task
// (discovery/exps/<task>/settings.yaml of alstn12088/adaptive-teacher).
// The settings shared by all tasks (batch sizes, buffer, learning rates,
// Teacher constants) are the trainer's.
type Settings struct {
	// Rounds is the number of training rounds (num_active_learning_rounds).
	Rounds int
	// Epsilon is the ε-exploration probability per step (explore_epsilon).
	Epsilon float64
	// EvalEvery is the evaluation period in rounds (eval_every_x_active_rounds);
	// the reference also evaluates after the last round.
	EvalEvery int
	// Beta is the reward exponent.
	Beta float64
	// RewardMax is the reward of the best string (scale_reward_max).
	RewardMax float64
	// ScoreMin is the clamp of the raw score (scale_reward_min).
	ScoreMin float64
	// Width is the hidden and embedding width of the SSR policy networks.
	Width int
	// EvalSamples is the number of Student and target samples per
	// evaluation (eval_num_samples).
	EvalSamples int
}

// Task is one sequence-design task: strings of Length tokens over an
// alphabet, a raw score, the reward built from it as in the reference code,
// the reference's mode set and what the evaluation needs of the target
// distribution p(x) = R(x)/Z. A Task is safe for concurrent use; its data
// are decoded on first use and shared by all Tasks of the same name.
type Task struct {
	name     string
	n        int
	symbols  []string
	extra    map[byte]int32 // other accepted input symbols (tfbind8: digits)
	allowed  string         // what Encode accepts, for error messages
	settings Settings

	// Reward: log R = max(logScale + beta·log max(score, ScoreMin) ⊕ addLog, clampLog),
	// with ⊕ the log-space sum and -Inf standing for "none".
	addLog, clampLog float64

	data func() *taskData
}

// taskData is a task's decoded data, shared and read-only.
type taskData struct {
	score    func(x []int32) float64 // raw score of one valid row
	logScale float64                 // log of the reward scale

	modes map[uint64]struct{}

	// Enumerable tasks: the log reward of every string by its number, and
	// the cumulative target probabilities for exact draws.
	logR []float64
	cdf  []float64

	logZ    float64
	hasLogZ bool

	stored []int32 // the reference's stored target samples, rows of n tokens
}

// Named returns the task called name: "tfbind8", "qm9str", "sehstr" or
// "rna" (alias "l14-rna1"); case is ignored.
func Named(name string) (*Task, error) {
	key := strings.ToLower(name)
	if a, ok := aliases[key]; ok {
		key = a
	}
	switch key {
	case "tfbind8":
		return tfbind8Task(), nil
	case "qm9str":
		return qm9strTask(), nil
	case "sehstr":
		return sehstrTask(), nil
	case "rna":
		return rnaTask()
	}
	return nil, fmt.Errorf("biochem: task %q is unknown (allowed: %s, or l14-rna1 for rna)", name, strings.Join(Names, ", "))
}

// Name is the task's canonical name.
func (t *Task) Name() string { return t.name }

// Length is the number of tokens of every string.
func (t *Task) Length() int { return t.n }

// Alphabet returns the printed form of each token, indexed by token. The
// caller may modify the returned slice.
func (t *Task) Alphabet() []string { return append([]string(nil), t.symbols...) }

// NumStrings is the number of strings, |A|^Length.
func (t *Task) NumStrings() uint64 {
	s := uint64(1)
	for range t.n {
		s *= uint64(len(t.symbols))
	}
	return s
}

// Settings returns the reference settings of the task.
func (t *Task) Settings() Settings { return t.settings }

// Encode returns the tokens of s. Its error names the bad length or the bad
// symbol and its position, and what is allowed.
func (t *Task) Encode(s string) ([]int32, error) {
	if len(s) != t.n {
		return nil, fmt.Errorf("biochem: %s: %q has length %d, want %d symbols of %s", t.name, s, len(s), t.n, t.allowed)
	}
	x := make([]int32, t.n)
	for i := 0; i < len(s); i++ {
		tok, ok := t.token(s[i])
		if !ok {
			return nil, fmt.Errorf("biochem: %s: %q: symbol %q at position %d is not one of %s", t.name, s, s[i], i, t.allowed)
		}
		x[i] = tok
	}
	return x, nil
}

// token is the token of one input symbol.
func (t *Task) token(c byte) (int32, bool) {
	for k, sym := range t.symbols {
		if sym[0] == c {
			return int32(k), true
		}
	}
	tok, ok := t.extra[c]
	return tok, ok
}

// Decode returns the printed form of the row x. It panics if x is not a
// valid row (wrong length or a token outside [0, |A|)), a programmer error.
func (t *Task) Decode(x []int32) string {
	if err := t.check(x); err != nil {
		panic(err)
	}
	var b strings.Builder
	for _, tok := range x {
		b.WriteString(t.symbols[tok])
	}
	return b.String()
}

// check reports whether x is one valid row.
func (t *Task) check(x []int32) error {
	if len(x) != t.n {
		return fmt.Errorf("biochem: %s: row has %d tokens, want %d", t.name, len(x), t.n)
	}
	for i, tok := range x {
		if tok < 0 || int(tok) >= len(t.symbols) {
			return fmt.Errorf("biochem: %s: token %d at position %d is outside [0, %d)", t.name, tok, i, len(t.symbols))
		}
	}
	return nil
}

// rows checks the first n rows of xs and the size of out.
func (t *Task) rows(xs []int32, n int, out []float64) error {
	if n < 0 || len(xs) < n*t.n || len(out) < n {
		return fmt.Errorf("biochem: %s: %d rows need %d tokens and %d outputs, have %d and %d", t.name, n, n*t.n, n, len(xs), len(out))
	}
	for r := range n {
		if err := t.check(xs[r*t.n : (r+1)*t.n]); err != nil {
			return fmt.Errorf("%w (row %d)", err, r)
		}
	}
	return nil
}

// Index is the number of the row x in base |A|, first token most
// significant: the position of x in the lexicographic order of all strings.
// It panics if x is not a valid row, a programmer error.
func (t *Task) Index(x []int32) uint64 {
	if err := t.check(x); err != nil {
		panic(err)
	}
	return index(x, len(t.symbols))
}

// index is Index without the check.
func index(x []int32, a int) uint64 {
	var i uint64
	for _, tok := range x {
		i = i*uint64(a) + uint64(tok)
	}
	return i
}

// unindex writes the row numbered i into x.
func unindex(i uint64, a int, x []int32) {
	for k := len(x) - 1; k >= 0; k-- {
		x[k] = int32(i % uint64(a))
		i /= uint64(a)
	}
}

// Score writes the raw score of the first n rows of xs (row-major, Length
// tokens each) into out: TFbind8 y, QM9 r, sEH proxy p, RNA binding
// fitness f. It returns an error, and writes nothing, if a token is outside
// the alphabet or the slices are too short.
func (t *Task) Score(xs []int32, n int, out []float64) error {
	if err := t.rows(xs, n, out); err != nil {
		return err
	}
	d := t.data()
	for r := range n {
		out[r] = d.score(xs[r*t.n : (r+1)*t.n])
	}
	return nil
}

// RealReward writes max(score, ScoreMin) of the first n rows into out: the
// reference evaluation's "real reward" (trainers.evaluate and the tasks'
// real_reward), which it averages as the expected reward of the Student's
// samples and whose log it correlates with the Student's log P_F over target
// samples. Errors are those of Score.
func (t *Task) RealReward(xs []int32, n int, out []float64) error {
	if err := t.Score(xs, n, out); err != nil {
		return err
	}
	for r := range n {
		out[r] = max(out[r], ScoreMin)
	}
	return nil
}

// LogReward writes log R of the first n rows into out, R being the reward
// the reference code trains on (see the package documentation), computed in
// log space. Errors are those of Score.
func (t *Task) LogReward(xs []int32, n int, out []float64) error {
	if err := t.rows(xs, n, out); err != nil {
		return err
	}
	d := t.data()
	for r := range n {
		out[r] = t.logReward(d, d.score(xs[r*t.n:(r+1)*t.n]))
	}
	return nil
}

// logReward is log R of a raw score.
func (t *Task) logReward(d *taskData, score float64) float64 {
	v := d.logScale + t.settings.Beta*math.Log(max(score, ScoreMin))
	if !math.IsInf(t.addLog, -1) {
		v = logAddExp(v, t.addLog)
	}
	return max(v, t.clampLog)
}

// logAddExp is log(e^a + e^b) for finite a, b.
func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// IsMode reports whether the row x is one of the reference's modes. It
// panics if x is not a valid row, a programmer error.
func (t *Task) IsMode(x []int32) bool {
	_, ok := t.data().modes[t.Index(x)]
	return ok
}

// NumModes is the size of the reference's mode set.
func (t *Task) NumModes() int { return len(t.data().modes) }

// Modes returns the reference's modes as rows of Length tokens, in
// lexicographic order.
func (t *Task) Modes() []int32 {
	d := t.data()
	idx := make([]uint64, 0, len(d.modes))
	for i := range d.modes {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	out := make([]int32, len(idx)*t.n)
	for r, i := range idx {
		unindex(i, len(t.symbols), out[r*t.n:(r+1)*t.n])
	}
	return out
}

// LogZ returns log Σ_x R(x) over all strings, NaN where it is not known
// (target.LogZer). See the package documentation for how each task's
// value is obtained.
func (t *Task) LogZ() float64 {
	d := t.data()
	if !d.hasLogZ {
		return math.NaN()
	}
	return d.logZ
}

// ExactTarget reports whether TargetSamples draws fresh exact samples (the
// enumerable tasks tfbind8 and qm9str) rather than returning the reference's
// stored set (sehstr, rna).
func (t *Task) ExactTarget() bool { return t.data().cdf != nil }

// NumStoredSamples is the size of the reference's stored target sample set,
// 0 for the tasks that draw exact samples.
func (t *Task) NumStoredSamples() int { return len(t.data().stored) / t.n }

// TargetSamples returns n samples of the target p(x) = R(x)/Z as n rows of
// Length tokens: what the reference's EUBO and correlation use. When
// ExactTarget is true they are exact independent draws using only rng;
// otherwise they are the first n of the reference's stored samples, in file
// order, rng is unused (it may be nil), and n larger than NumStoredSamples
// is an error.
func (t *Task) TargetSamples(n int, rng *rand.Rand) ([]int32, error) {
	if n < 0 {
		return nil, fmt.Errorf("biochem: %s: %d target samples requested", t.name, n)
	}
	d := t.data()
	if d.cdf == nil {
		if m := len(d.stored) / t.n; n > m {
			return nil, fmt.Errorf("biochem: %s: %d target samples requested, the reference stores %d", t.name, n, m)
		}
		return append([]int32(nil), d.stored[:n*t.n]...), nil
	}
	out := make([]int32, n*t.n)
	total := d.cdf[len(d.cdf)-1]
	for r := range n {
		u := rng.Float64() * total
		// The first string whose cumulative mass exceeds u; strings of zero
		// mass are never chosen.
		i := sort.Search(len(d.cdf), func(k int) bool { return d.cdf[k] > u })
		if i == len(d.cdf) {
			i-- // u rounded up to total
		}
		unindex(uint64(i), len(t.symbols), out[r*t.n:(r+1)*t.n])
	}
	return out, nil
}

// enumerate fills d.logR, d.cdf and d.logZ from d.score over all strings.
func (t *Task) enumerate(d *taskData) {
	size := int(t.NumStrings())
	x := make([]int32, t.n)
	d.logR = make([]float64, size)
	top := math.Inf(-1)
	for i := range size {
		unindex(uint64(i), len(t.symbols), x)
		d.logR[i] = t.logReward(d, d.score(x))
		top = max(top, d.logR[i])
	}
	// Cumulative masses relative to the largest reward, so none overflows.
	d.cdf = make([]float64, size)
	var sum float64
	for i, l := range d.logR {
		sum += math.Exp(l - top)
		d.cdf[i] = sum
	}
	d.logZ = top + math.Log(sum)
	d.hasLogZ = true
}
