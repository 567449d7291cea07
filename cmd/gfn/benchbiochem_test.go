package main

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gfngo/gfn/bench"
	"github.com/gfngo/gfn/seqtrain"
	"github.com/gfngo/gfn/teacher"
)

// Bad input to gfn bench biochem stops before any work with a usage error
// (exit status 2) naming the value.
func TestBenchBiochemUsageErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bench")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "chess"}, `task "chess" is unknown (allowed: all, tfbind8, rna, qm9str, sehstr)`},
		{[]string{"--task", "tfbind8,qm9"}, `task "qm9" is unknown`},
		{[]string{"--methods", "tb,teacher"}, `method "teacher" is not a row of table main (allowed: tb, eps, prt, per, teacher-prt, teacher-per)`},
		{[]string{"--methods", "tb,"}, `method "" is not a row`},
		{[]string{"--table", "beta"}, `table "beta" is unknown (allowed: main, alpha, local-search)`},
		{[]string{"--table", "alpha", "--methods", "tb"}, `method "tb" is not a row of table alpha (allowed: teacher-per-alpha0, teacher-per-alpha0.5, teacher-per-alpha1)`},
		{[]string{"--seeds", "-1"}, "seeds -1 must be >= 0"},
		{[]string{"--jobs", "0"}, "jobs 0 >= 1"},
		{[]string{"--checkpoint-every", "-1"}, "checkpoint-every -1 must be >= 0"},
		{[]string{"--task", "tfbind8", "extra"}, `unexpected argument "extra"`},
	} {
		_, _, err := runCLI(append([]string{"bench", "biochem", "--out", out}, c.args...)...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want a usage error with %q", c.args, err, c.want)
		}
	}
	if _, _, err := runCLI("bench", "sequence"); err == nil || !strings.Contains(err.Error(), "biochem") {
		t.Errorf("unknown benchmark: %v does not list biochem", err)
	}
}

// Every run of gfn bench biochem --quick, in every table, is a valid gfn
// train command line; here shortened to two rounds of small networks.
func TestBenchBiochemJobsTrain(t *testing.T) {
	for _, tab := range bench.BiochemTables {
		o := bench.BiochemOptions{Out: t.TempDir(), Table: tab.Name, Seeds: 1, Quick: true, Tasks: []string{"tfbind8"}}
		jobs, err := bench.BiochemJobs(o)
		if err != nil {
			t.Fatal(err)
		}
		var methods []string
		for _, j := range jobs {
			methods = append(methods, j.Method)
			args := append(slices.Clone(j.Args), "--rounds", "8", "--eval-every", "4", "--eval-samples", "16", "--hidden", "8", "--embed", "8")
			if _, stderr, err := runCLI(args...); err != nil {
				t.Errorf("%s %s: %v\n%s", tab.Name, j.Method, err, stderr)
			}
		}
		if !slices.Equal(methods, tab.Methods) {
			t.Errorf("%s: methods %q, want %q", tab.Name, methods, tab.Methods)
		}
	}
}

// The sequence flags reach the run's configuration: the paper's Teacher
// reward and α, the append-only MDP, the MLP policy and local search with
// its options.
func TestSequenceFlagsReachConfig(t *testing.T) {
	base := []string{"train", "--task", "tfbind8", "--rounds", "4", "--eval-every", "2", "--eval-samples", "16", "--hidden", "8", "--embed", "8", "--quiet"}
	for _, c := range []struct {
		flags []string
		check func(seqtrain.Config) bool
	}{
		{[]string{"--teacher-reward", "paper", "--alpha", "0.25"}, func(c seqtrain.Config) bool {
			return c.Reward.Form == teacher.Paper && c.Reward.Alpha == 0.25
		}},
		{[]string{"--mdp", "append", "--policy", "mlp"}, func(c seqtrain.Config) bool { return c.MDP == "append" && c.Policy.Kind == "mlp" }},
		{[]string{"--ls", "--ls-greedy", "--ls-teacher"}, func(c seqtrain.Config) bool {
			return c.LS == seqtrain.LocalSearch{Rounds: 7, Back: 3, Greedy: true, Teacher: true}
		}},
		{[]string{"--method", "per"}, func(c seqtrain.Config) bool { return c.Method == seqtrain.PER && c.LS.Rounds == 0 }},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		if _, stderr, err := runCLI(append(append(slices.Clone(base), "--out", dir), c.flags...)...); err != nil {
			t.Fatalf("%q: %v\n%s", c.flags, err, stderr)
		}
		st, err := seqtrain.ReadCheckpoint(dir)
		cfg := st.Config
		if err != nil || !c.check(cfg) {
			t.Errorf("%q: configuration %+v (%v)", c.flags, cfg, err)
		}
	}
	if _, _, err := runCLI(append(slices.Clone(base), "--out", t.TempDir(), "--ls-teacher")...); err == nil || !strings.Contains(err.Error(), "--ls-teacher needs --ls") {
		t.Errorf("--ls-teacher without --ls: %v", err)
	}
}
