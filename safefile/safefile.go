package safefile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write creates or replaces path with what write produces.
func Write(path string, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("safefile: writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err = write(bw); err != nil {
		return fmt.Errorf("safefile: writing %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("safefile: writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("safefile: writing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("safefile: writing %s: %w", path, err)
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("safefile: writing %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("safefile: writing %s: %w", path, err)
	}
	return nil
}

// WriteBytes is Write for a byte slice.
func WriteBytes(path string, b []byte) error {
	return Write(path, func(w io.Writer) error { _, err := w.Write(b); return err })
}

// CheckDir creates dir if needed and proves it is writable by creating and
// removing a temporary file, so a run can fail before doing any work.
func CheckDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("safefile: output directory %s is not usable: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".gfn-write-test*")
	if err != nil {
		return fmt.Errorf("safefile: output directory %s is not writable: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
