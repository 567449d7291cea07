package view

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gfngo/gfn/progress"
	"github.com/gfngo/gfn/run"
)

//go:embed assets
var assets embed.FS

// DefaultSelection is the number of runs a page overlays when the URL
// selects none: the most recently modified.
const DefaultSelection = 12

// Server is the dashboard's http.Handler:
//
//	/                      the page (runs, curves, figures, summaries, bench tables);
//	                       ?run=ID (repeated) selects the runs to overlay, ?all=1 all;
//	                       ?partial=1 returns the page's <main> only
//	/api/version           {"version": ...}, which changes when a file changes
//	/api/runs              the runs as JSON
//	/api/metrics?run=ID    a run's curve as JSON {"columns": [...], "rows": [[...]]}
//	                       (null: not computed); 422 with {"error": ...} if unreadable
//	/chart.svg?column=C&run=ID...  one column's chart of the runs
//	/file?run=ID&name=N    a run's figure, summary.json, config.json or metrics.csv
//	/static/...            the page's stylesheet and script
type Server struct {
	scan *Scanner
	mux  *http.ServeMux
	page *template.Template
}

// NewServer returns the dashboard of the runs under roots.
func NewServer(roots ...string) (*Server, error) {
	sc, err := NewScanner(roots...)
	if err != nil {
		return nil, err
	}
	s := &Server{scan: sc, mux: http.NewServeMux()}
	s.page = template.Must(template.New("page.html").Funcs(template.FuncMap{
		"markdown": func(b []byte) template.HTML { return template.HTML(Markdown(b)) },
		"wall":     wall,
		"state":    stateText,
	}).ParseFS(assets, "assets/page.html"))
	static, _ := fs.Sub(assets, "assets")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.index)
	s.mux.HandleFunc("GET /api/version", s.version)
	s.mux.HandleFunc("GET /api/runs", s.runs)
	s.mux.HandleFunc("GET /api/metrics", s.metrics)
	s.mux.HandleFunc("GET /chart.svg", s.chart)
	s.mux.HandleFunc("GET /file", s.file)
	return s, nil
}

// ServeHTTP serves the dashboard.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Scanner is the server's scanner.
func (s *Server) Scanner() *Scanner { return s.scan }

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	x, ok := s.scanOr500(w)
	if !ok {
		return
	}
	p := s.pageData(x, r)
	name := "page"
	if r.URL.Query().Get("partial") != "" {
		name = "main"
	}
	var b bytes.Buffer
	if err := s.page.ExecuteTemplate(&b, name, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

func (s *Server) scanOr500(w http.ResponseWriter) (*Index, bool) {
	x, err := s.scan.Scan()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil, false
	}
	return x, true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	if x, ok := s.scanOr500(w); ok {
		writeJSON(w, http.StatusOK, map[string]string{"version": x.Version})
	}
}

// runJSON is a run in /api/runs.
type runJSON struct {
	ID          string   `json:"id"`
	Dir         string   `json:"dir"`
	Family      string   `json:"family"`
	Task        string   `json:"task"`
	Method      string   `json:"method"`
	Seed        string   `json:"seed"`
	Unit        string   `json:"unit"`
	State       State    `json:"state"`
	Step        int      `json:"step"`
	Total       int      `json:"total"`
	WallSeconds *float64 `json:"wall_seconds"`
	Reason      string   `json:"reason,omitempty"`
	Columns     []string `json:"columns"`
	Points      int      `json:"points"`
	Figures     []string `json:"figures"`
	Modified    string   `json:"modified"`
}

func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	x, ok := s.scanOr500(w)
	if !ok {
		return
	}
	out := []runJSON{}
	for _, r := range x.Runs {
		j := runJSON{ID: r.ID, Dir: r.Dir, Family: r.Family, Task: r.Task, Method: r.Method, Seed: r.Seed, Unit: r.Unit,
			State: r.State, Step: r.Step, Total: r.Total, WallSeconds: run.Nullable(r.WallSeconds), Reason: r.Reason,
			Figures: r.Figures, Modified: r.Modified.UTC().Format(time.RFC3339Nano)}
		if r.Metrics != nil {
			j.Columns, j.Points = r.Metrics.Columns, len(r.Metrics.Rows)
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, out)
}

// lookup finds the run of the request's "run" parameter or answers 404.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request) (*Index, *Run, bool) {
	x, ok := s.scanOr500(w)
	if !ok {
		return nil, nil, false
	}
	id := r.URL.Query().Get("run")
	run := x.Run(id)
	if run == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no run %q under %s", id, strings.Join(x.Roots, ", "))})
		return nil, nil, false
	}
	return x, run, true
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	_, run, ok := s.lookup(w, r)
	if !ok {
		return
	}
	if run.Metrics == nil {
		msg := "no metrics.csv yet"
		if run.State == Unreadable {
			msg = run.Reason
		}
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": msg, "state": string(run.State)})
		return
	}
	rows := make([][]*float64, len(run.Metrics.Rows))
	for i, row := range run.Metrics.Rows {
		rows[i] = make([]*float64, len(row))
		for j, v := range row {
			rows[i][j] = nullable(v)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"columns": run.Metrics.Columns, "rows": rows, "state": run.State})
}

func nullable(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func (s *Server) chart(w http.ResponseWriter, r *http.Request) {
	x, ok := s.scanOr500(w)
	if !ok {
		return
	}
	q := r.URL.Query()
	col := q.Get("column")
	var runs []*Run
	for _, id := range q["run"] {
		if run := x.Run(id); run != nil {
			runs = append(runs, run)
		}
	}
	series, xl := seriesOf(runs, col)
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	WriteChart(w, col, xl, series)
}

// seriesOf is the column's series of the runs that have it (each run's
// x values its first column), and the x label.
func seriesOf(runs []*Run, col string) ([]Series, string) {
	var out []Series
	xl := ""
	for i, r := range runs {
		if r.Metrics == nil || len(r.Metrics.Columns) == 0 {
			continue
		}
		y := r.Metrics.Column(col)
		if y == nil || col == r.Metrics.Columns[0] {
			continue
		}
		if xl == "" {
			xl = r.Metrics.Columns[0]
		}
		out = append(out, Series{Name: r.ID, Label: runLabel(r), Color: Color(i), X: r.Metrics.Column(r.Metrics.Columns[0]), Y: y})
	}
	return out, xl
}

func runLabel(r *Run) string {
	var parts []string
	for _, p := range []string{r.Task, r.Method} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if r.Seed != "" {
		parts = append(parts, "seed "+r.Seed)
	}
	if len(parts) == 0 {
		return r.ID
	}
	return strings.Join(parts, " ")
}

// files a run's directory serves besides its figures.
var served = []string{run.SummaryFile, run.ConfigFile, run.MetricsFile}

func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	_, run, ok := s.lookup(w, r)
	if !ok {
		return
	}
	name := r.URL.Query().Get("name")
	if !slices.Contains(run.Figures, name) && !slices.Contains(served, name) {
		http.Error(w, fmt.Sprintf("%q is not a file the dashboard serves", name), http.StatusNotFound)
		return
	}
	f, err := os.Open(filepath.Join(run.Dir, name))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if strings.HasSuffix(name, ".csv") || strings.HasSuffix(name, ".json") {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	http.ServeContent(w, r, name, fi.ModTime(), f)
}

// pageData is what the page's template shows.
type pageData struct {
	Index    *Index
	Rows     []row
	Selected []*Run
	Charts   []template.HTML
	Query    string // the selection as a query string
	Note     string
	Now      string
}

type row struct {
	*Run
	Selected bool
	Color    string
}

func (s *Server) pageData(x *Index, r *http.Request) *pageData {
	q := r.URL.Query()
	sel := map[string]bool{}
	p := &pageData{Index: x, Now: time.Now().Format("15:04:05")}
	switch {
	case q.Get("all") != "":
		for _, r := range x.Runs {
			sel[r.ID] = true
		}
	case len(q["run"]) > 0:
		for _, id := range q["run"] {
			sel[id] = true
		}
	default:
		recent := slices.Clone(x.Runs)
		slices.SortStableFunc(recent, func(a, b *Run) int { return b.Modified.Compare(a.Modified) })
		for i, r := range recent {
			if i < DefaultSelection {
				sel[r.ID] = true
			}
		}
		if len(recent) > DefaultSelection {
			p.Note = fmt.Sprintf("showing the %d most recent of %d runs", DefaultSelection, len(recent))
		}
	}
	var cols []string
	vals := []string{}
	for _, r := range x.Runs {
		if !sel[r.ID] {
			p.Rows = append(p.Rows, row{Run: r})
			continue
		}
		p.Rows = append(p.Rows, row{Run: r, Selected: true, Color: Color(len(p.Selected))})
		p.Selected = append(p.Selected, r)
		vals = append(vals, "run="+template.URLQueryEscaper(r.ID))
		if r.Metrics != nil {
			for j, c := range r.Metrics.Columns {
				if j > 0 && !slices.Contains(cols, c) {
					cols = append(cols, c)
				}
			}
		}
	}
	p.Query = strings.Join(vals, "&")
	for _, c := range cols {
		series, xl := seriesOf(p.Selected, c)
		var b bytes.Buffer
		WriteChart(&b, c, xl, series)
		p.Charts = append(p.Charts, template.HTML(b.String()))
	}
	return p
}

// wall formats seconds as a duration ("-" when unknown).
func wall(sec float64) string {
	if math.IsNaN(sec) || sec < 0 {
		return "-"
	}
	return progress.Duration(time.Duration(sec * float64(time.Second)))
}

// stateText says where the run is: "running: iteration 1200 of 25001".
func stateText(r *Run) string {
	unit := r.Unit
	if unit == "" {
		unit = "step"
	}
	at := ""
	if r.Step >= 0 {
		at = fmt.Sprintf("%s %d", unit, r.Step)
		if r.Total > 0 {
			at += fmt.Sprintf(" of %d", r.Total)
		}
	}
	switch r.State {
	case Finished:
		if r.Step >= 0 {
			return fmt.Sprintf("finished: %d %ss", r.Step, unit)
		}
		return "finished"
	case Running:
		return strings.TrimSuffix("running: "+at, ": ")
	case Interrupted:
		s := strings.TrimSuffix("interrupted at "+at, " at ")
		if r.Reason != "" {
			s += " (" + r.Reason + ")"
		}
		return s
	case Failed:
		return strings.TrimSuffix("failed at "+at, " at ") + ": " + r.Reason
	}
	return "unreadable: " + r.Reason
}
