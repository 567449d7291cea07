package rewardcmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test binary is also the reward program: run with GFN_REWARD_HELPER
// set, it speaks the protocol (behaviour MODE, or MODE@K to misbehave at
// batch K instead of batch 1) instead of running the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("GFN_REWARD_HELPER"); mode != "" {
		helper(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperCmd is the command line that runs the test binary as a reward
// program in mode.
func helperCmd(mode string) string {
	return fmt.Sprintf("GFN_REWARD_HELPER='%s' '%s'", mode, os.Args[0])
}

// The reference rewards, computed the same way by the helper program and
// by the tests in process.
func seqReward(s string) float64 {
	v := 0.0
	for i, c := range s {
		v += float64(i+1) * float64(strings.IndexRune("ACGT", c)) / 7
	}
	return v - 3
}

func pointReward(x []float64) float64 {
	v := math.Sin(3 * x[0])
	for _, xi := range x {
		v -= xi * xi / 2
	}
	return v
}

func cellReward(x []int) float64 {
	v := 0.0
	for i, xi := range x {
		v += float64((i+2)*xi) / 10
	}
	if x[0] == x[len(x)-1] {
		v--
	}
	return v
}

func reference(s Shape, b *Batch, out []float64) error {
	for i := range b.Len() {
		switch s.Kind {
		case Sequence:
			out[i] = seqReward(b.Sequences[i])
		case Points:
			out[i] = pointReward(b.Points[i])
		case Grid:
			out[i] = cellReward(b.Cells[i])
		}
	}
	return nil
}

// helper is the reward program. Modes: ok (the reference rewards), exit,
// hang, garbage, debug (a stray line before the answer), count, batch
// (wrong number), error (the program's own error), raw=V (V as the
// second value), refuse, version, mute (no handshake answer), linger
// (ignores the end of its input), crash (exits at the handshake).
func helper(spec string) {
	mode, at := spec, 1
	if m, k, ok := strings.Cut(spec, "@"); ok {
		mode = m
		at, _ = strconv.Atoi(k)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<26)
	out := bufio.NewWriter(os.Stdout)
	say := func(s string) { out.WriteString(s + "\n"); out.Flush() }
	if !in.Scan() {
		return
	}
	var shape Shape
	json.Unmarshal(in.Bytes(), &shape)
	switch mode {
	case "refuse":
		say(`{"ok":false,"error":"only sequences of length 3"}`)
		return
	case "version":
		say(`{"ok":true,"version":2}`)
		return
	case "mute":
		time.Sleep(time.Hour)
	case "crash":
		fmt.Fprintln(os.Stderr, "Traceback (most recent call last):\nImportError: no module named torch")
		os.Exit(1)
	}
	say(`{"ok":true}`)
	for in.Scan() {
		var req struct {
			Batch int             `json:"batch"`
			N     int             `json:"n"`
			X     json.RawMessage `json:"x"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "helper: bad request:", err)
			os.Exit(2)
		}
		b := &Batch{Number: req.Batch}
		switch shape.Kind {
		case Sequence:
			json.Unmarshal(req.X, &b.Sequences)
		case Points:
			json.Unmarshal(req.X, &b.Points)
		case Grid:
			json.Unmarshal(req.X, &b.Cells)
		}
		v := make([]float64, req.N)
		reference(shape, b, v)
		vals := make([]string, len(v))
		for i, x := range v {
			vals[i] = strconv.FormatFloat(x, 'g', -1, 64)
		}
		fmt.Fprintf(os.Stderr, "helper: batch %d\n", req.Batch)
		if req.Batch == at {
			switch {
			case mode == "exit":
				fmt.Fprintln(os.Stderr, "ZeroDivisionError: division by zero")
				os.Exit(3)
			case mode == "hang":
				time.Sleep(time.Hour)
			case mode == "garbage":
				say("hello world")
				continue
			case mode == "debug":
				say("debug: scoring")
			case mode == "count":
				vals = vals[1:]
			case mode == "batch":
				req.Batch++
			case mode == "error":
				say(fmt.Sprintf(`{"batch":%d,"error":"cannot score %d objects"}`, req.Batch, req.N))
				continue
			case strings.HasPrefix(mode, "raw="):
				vals[1] = strings.TrimPrefix(mode, "raw=")
			}
		}
		say(fmt.Sprintf(`{"batch":%d,"log_reward":[%s]}`, req.Batch, strings.Join(vals, ",")))
	}
	if mode == "linger" {
		time.Sleep(time.Hour)
	}
}

// lockedBuffer is a bytes.Buffer safe for the program's stderr copier.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var (
	seqShape   = Shape{Kind: Sequence, Length: 5, Alphabet: []string{"A", "C", "G", "T"}}
	pointShape = Shape{Kind: Points, Dim: 3}
	gridShape  = Shape{Kind: Grid, Dim: 2, Side: 7}
)

func start(t *testing.T, mode string, s Shape, opt Options) *Client {
	t.Helper()
	c, err := Start(context.Background(), helperCmd(mode), s, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestRewards checks every kind against the rewards computed in process:
// the values come back bit for bit, float32 points included.
func TestRewards(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var stderr lockedBuffer
	t.Run("sequence", func(t *testing.T) {
		c := start(t, "ok", seqShape, Options{Stderr: &stderr})
		task := SeqTask{c}
		if task.Length() != 5 || strings.Join(task.Alphabet(), "") != "ACGT" {
			t.Fatalf("task shape %d %v", task.Length(), task.Alphabet())
		}
		for _, n := range []int{1, 33, 300} {
			xs := make([]int32, n*5)
			for i := range xs {
				xs[i] = rng.Int32N(4)
			}
			out := make([]float64, n)
			if err := task.LogReward(xs, n, out); err != nil {
				t.Fatal(err)
			}
			for b := range n {
				s := ""
				for _, v := range xs[b*5 : (b+1)*5] {
					s += "ACGT"[v : v+1]
				}
				if want := seqReward(s); out[b] != want {
					t.Fatalf("n=%d: log R(%s) = %v, want %v", n, s, out[b], want)
				}
			}
		}
		if b, o := c.Counts(); b != 3 || o != 334 {
			t.Errorf("counts %d batches, %d objects; want 3, 334", b, o)
		}
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if err := task.LogReward(make([]int32, 5), 1, make([]float64, 1)); err == nil {
			t.Error("a closed client scored a batch")
		}
	})
	t.Run("points", func(t *testing.T) {
		e := Energy{start(t, "ok", pointShape, Options{})}
		x := make([]float32, 3*50)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 3)
		}
		x[3] = 1e-30 // tiny and huge values travel exactly too
		x[4] = -3.4e38
		x[7] = float32(math.NaN()) // not sent: NaN
		out := make([]float64, 50)
		if err := e.LogReward(x, out); err != nil {
			t.Fatal(err)
		}
		for r := range 50 {
			p := []float64{float64(x[3*r]), float64(x[3*r+1]), float64(x[3*r+2])}
			want := pointReward(p)
			if r == 2 {
				want = math.NaN()
			}
			if math.Float64bits(out[r]) != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(out[r])) {
				t.Fatalf("row %d %v: %v, want %v", r, p, out[r], want)
			}
		}
		if e.Dim() != 3 || e.Err() != nil {
			t.Errorf("dim %d, err %v", e.Dim(), e.Err())
		}
		if err := e.LogReward(x[:4], out[:1]); err == nil {
			t.Error("mis-sized slices accepted")
		}
	})
	t.Run("grid", func(t *testing.T) {
		c := start(t, "ok", gridShape, Options{})
		// Hypergrid states: the coordinates, then the stop flag.
		xs := []int32{0, 0, 1, 6, 3, 0, 2, 2, 1, 5, 6, 0}
		out := make([]float64, 4)
		if err := c.Cells(xs, 4, out); err != nil {
			t.Fatal(err)
		}
		for b := range 4 {
			cell := []int{int(xs[3*b]), int(xs[3*b+1])}
			if want := cellReward(cell); out[b] != want {
				t.Errorf("cell %v: %v, want %v", cell, out[b], want)
			}
		}
		if err := c.Cells([]int32{7, 0, 0}, 1, out); err == nil || !strings.Contains(err.Error(), "outside the grid") {
			t.Errorf("a cell outside the grid: %v", err)
		}
	})
	if !strings.Contains(stderr.String(), "helper: batch 3\n") {
		t.Errorf("the program's standard error did not come through: %q", stderr.String())
	}
}

// TestServe runs Serve as the program (in process, over pipes) against a
// client's requests.
func TestServe(t *testing.T) {
	var in, out bytes.Buffer
	in.WriteString(string(handshake(gridShape)))
	in.WriteString(`{"batch":1,"n":2,"x":[[1,2],[6,0]]}` + "\n")
	in.WriteString(`{"batch":2,"n":1,"x":[[3,3]]}` + "\n")
	err := Serve(&in, &out, func(s Shape, b *Batch, o []float64) error {
		if b.Number == 2 {
			return errors.New("no")
		}
		reference(s, b, o)
		o[1] = math.Inf(-1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("{\"ok\":true,\"version\":1}\n{\"batch\":1,\"log_reward\":[%v,-Infinity]}\n{\"batch\":2,\"error\":\"no\"}\n", cellReward([]int{1, 2}))
	if out.String() != want {
		t.Errorf("Serve wrote\n%s\nwant\n%s", out.String(), want)
	}
	if got := checkHello([]byte(strings.Split(out.String(), "\n")[0])); got != "" {
		t.Errorf("Serve's handshake answer: %s", got)
	}
	out.Reset()
	if err := Serve(strings.NewReader(`{"protocol":"gfn-reward","version":2,"kind":"points","dim":1}`+"\n"), &out, reference); err == nil ||
		!strings.Contains(out.String(), `"ok":false`) {
		t.Errorf("version 2: %v, %s", err, out.String())
	}
}

// TestFailures checks that each way a program can fail gives an *Error
// naming the batch and quoting what came back, and stops the client.
func TestFailures(t *testing.T) {
	xs := make([]int32, 4*5)
	for i := range xs {
		xs[i] = int32(i % 4)
	}
	cases := []struct {
		mode string
		want []string
	}{
		{"exit@2", []string{"batch 2 (4 objects)", "exited (exit status 3)", "ZeroDivisionError: division by zero"}},
		{"hang", []string{"batch 1 (4 objects)", "no answer within 300ms", "stopped"}},
		{"garbage", []string{"batch 1", "not a JSON object", "answer was: hello world", "standard error"}},
		{"debug@2", []string{"batch 2", "not a JSON object", "answer was: debug: scoring"}},
		{"count", []string{"batch 1", "3 log-rewards for 4 objects", `answer was: {"batch":1,"log_reward":[`}},
		{"batch@3", []string{"batch 3", "the answer is for batch 4, not 3"}},
		{"error", []string{"batch 1", "the program reports: cannot score 4 objects"}},
		{"raw=NaN", []string{"batch 1", `log-reward 1 is NaN (object "CGTAC")`, "NaN"}},
		{"raw=Infinity", []string{"log-reward 1 is +Inf"}},
		{"raw=-Infinity", []string{"log-reward 1 is -Inf"}},
		{"raw=null", []string{"log-reward 1 is null, not a number"}},
		{`raw="1.5"`, []string{`log-reward 1 is the string "1.5", not a number`}},
		{"raw=1e999", []string{"log-reward 1 is 1e999, out of the range of float64"}},
		{"raw=true", []string{"log-reward 1 is true, not a number"}},
		{"raw=[1]", []string{"log-reward 1 is [1], not a number"}},
		{"raw=1,", []string{"not valid JSON"}},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			timeout := 20 * time.Second
			if c.mode == "hang" {
				timeout = 300 * time.Millisecond
			}
			cl := start(t, c.mode, seqShape, Options{Timeout: timeout})
			var err error
			for range 3 {
				if err = (SeqTask{cl}).LogReward(xs, 4, make([]float64, 4)); err != nil {
					break
				}
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if testing.Verbose() {
				t.Log(err)
			}
			if cl.Err() != err {
				t.Errorf("Err() = %v", cl.Err())
			}
			if again := (SeqTask{cl}).LogReward(xs, 4, make([]float64, 4)); again != err {
				t.Errorf("after the failure: %v", again)
			}
		})
	}
}

// TestHandshakeFailures covers the program that refuses the task, speaks
// another version, never answers, or dies at once, and a command that
// does not exist.
func TestHandshakeFailures(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want []string
	}{
		{helperCmd("refuse"), []string{"handshake with", "the program refused the task: only sequences of length 3"}},
		{helperCmd("version"), []string{"the program speaks version 2; gfn speaks 1"}},
		{helperCmd("mute"), []string{"no answer to the handshake within 300ms"}},
		{helperCmd("crash"), []string{"exited (exit status 1)", "ImportError: no module named torch"}},
		{"no-such-program-gfn", []string{"exited (exit status 127)", "not found"}},
	} {
		_, err := Start(context.Background(), c.cmd, seqShape, Options{Timeout: 300 * time.Millisecond})
		var e *Error
		if !errors.As(err, &e) || e.Batch != 0 {
			t.Errorf("%s: %v is not a handshake *Error", c.cmd, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q:\n%v", c.cmd, w, err)
			}
		}
	}
	// A program that exits while a child of its keeps its output open.
	t0 := time.Now()
	_, err := Start(context.Background(), "sleep 30 & exit 3", seqShape, Options{Timeout: 20 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "exited (exit status 3)") || time.Since(t0) > 5*time.Second {
		t.Errorf("exit with a child holding the output: %v after %v", err, time.Since(t0))
	}
	for _, s := range []Shape{{Kind: "tree"}, {Kind: Sequence, Length: 3, Alphabet: []string{"A", "AB"}},
		{Kind: Sequence, Length: 3, Alphabet: []string{"A", "A"}}, {Kind: Sequence, Length: 0, Alphabet: []string{"A", "B"}},
		{Kind: Points}, {Kind: Grid, Dim: 2, Side: 1}} {
		if _, err := Start(context.Background(), "true", s, Options{}); err == nil {
			t.Errorf("shape %+v accepted", s)
		}
	}
	if _, err := Start(context.Background(), " ", seqShape, Options{}); err == nil {
		t.Error("empty command accepted")
	}
}

// TestCloseAndCancel: Close kills a program that ignores the end of its
// input after the grace period; a cancelled context stops a pending batch.
func TestCloseAndCancel(t *testing.T) {
	c := start(t, "linger", pointShape, Options{Grace: 200 * time.Millisecond})
	t0 := time.Now()
	if err := c.Close(); err == nil || !strings.Contains(err.Error(), "was killed") {
		t.Errorf("close of a lingering program: %v", err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("close took %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Start(ctx, helperCmd("hang"), pointShape, Options{})
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(100*time.Millisecond, cancel)
	err = c.Points(make([]float32, 3), make([]float64, 1))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "batch 1 (1 objects): interrupted") {
		t.Errorf("cancelled batch: %v", err)
	}
	// Energy turns the failure into NaN, as energy.Energy's contract wants.
	out := []float64{0}
	if err := (Energy{c}).LogReward(make([]float32, 3), out); err != nil || !math.IsNaN(out[0]) {
		t.Errorf("Energy after a failure: %v, %v", err, out)
	}
	c.Close()
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":[1,NaN,-Infinity,Infinity]}`: `{"a":[1,"NaN","-Infinity","Infinity"]}`,
		`{"s":"NaN \" Infinity"}`:          `{"s":"NaN \" Infinity"}`,
		`{"a":1}`:                          `{"a":1}`,
	} {
		if got := string(sanitize([]byte(in))); got != want {
			t.Errorf("sanitize(%s) = %s, want %s", in, got, want)
		}
	}
	if got := truncate([]byte(strings.Repeat("é", 300)), 201); !strings.HasSuffix(got, "… (600 bytes)") || !strings.HasPrefix(got, "éé") {
		t.Errorf("truncate: %q", got)
	}
}
