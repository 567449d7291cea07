package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gfngo/gfn/bench"
	"github.com/gfngo/gfn/biochem"
)

const benchBiochemSynopsis = `Run the paper's biological and chemical discovery experiments (§5.3, its figure of modes,
ELBO and EUBO against training rounds): every task × method × seed as a separate gfn train
process, --jobs at a time (each with GOMAXPROCS = cores / jobs unless GOMAXPROCS is set), into
<out>/biochem/<task>-<method>-seed<S> with a log in <out>/biochem/logs. Runs go task by task,
the cheap tasks first (tfbind8, rna, then qm9str, sehstr), and within a task seed by seed, so
that a partial table has every method's first seeds. Resumable: a run with a summary.json is
skipped, one with a checkpoint and no summary is continued with gfn train --resume, others
start afresh. Then writes, from every finished run in <out>/biochem (a --task or --methods
subset keeps the others' rows), to <out>/biochem: results.csv (one row per run: its final modes
found, ELBO, EUBO, log Z error, wall time, ...), results.md (per task, mean ± std over seeds of
each method; the paper's claims checked from these numbers) and figure.png (one row per task;
modes, ELBO and EUBO against rounds, mean ± std bands over seeds). Methods: tb (on-policy TB),
eps (ε-exploration), prt, per (replay by reward, by loss), teacher-prt, teacher-per (the
adaptive Teacher with either buffer).

--table alpha and --table local-search run the appendix's TFbind8 figures instead, into
<out>/biochem-<table>: Teacher + PER with α = 0, 0.5 and 1 (rows teacher-per-alpha0,
teacher-per-alpha0.5, teacher-per-alpha1), and PER and Teacher + PER each without and with the
back-and-forth local search (rows per, per-ls, teacher-per, teacher-per-ls; a proposal is
kept when its reward is higher, as the paper states; only the Student searches, as in the
authors' code), and teacher-per-tls, whose Teacher rounds search with the Teacher scored by
its reward, as the paper describes. --task selects other tasks for them.`

func runBenchBiochem(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench biochem", benchBiochemSynopsis)
	var tableNames []string
	for _, t := range bench.BiochemTables {
		tableNames = append(tableNames, t.Name)
	}
	table := fs.String("table", "main", "experiment: "+strings.Join(tableNames, ", "))
	tasks := fs.String("task", "all", "tasks: all (the table's: every task for main, tfbind8 for the others), or a comma-separated list of "+strings.Join(bench.BiochemTasks, ", "))
	fs.StringVar(tasks, "tasks", "all", "the same as --task (the name bench diffusion uses)")
	tf := addTableFlags(fs, "methods", fmt.Sprintf("runs per method and task, with seeds 0 to seeds-1 (0 = %d; 1 with --quick)", bench.BiochemDefaultSeeds), "smoke run: 1 seed, 1/20 of each task's rounds, an evaluation every quarter of those, 256 evaluation samples")
	out := fs.String("out", filepath.Join("runs", "bench-biochem"), "root output directory: the runs and results go to <out>/biochem (other tables: <out>/biochem-<table>; default with --quick: runs/bench-biochem-quick)")
	ckEvery := fs.Int("checkpoint-every", bench.BiochemCheckpointEvery, "rounds between a run's checkpoints (0 = only at the end)")
	if err := tf.parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	tf.quickOut(fs, out)
	if *ckEvery < 0 {
		return usagef("checkpoint-every %d must be >= 0", *ckEvery)
	}
	tab, err := bench.BiochemTableByName(*table)
	if err != nil {
		return usagef("table %q is unknown (allowed: %s)", *table, strings.Join(tableNames, ", "))
	}
	o := bench.BiochemOptions{Out: *out, Table: tab.Name, Seeds: *tf.seeds, Jobs: *tf.jobs, Quick: *tf.quick, CheckpointEvery: *ckEvery, CollectOnly: *tf.collect}
	if *tasks != "all" {
		for _, k := range strings.Split(*tasks, ",") {
			t, err := biochem.Named(strings.TrimSpace(k))
			if err != nil || !slices.Contains(bench.BiochemTasks, t.Name()) {
				return usagef("task %q is unknown (allowed: all, %s)", k, strings.Join(bench.BiochemTasks, ", "))
			}
			o.Tasks = append(o.Tasks, t.Name())
		}
	}
	if o.Methods, err = tf.methodList(func(m string) error {
		if !slices.Contains(tab.Methods, m) {
			return usagef("method %q is not a row of table %s (allowed: %s)", m, tab.Name, strings.Join(tab.Methods, ", "))
		}
		return nil
	}); err != nil {
		return err
	}
	rep := bench.BiochemReport{Command: strings.Join(append([]string{"gfn bench biochem"}, args...), " ")}
	return benchTable(ctx, []string{"bench", "biochem"}, fs, tf, &o.Out, func() bench.Table { return bench.BiochemRun{O: o, Report: rep} }, stdout, stderr)
}
