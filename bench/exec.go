package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"time"
)

// ExecRunner returns a Runner that runs the gfn binary bin with the
// environment env, appending each run's output to logDir/<run>.log, where
// <run> is the base name of the run's --out (or --resume) directory; a
// resumed run's log thus follows its earlier part.
//
// On Linux a run is killed when the process that started it dies, so
// that a bench killed mid-table leaves no training behind that would race
// with the next invocation's resumption of the same run.
func ExecRunner(bin, logDir string, env []string) Runner {
	const stopWait = 2 * time.Minute
	return func(ctx context.Context, args []string) error {
		name := "run"
		for _, flag := range []string{"--out", "--resume"} {
			if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
				name = filepath.Base(args[i+1])
			}
		}
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(logDir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		cmd := exec.CommandContext(ctx, bin, args...)
		// A bench interrupted (Ctrl-C, SIGTERM) interrupts its runs the
		// same way, so each writes its checkpoint; one that does not stop
		// within stopWait is killed.
		cmd.Cancel, cmd.WaitDelay = func() error { return stopGently(cmd) }, stopWait
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = f, f
		// The parent-death signal is sent when the thread that started the
		// child exits: keep this goroutine on its thread until the child
		// is done.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		killWithParent(cmd)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("bench: %w (log: %s)", err, f.Name())
		}
		return nil
	}
}
