package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestExecRunnerStopsGently: cancelling a bench sends its run SIGTERM (a
// gfn train run then checkpoints), not SIGKILL.
func TestExecRunnerStopsGently(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "fake-gfn")
	marker := filepath.Join(dir, "stopped")
	body := "#!/bin/sh\ntrap 'echo term > " + marker + "; exit 3' TERM\nwhile :; do sleep 0.02; done\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ExecRunner(script, filepath.Join(dir, "logs"), os.Environ())(ctx, []string{"train", "--out", filepath.Join(dir, "run")})
	}()
	time.Sleep(300 * time.Millisecond) // the script installs its trap
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a cancelled run reported success")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not stop")
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "term\n" {
		t.Errorf("the run was not sent SIGTERM: %q, %v", b, err)
	}
}
