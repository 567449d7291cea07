package run

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gfngo/gfn/safetensors"
)

func TestCell(t *testing.T) {
	for _, c := range []struct {
		v      float64
		digits int
		want   string
	}{
		{math.NaN(), 8, ""},
		{0, 8, "0"},
		{1.0 / 3, 8, "0.33333333"},
		{1.0 / 3, 10, "0.3333333333"},
		{-2.5e-7, 10, "-2.5e-07"},
		{123456789, 8, "1.2345679e+08"},
		{math.Inf(1), 8, "+Inf"},
	} {
		if got := Cell(c.v, c.digits); got != c.want {
			t.Errorf("Cell(%v, %d) = %q, want %q", c.v, c.digits, got, c.want)
		}
	}
}

func TestWriteCSVRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name   string
		header []string
		rows   [][]string
		want   string // the bytes, where they matter
	}{
		{"no rows", []string{"step", "loss"}, nil, "step,loss\n"},
		{"plain", []string{"step", "loss"}, [][]string{{"0", "1.5"}, {"10", ""}}, "step,loss\n0,1.5\n10,\n"},
		{"quoted", []string{"a", "b"}, [][]string{{`x,y`, `say "hi"`}, {"line\nbreak", " "}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteCSV(&b, c.header, c.rows); err != nil {
				t.Fatal(err)
			}
			if c.want != "" && b.String() != c.want {
				t.Errorf("wrote %q, want %q", b.String(), c.want)
			}
			got, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			want := append([][]string{c.header}, c.rows...)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read back %q, want %q", got, want)
			}
		})
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteCSVReportsWriterError(t *testing.T) {
	if err := WriteCSV(failWriter{}, []string{"a"}, [][]string{{"1"}}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("error %v, want the writer's", err)
	}
}

func TestNullable(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if p := Nullable(v); p != nil {
			t.Errorf("Nullable(%v) = %v, want nil", v, *p)
		}
	}
	v := 2.5
	p := Nullable(v)
	if p == nil || *p != 2.5 || p == &v {
		t.Errorf("Nullable(2.5) = %v, want a pointer to a copy of 2.5", p)
	}
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteJSON(t *testing.T) {
	for _, c := range []struct {
		name    string
		v       any
		want    string // the file after the write
		wantErr bool
	}{
		{"struct", struct {
			A int     `json:"a"`
			B *string `json:"b"`
		}{1, nil}, "{\n  \"a\": 1,\n  \"b\": null\n}\n", false},
		// An unencodable value fails before the file is touched.
		{"NaN", map[string]float64{"x": math.NaN()}, "old\n", true},
		{"channel", make(chan int), "old\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, SummaryFile)
			if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := WriteJSON(path, c.v)
			if (err != nil) != c.wantErr {
				t.Fatalf("error %v, want one: %v", err, c.wantErr)
			}
			if b, _ := os.ReadFile(path); string(b) != c.want {
				t.Errorf("file %q, want %q", b, c.want)
			}
			if names := entries(t, dir); !reflect.DeepEqual(names, []string{SummaryFile}) {
				t.Errorf("directory holds %q, want only %s", names, SummaryFile)
			}
		})
	}
}

func TestWriteJSONIntoMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := WriteJSON(filepath.Join(dir, "no", SummaryFile), 1); err == nil {
		t.Error("no error writing into a missing directory")
	}
	if names := entries(t, dir); len(names) != 0 {
		t.Errorf("left %q", names)
	}
}

func TestWriteCheckpoint(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, CheckpointFile)
	ts := []safetensors.Tensor{safetensors.F64("run.curve", []int{2, 2}, []float64{0, 1, math.NaN(), 3}),
		safetensors.I64("seen.key", []int{3}, []int64{-1, 0, 7})}
	state := []byte(`{"step":3}`)
	if err := WriteCheckpoint(path, ts, "gfn_test_state", state); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, meta, err := safetensors.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	wantMeta := map[string]string{"format": "pt", "producer": "gfn", "gfn_test_state": string(state)}
	if !reflect.DeepEqual(meta, wantMeta) {
		t.Errorf("metadata %v, want %v", meta, wantMeta)
	}
	if len(got) != len(ts) {
		t.Fatalf("%d tensors read, %d written", len(got), len(ts))
	}
	for i := range ts {
		if got[i].Name != ts[i].Name || got[i].DType != ts[i].DType || !reflect.DeepEqual(got[i].Shape, ts[i].Shape) || !bytes.Equal(got[i].Data, ts[i].Data) {
			t.Errorf("tensor %d: read %s %s %v, wrote %s %s %v", i, got[i].Name, got[i].DType, got[i].Shape, ts[i].Name, ts[i].DType, ts[i].Shape)
		}
	}
	// A tensor whose data do not match its shape fails the write and
	// leaves the previous checkpoint.
	before, _ := os.ReadFile(path)
	bad := []safetensors.Tensor{{Name: "x", DType: "F64", Shape: []int{3}, Data: make([]byte, 8)}}
	if err := WriteCheckpoint(path, bad, "gfn_test_state", state); err == nil {
		t.Error("no error for a malformed tensor")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a failed checkpoint changed the previous one")
	}
	if names := entries(t, dir); !reflect.DeepEqual(names, []string{CheckpointFile}) {
		t.Errorf("directory holds %q", names)
	}
}

func TestWriteOutputs(t *testing.T) {
	curve := func(w io.Writer) error { return WriteCSV(w, []string{"step"}, [][]string{{"1"}}) }
	failing := errors.New("failing")
	for _, c := range []struct {
		name      string
		curve     func(io.Writer) error
		summary   any
		ckptErr   error
		wantErr   error // nil: none; otherwise errors.Is or the message's content
		wantFiles []string
		wantCkpt  bool // the checkpoint was called
	}{
		{"all", curve, map[string]int{"steps": 1}, nil, nil, []string{MetricsFile, SummaryFile}, true},
		{"curve fails", func(w io.Writer) error { return failing }, map[string]int{}, nil, failing, nil, false},
		{"summary fails", curve, math.NaN(), nil, errors.New("unsupported value"), []string{MetricsFile}, false},
		{"checkpoint fails", curve, 1, failing, failing, []string{MetricsFile, SummaryFile}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			called := false
			err := WriteOutputs(dir, c.curve, c.summary, func() error {
				called = true
				// The summary is written before the checkpoint.
				if _, err := os.Stat(filepath.Join(dir, SummaryFile)); err != nil {
					t.Errorf("checkpoint before the summary: %v", err)
				}
				return c.ckptErr
			})
			switch {
			case c.wantErr == nil && err != nil:
				t.Fatalf("error %v", err)
			case c.wantErr != nil && (err == nil || !errors.Is(err, c.wantErr) && !strings.Contains(err.Error(), c.wantErr.Error())):
				t.Fatalf("error %v, want %v", err, c.wantErr)
			}
			if called != c.wantCkpt {
				t.Errorf("checkpoint called: %v, want %v", called, c.wantCkpt)
			}
			if names := entries(t, dir); !reflect.DeepEqual(names, c.wantFiles) {
				t.Errorf("directory holds %q, want %q", names, c.wantFiles)
			}
		})
	}
}

func TestSaveFailure(t *testing.T) {
	stop := errors.New("diffusion: non-finite loss")
	cerr := errors.New("safefile: writing x: disk full")
	for _, c := range []struct {
		name    string
		ckpt    error
		unit    string
		n       int
		want    string
		wantErr []error // what errors.Is finds
		notErr  []error // what it does not
	}{
		{"written", nil, "iteration", 120, "diffusion: non-finite loss (checkpoint of iteration 120 written to runs/x)", []error{stop}, nil},
		{"round", nil, "round", 7, "diffusion: non-finite loss (checkpoint of round 7 written to runs/x)", []error{stop}, nil},
		{"checkpoint failed", cerr, "round", 7, "diffusion: non-finite loss (and the checkpoint failed: safefile: writing x: disk full)", []error{stop}, []error{cerr}},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			err := SaveFailure(stop, func() error { calls++; return c.ckpt }, c.unit, c.n, "runs/x")
			if calls != 1 {
				t.Errorf("checkpoint called %d times", calls)
			}
			if err.Error() != c.want {
				t.Errorf("error %q, want %q", err, c.want)
			}
			for _, e := range c.wantErr {
				if !errors.Is(err, e) {
					t.Errorf("errors.Is(err, %v) = false", e)
				}
			}
			for _, e := range c.notErr {
				if errors.Is(err, e) {
					t.Errorf("errors.Is(err, %v) = true", e)
				}
			}
		})
	}
}

func TestCheckpointFailed(t *testing.T) {
	stop := errors.New("train: interrupted")
	err := CheckpointFailed(stop, errors.New("no space"))
	if want := "train: interrupted (and the checkpoint failed: no space)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if !errors.Is(err, stop) || errors.Unwrap(err) != stop {
		t.Error("the result does not wrap the run's error")
	}
}

func TestIterStats(t *testing.T) {
	ms := func(v ...float64) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x * float64(time.Millisecond))
		}
		return d
	}
	seq := func(n int) []float64 { // 1, 2, ..., n
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i + 1)
		}
		return v
	}
	for _, c := range []struct {
		name              string
		ms                []float64
		early, late, mean float64
	}{
		{"none", nil, 0, 0, 0},
		{"one", []float64{4}, 4, 4, 4},
		// Fewer than ten: the first and the last alone.
		{"three", []float64{1, 2, 6}, 1, 6, 3},
		{"ten", seq(10), 1, 10, 5.5},
		// 25 iterations: tenths of 2.
		{"twenty-five", seq(25), 1.5, 24.5, 13},
		{"hundred", seq(100), 5.5, 95.5, 50.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			check := func(kind string, e, l, m float64) {
				if math.Abs(e-c.early) > 1e-9 || math.Abs(l-c.late) > 1e-9 || math.Abs(m-c.mean) > 1e-9 {
					t.Errorf("%s: early, late, mean = %v, %v, %v; want %v, %v, %v", kind, e, l, m, c.early, c.late, c.mean)
				}
			}
			e, l, m := IterStats(c.ms)
			check("milliseconds", e, l, m)
			e, l, m = IterStats(ms(c.ms...))
			check("durations", e, l, m)
		})
	}
}

// TestIterStatsSumsInOrder pins the arithmetic the families' summaries
// have always used: durations summed as integers, milliseconds as floats
// in order, each divided once.
func TestIterStatsSumsInOrder(t *testing.T) {
	d := []time.Duration{1_234_567, 7_654_321, 3}
	_, _, mean := IterStats(d)
	if want := (d[0] + d[1] + d[2]).Seconds() * 1000 / 3; mean != want {
		t.Errorf("durations: mean %v, want %v", mean, want)
	}
	f := []float64{0.1, 0.2, 0.3}
	_, _, mean = IterStats(f)
	if want := ((f[0] + f[1]) + f[2]) / 3; mean != want {
		t.Errorf("milliseconds: mean %v, want %v", mean, want)
	}
}

func TestClock(t *testing.T) {
	c := Clock{Start: time.Now().Add(-2 * time.Second), Before: 10}
	if s := c.Seconds(); s < 12 || s > 13 {
		t.Errorf("Seconds = %v, want 10 before and 2 since the start", s)
	}
	if s := (Clock{Start: time.Now()}).Seconds(); s < 0 || s > 1 {
		t.Errorf("a fresh clock reads %v", s)
	}
}
