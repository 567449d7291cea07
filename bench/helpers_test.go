package bench

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// checkGolden compares got with the golden file at path, which go test
// -update rewrites.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("output differs from %s:\n%s", path, got)
	}
}

// checkCSVRoundTrip writes rows, reads them back and writes them again:
// both writes must give the same bytes and the same number of rows.
func checkCSVRoundTrip[R any](t *testing.T, rows []R, write func(io.Writer, []R) error, read func(io.Reader) ([]R, error)) {
	t.Helper()
	var out bytes.Buffer
	if err := write(&out, rows); err != nil {
		t.Fatal(err)
	}
	again, err := read(bytes.NewReader(out.Bytes()))
	if err != nil || len(again) != len(rows) {
		t.Fatalf("round trip: %v, %d rows", err, len(again))
	}
	var out2 bytes.Buffer
	if err := write(&out2, again); err != nil {
		t.Fatal(err)
	}
	if out.String() != out2.String() {
		t.Errorf("CSV changed in a round trip:\n%s\nvs\n%s", out.String(), out2.String())
	}
}

// The tables' runs as the tests drive them: RunTable, then the results
// it wrote read back.

func runGridTable(ctx context.Context, t GridTable, o GridOptions, run Runner, log io.Writer) ([]GridResult, error) {
	return runTableResults(ctx, GridRun{t, o}, o.Jobs, o.CollectOnly, run, log, ReadResultsCSV)
}

func runDiffusionTable(ctx context.Context, t DiffusionTable, o DiffusionOptions, run Runner, log io.Writer) ([]DiffusionResult, error) {
	return runTableResults(ctx, DiffusionRun{T: t, O: o}, o.Jobs, o.CollectOnly, run, log, ReadDiffusionCSV)
}

func runBiochemTable(ctx context.Context, o BiochemOptions, run Runner, log io.Writer) ([]BiochemResult, error) {
	return runTableResults(ctx, BiochemRun{O: o}, o.Jobs, o.CollectOnly, run, log, ReadBiochemCSV)
}

func runTableResults[R any](ctx context.Context, t Table, lanes int, collect bool, run Runner, log io.Writer, read func(io.Reader) ([]R, error)) ([]R, error) {
	_, _, runErr, err := RunTable(ctx, t, LaneOptions{Lanes: lanes, CollectOnly: collect}, run, log)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(t.Dir(), "results.csv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rs, err := read(f)
	if err != nil {
		return nil, err
	}
	return rs, runErr
}
