package rewardcmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// Batch is one batch of objects as a reward program written in Go
// receives it from Serve. Exactly one of Sequences, Points and Cells is
// set, by the task's kind.
type Batch struct {
	// Number is the batch number (1, 2, …).
	Number    int
	Sequences []string
	Points    [][]float64
	Cells     [][]int
}

// Len is the number of objects.
func (b *Batch) Len() int { return len(b.Sequences) + len(b.Points) + len(b.Cells) }

// Serve is the program's side of the protocol, for reward programs written
// in Go: it reads the handshake from r and accepts any valid shape of
// protocol version 1, then answers every batch with the log-rewards score
// writes into out (len(out) = b.Len()) until r ends, when it returns nil.
// An error from score is sent as the batch's error; non-finite values are
// written as Python writes them (NaN, Infinity, -Infinity), which gfn
// reports. Serve returns an error for a malformed request (an object not
// of the shape included) and when writing to w fails.
func Serve(r io.Reader, w io.Writer, score func(s Shape, b *Batch, out []float64) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), maxLine)
	bw := bufio.NewWriter(w)
	send := func(b []byte) error {
		bw.Write(b)
		bw.WriteByte('\n')
		return bw.Flush()
	}
	if !sc.Scan() {
		return sc.Err()
	}
	var hello struct {
		Protocol string `json:"protocol"`
		Version  int    `json:"version"`
		Shape
	}
	if err := json.Unmarshal(sc.Bytes(), &hello); err != nil {
		return fmt.Errorf("rewardcmd: handshake: %w", err)
	}
	shape := hello.Shape
	refuse := ""
	switch err := shape.Validate(); {
	case hello.Protocol != Protocol || hello.Version != Version:
		refuse = fmt.Sprintf("protocol %s version %d is not %s version %d", hello.Protocol, hello.Version, Protocol, Version)
	case err != nil:
		refuse = err.Error()
	}
	if refuse != "" {
		b, _ := json.Marshal(map[string]any{"ok": false, "error": refuse})
		if err := send(b); err != nil {
			return err
		}
		return fmt.Errorf("rewardcmd: %s", refuse)
	}
	if err := send([]byte(`{"ok":true,"version":1}`)); err != nil {
		return err
	}
	var out []float64
	for sc.Scan() {
		var req struct {
			Batch int             `json:"batch"`
			N     int             `json:"n"`
			X     json.RawMessage `json:"x"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("rewardcmd: request: %w", err)
		}
		b := &Batch{Number: req.Batch}
		var err error
		switch shape.Kind {
		case Sequence:
			err = json.Unmarshal(req.X, &b.Sequences)
		case Points:
			err = json.Unmarshal(req.X, &b.Points)
		case Grid:
			err = json.Unmarshal(req.X, &b.Cells)
		}
		if err != nil || b.Len() != req.N {
			return fmt.Errorf("rewardcmd: batch %d: %d objects, want %d (%v)", req.Batch, b.Len(), req.N, err)
		}
		if err := shape.check(b); err != nil {
			return err
		}
		out = append(out[:0], make([]float64, req.N)...)
		ans := []byte(`{"batch":`)
		ans = strconv.AppendInt(ans, int64(req.Batch), 10)
		if err := score(shape, b, out); err != nil {
			msg, _ := json.Marshal(err.Error())
			ans = append(append(append(ans, `,"error":`...), msg...), '}')
		} else {
			ans = append(ans, `,"log_reward":[`...)
			for i, v := range out {
				if i > 0 {
					ans = append(ans, ',')
				}
				switch {
				case math.IsNaN(v):
					ans = append(ans, "NaN"...)
				case math.IsInf(v, 1):
					ans = append(ans, "Infinity"...)
				case math.IsInf(v, -1):
					ans = append(ans, "-Infinity"...)
				default:
					ans = strconv.AppendFloat(ans, v, 'g', -1, 64)
				}
			}
			ans = append(ans, "]}"...)
		}
		if err := send(ans); err != nil {
			return err
		}
	}
	return sc.Err()
}

// check reports the first object of b that is not of shape s, naming the
// batch, so that score sees only objects of the task's shape.
func (s Shape) check(b *Batch) error {
	for i, x := range b.Sequences {
		n := 0
		for _, r := range x {
			if !slices.Contains(s.Alphabet, string(r)) {
				return fmt.Errorf("rewardcmd: batch %d: sequence %d (%q) has %q, which is not in the alphabet %q", b.Number, i, x, r, s.Alphabet)
			}
			n++
		}
		if n != s.Length {
			return fmt.Errorf("rewardcmd: batch %d: sequence %d (%q) has %d tokens, want %d", b.Number, i, x, n, s.Length)
		}
	}
	for i, x := range b.Points {
		if len(x) != s.Dim {
			return fmt.Errorf("rewardcmd: batch %d: point %d has %d coordinates, want %d", b.Number, i, len(x), s.Dim)
		}
	}
	for i, x := range b.Cells {
		if len(x) != s.Dim {
			return fmt.Errorf("rewardcmd: batch %d: cell %d has %d coordinates, want %d", b.Number, i, len(x), s.Dim)
		}
		for _, v := range x {
			if v < 0 || v >= s.Side {
				return fmt.Errorf("rewardcmd: batch %d: cell %d %v is outside {0..%d}^%d", b.Number, i, x, s.Side-1, s.Dim)
			}
		}
	}
	return nil
}
