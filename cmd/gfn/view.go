package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gfngo/gfn/view"
)

const viewSynopsis = `Serve a dashboard of the runs under the directories DIR (default: runs) to a web
browser: the runs with their family, task, method, seed, state (running, finished,
interrupted or failed at step N, or unreadable and why) and wall time; every curve of
their metrics.csv with the checked runs overlaid, updated while they train; each run's
summary and figures; and the results.md of bench table directories. Everything is
served from the binary (no internet access needed). Ctrl-C stops the server.`

// runView runs gfn view until ctx is cancelled.
func runView(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("view [DIR...]", viewSynopsis)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on, host:port (port 0: any free port); a host other than 127.0.0.1 or localhost shows your runs to the network")
	var dirs []string
	if err := parseWithArgs(fs, args, stdout, func(a string) { dirs = append(dirs, a) }); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if len(dirs) == 0 {
		dirs = []string{"runs"}
	}
	srv, err := view.NewServer(dirs...)
	if err != nil {
		return usageError{err}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usagef("view: --addr %s: %v", *addr, err)
	}
	fmt.Fprintf(stdout, "gfn view: %s at http://%s/ (Ctrl-C stops)\n", strings.Join(dirs, ", "), ln.Addr())
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			hs.Shutdown(shut)
		case <-done:
		}
	}()
	err = hs.Serve(ln)
	close(done)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
