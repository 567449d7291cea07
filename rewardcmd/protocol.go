package rewardcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/gfngo/gfn/internal/choice"
)

// Protocol and Version name the protocol in the handshake.
const (
	Protocol = "gfn-reward"
	Version  = 1
)

// Kind is the kind of objects a program scores.
type Kind string

// The kinds of objects.
const (
	// Sequence objects are strings of Shape.Length characters of
	// Shape.Alphabet.
	Sequence Kind = "sequence"
	// Points are vectors of Shape.Dim real numbers.
	Points Kind = "points"
	// Grid objects are cells of the hypergrid {0..Side-1}^Dim.
	Grid Kind = "grid"
)

// Kinds lists the kinds.
var Kinds = []Kind{Sequence, Points, Grid}

// Shape is the task's shape, sent to the program in the handshake.
type Shape struct {
	Kind Kind `json:"kind"`
	// Length and Alphabet are the sequence kind's: sequences of Length
	// tokens, each one character (a Unicode code point) of Alphabet.
	Length   int      `json:"length,omitempty"`
	Alphabet []string `json:"alphabet,omitempty"`
	// Dim is the dimension of points and of the grid; Side is the grid's
	// side H (coordinates 0..H-1).
	Dim  int `json:"dim,omitempty"`
	Side int `json:"side,omitempty"`
}

// Validate reports the first invalid field of s, naming the value and
// what is allowed.
func (s Shape) Validate() error {
	switch s.Kind {
	case Sequence:
		if s.Length < 1 {
			return fmt.Errorf("rewardcmd: sequence length %d must be at least 1", s.Length)
		}
		if len(s.Alphabet) < 2 {
			return fmt.Errorf("rewardcmd: alphabet %q must have at least 2 tokens", s.Alphabet)
		}
		seen := map[string]bool{}
		for _, a := range s.Alphabet {
			r, size := utf8.DecodeRuneInString(a)
			if a == "" || size != len(a) || r == utf8.RuneError || unicode.IsControl(r) || unicode.IsSpace(r) {
				return fmt.Errorf("rewardcmd: alphabet token %q is invalid: every token must be one printable character", a)
			}
			if seen[a] {
				return fmt.Errorf("rewardcmd: alphabet token %q appears twice", a)
			}
			seen[a] = true
		}
	case Points:
		if s.Dim < 1 {
			return fmt.Errorf("rewardcmd: dimension %d must be at least 1", s.Dim)
		}
	case Grid:
		if s.Dim < 1 {
			return fmt.Errorf("rewardcmd: grid dimension %d must be at least 1", s.Dim)
		}
		if s.Side < 2 {
			return fmt.Errorf("rewardcmd: grid side %d must be at least 2", s.Side)
		}
	default:
		return fmt.Errorf("rewardcmd: kind %q is unknown (allowed: %s)", s.Kind, choice.List(Kinds))
	}
	return nil
}

// String describes the objects: "sequences of 10 over ACGT", "points in
// R^2" or "grid d=2 H=8".
func (s Shape) String() string {
	switch s.Kind {
	case Sequence:
		a := ""
		for _, t := range s.Alphabet {
			a += t
		}
		return fmt.Sprintf("sequences of %d over %s", s.Length, a)
	case Points:
		return fmt.Sprintf("points in R^%d", s.Dim)
	case Grid:
		return fmt.Sprintf("grid d=%d H=%d", s.Dim, s.Side)
	}
	return string(s.Kind)
}

// handshake is the first line gfn sends.
func handshake(s Shape) []byte {
	b, _ := json.Marshal(struct {
		Protocol string `json:"protocol"`
		Version  int    `json:"version"`
		Shape
	}{Protocol, Version, s})
	return append(b, '\n')
}

// checkHello checks the program's answer to the handshake; it returns a
// description of what is wrong, or "".
func checkHello(line []byte) string {
	var a struct {
		OK      *bool            `json:"ok"`
		Error   *string          `json:"error"`
		Version *json.RawMessage `json:"version"`
	}
	if !isObject(line) || json.Unmarshal(sanitize(line), &a) != nil {
		return "the answer is not a JSON object"
	}
	if a.OK == nil {
		return `the answer has no "ok"`
	}
	if !*a.OK {
		if a.Error != nil {
			return "the program refused the task: " + *a.Error
		}
		return "the program refused the task"
	}
	if a.Version != nil && string(*a.Version) != strconv.Itoa(Version) {
		return fmt.Sprintf("the program speaks version %s; gfn speaks %d", *a.Version, Version)
	}
	return ""
}

// answer is a batch's answer line.
type answer struct {
	Batch     *json.RawMessage  `json:"batch"`
	LogReward []json.RawMessage `json:"log_reward"`
	Error     *string           `json:"error"`
}

// isObject reports whether line holds a JSON object (by its first
// non-space byte).
func isObject(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) > 0 && t[0] == '{'
}

// sanitize quotes the bare tokens NaN, Infinity and -Infinity that
// Python's json module writes for non-finite floats, so that the line
// parses and the values can be reported. Lines without them are returned
// as they are.
func sanitize(line []byte) []byte {
	var out []byte
	last := 0
	inStr, esc := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			continue
		}
		for _, tok := range []string{"NaN", "Infinity", "-Infinity"} {
			if bytes.HasPrefix(line[i:], []byte(tok)) {
				out = append(out, line[last:i]...)
				out = append(out, '"')
				out = append(out, tok...)
				out = append(out, '"')
				i += len(tok) - 1
				last = i + 1
				break
			}
		}
	}
	if out == nil {
		return line
	}
	return append(out, line[last:]...)
}

// value parses one log-reward; it returns a description of what is wrong
// with it, or "".
func value(raw json.RawMessage) (float64, string) {
	switch {
	case len(raw) == 0:
		return 0, "missing"
	case raw[0] == '"':
		var s string
		json.Unmarshal(raw, &s)
		switch s {
		case "NaN":
			return math.NaN(), "NaN"
		case "Infinity":
			return math.Inf(1), "+Inf"
		case "-Infinity":
			return math.Inf(-1), "-Inf"
		}
		return 0, fmt.Sprintf("the string %s, not a number", truncate(raw, 40))
	case string(raw) == "null":
		return 0, "null, not a number"
	case raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'):
		v, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return v, fmt.Sprintf("%s, out of the range of float64", truncate(raw, 40))
		}
		return v, ""
	}
	return 0, fmt.Sprintf("%s, not a number", truncate(raw, 40))
}

// truncate quotes at most n bytes of b (at a character boundary) for an
// error message.
func truncate(b []byte, n int) string {
	b = bytes.TrimRight(b, "\r\n")
	if len(b) <= n {
		return string(b)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", b[:cut], len(b))
}
