package rewardcmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultTimeout = 60 * time.Second
	DefaultGrace   = 5 * time.Second
)

// maxLine is the longest answer line read (64 MiB: 2.5 million values).
const maxLine = 64 << 20

// stderrTail is how much of the end of the program's standard error an
// Error quotes.
const stderrTail = 2048

// Options control how the program runs.
type Options struct {
	// Timeout bounds the wait for each answer (the handshake's included),
	// from the moment gfn starts sending: 0 means DefaultTimeout, < 0 no
	// limit.
	Timeout time.Duration
	// Grace is how long Close waits for the program to exit after closing
	// its standard input before killing it: 0 means DefaultGrace.
	Grace time.Duration
	// Stderr, if set, receives the program's standard error as it comes
	// (gfn's CLI passes its own standard error). It is written from
	// another goroutine.
	Stderr io.Writer
	// Dir is the program's working directory ("": the caller's).
	Dir string
	// Env is the program's environment (nil: the caller's).
	Env []string
}

// Error is a failure of the program. Its message names the batch (or the
// handshake) and what came back.
type Error struct {
	// Command is the program's command line.
	Command string
	// Batch is the batch number (1, 2, …), 0 for the handshake; N is the
	// number of objects in it.
	Batch, N int
	// Problem says what went wrong.
	Problem string
	// Answer is the program's answer line, truncated ("" if none came).
	Answer string
	// Stderr is the end of the program's standard error when it exited or
	// was stopped ("" otherwise).
	Stderr string
	// Err is the underlying error, if any (the context's, the process's
	// exit status).
	Err error
}

// Error names the handshake or the batch, the problem, the answer and the
// end of the program's standard error.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Batch == 0 {
		fmt.Fprintf(&b, "rewardcmd: handshake with %q: %s", e.Command, e.Problem)
	} else {
		fmt.Fprintf(&b, "rewardcmd: batch %d (%d objects): %s", e.Batch, e.N, e.Problem)
	}
	if e.Answer != "" {
		fmt.Fprintf(&b, "; the answer was: %s", e.Answer)
	}
	if e.Stderr != "" {
		fmt.Fprintf(&b, "; its standard error ended with:\n%s", indent(e.Stderr))
	}
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}

// line is one line of the program's standard output, or the error that
// ended it (io.EOF when the program closed it).
type line struct {
	b   []byte
	err error
}

// Client runs a reward program and talks to it. Its methods are safe for
// concurrent use; calls are serialised.
type Client struct {
	mu      sync.Mutex
	ctx     context.Context
	command string
	shape   Shape
	opt     Options

	cmd     *exec.Cmd
	stdin   *os.File
	stdout  *os.File
	lines   chan line
	quit    chan struct{} // closed when the client stops: the reader exits
	exited  chan struct{} // closed when Wait has returned
	waitErr error         // Wait's, once exited is closed
	tail    *tailBuffer

	tokens   [][]byte // sequence kind: each token JSON-encoded, unquoted
	req      []byte
	batch    int // batches sent
	answered int // batches answered
	objects  int // objects answered
	err      error
	closed   bool
}

// Start starts command (with "sh -c") and performs the handshake for
// shape. ctx bounds the client's life: when it is done, a pending call
// stops the program and fails with ctx's error. On failure the program is
// stopped and the error is an *Error (or names the bad argument).
func Start(ctx context.Context, command string, shape Shape, opt Options) (*Client, error) {
	if strings.TrimSpace(command) == "" {
		return nil, errors.New("rewardcmd: the command is empty")
	}
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	if opt.Timeout == 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Grace <= 0 {
		opt.Grace = DefaultGrace
	}
	shape.Alphabet = append([]string(nil), shape.Alphabet...)
	c := &Client{ctx: ctx, command: command, shape: shape, opt: opt,
		lines: make(chan line, 1), quit: make(chan struct{}), exited: make(chan struct{}),
		tail: &tailBuffer{max: stderrTail}}
	for _, a := range shape.Alphabet {
		q, _ := json.Marshal(a)
		c.tokens = append(c.tokens, q[1:len(q)-1])
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("rewardcmd: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("rewardcmd: %w", err)
	}
	cmd := shellCommand(command)
	cmd.Dir, cmd.Env = opt.Dir, opt.Env
	cmd.Stdin, cmd.Stdout = inR, outW
	cmd.Stderr = passThrough{c.tail, opt.Stderr}
	// Wait returns once the program has exited and its standard error is
	// copied, or this long after it exited if a child keeps it open.
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("rewardcmd: starting %q: %w", command, err)
	}
	c.cmd, c.stdin, c.stdout = cmd, inW, outR
	go c.read(outR)
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	ans, e := c.roundTrip(handshake(shape), 0)
	if e == nil {
		if p := checkHello(ans); p != "" {
			e = &Error{Problem: p, Answer: truncate(ans, 200)}
		}
	}
	if e != nil {
		return nil, c.fail(e)
	}
	return c, nil
}

// Shape is the task's shape.
func (c *Client) Shape() Shape { return c.shape }

// Command is the program's command line.
func (c *Client) Command() string { return c.command }

// Counts returns the number of batches answered and of objects scored.
func (c *Client) Counts() (batches, objects int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.answered, c.objects
}

// Err returns the failure that stopped the client, or nil.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// read sends the program's output lines to c.lines until it ends.
func (c *Client) read(r *os.File) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		b, err := readLine(br)
		if err == nil && len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		select {
		case c.lines <- line{b, err}:
		case <-c.quit:
			return
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line (without its "\n") of at most maxLine bytes. A
// last line without "\n" before the end of the output counts as a line.
func readLine(br *bufio.Reader) ([]byte, error) {
	var b []byte
	for {
		frag, err := br.ReadSlice('\n')
		b = append(b, frag...)
		if len(b) > maxLine {
			return nil, fmt.Errorf("rewardcmd: an answer line is longer than %d bytes", maxLine)
		}
		switch {
		case err == nil:
			return b[:len(b)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case len(b) > 0 && err == io.EOF:
			return b, nil
		default:
			return nil, err
		}
	}
}

// roundTrip sends req and returns the answer line; batch names the
// request (batch 0: the handshake).
func (c *Client) roundTrip(req []byte, batch int) ([]byte, *Error) {
	var timeout <-chan time.Time
	if c.opt.Timeout > 0 {
		t := time.NewTimer(c.opt.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := c.stdin.Write(req)
		wrote <- err
	}()
	var done <-chan struct{}
	if c.ctx != nil {
		done = c.ctx.Done()
	}
	lines := c.lines
	var ans []byte
	// A program that exits with a child holding its output open would
	// otherwise be waited for until the timeout; an answer it wrote just
	// before exiting still gets a moment to arrive.
	exited := c.exited
	var afterExit <-chan time.Time
	for {
		select {
		case <-exited:
			exited = nil
			afterExit = time.After(200 * time.Millisecond)
		case <-afterExit:
			return nil, c.exitError("the program exited without answering")
		case err := <-wrote:
			wrote = nil
			if err != nil {
				// The program closed its input: it has exited or will.
				return nil, c.exitError("the program stopped reading its input")
			}
			if ans != nil {
				return ans, nil
			}
		case l := <-lines:
			if l.err == io.EOF {
				return nil, c.exitError("the program closed its output without answering")
			}
			if l.err != nil {
				return nil, &Error{Problem: "reading the answer: " + l.err.Error(), Err: l.err}
			}
			if wrote == nil {
				return l.b, nil
			}
			// An answer before the whole request is written: the request
			// must be written before the next one starts.
			ans, lines = l.b, nil
		case <-timeout:
			what := "answer"
			if batch == 0 {
				what = "answer to the handshake"
			}
			return nil, &Error{Problem: fmt.Sprintf("no %s within %v; the program was stopped", what, c.opt.Timeout)}
		case <-done:
			return nil, &Error{Problem: "interrupted (" + c.ctx.Err().Error() + "); the program was stopped", Err: c.ctx.Err()}
		}
	}
}

// exitError describes a program that stopped talking: it waits a moment
// for the exit status and the end of its standard error.
func (c *Client) exitError(problem string) *Error {
	e := &Error{}
	select {
	case <-c.exited:
		e.Err = c.waitErr
		if c.waitErr != nil {
			problem = "the program exited (" + c.waitErr.Error() + ") without answering"
		} else {
			problem = "the program exited (status 0) without answering"
		}
		e.Stderr = c.tail.String()
	case <-time.After(2 * time.Second):
	}
	e.Problem = problem
	return e
}

// fail records the first failure, fills in the error's names and stops
// the program. The caller holds c.mu.
func (c *Client) fail(e *Error) error {
	e.Command, e.Batch = c.command, c.batch
	c.stop()
	c.err = e
	return e
}

// stop ends the program: its input is closed, and it is killed with its
// process group (children that outlive it included).
func (c *Client) stop() {
	if c.closed {
		return
	}
	c.closed = true
	close(c.quit)
	c.stdin.Close()
	killGroup(c.cmd) // its children too, if it has exited
	<-c.exited
	c.stdout.Close()
}

// Close closes the program's input and waits for it to exit, killing it
// after the grace period (and, on Unix, whatever is left of its process
// group). It returns an error if the program had to be
// killed or exited with a non-zero status; after a failure (the program
// was stopped then) it returns nil. Close is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.stdin.Close()
	var err error
	select {
	case <-c.exited:
		if c.waitErr != nil {
			err = fmt.Errorf("rewardcmd: %q exited with %v after its input closed", c.command, c.waitErr)
		}
	case <-time.After(c.opt.Grace):
		err = fmt.Errorf("rewardcmd: %q did not exit within %v of its input closing and was killed", c.command, c.opt.Grace)
	}
	killGroup(c.cmd) // what is left of its process group
	<-c.exited
	close(c.quit)
	c.stdout.Close()
	if c.err == nil {
		c.err = errors.New("rewardcmd: the client is closed")
	}
	return err
}

// call sends one batch of n objects, encoded by x into c.req after the
// header, and parses n log-rewards into out. object(i) describes object i
// for an error message.
func (c *Client) call(n int, out []float64, x func(b []byte) []byte, object func(i int) string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if n == 0 {
		return nil
	}
	c.batch++
	b := append(c.req[:0], `{"batch":`...)
	b = strconv.AppendInt(b, int64(c.batch), 10)
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `,"x":[`...)
	b = x(b)
	b = append(b, "]}\n"...)
	c.req = b
	ans, e := c.roundTrip(b, c.batch)
	if e == nil {
		e = c.parse(ans, n, out, object)
	}
	if e != nil {
		e.N = n
		return c.fail(e)
	}
	c.answered++
	c.objects += n
	return nil
}

// parse checks an answer and writes its values into out.
func (c *Client) parse(ans []byte, n int, out []float64, object func(i int) string) *Error {
	quote := func() string { return truncate(ans, 200) }
	var a answer
	if !isObject(ans) {
		return &Error{Problem: "the answer is not a JSON object (print messages to standard error: standard output is the protocol's)", Answer: quote()}
	}
	if err := json.Unmarshal(sanitize(ans), &a); err != nil {
		return &Error{Problem: "the answer is not valid JSON (" + err.Error() + ")", Answer: quote()}
	}
	if a.Batch == nil {
		return &Error{Problem: `the answer has no "batch"`, Answer: quote()}
	}
	if string(*a.Batch) != strconv.Itoa(c.batch) {
		return &Error{Problem: fmt.Sprintf("the answer is for batch %s, not %d", truncate(*a.Batch, 20), c.batch), Answer: quote()}
	}
	if a.Error != nil {
		return &Error{Problem: "the program reports: " + *a.Error}
	}
	if a.LogReward == nil {
		return &Error{Problem: `the answer has no "log_reward"`, Answer: quote()}
	}
	if len(a.LogReward) != n {
		return &Error{Problem: fmt.Sprintf("%d log-rewards for %d objects", len(a.LogReward), n), Answer: quote()}
	}
	for i, raw := range a.LogReward {
		v, bad := value(raw)
		if bad != "" {
			return &Error{Problem: fmt.Sprintf("log-reward %d is %s (object %s)", i, bad, object(i)), Answer: quote()}
		}
		out[i] = v
	}
	return nil
}

// Sequences scores n sequences of token indices (rows of Shape.Length
// into Shape.Alphabet) into out[:n]; the program sees them as strings.
func (c *Client) Sequences(xs []int32, n int, out []float64) error {
	if c.shape.Kind != Sequence {
		return fmt.Errorf("rewardcmd: Sequences on a client of kind %s", c.shape.Kind)
	}
	L, na := c.shape.Length, int32(len(c.tokens))
	if len(xs) < n*L || len(out) < n {
		return fmt.Errorf("rewardcmd: %d sequences of length %d need %d tokens and %d outputs; got %d and %d", n, L, n*L, n, len(xs), len(out))
	}
	for i, v := range xs[:n*L] {
		if v < 0 || v >= na {
			return fmt.Errorf("rewardcmd: token %d of sequence %d is %d, outside the alphabet of %d", i%L, i/L, v, na)
		}
	}
	return c.call(n, out, func(b []byte) []byte {
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			for _, v := range xs[i*L : (i+1)*L] {
				b = append(b, c.tokens[v]...)
			}
			b = append(b, '"')
		}
		return b
	}, func(i int) string {
		s := ""
		for _, v := range xs[i*L : (i+1)*L] {
			s += c.shape.Alphabet[v]
		}
		return strconv.Quote(s)
	})
}

// Points scores the rows of x (len(x)/Shape.Dim points) into out, which
// must have one entry per row. A row with a NaN or infinite coordinate is
// not sent: its log-reward is NaN.
func (c *Client) Points(x []float32, out []float64) error {
	if c.shape.Kind != Points {
		return fmt.Errorf("rewardcmd: Points on a client of kind %s", c.shape.Kind)
	}
	d := c.shape.Dim
	if len(x)%d != 0 || len(out) != len(x)/d {
		return fmt.Errorf("rewardcmd: %d values are not %d points of dimension %d", len(x), len(out), d)
	}
	rows := make([]int, 0, len(out))
	for r := range out {
		ok := true
		for _, v := range x[r*d : (r+1)*d] {
			ok = ok && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
		}
		if ok {
			rows = append(rows, r)
		} else {
			out[r] = math.NaN()
		}
	}
	if len(rows) == len(out) {
		return c.call(len(out), out, func(b []byte) []byte { return appendPoints(b, x, d, nil) },
			func(i int) string { return fmt.Sprint(x[i*d : (i+1)*d]) })
	}
	vals := make([]float64, len(rows))
	err := c.call(len(rows), vals, func(b []byte) []byte { return appendPoints(b, x, d, rows) },
		func(i int) string { return fmt.Sprint(x[rows[i]*d : (rows[i]+1)*d]) })
	if err != nil {
		return err
	}
	for i, r := range rows {
		out[r] = vals[i]
	}
	return nil
}

// appendPoints writes the rows of x (those listed, or all) as JSON arrays.
func appendPoints(b []byte, x []float32, d int, rows []int) []byte {
	n := len(x) / d
	if rows != nil {
		n = len(rows)
	}
	for i := range n {
		r := i
		if rows != nil {
			r = rows[i]
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, v := range x[r*d : (r+1)*d] {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, float64(v), 'g', -1, 64)
		}
		b = append(b, ']')
	}
	return b
}

// Cells scores n grid cells into out[:n]. xs holds n rows of Shape.Dim+1
// words, the hypergrid's state layout: the coordinates, then the stop flag,
// which is not sent. Its signature is hypergrid.LogRewardFunc's.
func (c *Client) Cells(xs []int32, n int, out []float64) error {
	if c.shape.Kind != Grid {
		return fmt.Errorf("rewardcmd: Cells on a client of kind %s", c.shape.Kind)
	}
	d, w := c.shape.Dim, c.shape.Dim+1
	if len(xs) < n*w || len(out) < n {
		return fmt.Errorf("rewardcmd: %d cells need %d words and %d outputs; got %d and %d", n, n*w, n, len(xs), len(out))
	}
	for i := range n {
		for _, v := range xs[i*w : i*w+d] {
			if v < 0 || int(v) >= c.shape.Side {
				return fmt.Errorf("rewardcmd: cell %v is outside the grid of side %d", xs[i*w:i*w+d], c.shape.Side)
			}
		}
	}
	return c.call(n, out, func(b []byte) []byte {
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			for j, v := range xs[i*w : i*w+d] {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(v), 10)
			}
			b = append(b, ']')
		}
		return b
	}, func(i int) string { return fmt.Sprint(xs[i*w : i*w+d]) })
}

// passThrough copies the program's standard error into the tail buffer
// and to the user's writer, whose errors are ignored (the program must
// not block on its standard error).
type passThrough struct {
	tail *tailBuffer
	w    io.Writer
}

func (p passThrough) Write(b []byte) (int, error) {
	p.tail.Write(b)
	if p.w != nil {
		p.w.Write(b)
	}
	return len(b), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
