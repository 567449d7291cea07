package diffusion

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/timenet"
)

// TestSuitePresets pins the suite presets' settings to the numbers of
// their sources (docs/design/diffusion-suite-presets.md §4).
func TestSuitePresets(t *testing.T) {
	for _, c := range []struct {
		preset, task      string
		steps, batch, its int
		sigma2, lr, logZ  float64
		learned           bool
		buffer            int
		lsStep            float64
	}{
		{"sendera", "funnel", 100, 300, 25001, 1, 1e-3, 0.1, false, 600000, 0.01},
		{"sendera", "lgcp", 100, 300, 25001, 5, 1e-3, 0.1, false, 60000, 1e-3},
		{"sendera", "25gmm", 100, 300, 25001, 5, 1e-3, 0.1, false, 600000, 0.01},
		{"sendera", "manywell", 100, 300, 25001, 1, 1e-3, 0.1, false, 600000, 0.01},
		{"blessing", "gmm40", 128, 2000, 40000, 25, 1e-4, 1e-2, true, 600000, 0.01},
		{"blessing", "gmm40-50d", 128, 2000, 40000, 25, 1e-4, 1e-2, true, 600000, 0.01},
		{"blessing", "mos", 128, 2000, 40000, 5, 1e-4, 1e-2, true, 600000, 0.01},
	} {
		g, err := Preset(c.preset, c.task)
		if err != nil {
			t.Fatal(err)
		}
		if g.Steps != c.steps || g.Batch != c.batch || g.Iterations != c.its || g.Sigma2 != c.sigma2 || g.Student.LR != c.lr ||
			g.Student.LogZLR != c.logZ || g.LearnedVariance != c.learned || g.BufferCap != c.buffer || g.LS.StepSize != c.lsStep {
			t.Errorf("%s %s: %+v", c.preset, c.task, g)
		}
		if g.Net != (timenet.Config{Arch: timenet.PIS, Hidden: 64}) || g.DriftClip != 1e4 || len(g.Milestones) != 0 ||
			g.Student.WeightDecay != 0 || g.Explore != 0.2 || g.ExploreDecay != 5000 || g.LSEvery != 100 || g.LS.Steps != 200 || g.LS.BurnIn != 100 {
			t.Errorf("%s %s: shared settings %+v", c.preset, c.task, g)
		}
		if DefaultPreset(c.task) != c.preset && c.task != "25gmm" && c.task != "manywell" {
			t.Errorf("default preset of %s: %q, want %q", c.task, DefaultPreset(c.task), c.preset)
		}
	}
	for _, task := range []string{"25gmm", "manywell"} {
		if DefaultPreset(task) != "paper" || !slices.Equal(PresetsFor(task), []string{"reference", "paper", "sendera"}) {
			t.Errorf("%s: default %q, presets %v", task, DefaultPreset(task), PresetsFor(task))
		}
	}
	// Every energy the command line offers has a preset.
	for _, task := range energy.Names {
		if DefaultPreset(task) == "" {
			t.Errorf("task %s has no preset", task)
		}
	}
}

// TestPresetErrors: a task without the preset is told the presets it
// has; an unknown preset or task is named with what is allowed.
func TestPresetErrors(t *testing.T) {
	for _, c := range []struct{ preset, task, want string }{
		{"paper", "lgcp", `preset "paper" has no settings for task "lgcp" (presets for lgcp: sendera)`},
		{"blessing", "25gmm", `presets for 25gmm: reference, paper, sendera`},
		{"blessing", "funnel", `presets for funnel: sendera`},
		{"nope", "funnel", `preset "nope" is unknown (allowed: reference, paper, sendera, blessing)`},
		{"paper", "nope", `task "nope" has no preset (tasks with presets: 25gmm, manywell, funnel, lgcp, gmm40, gmm40-50d, mos)`},
	} {
		if _, err := PresetFor(c.preset, c.task, MethodTB); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %s: error %v, want %q", c.preset, c.task, err, c.want)
		}
	}
}

// noExtras is 25GMM seen only as an Energy: no sampler, no log Z, no
// mixture.
type noExtras struct{ e energy.GMM25 }

func (n noExtras) Dim() int                                   { return 2 }
func (n noExtras) LogReward(x []float32, out []float64) error { return n.e.LogReward(x, out) }

// TestSummarySuiteMetrics: the final evaluation's EMC, |Δ log Z| and MMD
// against independent computations on the run's own samples (nearest
// location counts, |ELBO-IS − 0|, a direct double sum of the kernel), and
// null where they do not apply.
func TestSummarySuiteMetrics(t *testing.T) {
	cfg := smallConfig(MethodTB, 20)
	e := energy.GMM40{}
	opt := quick
	opt.OutDir = t.TempDir()
	res, err := Run(context.Background(), e, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.EMC == nil || s.DeltaLogZ == nil || s.MMD == nil || s.MMDBandwidth == nil || s.MMDSamples != 500 {
		t.Fatalf("summary %+v", s)
	}
	// EMC: nearest location (equal weights, unit variances).
	locs := e.Locations()
	count := make([]float64, 40)
	n := len(res.Student) / 2
	for b := range n {
		best, arg := math.Inf(1), -1
		for k := range 40 {
			dx, dy := float64(res.Student[2*b])-locs[2*k], float64(res.Student[2*b+1])-locs[2*k+1]
			if d := dx*dx + dy*dy; d < best {
				best, arg = d, k
			}
		}
		count[arg]++
	}
	var h float64
	for _, c := range count {
		if c > 0 {
			h -= c / float64(n) * math.Log(c/float64(n))
		}
	}
	if want := h / math.Log(40); math.Abs(*s.EMC-want) > 1e-12 {
		t.Errorf("EMC %v, want %v", *s.EMC, want)
	}
	if math.Abs(*s.DeltaLogZ-math.Abs(s.ELBOIS)) > 1e-12 {
		t.Errorf("|delta log Z| %v, ELBO-IS %v (log Z = 0)", *s.DeltaLogZ, s.ELBOIS)
	}
	// MMD² by the unbiased double sum with the reported bandwidth.
	k := func(a, b []float32) float64 {
		dx, dy := float64(a[0])-float64(b[0]), float64(a[1])-float64(b[1])
		return math.Exp(-(dx*dx + dy*dy) / (2 * *s.MMDBandwidth * *s.MMDBandwidth))
	}
	x, y := res.Student, res.Exact
	var kxx, kyy, kxy float64
	for i := range n {
		for j := range n {
			if i != j {
				kxx += k(x[2*i:], x[2*j:])
				kyy += k(y[2*i:], y[2*j:])
			}
			kxy += k(x[2*i:], y[2*j:])
		}
	}
	fn := float64(n)
	mmd2 := kxx/(fn*(fn-1)) + kyy/(fn*(fn-1)) - 2*kxy/(fn*fn)
	if want := math.Sqrt(max(0, mmd2)); math.Abs(*s.MMD-want) > 1e-9 {
		t.Errorf("MMD %v, want %v", *s.MMD, want)
	}
	// Without sampler, log Z or mixture: null, and the JSON says so.
	opt.OutDir = t.TempDir()
	if res, err = Run(context.Background(), noExtras{}, cfg, opt); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(opt.OutDir, run.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"emc", "delta_log_z", "mmd", "true_log_z"} {
		if v, ok := m[key]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", key, v, ok)
		}
	}
}
