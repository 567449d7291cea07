package bench

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadColumns(t *testing.T) {
	for _, c := range []struct {
		name, csv string
		err       string // substring of the error, "" for none
	}{
		{"ok", "step,elbo,eubo,x\n0,-1,,7\n100,-0.5,2.5,8\n", ""},
		{"missing", "step,elbo\n0,-1\n", "has no eubo column"},
		{"ragged", "step,elbo,eubo\n0,-1\n", "unreadable"},
		{"header only", "step,elbo,eubo\n", "unreadable or empty"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "metrics.csv"), []byte(c.csv), 0o644)
		got, err := readColumns(dir, []string{"step", "elbo", "eubo"}, []string{"x", "absent"})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, ok := got["absent"]; ok || len(got) != 4 {
			t.Errorf("%s: columns %v", c.name, got)
		}
		if got["step"][1] != 100 || got["elbo"][0] != -1 || !math.IsNaN(got["eubo"][0]) || got["eubo"][1] != 2.5 || got["x"][1] != 8 {
			t.Errorf("%s: %v", c.name, got)
		}
	}
	if _, err := readColumns(t.TempDir(), []string{"step"}, nil); err == nil {
		t.Error("a directory without metrics.csv was read")
	}
}
