package tfevents

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Prefix begins the name of every event file; TensorBoard reads the
// files whose names contain "tfevents".
const Prefix = "events.out.tfevents."

// Writer appends Events to one event file.
type Writer struct {
	f    *os.File
	path string
	last int64
}

// Files lists the event files in dir, oldest first (by the time in
// their names, then by name).
func Files(dir string) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, Prefix+"*"))
	if err != nil {
		return nil, err
	}
	key := func(p string) (int64, string) {
		rest := strings.TrimPrefix(filepath.Base(p), Prefix)
		sec, _, _ := strings.Cut(rest, ".")
		n, _ := strconv.ParseInt(sec, 10, 64)
		return n, p
	}
	slices.SortFunc(names, func(a, b string) int {
		na, pa := key(a)
		nb, pb := key(b)
		if na != nb {
			return int(min(max(na-nb, -1), 1))
		}
		return strings.Compare(pa, pb)
	})
	return names, nil
}

// Create starts a new event file in dir named Prefix, t's Unix seconds,
// a dot and the host name (then ".1", ".2", ... if that name is taken),
// and writes its file_version Event at time t.
func Create(dir string, t time.Time) (*Writer, error) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	host = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, host)
	base := filepath.Join(dir, Prefix+strconv.FormatInt(t.Unix(), 10)+"."+host)
	for i := 0; ; i++ {
		path := base
		if i > 0 {
			path += "." + strconv.Itoa(i)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) && i < 1000 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("tfevents: %w", err)
		}
		w := &Writer{f: f, path: path, last: -1}
		if err := w.write(&Event{WallTime: seconds(t), FileVersion: FileVersion}); err != nil {
			f.Close()
			return nil, err
		}
		return w, nil
	}
}

// Open continues the event files of dir: it appends to the newest one,
// after cutting a record a crash left torn at its end, or, when there is
// none or its content is corrupt, starts a new one with Create. LastStep
// is then the largest step of a summary Event in dir's readable events
// (-1: none), so that the caller writes each step once.
func Open(dir string, t time.Time) (*Writer, error) {
	files, err := Files(dir)
	if err != nil {
		return nil, fmt.Errorf("tfevents: %w", err)
	}
	last, good, intact := int64(-1), int64(0), false
	for i, p := range files {
		evs, n, err := readPrefix(p)
		for _, e := range evs {
			if e.FileVersion == "" {
				last = max(last, e.Step)
			}
		}
		if i == len(files)-1 {
			good, intact = n, err == nil || errors.Is(err, ErrTorn)
		}
	}
	if !intact {
		w, err := Create(dir, t)
		if err == nil {
			w.last = last
		}
		return w, err
	}
	path := files[len(files)-1]
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("tfevents: %w", err)
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("tfevents: cutting the torn end of %s: %w", path, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("tfevents: %w", err)
	}
	return &Writer{f: f, path: path, last: last}, nil
}

// RemoveAll deletes dir's event files (those of a run a fresh one
// replaces).
func RemoveAll(dir string) error {
	files, err := Files(dir)
	if err != nil {
		return fmt.Errorf("tfevents: %w", err)
	}
	for _, p := range files {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("tfevents: %w", err)
		}
	}
	return nil
}

// Path is the file w appends to.
func (w *Writer) Path() string { return w.path }

// LastStep is the largest step written so far (by this writer or, after
// Open, before it), -1 if none.
func (w *Writer) LastStep() int64 { return w.last }

// Scalars appends the summary Event of values at step and time t. A
// step not after LastStep is an error naming both: each step is written
// once.
func (w *Writer) Scalars(step int64, t time.Time, values []Scalar) error {
	if step <= w.last {
		return fmt.Errorf("tfevents: step %d of %s is not after the last step written, %d", step, w.path, w.last)
	}
	if err := w.write(&Event{WallTime: seconds(t), Step: step, Values: values}); err != nil {
		return err
	}
	w.last = step
	return nil
}

// write appends e's record in one write call.
func (w *Writer) write(e *Event) error {
	if _, err := w.f.Write(AppendRecord(nil, e.Marshal())); err != nil {
		return fmt.Errorf("tfevents: %w", err)
	}
	return nil
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }

func seconds(t time.Time) float64 { return float64(t.Unix()) + float64(t.Nanosecond())/1e9 }

// ReadFile returns the Events of the event file at path. A record torn
// at the end returns the Events before it and an error wrapping ErrTorn;
// a corrupt one, those before it and an error naming the file.
func ReadFile(path string) ([]*Event, error) {
	evs, _, err := readPrefix(path)
	return evs, err
}

// readPrefix reads the events of path up to the end or the first bad
// record, and returns them with the length of the good prefix.
func readPrefix(path string) ([]*Event, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("tfevents: %w", err)
	}
	defer f.Close()
	r := &counter{r: bufio.NewReader(f)}
	var evs []*Event
	for {
		at := r.n
		data, err := ReadRecord(r)
		if err == io.EOF {
			return evs, at, nil
		}
		if err == nil {
			var e *Event
			if e, err = Unmarshal(data); err == nil {
				evs = append(evs, e)
				continue
			}
		}
		return evs, at, &recordError{path, at, err}
	}
}

// recordError is a bad record's error: the reader's, with the file and
// the record's offset.
type recordError struct {
	path string
	at   int64
	err  error
}

func (e *recordError) Error() string {
	return fmt.Sprintf("%v (%s, record at byte %d)", e.err, e.path, e.at)
}

func (e *recordError) Unwrap() error { return e.err }

type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
