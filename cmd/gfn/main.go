package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gfngo/gfn/bench"
	gfnrun "github.com/gfngo/gfn/run"
)

func main() {
	// SIGTERM too: Slurm's time limits and scancel send it, and a run
	// stopped by its context writes a checkpoint before it exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "gfn:", err)
	var ue usageError
	if errors.As(err, &ue) {
		os.Exit(2)
	}
	os.Exit(1)
}

// interruptedHint says where an interrupted run stopped and how to
// continue it: "interrupted at iteration N of M; continue with: gfn
// train --resume DIR" ("" if err is not an interruption).
func interruptedHint(err error) string {
	e, ok := gfnrun.IsInterrupted(err)
	if !ok {
		return ""
	}
	msg := fmt.Sprintf("interrupted at %s %d of %d", e.Unit, e.Done, e.Total)
	if e.Dir == "" {
		return msg + "; no checkpoint was written (no output directory)"
	}
	return msg + "; continue with: gfn train --resume " + bench.ShellQuote(e.Dir)
}
