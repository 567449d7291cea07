package tfevents

import (
	"encoding/json"
	"math"
	"os/exec"
	"testing"
	"time"
)

// TestPythonProtobuf decodes a written file with Debian's python3-protobuf
// and TensorFlow's published Event/Summary schema (testdata/
// decode_events.py), which checks the framing's masked CRCs with its own
// CRC-32C; skipped when python3 or its protobuf module is absent.
func TestPythonProtobuf(t *testing.T) {
	py := pythonWithProtobuf()
	if py == "" {
		t.Skip("no python3 with the protobuf module (apt-get install python3-protobuf)")
	}
	dir := t.TempDir()
	t0 := time.Unix(1700000000, 250_000_000)
	w, err := Create(dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	type point struct {
		step int64
		vals []Scalar
	}
	pts := []point{
		{0, []Scalar{{"student_loss", 57.5}, {"modes", 0}}},
		{25, []Scalar{{"student_loss", 12.240073}, {"modes", 3}, {"student_l1", 1.2052886e-4}}},
		{1 << 40, []Scalar{{"wall_seconds", float32(math.Pi)}, {"tag with spaces/and/slashes", -1e30}}},
	}
	for i, p := range pts {
		if err := w.Scalars(p.step, t0.Add(time.Duration(i)*time.Second), p.vals); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	out, err := exec.Command(py, "testdata/decode_events.py", w.Path()).CombinedOutput()
	if err != nil {
		t.Fatalf("decode_events.py: %v\n%s", err, out)
	}
	var evs []struct {
		WallTime    float64 `json:"wall_time"`
		Step        int64   `json:"step"`
		What        string  `json:"what"`
		FileVersion string  `json:"file_version"`
		Values      []struct {
			Tag         string  `json:"tag"`
			SimpleValue float64 `json:"simple_value"`
			Kind        string  `json:"kind"`
		} `json:"values"`
	}
	if err := json.Unmarshal(out, &evs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(evs) != 1+len(pts) {
		t.Fatalf("%d events, want %d:\n%s", len(evs), 1+len(pts), out)
	}
	if e := evs[0]; e.What != "file_version" || e.FileVersion != "brain.Event:2" || e.WallTime != 1700000000.25 {
		t.Errorf("first event %+v, want file_version brain.Event:2 at 1700000000.25", e)
	}
	for i, p := range pts {
		e := evs[i+1]
		if e.What != "summary" || e.Step != p.step || e.WallTime != 1700000000.25+float64(i) || len(e.Values) != len(p.vals) {
			t.Errorf("event %d: %+v, want step %d with %d values", i+1, e, p.step, len(p.vals))
			continue
		}
		for j, v := range p.vals {
			g := e.Values[j]
			if g.Tag != v.Tag || g.SimpleValue != float64(v.Value) || g.Kind != "simple_value" {
				t.Errorf("event %d value %d: %+v, want %s = %v", i+1, j, g, v.Tag, v.Value)
			}
		}
	}
}

// pythonWithProtobuf is the first python3 (on the PATH, then Debian's)
// that imports google.protobuf, or "".
func pythonWithProtobuf() string {
	var cands []string
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	for _, p := range append(cands, "/usr/bin/python3") {
		if exec.Command(p, "-c", "import google.protobuf").Run() == nil {
			return p
		}
	}
	return ""
}
