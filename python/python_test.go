package python

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/discrete"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/env/sequence"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/seqtrain"
	"github.com/gfngo/gfn/timenet"
	"github.com/gfngo/gfn/train"
)

// python returns Debian's python3 (or the first python3 on PATH), or
// skips. Whether it has torch and pandas, compare.py tells (exit status
// skipStatus): importing torch takes seconds, and is done once.
func python(t *testing.T) string {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		var lerr error
		if py, lerr = exec.LookPath("python3"); lerr != nil {
			t.Skip("no python3")
		}
	}
	return py
}

// skipStatus is compare.py's exit status when torch or pandas is missing.
const skipStatus = 77

// gcTask is a sequence task of DNA 6-mers: log R counts the G-then-C steps.
type gcTask struct{}

func (gcTask) Length() int        { return 6 }
func (gcTask) Alphabet() []string { return []string{"A", "C", "G", "T"} }
func (gcTask) LogReward(xs []int32, n int, out []float64) error {
	for b := range n {
		x := xs[b*6 : (b+1)*6]
		out[b] = 0
		for i := 0; i+1 < len(x); i++ {
			if x[i] == 2 && x[i+1] == 1 {
				out[b]++
			}
		}
	}
	return nil
}

// The cases the Python side evaluates, with gfn's values beside them.
type gridCase struct {
	Dir     string      `json:"dir"`
	Agent   string      `json:"agent"`
	Cells   [][]int32   `json:"cells"`
	LogPF   [][]float64 `json:"-"`
	LogFlow []float64   `json:"-"`
	LogZ    *float64    `json:"-"`
}

type diffusionBlock struct {
	Step  int         `json:"step"`
	X     [][]float32 `json:"x"`
	XNext [][]float32 `json:"x_next"`
	Out   [][]float64 `json:"-"`
	LogPF []float64   `json:"-"`
	Flow  []float64   `json:"-"` // the flow network's outputs, if any
}

type diffusionCase struct {
	Dir    string            `json:"dir"`
	Agent  string            `json:"agent"`
	Blocks []*diffusionBlock `json:"blocks"`
	LogZ   *float64          `json:"-"`
}

type sequenceCase struct {
	Dir      string      `json:"dir"`
	Agent    string      `json:"agent"`
	Alphabet int         `json:"alphabet,omitempty"`
	States   [][]int32   `json:"states"`
	Logits   [][]float64 `json:"-"`
	LogPF    [][]float64 `json:"-"`
	LogFlow  []float64   `json:"-"`
	LogZ     *float64    `json:"-"`
}

type cases struct {
	Grid      []*gridCase      `json:"grid"`
	Diffusion []*diffusionCase `json:"diffusion"`
	Sequence  []*sequenceCase  `json:"sequence"`
	Metrics   []string         `json:"metrics"`
	Docs      struct {
		Path string            `json:"path"`
		Runs map[string]string `json:"runs"` // the docs' run directories → the test's
	} `json:"docs"`
}

// What the Python side returns (null for -inf).
type results struct {
	Grid []struct {
		LogPF   [][]*float64 `json:"log_pf"`
		LogFlow []float64    `json:"log_flow"`
		LogZ    *float64     `json:"log_z"`
	} `json:"grid"`
	Diffusion []struct {
		Blocks []struct {
			Out   [][]float64 `json:"out"`
			LogPF []float64   `json:"log_pf"`
			Flow  []float64   `json:"log_flow"`
		} `json:"blocks"`
		LogZ *float64 `json:"log_z"`
	} `json:"diffusion"`
	Sequence []struct {
		Logits  [][]*float64 `json:"logits"`
		LogPF   [][]*float64 `json:"log_pf"`
		LogFlow []float64    `json:"log_flow"`
		LogZ    *float64     `json:"log_z"`
	} `json:"sequence"`
	Metrics []struct {
		Rows           int      `json:"rows"`
		Columns        []string `json:"columns"`
		Steps          int      `json:"summary_steps"`
		Task           string   `json:"summary_task"`
		CurveMatches   bool     `json:"curve_matches_checkpoint"`
		CheckpointRows int      `json:"checkpoint_rows"`
	} `json:"metrics"`
	Corrupt string `json:"corrupt"`
	Docs    []struct {
		Line  int    `json:"line"`
		Error string `json:"error"`
	} `json:"docs"`
	SequenceTasks map[string][2]int `json:"sequence_tasks"`
	CRC32C        map[string]uint32 `json:"crc32c"`
}

// TestPythonMatchesGo trains a small run of every family, computes the
// policies' log-probabilities (and the diffusion networks' outputs) of
// fixed inputs with gfn, and checks that gfn_load.py computes the same
// from the checkpoints with PyTorch, to float32 precision; and that its
// metrics() reads metrics.csv and summary.json.
func TestPythonMatchesGo(t *testing.T) {
	py := python(t)
	start := time.Now()
	ctx := context.Background()
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var cs cases

	// The grid: a Teacher run (TB) and a DB run (a state-flow head).
	grid, err := hypergrid.New(3, 6, hypergrid.Original)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		name   string
		method train.Method
		obj    train.Objective
		agents []string
	}{{"grid-teacher", train.MethodTeacher, train.ObjectiveTB, []string{"student", "teacher"}}, {"grid-db", train.MethodTB, train.ObjectiveDB, []string{"student"}}} {
		cfg := train.DefaultConfig()
		cfg.Method, cfg.Objective, cfg.Hidden, cfg.RewardCalls = g.method, g.obj, []int{32, 32}, 16*40
		dir := filepath.Join(root, g.name)
		if _, err := train.Run(ctx, grid, cfg, train.RunOptions{Options: run.Options{OutDir: dir, NoFigures: true}}); err != nil {
			t.Fatal(err)
		}
		tr, err := train.Load(dir, grid)
		if err != nil {
			t.Fatal(err)
		}
		cs.Metrics = append(cs.Metrics, dir)
		for _, name := range g.agents {
			a := tr.Student
			if name == "teacher" {
				a = tr.Teacher
			}
			c := newGridCase(t, grid, dir, name, a.Model)
			c.LogZ = logZ(a.LogZ)
			cs.Grid = append(cs.Grid, c)
		}
	}

	// Diffusion: the reference network (3 joint layers, a learned
	// variance) on 25GMM, the PIS network on the funnel (d = 10), and a
	// flow objective's Student with its flow network on 25GMM.
	funnel, err := energy.Named("funnel")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		name string
		e    energy.Energy
		net  timenet.Config
		lv   bool
		obj  string
	}{{"diffusion-reference", energy.GMM25{}, timenet.Config{Hidden: 16, Harmonics: 8, JointLayers: 3}, true, ""},
		{"diffusion-pis", funnel, timenet.Config{Arch: timenet.PIS, Hidden: 16, Harmonics: 8}, false, ""},
		{"diffusion-flow", energy.GMM25{}, timenet.Config{Hidden: 16, Harmonics: 8}, true, "fl-subtb"}} {
		cfg := diffusion.DefaultConfig()
		cfg.Method, cfg.Net, cfg.LearnedVariance, cfg.Objective = diffusion.MethodTeacher, d.net, d.lv, d.obj
		cfg.Steps, cfg.Batch, cfg.Iterations = 10, 16, 30
		cfg.Student.LR, cfg.Teacher.LR = 1e-2, 1e-2 // outputs well away from their zero start
		dir := filepath.Join(root, d.name)
		if _, err := diffusion.Run(ctx, d.e, cfg, diffusion.RunOptions{Options: run.Options{OutDir: dir, NoFigures: true}, Task: d.name, EvalSamples: 64, FinalSamples: 64}); err != nil {
			t.Fatal(err)
		}
		tr, err := diffusion.Load(dir, d.e)
		if err != nil {
			t.Fatal(err)
		}
		cs.Metrics = append(cs.Metrics, dir)
		for _, a := range []struct {
			name string
			a    *diffusion.Agent
		}{{"student", tr.Student}, {"teacher", tr.Teacher}} {
			var flow timenet.Net
			if a.name == "student" {
				flow = tr.FlowNet()
			}
			c := newDiffusionCase(tr.Proc, dir, a.name, a.a.Model, flow, rng)
			c.LogZ = logZ(a.a.LogZ)
			cs.Diffusion = append(cs.Diffusion, c)
		}
	}

	// Sequences: the SSR policy on tfbind8 (prepend-append, Teacher +
	// PER; the loader knows the task's alphabet) and the mlp policy on a
	// task of the test's own (append-only, DB: a state-flow head).
	tfbind8, err := biochem.Named("tfbind8")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name     string
		task     seqtrain.Task
		policy   seqtrain.Policy
		mdp      string
		obj      string
		method   seqtrain.Method
		alphabet int // given to the loader (0: the loader's table)
	}{{"seq-ssr", tfbind8, seqtrain.Policy{Kind: "ssr", Hidden: 16, Embed: 8}, "pa", "", seqtrain.TeacherPER, 0},
		{"seq-ssr-db", tfbind8, seqtrain.Policy{Kind: "ssr", Hidden: 16, Embed: 8}, "pa", "db", seqtrain.PER, 0},
		{"seq-mlp", gcTask{}, seqtrain.Policy{Kind: "mlp", Hidden: 16}, "append", "db", seqtrain.PER, 4}} {
		cfg := seqtrain.DefaultConfig()
		cfg.Method, cfg.Policy, cfg.MDP, cfg.Objective, cfg.Rounds = s.method, s.policy, s.mdp, s.obj, 20
		cfg.Student.LR, cfg.Teacher.LR = 1e-2, 1e-2
		dir := filepath.Join(root, s.name)
		name := "gc"
		if s.task == seqtrain.Task(tfbind8) {
			name = tfbind8.Name()
		}
		if _, err := seqtrain.Run(ctx, s.task, cfg, seqtrain.RunOptions{Options: run.Options{OutDir: dir, NoFigures: true}, EvalSamples: 64, Task: name}); err != nil {
			t.Fatal(err)
		}
		tr, err := seqtrain.Load(dir, s.task)
		if err != nil {
			t.Fatal(err)
		}
		newEnv := sequence.NewPrependAppend
		if s.mdp == "append" {
			newEnv = sequence.NewAppend
		}
		env, err := newEnv(len(s.task.Alphabet()), s.task.Length(), s.task.LogReward)
		if err != nil {
			t.Fatal(err)
		}
		cs.Metrics = append(cs.Metrics, dir)
		for _, a := range []struct {
			name string
			a    *seqtrain.Agent
		}{{"student", tr.Student}, {"teacher", tr.Teacher}} {
			if a.a == nil {
				continue
			}
			c := newSequenceCase(t, env, dir, a.name, s.alphabet, a.a.Model, rng)
			c.LogZ = logZ(a.a.LogZ)
			cs.Sequence = append(cs.Sequence, c)
		}
	}

	// docs/python.md's Python blocks, on these runs.
	cs.Docs.Path = filepath.Join("..", "docs", "python.md")
	cs.Docs.Runs = map[string]string{
		"runs/hypergrid-d4-H16-teacher-seed0": filepath.Join(root, "grid-teacher"),
		"runs/25gmm-teacher-seed0":            filepath.Join(root, "diffusion-pis"),
		"runs/tfbind8-teacher-per-seed0":      filepath.Join(root, "seq-ssr"),
	}
	trained := time.Since(start)

	// The Python side.
	in, out := filepath.Join(root, "cases.json"), filepath.Join(root, "results.json")
	b, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(pctx, py, filepath.Join("testdata", "compare.py"), in, out)
	cmd.Env = append(os.Environ(), "PYTHONPATH=.", "PYTHONDONTWRITEBYTECODE=1")
	if o, err := cmd.CombinedOutput(); err != nil {
		if e, ok := err.(*exec.ExitError); ok && e.ExitCode() == skipStatus {
			t.Skipf("%s: %s(apt-get install python3-torch python3-pandas)", py, o)
		}
		t.Fatalf("%s: %v\n%s", cmd, err, o)
	}
	b, err = os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res results
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("trained the runs in %v, Python took %v", trained.Round(time.Millisecond), (time.Since(start) - trained).Round(time.Millisecond))

	// Every value within float32 precision: |py − go| ≤ 1e-5·max(|go|, 1)
	// for log-probabilities; for the diffusion outputs the scale is the
	// block's largest output.
	const tol = 1e-5
	dev := deviations{}
	if len(res.Grid) != len(cs.Grid) || len(res.Diffusion) != len(cs.Diffusion) || len(res.Sequence) != len(cs.Sequence) || len(res.Metrics) != len(cs.Metrics) {
		t.Fatalf("Python returned %d/%d/%d/%d results for %d/%d/%d/%d cases", len(res.Grid), len(res.Diffusion), len(res.Sequence), len(res.Metrics), len(cs.Grid), len(cs.Diffusion), len(cs.Sequence), len(cs.Metrics))
	}
	for i, c := range cs.Grid {
		r := res.Grid[i]
		where := fmt.Sprintf("grid %s %s", filepath.Base(c.Dir), c.Agent)
		checkLogZ(t, where, c.LogZ, r.LogZ)
		dev.matrix(t, "grid log P_F", where, c.LogPF, r.LogPF, 1)
		if c.LogFlow != nil {
			dev.vector(t, "grid log F", where, c.LogFlow, r.LogFlow, 1)
		}
	}
	for i, c := range cs.Diffusion {
		r := res.Diffusion[i]
		checkLogZ(t, "diffusion "+filepath.Base(c.Dir)+" "+c.Agent, c.LogZ, r.LogZ)
		if len(r.Blocks) != len(c.Blocks) {
			t.Fatalf("diffusion %s: %d blocks, want %d", c.Dir, len(r.Blocks), len(c.Blocks))
		}
		for k, blk := range c.Blocks {
			where := fmt.Sprintf("diffusion %s %s step %d", filepath.Base(c.Dir), c.Agent, blk.Step)
			scale := 0.0
			for _, row := range blk.Out {
				for _, v := range row {
					scale = max(scale, math.Abs(v))
				}
			}
			if scale < 1e-3 {
				t.Errorf("%s: the outputs are at most %g: the network is barely trained, the check weak", where, scale)
			}
			dev.matrix(t, "diffusion outputs", where, blk.Out, ptrs(r.Blocks[k].Out), scale)
			dev.vector(t, "diffusion log P_F", where, blk.LogPF, r.Blocks[k].LogPF, 1)
			if blk.Flow != nil {
				dev.vector(t, "diffusion log F", where, blk.Flow, r.Blocks[k].Flow, 1)
			} else if r.Blocks[k].Flow != nil {
				t.Errorf("%s: a flow network in Python, none in gfn", where)
			}
		}
	}
	for i, c := range cs.Sequence {
		r := res.Sequence[i]
		where := fmt.Sprintf("sequence %s %s", filepath.Base(c.Dir), c.Agent)
		checkLogZ(t, where, c.LogZ, r.LogZ)
		dev.matrix(t, "sequence logits", where, c.Logits, r.Logits, 1)
		dev.matrix(t, "sequence log P_F", where, c.LogPF, r.LogPF, 1)
		if c.LogFlow != nil {
			dev.vector(t, "sequence log F", where, c.LogFlow, r.LogFlow, 1)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(dev)) {
		d := dev[name]
		t.Logf("%-18s %5d values, max |py−go| %.3g, max relative %.3g", name, d.n, d.abs, d.rel)
		if d.rel > tol {
			t.Errorf("%s: max relative deviation %.3g > %g", name, d.rel, tol)
		}
	}

	// metrics(): metrics.csv's rows and columns, summary.json, and the
	// checkpoint's copy of the curve.
	for i, dir := range cs.Metrics {
		r := res.Metrics[i]
		rows, cols := readCSV(t, filepath.Join(dir, "metrics.csv"))
		var sum struct {
			Steps int    `json:"steps"`
			Task  string `json:"task"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		if r.Rows != rows || fmt.Sprint(r.Columns) != fmt.Sprint(cols) || r.Steps != sum.Steps || r.Task != sum.Task || !r.CurveMatches || r.CheckpointRows != rows {
			t.Errorf("metrics(%s) = %d rows %v, summary steps %d task %q, checkpoint curve %d rows (equal: %v); want %d rows %v, steps %d task %q",
				filepath.Base(dir), r.Rows, r.Columns, r.Steps, r.Task, r.CheckpointRows, r.CurveMatches, rows, cols, sum.Steps, sum.Task)
		}
	}
	// The docs' blocks ran; the loader's table of sequence tasks is
	// biochem's.
	if len(res.Docs) < 5 {
		t.Errorf("%d Python blocks in %s, want at least 5", len(res.Docs), cs.Docs.Path)
	}
	for _, b := range res.Docs {
		if b.Error != "" {
			t.Errorf("%s: the Python block at line %d: %s", cs.Docs.Path, b.Line, b.Error)
		}
	}
	for _, name := range append([]string{"l14-rna1"}, biochem.Names...) {
		task, err := biochem.Named(name)
		if err != nil {
			t.Logf("biochem task %s: %v", name, err)
			continue
		}
		want := [2]int{len(task.Alphabet()), task.Length()}
		if got, ok := res.SequenceTasks[name]; !ok || got != want {
			t.Errorf("gfn_load.SEQUENCE_TASKS[%q] = %v (listed: %v), want (alphabet, length) %v", name, got, ok, want)
		}
	}
	// gfn_load's CRC-32C, byte by byte and chunked, is Go's.
	if len(res.CRC32C) == 0 {
		t.Error("no CRC-32C values from Python")
	}
	for k, got := range res.CRC32C {
		n, err := strconv.Atoi(k)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * i % 251)
		}
		if want := crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)); got != want {
			t.Errorf("gfn_load.crc32c of %d bytes = %#x, want %#x", n, got, want)
		}
	}
	if res.Corrupt == "" {
		t.Error("a checkpoint with a flipped byte in a weight loaded without error")
	} else {
		t.Logf("a flipped byte: %s", res.Corrupt)
	}
}

// newGridCase evaluates the masked log-softmax of agent's policy m at every
// non-terminal cell of the grid (and its state flow, if it has one).
func newGridCase(t *testing.T, g *hypergrid.Grid, dir, agent string, m discrete.Model) *gridCase {
	c := &gridCase{Dir: dir, Agent: agent}
	w, na := g.StateLen(), g.NumActions()
	var states []int32
	var mask []bool
	s := make([]int32, w)
	for i := range g.NumStates() {
		g.State(i, s)
		if g.IsTerminal(s) {
			continue
		}
		c.Cells = append(c.Cells, append([]int32(nil), s[:g.D]...))
		states = append(states, s...)
		mk := make([]bool, na)
		g.ForwardMask(s, mk)
		mask = append(mask, mk...)
	}
	rows := len(c.Cells)
	out := m.Forward(states, rows)
	var narrow, logp nn.Matrix
	nn.LogSoftmax(&logp, discrete.Narrow(&narrow, out, na), mask)
	for r := range rows {
		c.LogPF = append(c.LogPF, f64s(logp.Row(r)))
		if out.Cols > na {
			c.LogFlow = append(c.LogFlow, float64(out.At(r, na)))
		}
	}
	if rows < 50 {
		t.Fatalf("only %d non-terminal cells", rows)
	}
	return c
}

// newDiffusionCase evaluates net's outputs and one step's log P_F at three
// steps (the first, a middle one, the last) on random states.
func newDiffusionCase(p diffusion.Process, dir, agent string, net, flow timenet.Net, rng *rand.Rand) *diffusionCase {
	c := &diffusionCase{Dir: dir, Agent: agent}
	d, n, dt := p.Dim, 12, 1/float64(p.Steps)
	for _, i := range []int{0, p.Steps / 2, p.Steps - 1} {
		b := &diffusionBlock{Step: i}
		ti := float32(float64(i) * dt)
		x := nn.NewMatrix(n, d)
		for j := range x.Data {
			x.Data[j] = float32(rng.NormFloat64() * math.Sqrt(p.Sigma2*float64(ti)+0.5))
		}
		if flow != nil {
			for _, v := range flow.Forward(x, []float32{ti}).Data {
				b.Flow = append(b.Flow, float64(v))
			}
		}
		out := net.Forward(x, []float32{ti})
		for r := range n {
			o := out.Row(r)
			xr, xn := x.Row(r), make([]float32, d)
			var lp float64
			for k := range d {
				u := float64(o[k])
				if p.Clip > 0 {
					u = max(-p.Clip, min(p.Clip, u))
				}
				lv := math.Log(p.Sigma2)
				if p.LearnedVariance {
					lv += p.VarianceRange * math.Tanh(float64(o[d+k]))
				}
				v := dt * math.Exp(lv)
				mean := float64(xr[k]) + dt*u
				xn[k] = float32(mean + math.Sqrt(v)*rng.NormFloat64())
				e := float64(xn[k]) - mean
				lp += e*e/v + math.Log(2*math.Pi) + math.Log(dt) + lv
			}
			b.X = append(b.X, append([]float32(nil), xr...))
			b.XNext = append(b.XNext, xn)
			b.Out = append(b.Out, f64s(o))
			b.LogPF = append(b.LogPF, -lp/2)
		}
		c.Blocks = append(c.Blocks, b)
	}
	return c
}

// newSequenceCase evaluates the policy m's logits and log P_F at random
// non-terminal states of every length (and its state flow, if any).
func newSequenceCase(t *testing.T, env *sequence.Env, dir, agent string, alphabet int, m discrete.Model, rng *rand.Rand) *sequenceCase {
	c := &sequenceCase{Dir: dir, Agent: agent, Alphabet: alphabet}
	w, na := env.StateLen(), env.NumActions()
	var states []int32
	var mask []bool
	s, mk := make([]int32, w), make([]bool, na)
	for l := 0; l <= env.Length(); l++ {
		for range 6 {
			env.Init(s)
			for range l {
				env.Step(s, env.AppendAction(rng.IntN(env.Alphabet())))
			}
			if l > 0 && rng.IntN(3) == 0 { // some one-token strings: fewer children
				for k := range l {
					s[2+k] = s[2]
				}
			}
			c.States = append(c.States, append([]int32{}, env.Tokens(s)...))
			states = append(states, s...)
			env.ForwardMask(s, mk)
			mask = append(mask, mk...)
		}
	}
	rows := len(c.States)
	out := m.Forward(states, rows)
	var narrow, logp nn.Matrix
	logits := discrete.Narrow(&narrow, out, na)
	nn.LogSoftmax(&logp, logits, mask)
	for r := range rows {
		lg := f64s(logits.Row(r))
		for a, ok := range mask[r*na : (r+1)*na] {
			if !ok {
				lg[a] = math.Inf(-1) // the mlp's outputs there are not logits
			}
		}
		c.Logits = append(c.Logits, lg)
		c.LogPF = append(c.LogPF, f64s(logp.Row(r)))
		if out.Cols > na {
			c.LogFlow = append(c.LogFlow, float64(out.At(r, na)))
		}
	}
	return c
}

// logZ is an agent's log Z parameter's value (nil without one).
func logZ(p *nn.Param) *float64 {
	if p == nil {
		return nil
	}
	v := float64(p.Value[0])
	return &v
}

// checkLogZ wants the loader's log Z to be the parameter's float32 value.
func checkLogZ(t *testing.T, where string, want, got *float64) {
	t.Helper()
	if (want == nil) != (got == nil) || want != nil && *want != *got {
		t.Errorf("%s: log Z %s, want %s", where, fmtPtr(got), fmtPtr(want))
	}
}

// deviations collects the largest deviations by kind of value.
type deviations map[string]*struct {
	n        int
	abs, rel float64
}

// matrix compares want with got (nil for -inf), scale the smallest
// magnitude a deviation is relative to.
func (d deviations) matrix(t *testing.T, kind, where string, want [][]float64, got [][]*float64, scale float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s %s: %d rows, want %d", kind, where, len(got), len(want))
		return
	}
	for r := range want {
		if len(got[r]) != len(want[r]) {
			t.Errorf("%s %s row %d: %d values, want %d", kind, where, r, len(got[r]), len(want[r]))
			return
		}
		for j, w := range want[r] {
			g := got[r][j]
			switch {
			case math.IsInf(w, -1) && g == nil:
			case math.IsInf(w, -1) || g == nil:
				t.Errorf("%s %s [%d][%d] = %v, want %v", kind, where, r, j, fmtPtr(g), w)
			default:
				d.add(kind, w, *g, scale)
			}
		}
	}
}

func (d deviations) vector(t *testing.T, kind, where string, want, got []float64, scale float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s %s: %d values, want %d", kind, where, len(got), len(want))
		return
	}
	for i, w := range want {
		d.add(kind, w, got[i], scale)
	}
}

func (d deviations) add(kind string, want, got, scale float64) {
	e := d[kind]
	if e == nil {
		e = &struct {
			n        int
			abs, rel float64
		}{}
		d[kind] = e
	}
	a := math.Abs(got - want)
	if math.IsNaN(a) {
		a = math.Inf(1)
	}
	e.n++
	e.abs = max(e.abs, a)
	e.rel = max(e.rel, a/max(math.Abs(want), scale))
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "-inf"
	}
	return fmt.Sprint(*p)
}

func ptrs(m [][]float64) [][]*float64 {
	out := make([][]*float64, len(m))
	for i, row := range m {
		for j := range row {
			out[i] = append(out[i], &row[j])
		}
	}
	return out
}

func f64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// readCSV returns a CSV file's data rows and its header.
func readCSV(t *testing.T, path string) (int, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %v", path, err)
	}
	return len(recs) - 1, recs[0]
}
