package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
	"time"
)

// pendingRun is a run a resumable bench table still has to do: its label
// in the log, whether it starts or resumes, and its gfn arguments.
type pendingRun struct {
	what string
	st   RunStatus
	args []string
}

// runPending runs todo, interrupted runs first (they are closest to
// finishing), lanes at a time, after a header line "name: N runs, D already
// done<note>, R to resume, S to start; L at a time"; each run's end is
// logged as "[k/N] what (resumed) done in d" or "… failed: err". It
// returns once every started run has ended, with the first failure (not
// the context's) as "what: err". A cancelled ctx starts no further run.
func runPending(ctx context.Context, log io.Writer, name string, todo []pendingRun, total, done int, note string, lanes int, run Runner) error {
	sort.SliceStable(todo, func(a, b int) bool { return todo[a].st == RunResume && todo[b].st != RunResume })
	resumes := 0
	for _, k := range todo {
		if k.st == RunResume {
			resumes++
		}
	}
	lanes = max(lanes, 1)
	fmt.Fprintf(log, "%s: %d runs, %d already done%s, %d to resume, %d to start; %d at a time\n",
		name, total, done, note, resumes, len(todo)-resumes, lanes)
	sem := make(chan struct{}, lanes)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for _, k := range todo {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			start := time.Now()
			err := run(ctx, k.args)
			mu.Lock()
			defer mu.Unlock()
			done++
			what := k.what
			if k.st == RunResume {
				what += " (resumed)"
			}
			if err != nil {
				if firstErr == nil && ctx.Err() == nil {
					firstErr = fmt.Errorf("bench: %s: %w", what, err)
				}
				fmt.Fprintf(log, "[%d/%d] %s failed: %v\n", done, total, what, err)
				return
			}
			fmt.Fprintf(log, "[%d/%d] %s done in %s\n", done, total, what, time.Since(start).Round(time.Second))
		}()
	}
	wg.Wait()
	return firstErr
}

// collected returns the jobs whose finished runs a table's results
// describe: all, every run of the table in its directory (each of its
// methods and tasks, as many seeds as were asked or the table has), so that
// running a subset (--methods, --tasks, fewer --seeds) does not drop the
// rows of earlier runs from results.md; then the asked jobs that all lacks
// (a method outside the table's list).
func collected[J any](all, asked []J, dir func(J) string) []J {
	out := slices.Clone(all)
	seen := make(map[string]bool, len(all))
	for _, j := range all {
		seen[dir(j)] = true
	}
	for _, j := range asked {
		if !seen[dir(j)] {
			out = append(out, j)
		}
	}
	return out
}
