package safefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.txt")
	if err := WriteBytes(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	// A failing writer leaves the old content and no temporary file.
	err := Write(p, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return errors.New("disk full")
	})
	if err == nil {
		t.Fatal("no error from a failing writer")
	}
	b, _ := os.ReadFile(p)
	if string(b) != "one" {
		t.Errorf("content %q after a failed write", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files left in the directory", len(entries))
	}
	if err := WriteBytes(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("content %q", b)
	}
}

func TestCheckDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x", "y")
	if err := CheckDir(dir); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if err := CheckDir(filepath.Join(f, "sub")); err == nil {
		t.Error("a path under a regular file was accepted")
	}
}
