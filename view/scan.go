package view

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gfngo/gfn/run"
)

// State is a run's state as its directory shows it.
type State string

// The states of a run.
const (
	// Running: its RunningFile names a live process (or one on another
	// host).
	Running State = "running"
	// Finished: it wrote its summary.
	Finished State = "finished"
	// Interrupted: stopped before the end (Ctrl-C, a kill, a crash);
	// gfn train --resume continues it.
	Interrupted State = "interrupted"
	// Failed: a recoverable error stopped it (Run.Reason says which).
	Failed State = "failed"
	// Unreadable: a file of it could not be read (Run.Reason says why).
	Unreadable State = "unreadable"
)

// Run is one run directory.
type Run struct {
	// ID names the run in URLs: the index of its root, a slash, and its
	// path under the root (slash-separated; "." for the root itself).
	ID  string
	Dir string
	// Name is the path under the root ("." for the root itself), after
	// the root when a Scanner has several.
	Name string
	// Family is the family's kind ("grid", "diffusion", "sequence");
	// Task, Method and Seed come from the summary or the configuration
	// ("" when neither has them).
	Family, Task, Method, Seed string
	// Unit names a unit of training ("iteration", "round").
	Unit  string
	State State
	// Step is the units done (the last curve point's label while it
	// runs), Total those planned; -1: unknown.
	Step, Total int
	// WallSeconds is the run's wall-clock time so far (NaN: unknown).
	WallSeconds float64
	// Reason says why a run is Failed or Unreadable, or how an
	// Interrupted one stopped when that is known.
	Reason string
	// Metrics is the curve (nil when metrics.csv is absent or
	// unreadable).
	Metrics *Metrics
	// Summary is summary.json's top-level fields in file order.
	Summary []Field
	// Figures are the PNG and SVG files of the directory, by name.
	Figures []string
	// Modified is the latest modification of the run's files.
	Modified time.Time
}

// Field is one top-level field of a JSON object, its value as JSON.
type Field struct {
	Key   string
	Value string
}

// Bench is a directory holding a bench table's results.md.
type Bench struct {
	ID, Dir  string
	Markdown []byte
	Modified time.Time
}

// Index is what a Scanner found under its roots.
type Index struct {
	Roots   []string
	Runs    []*Run
	Benches []*Bench
	// Version changes whenever a file the index reads changes.
	Version string
}

// Run returns the run of the given ID, or nil.
func (x *Index) Run(id string) *Run {
	for _, r := range x.Runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// Scanner finds the runs and bench tables under its roots; it keeps the
// metrics it parsed and reads a file again only when its size or
// modification time changes. It is safe for concurrent use.
type Scanner struct {
	roots []string
	host  string
	// MaxDepth bounds the directories' depth under a root (0: 8).
	MaxDepth int

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	size int64
	mod  time.Time
	m    *Metrics
	err  error
}

// NewScanner returns a Scanner of the directories roots, which must
// exist.
func NewScanner(roots ...string) (*Scanner, error) {
	if len(roots) == 0 {
		return nil, fmt.Errorf("view: no directory to scan")
	}
	for _, r := range roots {
		fi, err := os.Stat(r)
		if err != nil {
			return nil, fmt.Errorf("view: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("view: %s is not a directory", r)
		}
	}
	host, _ := os.Hostname()
	return &Scanner{roots: roots, host: host, cache: map[string]cached{}}, nil
}

// isRun reports whether dir's entries make it a run directory.
func isRun(names map[string]fs.DirEntry) bool {
	for _, f := range []string{run.MetricsFile, run.CheckpointFile, run.SummaryFile, run.RunningFile} {
		if names[f] != nil {
			return true
		}
	}
	return false
}

// Scan walks the roots (skipping hidden directories) and reads every run
// and bench table. A file it cannot read makes that run Unreadable; only
// a root it cannot list is an error.
func (s *Scanner) Scan() (*Index, error) {
	x := &Index{Roots: s.roots}
	h := fnv.New64a()
	depth := s.MaxDepth
	if depth <= 0 {
		depth = 8
	}
	for i, root := range s.roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == root {
					return err
				}
				return nil // a directory that vanished or is unreadable: skipped
			}
			if !d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			if path != root && (strings.HasPrefix(d.Name(), ".") || strings.Count(rel, string(filepath.Separator)) >= depth) {
				return filepath.SkipDir
			}
			ents, err := os.ReadDir(path)
			if err != nil {
				return nil
			}
			names := map[string]fs.DirEntry{}
			for _, e := range ents {
				names[e.Name()] = e
				if !e.IsDir() {
					if fi, err := e.Info(); err == nil {
						fmt.Fprintf(h, "%s\x00%d\x00%d\x00", filepath.Join(path, e.Name()), fi.Size(), fi.ModTime().UnixNano())
					}
				}
			}
			id := strconv.Itoa(i) + "/" + filepath.ToSlash(rel)
			if names["results.md"] != nil {
				if b := s.bench(id, path); b != nil {
					x.Benches = append(x.Benches, b)
				}
			}
			if isRun(names) {
				r := s.run(id, path, ents)
				r.Name = rel
				if len(s.roots) > 1 {
					r.Name = path
				}
				x.Runs = append(x.Runs, r)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("view: %w", err)
		}
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], h.Sum64())
	x.Version = fmt.Sprintf("%x", v)
	return x, nil
}

func (s *Scanner) bench(id, dir string) *Bench {
	path := filepath.Join(dir, "results.md")
	b, err := readLimited(path, 4<<20)
	if err != nil {
		b = []byte("*results.md is unreadable: " + err.Error() + "*\n")
	}
	fi, _ := os.Stat(path)
	bn := &Bench{ID: id, Dir: dir, Markdown: b}
	if fi != nil {
		bn.Modified = fi.ModTime()
	}
	return bn
}

func readLimited(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, n+1))
	if err == nil && int64(len(b)) > n {
		err = fmt.Errorf("view: larger than %d bytes", n)
	}
	return b, err
}

// config is the part of config.json a Scanner reads.
type config struct {
	Kind     string          `json:"kind"`
	Unit     string          `json:"unit"`
	Done     int             `json:"done"`
	Total    int             `json:"total"`
	Finished bool            `json:"finished"`
	Config   json.RawMessage `json:"config"`
}

// run reads the run in dir.
func (s *Scanner) run(id, dir string, ents []fs.DirEntry) *Run {
	r := &Run{ID: id, Dir: dir, Step: -1, Total: -1, WallSeconds: math.NaN()}
	var bad []string
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.ModTime().After(r.Modified) {
			r.Modified = fi.ModTime()
		}
		if ext := strings.ToLower(filepath.Ext(e.Name())); !e.IsDir() && (ext == ".png" || ext == ".svg") {
			r.Figures = append(r.Figures, e.Name())
		}
	}
	slices.Sort(r.Figures)
	// The configuration, then the summary, name the run.
	var cfg config
	var meta []map[string]json.RawMessage
	if b, err := os.ReadFile(filepath.Join(dir, run.ConfigFile)); err == nil {
		if err := json.Unmarshal(b, &cfg); err != nil {
			bad = append(bad, run.ConfigFile+": "+err.Error())
		} else {
			r.Family, r.Unit, r.Step, r.Total = cfg.Kind, cfg.Unit, cfg.Done, cfg.Total
		}
	}
	var sum map[string]json.RawMessage
	finished := false
	if b, err := os.ReadFile(filepath.Join(dir, run.SummaryFile)); err == nil {
		fields, err := objectFields(b)
		if err == nil {
			err = json.Unmarshal(b, &sum)
		}
		if err != nil {
			bad = append(bad, run.SummaryFile+": "+reason(err))
		} else {
			finished, r.Summary = true, fields
			meta = append(meta, sum)
		}
	}
	if len(cfg.Config) > 0 {
		meta = append(meta, flatten(cfg.Config)...)
	}
	for _, m := range meta {
		fill(&r.Task, m, "task")
		fill(&r.Method, m, "method")
		fill(&r.Seed, m, "seed")
		fill(&r.Family, m, "family")
		fill(&r.Unit, m, "unit")
	}
	if r.Family == "" && r.Task != "" {
		r.Family = "?"
	}
	// The curve.
	path := filepath.Join(dir, run.MetricsFile)
	if fi, err := os.Stat(path); err == nil {
		m, err := s.metrics(path, fi)
		if err != nil {
			bad = append(bad, run.MetricsFile+": "+reason(err))
		} else if r.Metrics = m; len(m.Rows) > 0 {
			if w := m.Last("wall_seconds"); !math.IsNaN(w) {
				r.WallSeconds = w
			}
		}
	}
	// The state.
	var running *run.Running
	if b, err := os.ReadFile(filepath.Join(dir, run.RunningFile)); err == nil {
		running = new(run.Running)
		if json.Unmarshal(b, running) != nil {
			running = nil
		}
	}
	switch {
	case running != nil && (running.Host != s.host || alive(running.PID)):
		r.State = Running
		if r.Metrics != nil && len(r.Metrics.Rows) > 0 && len(r.Metrics.Columns) > 0 {
			r.Step = max(r.Step, int(r.Metrics.Rows[len(r.Metrics.Rows)-1][0]))
		}
	case finished:
		r.State = Finished
		var w float64
		if json.Unmarshal(sum["wall_seconds"], &w) == nil && w > 0 {
			r.WallSeconds = w
		}
		var st int
		if json.Unmarshal(sum["steps"], &st) == nil {
			r.Step = st
		}
	default:
		r.State = Interrupted
		if running != nil {
			r.Reason = fmt.Sprintf("process %d on %s is gone (killed?)", running.PID, running.Host)
		}
		if h, err := checkpointHeader(filepath.Join(dir, run.CheckpointFile)); err == nil {
			r.Step, r.Total = h.Done, h.Total
			if h.Failed != "" {
				r.State, r.Reason = Failed, h.Failed
			}
			if h.WallSeconds > 0 {
				r.WallSeconds = h.WallSeconds
			}
		} else if !os.IsNotExist(err) {
			bad = append(bad, run.CheckpointFile+": "+reason(err))
		}
	}
	if len(bad) > 0 {
		r.State, r.Reason = Unreadable, strings.Join(bad, "; ")
	}
	return r
}

// reason is err's message for a run's Reason, without this package's
// prefix.
func reason(err error) string { return strings.TrimPrefix(err.Error(), "view: ") }

// metrics parses path unless the cache holds it at fi's size and time.
func (s *Scanner) metrics(path string, fi os.FileInfo) (*Metrics, error) {
	s.mu.Lock()
	c, ok := s.cache[path]
	s.mu.Unlock()
	if ok && c.size == fi.Size() && c.mod.Equal(fi.ModTime()) {
		return c.m, c.err
	}
	m, err := ReadMetrics(path)
	s.mu.Lock()
	s.cache[path] = cached{size: fi.Size(), mod: fi.ModTime(), m: m, err: err}
	s.mu.Unlock()
	return m, err
}

// objectFields lists a JSON object's top-level fields in file order.
func objectFields(b []byte) ([]Field, error) {
	d := json.NewDecoder(strings.NewReader(string(b)))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("view: not a JSON object")
	}
	var fs []Field
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		fs = append(fs, Field{Key: t.(string), Value: string(v)})
	}
	return fs, nil
}

// flatten lists the objects of a JSON value breadth-first: the value's,
// then its members'.
func flatten(b json.RawMessage) []map[string]json.RawMessage {
	var out []map[string]json.RawMessage
	queue := []json.RawMessage{b}
	for len(queue) > 0 && len(out) < 64 {
		var m map[string]json.RawMessage
		if json.Unmarshal(queue[0], &m) == nil {
			out = append(out, m)
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if v := m[k]; len(v) > 0 && v[0] == '{' {
					queue = append(queue, v)
				}
			}
		}
		queue = queue[1:]
	}
	return out
}

// fill sets *dst from m[key] (a string or a number) unless it is set.
func fill(dst *string, m map[string]json.RawMessage, key string) {
	v, ok := m[key]
	if *dst != "" || !ok {
		return
	}
	var str string
	if json.Unmarshal(v, &str) == nil {
		*dst = str
		return
	}
	var n json.Number
	if json.Unmarshal(v, &n) == nil {
		*dst = n.String()
	}
}

// header is the part of a checkpoint's "gfn" header a Scanner reads.
type header struct {
	Done        int     `json:"done"`
	Total       int     `json:"total"`
	Failed      string  `json:"failed"`
	WallSeconds float64 `json:"wall_seconds"`
}

// checkpointHeader reads only the safetensors header of a checkpoint
// (its JSON, after its little-endian uint64 length), not its tensors.
func checkpointHeader(path string) (*header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var n [8]byte
	if _, err := io.ReadFull(f, n[:]); err != nil {
		return nil, fmt.Errorf("view: header length: %w", err)
	}
	size := binary.LittleEndian.Uint64(n[:])
	if size > 256<<20 {
		return nil, fmt.Errorf("view: header length %d is implausible", size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("view: header of %d bytes: %w", size, err)
	}
	var st struct {
		Meta map[string]string `json:"__metadata__"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("view: header: %w", err)
	}
	raw, ok := st.Meta["gfn"]
	if !ok {
		return nil, os.ErrNotExist // an earlier gfn's: config.json says the rest
	}
	var h header
	if err := json.Unmarshal([]byte(raw), &h); err != nil {
		return nil, fmt.Errorf("view: gfn header: %w", err)
	}
	return &h, nil
}
