package train_test

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/replay"
	"github.com/gfngo/gfn/teacher"
	"github.com/gfngo/gfn/train"
)

// paramHash digests every parameter of the Student and the Teacher, and the
// counters, bit for bit.
func paramHash(tr *train.Trainer) string {
	h := sha256.New()
	var b [8]byte
	for _, a := range []*train.Agent{tr.Student, tr.Teacher} {
		if a == nil {
			continue
		}
		for _, p := range a.Params() {
			for _, v := range p.Value {
				binary.LittleEndian.PutUint32(b[:4], math.Float32bits(v))
				h.Write(b[:4])
			}
		}
	}
	for _, c := range []int{tr.Step, tr.GradSteps, tr.RewardCalls, len(tr.ModesFound)} {
		binary.LittleEndian.PutUint64(b[:], uint64(c))
		h.Write(b[:])
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:12])
}

// TestGridGolden guards the grid's results bit for bit across refactors:
// short runs of the default configuration and of the Teacher's variants
// (reward forms, α, N_MC, a buffer) on d=2, H=32 must end with exactly the
// parameters they ended with when the hashes were recorded (before the
// Teacher moved to package teacher), on every kernel backend this machine
// has (each rounds differently). A change that alters results on purpose
// must say so and re-record them (run with -v to print them).
func TestGridGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("short: about 10 s")
	}
	cases := []struct {
		name string
		edit func(*train.Config)
		want map[kernel.Backend]string
	}{
		{"default", func(*train.Config) {}, map[kernel.Backend]string{
			"go": "ef206893094cc7cb53801ef0", "avx2+fma": "4a65fa7a45b8b0489753cc81", "avx512": "4a65fa7a45b8b0489753cc81"}},
		{"tb", func(c *train.Config) { c.Method = train.MethodTB }, map[kernel.Backend]string{
			"go": "1a2295f6bfc83e297ec5f534", "avx2+fma": "ea30362e5e40afeada1bd406", "avx512": "ea30362e5e40afeada1bd406"}},
		{"paper-alpha", func(c *train.Config) { c.Reward.Form, c.Reward.Alpha = teacher.Paper, 0.5 }, map[kernel.Backend]string{
			"go": "3568699f0110cff203b5dded", "avx2+fma": "f4fde49aed6b97623e77f1dc", "avx512": "f4fde49aed6b97623e77f1dc"}},
		{"reference-alpha-nmc", func(c *train.Config) { c.Reward.Alpha, c.NMC = 0.5, 3 }, map[kernel.Backend]string{
			"go": "7c1f3df05b60531d0651cb7f", "avx2+fma": "a8650a2d7512d1161fa65421", "avx512": "a8650a2d7512d1161fa65421"}},
		{"per", func(c *train.Config) { c.Buffer.Priority = replay.Teacher }, map[kernel.Backend]string{
			"go": "b66305f616fcc30d7f27ee7c", "avx2+fma": "3a2b9b6018b32421484f49fc", "avx512": "3a2b9b6018b32421484f49fc"}},
		{"prt-ratio", func(c *train.Config) { c.Buffer.Priority, c.Schedule = replay.Reward, "SSBTB" }, map[kernel.Backend]string{
			"go": "bbfd538c96ac975cdb64089b", "avx2+fma": "eb4e3bd29902dd6554cd8820", "avx512": "eb4e3bd29902dd6554cd8820"}},
	}
	for _, b := range kernel.Available() {
		prev := kernel.Use(b)
		for _, c := range cases {
			gridGolden(t, b, c.name, c.edit, c.want[b])
		}
		kernel.Use(prev)
	}
}

func gridGolden(t *testing.T, b kernel.Backend, name string, edit func(*train.Config), want string) {
	t.Helper()
	{
		g, err := hypergrid.New(2, 32, hypergrid.Deceptive)
		if err != nil {
			t.Fatal(err)
		}
		cfg := train.DefaultConfig()
		cfg.Hidden = []int{64, 64}
		cfg.RewardCalls = 300 * cfg.Batch
		cfg.Seed = 7
		edit(&cfg)
		tr, err := train.New(g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for !tr.Done() {
			if _, err := tr.Iterate(); err != nil {
				t.Fatal(err)
			}
		}
		got := paramHash(tr)
		t.Logf("%s %s: %s", b, name, got)
		if got != want {
			t.Errorf("%s %s: parameters hash %s, want %s (results changed)", b, name, got, want)
		}
	}
}
