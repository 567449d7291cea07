package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/train"
	"golang.org/x/sys/cpu"
)

// SpeedCase is one configuration to time.
type SpeedCase struct {
	Name   string
	Dim    int
	Side   int
	Method train.Method
}

// SpeedCases are the configurations of `gfn bench speed`: the paper's
// default grid with TB and the Teacher, and the largest Table 1 grid.
var SpeedCases = []SpeedCase{
	{"grid d2 H128 tb", 2, 128, train.MethodTB},
	{"grid d2 H128 teacher", 2, 128, train.MethodTeacher},
	{"grid d4 H32 teacher", 4, 32, train.MethodTeacher},
}

// SpeedResult is the timing of one case.
type SpeedResult struct {
	Case              SpeedCase
	Precision         nn.Precision
	EarlyMs, LateMs   float64 // median ms per iteration
	EarlyLen, LateLen float64 // mean trajectory length in the timed iterations
	LateStep          int     // the iteration the late window starts at
}

// SpeedOptions size the measurement.
type SpeedOptions struct {
	Iterations int // timed iterations per window (default 100)
	LateStep   int // where the late window starts (default 2000)
	Seed       uint64
	// Precision is the policies' (train.Config.Precision).
	Precision nn.Precision
}

// Speed times Iterations training iterations from a fresh start and again
// after LateStep iterations of training, when trajectories are longer.
func Speed(ctx context.Context, c SpeedCase, o SpeedOptions) (SpeedResult, error) {
	if o.Iterations <= 0 {
		o.Iterations = 100
	}
	if o.LateStep <= o.Iterations {
		o.LateStep = max(2000, 2*o.Iterations)
	}
	env, err := hypergrid.New(c.Dim, c.Side, hypergrid.Deceptive)
	if err != nil {
		return SpeedResult{}, err
	}
	cfg := train.DefaultConfig()
	cfg.Method, cfg.Seed, cfg.Precision = c.Method, o.Seed, o.Precision
	cfg.RewardCalls = (o.LateStep + o.Iterations) * cfg.Batch
	t, err := train.New(env, cfg)
	if err != nil {
		return SpeedResult{}, err
	}
	window := func() (ms, length float64, err error) {
		d := make([]float64, 0, o.Iterations)
		var l float64
		for range o.Iterations {
			if err := ctx.Err(); err != nil {
				return 0, 0, err
			}
			t0 := time.Now()
			it, err := t.Iterate()
			if err != nil {
				return 0, 0, err
			}
			d = append(d, float64(time.Since(t0).Microseconds())/1000)
			l += it.MeanLength
		}
		sort.Float64s(d)
		return d[len(d)/2], l / float64(o.Iterations), nil
	}
	r := SpeedResult{Case: c, Precision: o.Precision, LateStep: o.LateStep}
	if r.EarlyMs, r.EarlyLen, err = window(); err != nil {
		return r, err
	}
	for t.Step < o.LateStep {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		if _, err := t.Iterate(); err != nil {
			return r, err
		}
	}
	r.LateMs, r.LateLen, err = window()
	return r, err
}

// Machine describes the CPU and kernels in use.
func Machine() string {
	var feats []string
	for _, f := range []struct {
		name string
		on   bool
	}{{"avx2", cpu.X86.HasAVX2}, {"fma", cpu.X86.HasFMA}, {"avx512f", cpu.X86.HasAVX512F}, {"avx512bw", cpu.X86.HasAVX512BW}} {
		if f.on {
			feats = append(feats, f.name)
		}
	}
	if runtime.GOARCH != "amd64" {
		feats = []string{"(not amd64)"}
	}
	return fmt.Sprintf("%s, %s/%s, %d CPUs (GOMAXPROCS %d), features [%s], kernels %s, %s",
		cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), strings.Join(feats, " "), kernel.Name(), runtime.Version())
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// WriteSpeedTable prints results as a Markdown table.
func WriteSpeedTable(w io.Writer, rs []SpeedResult) {
	fmt.Fprintln(w, "| configuration | ms/iter early | mean length early | ms/iter late (from step) | mean length late |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %.2f | %.1f | %.2f (%d) | %.1f |\n", withPrecision(r.Case.Name, r.Precision), r.EarlyMs, r.EarlyLen, r.LateMs, r.LateStep, r.LateLen)
	}
}

// withPrecision is a row's name: the case's, with ", bf16" unless fp32.
func withPrecision(name string, p nn.Precision) string {
	if p == nn.FP32 {
		return name
	}
	return name + ", " + p.String()
}
