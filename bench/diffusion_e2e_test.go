package bench

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/run"
)

// cancelAt cancels a run once its progress bar reports step n or later.
type cancelAt struct {
	n      int
	cancel context.CancelFunc
}

var barStep = regexp.MustCompile(`(\d+)/\d+`)

func (c cancelAt) Write(p []byte) (int, error) {
	if m := barStep.FindSubmatch(p); m != nil {
		if s, _ := strconv.Atoi(string(m[1])); s >= c.n {
			c.cancel()
		}
	}
	return len(p), nil
}

// gfn bench diffusion runs its jobs as gfn processes, so this test builds
// the binary and runs a quick table end to end, one of whose runs was
// interrupted after a checkpoint and must be resumed, not restarted.
func TestBenchDiffusionQuickSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gfn and runs a dozen small trainings")
	}
	dir := t.TempDir()
	bin := gfnBinary(t)
	out := filepath.Join(dir, "bench")

	// The Teacher run as --quick starts it, stopped after the checkpoint
	// of iteration 10 (the bench's own runs checkpoint every 500).
	if !slices.Equal(quickDiffusionArgs, []string{"--iterations", "40", "--batch", "64", "--steps", "20", "--hidden", "64",
		"--eval-every", "20", "--eval-samples", "200", "--final-samples", "400"}) {
		t.Fatalf("quickDiffusionArgs changed to %q: update the interrupted run below", quickDiffusionArgs)
	}
	cfg, _ := diffusion.Preset("paper", "25gmm")
	cfg.Method, cfg.Iterations, cfg.Batch, cfg.Steps, cfg.Net.Hidden = diffusion.MethodTeacher, 40, 64, 20, 64
	partial := filepath.Join(out, "main", "25gmm-teacher-seed0")
	if err := os.MkdirAll(partial, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err := diffusion.Run(ctx, energy.GMM25{}, cfg, diffusion.RunOptions{Options: run.Options{OutDir: partial,
		EvalEvery: 20, CheckpointEvery: 10, Progress: cancelAt{15, cancel}}, Task: "25gmm", Preset: "paper", EvalSamples: 200, FinalSamples: 400})
	cancel()
	if err == nil {
		t.Fatal("the run to interrupt finished")
	}
	// The cancel checkpoints where the run stopped (at 15 or soon after).
	if st, rerr := diffusion.ReadCheckpoint(partial); rerr != nil || st.Done < 15 || st.Done >= cfg.Iterations {
		t.Fatalf("interrupted run (%v): checkpoint at iteration %d, %v", err, st.Done, rerr)
	}

	cmd := exec.Command(bin, "bench", "diffusion", "--table", "main", "--quick", "--tasks", "25gmm", "--methods", "tb,teacher",
		"--jobs", "2", "--out", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench diffusion: %v\n%s\n%s", err, stdout, stderr.String())
	}
	if !strings.Contains(stderr.String(), "1 to resume, 1 to start") {
		t.Errorf("log:\n%s", stderr.String())
	}
	var sum diffusion.Summary
	b, _ := os.ReadFile(filepath.Join(partial, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil || sum.Resumed != 1 || sum.Steps != 40 {
		t.Errorf("the interrupted run was not resumed: %+v, %v", sum, err)
	}
	md, err := os.ReadFile(filepath.Join(out, "main", "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	// A smoke run barely trains; its small ELBO changes are no divergence.
	if strings.Contains(string(md), "diverged") {
		t.Errorf("results.md calls a smoke run diverged:\n%s", md)
	}
	for _, row := range []string{"| tb | 1 |", "| teacher | 1 |", "| smc [1] | quoted from the paper, not run here |", "Smoke run"} {
		if !strings.Contains(string(md), row) {
			t.Errorf("results.md lacks %q:\n%s", row, md)
		}
	}
	for _, f := range []string{"results.csv", "figures/25gmm-elbo.png", "figures/25gmm-eubo.png",
		"figures/25gmm-tb-seed0-samples.png", "figures/25gmm-teacher-seed0-samples.png", "logs/25gmm-teacher-seed0.log"} {
		if _, err := os.Stat(filepath.Join(out, "main", f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	// Resumable: a second run trains nothing.
	cmd = exec.Command(bin, "bench", "diffusion", "--table", "main", "--quick", "--tasks", "25gmm", "--methods", "tb,teacher", "--out", out)
	if errOut, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(errOut), "2 already done, 0 to resume, 0 to start") {
		t.Errorf("second run: %v\n%s", err, errOut)
	}

	// The suite table on one of its energies (its default preset,
	// blessing), with its metrics in results.md.
	cmd = exec.Command(bin, "bench", "diffusion", "--table", "suite", "--quick", "--tasks", "gmm40", "--methods", "tb", "--out", out)
	if errOut, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("suite: %v\n%s", err, errOut)
	}
	md, err = os.ReadFile(filepath.Join(out, "suite", "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## gmm40 (d = 2, log Z = 0, preset blessing)", "| method | runs | ELBO | ELBO-IS | \\|Δ log Z\\| | EUBO | W2 | EMC | MMD |", "| tb | 1 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("suite results.md lacks %q:\n%s", want, md)
		}
	}

	// Every method's flags are a valid gfn train command line.
	for name, flags := range DiffusionMethods {
		if name == "ggns" {
			if out, err := exec.Command(bin, "train", "--task", "25gmm", "--method", "ggns", "--live", "50",
				"--quiet", "--out", filepath.Join(dir, "m", name)).CombinedOutput(); err != nil {
				t.Errorf("method ggns: %v\n%s", err, out)
			}
			continue
		}
		if name == "smc" { // no training flags: its own
			if out, err := exec.Command(bin, "train", "--task", "25gmm", "--method", "smc", "--particles", "64", "--temperatures", "4",
				"--quiet", "--out", filepath.Join(dir, "m", name)).CombinedOutput(); err != nil {
				t.Errorf("method smc: %v\n%s", err, out)
			}
			continue
		}
		args := append([]string{"train", "--task", "25gmm", "--iterations", "2", "--batch", "8", "--steps", "4", "--hidden", "8",
			"--eval-every", "1", "--eval-samples", "50", "--final-samples", "50", "--quiet", "--out", filepath.Join(dir, "m", name)}, flags...)
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Errorf("method %s: %v\n%s", name, err, out)
		}
	}
}
