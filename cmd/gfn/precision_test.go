package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gfngo/gfn/internal/cpusim"
	"github.com/gfngo/gfn/internal/kernel"
)

// precisionRuns are a small run of each family.
var precisionRuns = map[string][]string{
	"grid":      {"train", "--dim", "2", "--side", "8", "--hidden", "32,32", "--reward-calls", "800", "--eval-samples", "200"},
	"diffusion": {"train", "--task", "25gmm", "--method", "tb", "--hidden", "16", "--steps", "5", "--batch", "16", "--iterations", "20", "--eval-every", "10", "--eval-samples", "50", "--final-samples", "100"},
	"sequence":  {"train", "--task", "tfbind8", "--rounds", "6", "--eval-every", "3", "--eval-samples", "64", "--hidden", "16", "--embed", "16"},
}

// TestPrecisionFlag: --precision bf16 trains every family, the header and
// summary lines, summary.json and config.json name it, gfn sample reads
// the run, and --resume keeps it (refusing the flag).
func TestPrecisionFlag(t *testing.T) {
	if !kernel.HasBF16Path() {
		t.Skip("this CPU runs no fast bfloat16 path: bf16 is refused (TestPrecisionRefusedByCLI)")
	}
	for fam, args := range precisionRuns {
		dir := filepath.Join(t.TempDir(), "run")
		out, _, err := runCLI(append(args, "--precision", "bf16", "--out", dir, "--quiet")...)
		if err != nil {
			t.Fatalf("%s: %v", fam, err)
		}
		for _, want := range []string{"precision bf16 (" + kernel.BF16Kernel() + " kernel)", "bf16 hidden-layer products on " + kernel.BF16Kernel()} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", fam, want, out)
			}
		}
		for file, want := range map[string]string{"summary.json": `"bf16_kernel": "` + kernel.BF16Kernel() + `"`, "config.json": `"precision": "bf16"`} {
			if b, err := os.ReadFile(filepath.Join(dir, file)); err != nil || !strings.Contains(string(b), want) {
				t.Errorf("%s: %s lacks %s (%v)", fam, file, want, err)
			}
		}
		if _, _, err := runCLI("sample", "--checkpoint", dir, "-n", "4"); err != nil {
			t.Errorf("%s: gfn sample of a bf16 run: %v", fam, err)
		}
		_, _, err = runCLI("train", "--resume", dir, "--precision", "fp32")
		if err == nil || !strings.Contains(err.Error(), "--precision") {
			t.Errorf("%s: --resume with --precision: %v", fam, err)
		}
	}
	// fp32 runs say nothing of a precision.
	dir := filepath.Join(t.TempDir(), "run")
	out, _, err := runCLI(append(precisionRuns["grid"], "--out", dir, "--quiet")...)
	if err != nil || strings.Contains(out, "bf16") || strings.Contains(out, "precision") {
		t.Errorf("fp32 grid run: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "summary.json")); err != nil || strings.Contains(string(b), "precision") {
		t.Errorf("fp32 summary.json names a precision (%v)", err)
	}
}

// TestPrecisionRefusedByCLI: an unknown precision is a usage error; on a
// CPU without the instructions bf16 is refused with nn's error before
// anything is written, in gfn train and gfn bench speed.
func TestPrecisionRefusedByCLI(t *testing.T) {
	for fam, args := range precisionRuns {
		_, _, err := runCLI(append(args, "--precision", "fp16")...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "fp32, bf16") {
			t.Errorf("%s: --precision fp16: %v", fam, err)
		}
	}
	if _, _, err := runCLI("bench", "speed", "--precision", "fp32,fp16"); err == nil || !strings.Contains(err.Error(), "fp16") {
		t.Errorf("bench speed --precision fp16: %v", err)
	}
	cpusim.NoBF16.Store(true)
	defer cpusim.NoBF16.Store(false)
	for fam, args := range precisionRuns {
		dir := filepath.Join(t.TempDir(), "run")
		_, _, err := runCLI(append(args, "--precision", "bf16", "--out", dir)...)
		if err == nil || !strings.Contains(err.Error(), "AVX512_BF16") {
			t.Errorf("%s: bf16 without the instructions: %v", fam, err)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s: the refused run wrote %s", fam, dir)
		}
	}
	if _, _, err := runCLI("bench", "speed", "--precision", "fp32,bf16"); err == nil || !strings.Contains(err.Error(), "AVX512_BF16") {
		t.Errorf("bench speed without the instructions: %v", err)
	}
}
