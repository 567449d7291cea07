package rewardcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzAnswer feeds arbitrary answer lines to the client's parser for a
// batch of n objects. It must never panic; what it accepts must be n
// finite values, and an answer that encoding/json reads as this batch's
// n finite log-rewards must be accepted with the same values.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{
		`{"batch":7,"log_reward":[0.5,-1e3,2]}`,
		`{"batch":7,"log_reward":[NaN,Infinity,-Infinity]}`,
		`{"batch":7,"log_reward":["NaN",null,"x"]}`,
		`{"batch":7,"error":"the model file is missing"}`,
		`{"batch":6,"log_reward":[1,2,3]}`,
		`{"log_reward":[1,2,3],"batch":7.0}`,
		`{"batch":7,"log_reward":[1e400,2,3]}`,
		`{"batch":7,"log_reward":[1,2]}`,
		`[1,2,3]`,
		`  {"batch":7, "log_reward": [ 1 , 2 , 3 ] , "note": "NaN inside a string"}  `,
		`{"batch":7,"log_reward":[1,2,3]`,
		"{\"batch\":7,\"log_reward\":[1,2,3],\"x\":\"\xff\"}",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, ans []byte, n uint8) {
		c := &Client{batch: 7}
		out := make([]float64, n)
		for i := range out {
			out[i] = -12345
		}
		e := c.parse(ans, int(n), out, func(i int) string { return strconv.Itoa(i) })
		var want struct {
			Batch     json.Number `json:"batch"`
			LogReward []float64   `json:"log_reward"`
			Error     *string     `json:"error"`
		}
		d := json.NewDecoder(bytes.NewReader(ans))
		d.UseNumber()
		std := d.Decode(&want) == nil && !d.More() && json.Valid(ans) && bytes.HasPrefix(bytes.TrimSpace(ans), []byte("{"))
		if e != nil {
			if std && want.Batch == "7" && want.Error == nil && len(want.LogReward) == int(n) && strings.Contains(string(ans), `"log_reward"`) {
				t.Fatalf("%q: rejected (%s), but it is batch 7's %d log-rewards %v", ans, e.Problem, n, want.LogReward)
			}
			return
		}
		for i, v := range out {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%q: accepted with log-reward %d = %v", ans, i, v)
			}
		}
		if std {
			if want.Batch != "7" || len(want.LogReward) != int(n) {
				t.Fatalf("%q: accepted as batch 7's %d values; encoding/json reads batch %s with %v", ans, n, want.Batch, want.LogReward)
			}
			for i, v := range want.LogReward {
				if out[i] != v {
					t.Fatalf("%q: log-reward %d is %v, encoding/json reads %v", ans, i, out[i], v)
				}
			}
		}
	})
}

// FuzzHello feeds arbitrary handshake answers to checkHello: no panic,
// and acceptance only of a JSON object with "ok": true.
func FuzzHello(f *testing.F) {
	for _, s := range []string{`{"ok":true,"version":1}`, `{"ok":true}`, `{"ok":false,"error":"no GPU"}`,
		`{"ok":true,"version":2}`, `{"ok":"yes"}`, `{"version":1}`, `true`, `{"ok":true,"version":1.0}`, `{"ok":true, "x": NaN}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if checkHello(line) != "" {
			return
		}
		var a map[string]json.RawMessage
		if err := json.Unmarshal(sanitize(line), &a); err != nil {
			t.Fatalf("%q accepted: %v", line, err)
		}
		if string(a["ok"]) != "true" {
			t.Fatalf("%q accepted with ok %s", line, a["ok"])
		}
	})
}

// FuzzSanitize: sanitize leaves valid JSON (which has no bare NaN or
// Infinity) as it is, and whatever it returns for a line holding Python's
// non-finite tokens outside strings is valid JSON when the line with those
// tokens replaced by numbers is.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{`{"log_reward":[NaN,-Infinity,Infinity,1]}`, `{"a":"NaN \"Infinity\""}`, `[1,2]`,
		`{"a":"\\"}`, `NaNNaN`, `"unterminated NaN`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got := sanitize(line)
		if json.Valid(line) && !bytes.Equal(got, line) {
			t.Fatalf("valid JSON %q became %q", line, got)
		}
	})
}

// FuzzServe feeds arbitrary requests to Serve (the handshake, then
// batches), scoring with a function that checks every batch against the
// shape. Serve must not panic, must hand score only objects of the shape,
// and every answer it writes must be one the client's parser accepts for
// that batch with the values scored.
func FuzzServe(f *testing.F) {
	hello := func(s Shape) string { return strings.TrimSuffix(string(handshake(s)), "\n") }
	seq := Shape{Kind: Sequence, Length: 3, Alphabet: []string{"A", "C", "é"}}
	pts := Shape{Kind: Points, Dim: 2}
	grid := Shape{Kind: Grid, Dim: 2, Side: 4}
	for _, s := range []string{
		hello(seq) + "\n" + `{"batch":1,"n":2,"x":["ACé","CCC"]}` + "\n" + `{"batch":2,"n":1,"x":["AAA"]}`,
		hello(pts) + "\n" + `{"batch":1,"n":2,"x":[[0.5,-1],[3,4e10]]}`,
		hello(grid) + "\n" + `{"batch":1,"n":3,"x":[[0,3],[1,1],[2,0]]}`,
		hello(seq) + "\n" + `{"batch":1,"n":1,"x":["AC"]}`,
		hello(pts) + "\n" + `{"batch":1,"n":1,"x":[[1,2,3]]}`,
		hello(grid) + "\n" + `{"batch":1,"n":1,"x":[[4,-1]]}`,
		`{"protocol":"gfn-reward","version":2,"kind":"points","dim":1}`,
		hello(pts) + "\n" + `{"batch":1,"n":-1,"x":[]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		var shape Shape
		var scored [][]float64
		score := func(s Shape, b *Batch, out []float64) error {
			shape = s
			if err := conforms(s, b); err != nil {
				t.Fatalf("score received %+v for %v: %v", b, s, err)
			}
			if len(out) != b.Len() {
				t.Fatalf("%d outputs for %d objects", len(out), b.Len())
			}
			if b.Number%5 == 4 {
				return fmt.Errorf("batch %d refused", b.Number)
			}
			for i := range out {
				out[i] = float64(b.Number) + float64(i)/8
			}
			scored = append(scored, append([]float64(nil), out...))
			return nil
		}
		var w bytes.Buffer
		Serve(strings.NewReader(input), &w, score)
		lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
		if len(scored) == 0 || len(lines) < 2 {
			return
		}
		if checkHello([]byte(lines[0])) != "" {
			t.Fatalf("Serve scored batches after the handshake answer %q", lines[0])
		}
		k := 0
		for _, l := range lines[1:] {
			var a struct{ Batch int }
			if err := json.Unmarshal([]byte(l), &a); err != nil {
				t.Fatalf("answer %q: %v", l, err)
			}
			if a.Batch%5 == 4 {
				continue // refused
			}
			want := scored[k]
			k++
			c := &Client{batch: a.Batch, shape: shape}
			out := make([]float64, len(want))
			if e := c.parse([]byte(l), len(want), out, strconv.Itoa); e != nil {
				t.Fatalf("the client rejects Serve's answer %q: %s", l, e.Problem)
			}
			for i := range out {
				if out[i] != want[i] {
					t.Fatalf("answer %q: value %d is %v, scored %v", l, i, out[i], want[i])
				}
			}
		}
	})
}

// conforms reports the first object of b that does not have shape s.
func conforms(s Shape, b *Batch) error {
	switch s.Kind {
	case Sequence:
		if len(b.Points)+len(b.Cells) > 0 {
			return fmt.Errorf("points or cells in a sequence batch")
		}
		for _, x := range b.Sequences {
			if utf8.RuneCountInString(x) != s.Length {
				return fmt.Errorf("sequence %q is not of length %d", x, s.Length)
			}
			for _, r := range x {
				if !strings.Contains(strings.Join(s.Alphabet, ""), string(r)) || r == utf8.RuneError {
					return fmt.Errorf("sequence %q has %q, not in %v", x, r, s.Alphabet)
				}
			}
		}
	case Points:
		if len(b.Sequences)+len(b.Cells) > 0 {
			return fmt.Errorf("sequences or cells in a points batch")
		}
		for _, x := range b.Points {
			if len(x) != s.Dim {
				return fmt.Errorf("point %v is not of dimension %d", x, s.Dim)
			}
		}
	case Grid:
		if len(b.Sequences)+len(b.Points) > 0 {
			return fmt.Errorf("sequences or points in a grid batch")
		}
		for _, x := range b.Cells {
			if len(x) != s.Dim {
				return fmt.Errorf("cell %v is not of dimension %d", x, s.Dim)
			}
			for _, v := range x {
				if v < 0 || v >= s.Side {
					return fmt.Errorf("cell %v is outside {0..%d}^%d", x, s.Side-1, s.Dim)
				}
			}
		}
	}
	return nil
}
