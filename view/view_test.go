package view

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safetensors"
)

const csvHeader = "step,reward_calls,student_loss,student_l1,wall_seconds\n"

func csvRows(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		loss := ""
		if i > 0 {
			loss = fmt.Sprint(10 / float64(i))
		}
		fmt.Fprintf(&b, "%d,%d,%s,%g,%g\n", i*25, i*400, loss, 0.5*math.Pow(10, -float64(i)), float64(i)*0.5)
	}
	return b.String()
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func putJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	write(t, path, string(b))
}

// config writes a grid run's config.json.
func putConfig(t *testing.T, dir, method string, seed, done int) {
	putJSON(t, filepath.Join(dir, run.ConfigFile), map[string]any{"kind": "grid", "unit": "iteration", "done": done, "total": 1250,
		"config": map[string]any{"env": map[string]any{"task": "hypergrid"}, "train": map[string]any{"method": method, "seed": seed}}})
}

// checkpoint writes a checkpoint holding only the header gfn view reads.
func checkpoint(t *testing.T, dir string, h map[string]any) {
	raw, _ := json.Marshal(h)
	f, err := os.Create(filepath.Join(dir, run.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := safetensors.Write(f, []safetensors.Tensor{safetensors.F64("x", []int{1}, []float64{1})}, map[string]string{"gfn": string(raw)}); err != nil {
		t.Fatal(err)
	}
}

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skip("no true(1) to make a dead process id")
	}
	return c.Process.Pid
}

// fixture makes a root with a running, a finished, a killed, a failed
// and a corrupt run, and a bench table.
func fixture(t *testing.T) string {
	root := t.TempDir()
	host, _ := os.Hostname()
	d := filepath.Join(root, "live")
	putConfig(t, d, "teacher", 0, 0)
	write(t, filepath.Join(d, run.MetricsFile), csvHeader+csvRows(0, 5))
	putJSON(t, filepath.Join(d, run.RunningFile), run.Running{PID: os.Getpid(), Host: host})

	d = filepath.Join(root, "bench", "tb-seed1")
	putConfig(t, d, "tb", 1, 1250)
	write(t, filepath.Join(d, run.MetricsFile), csvHeader+csvRows(0, 8))
	write(t, filepath.Join(d, run.SummaryFile), `{"family": "grid", "task": "hypergrid", "method": "tb", "seed": 1, "steps": 1250, "modes": 676, "wall_seconds": 83.5}`)
	write(t, filepath.Join(d, "l1.png"), "\x89PNG\r\n\x1a\n")
	write(t, filepath.Join(root, "bench", "results.md"), "# gfn bench grid\n\nMean over seeds; *L1* is `empirical`.\n\n| method | modes |\n|---|---|\n| tb | 676 <script>alert(1)</script> |\n")

	d = filepath.Join(root, "killed")
	putConfig(t, d, "teacher", 2, 500)
	write(t, filepath.Join(d, run.MetricsFile), csvHeader+csvRows(0, 3))
	putJSON(t, filepath.Join(d, run.RunningFile), run.Running{PID: deadPID(t), Host: host})
	checkpoint(t, d, map[string]any{"done": 500, "total": 1250, "wall_seconds": 42.0})

	d = filepath.Join(root, "failed")
	putConfig(t, d, "teacher", 3, 250)
	checkpoint(t, d, map[string]any{"done": 250, "total": 1250, "failed": "reward program exited with status 1"})

	d = filepath.Join(root, "corrupt")
	putConfig(t, d, "teacher", 4, 0)
	write(t, filepath.Join(d, run.MetricsFile), csvHeader+csvRows(0, 3)+"75,1200,0.3")
	return root
}

func get(t *testing.T, h http.Handler, url string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", url, nil))
	return rec.Code, rec.Body.String()
}

func runs(t *testing.T, h http.Handler) map[string]runJSON {
	code, body := get(t, h, "/api/runs")
	if code != 200 {
		t.Fatalf("/api/runs: %d %s", code, body)
	}
	var rs []runJSON
	if err := json.Unmarshal([]byte(body), &rs); err != nil {
		t.Fatal(err)
	}
	m := map[string]runJSON{}
	for _, r := range rs {
		m[r.ID] = r
	}
	return m
}

func TestListing(t *testing.T) {
	s, err := NewServer(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	rs := runs(t, s)
	want := map[string]string{
		"0/live":           "running grid hypergrid teacher 0 step 100",
		"0/bench/tb-seed1": "finished grid hypergrid tb 1 step 1250",
		"0/killed":         "interrupted grid hypergrid teacher 2 step 500",
		"0/failed":         "failed grid hypergrid teacher 3 step 250",
		"0/corrupt":        "unreadable grid hypergrid teacher 4 step 0",
	}
	if len(rs) != len(want) {
		t.Errorf("%d runs, want %d: %v", len(rs), len(want), rs)
	}
	for id, w := range want {
		r := rs[id]
		if got := fmt.Sprintf("%s %s %s %s %s step %d", r.State, r.Family, r.Task, r.Method, r.Seed, r.Step); got != w {
			t.Errorf("%s: %s, want %s", id, got, w)
		}
	}
	if r := rs["0/bench/tb-seed1"]; r.WallSeconds == nil || *r.WallSeconds != 83.5 || len(r.Figures) != 1 {
		t.Errorf("finished run: wall %v, figures %v", r.WallSeconds, r.Figures)
	}
	if r := rs["0/killed"]; !strings.Contains(r.Reason, "is gone") || *r.WallSeconds != 42 {
		t.Errorf("killed run: %+v", r)
	}
	if r := rs["0/failed"]; r.Reason != "reward program exited with status 1" {
		t.Errorf("failed run: reason %q", r.Reason)
	}
	if r := rs["0/corrupt"]; !strings.Contains(r.Reason, "metrics.csv: line 5 has no end") {
		t.Errorf("corrupt run: reason %q", r.Reason)
	}
	code, page := get(t, s, "/")
	if code != 200 {
		t.Fatalf("/: %d", code)
	}
	for _, w := range []string{
		`data-run="0/live" data-state="running"`, `running: iteration 100 of 1250`,
		`finished: 1250 iterations`, `unreadable: metrics.csv: line 5 has no end`,
		`interrupted at iteration 500 of 1250 (process`, `data-column="student_loss"`, `data-column="wall_seconds"`,
		`<h1>gfn bench grid</h1>`, `<em>L1</em>`, `<code>empirical</code>`, `<td>676 &lt;script&gt;alert(1)&lt;/script&gt;</td>`,
		`<img src="/file?run=0%2fbench%2ftb-seed1&amp;name=l1.png"`, `<th>modes</th><td>676</td>`,
	} {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %s", w)
		}
	}
	if strings.Contains(page, "<script>alert") {
		t.Error("results.md's HTML reached the page")
	}
	if code, body := get(t, s, "/file?run=0/bench/tb-seed1&name=l1.png"); code != 200 || !strings.HasPrefix(body, "\x89PNG") {
		t.Errorf("figure: %d", code)
	}
	if code, _ := get(t, s, "/file?run=0/bench/tb-seed1&name=../../etc/passwd"); code != 404 {
		t.Errorf("a file outside the run: %d, want 404", code)
	}
	if code, body := get(t, s, "/static/app.js"); code != 200 || !strings.Contains(body, "/api/version") {
		t.Errorf("app.js: %d", code)
	}
}

func TestMetricsJSON(t *testing.T) {
	s, _ := NewServer(fixture(t))
	code, body := get(t, s, "/api/metrics?run=0/live")
	var m struct {
		Columns []string     `json:"columns"`
		Rows    [][]*float64 `json:"rows"`
	}
	if err := json.Unmarshal([]byte(body), &m); code != 200 || err != nil {
		t.Fatalf("%d %v %s", code, err, body)
	}
	if len(m.Columns) != 5 || len(m.Rows) != 5 || m.Rows[0][2] != nil || *m.Rows[4][2] != 2.5 {
		t.Errorf("metrics %s", body)
	}
	code, body = get(t, s, "/api/metrics?run=0/corrupt")
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "line 5 has no end: the file is half-written") {
		t.Errorf("corrupt: %d %s", code, body)
	}
	if code, _ := get(t, s, "/api/metrics?run=0/nothing"); code != 404 {
		t.Errorf("unknown run: %d", code)
	}
	// The server keeps serving.
	if code, _ := get(t, s, "/"); code != 200 {
		t.Errorf("/ after the corrupt run: %d", code)
	}
}

func TestChartSVG(t *testing.T) {
	s, _ := NewServer(fixture(t))
	code, body := get(t, s, "/chart.svg?column=student_loss&run=0/live&run=0/bench/tb-seed1&run=0/corrupt")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var svg struct {
		XMLName xml.Name `xml:"svg"`
		Column  string   `xml:"data-column,attr"`
		Paths   []struct {
			Run    string `xml:"data-run,attr"`
			Points int    `xml:"data-points,attr"`
			Last   string `xml:"data-last,attr"`
			D      string `xml:"d,attr"`
		} `xml:"path"`
		Text []string `xml:"text"`
	}
	if err := xml.Unmarshal([]byte(body), &svg); err != nil {
		t.Fatalf("not XML: %v\n%s", err, body)
	}
	if svg.Column != "student_loss" || len(svg.Paths) != 2 {
		t.Fatalf("chart %+v", svg)
	}
	// The first point's loss is empty: 4 and 7 points drawn.
	if p := svg.Paths[0]; p.Run != "0/live" || p.Points != 4 || p.Last != "2.5" || !strings.HasPrefix(p.D, "M") {
		t.Errorf("live path %+v", p)
	}
	if p := svg.Paths[1]; p.Run != "0/bench/tb-seed1" || p.Points != 7 {
		t.Errorf("finished path %+v", p)
	}
	// student_l1 spans decades: a log axis with plain labels.
	_, body = get(t, s, "/chart.svg?column=student_l1&run=0/live&run=0/bench/tb-seed1")
	if !strings.Contains(body, "log scale") || !strings.Contains(body, ">1e-5<") || !strings.Contains(body, ">1e-1<") {
		t.Errorf("l1 chart: %s", body)
	}
}

// TestChanges: a run that trains between two requests.
func TestChanges(t *testing.T) {
	root := fixture(t)
	s, _ := NewServer(root)
	_, v1 := get(t, s, "/api/version")
	_, body := get(t, s, "/api/metrics?run=0/live")
	if n := strings.Count(body, "],["); n != 4 {
		t.Fatalf("%d rows before", n+1)
	}
	live := filepath.Join(root, "live")
	write(t, filepath.Join(live, run.MetricsFile), csvHeader+csvRows(0, 9))
	_, v2 := get(t, s, "/api/version")
	if v1 == v2 {
		t.Error("the version did not change")
	}
	_, body = get(t, s, "/api/metrics?run=0/live")
	if n := strings.Count(body, "],["); n != 8 {
		t.Errorf("%d rows after", n+1)
	}
	if r := runs(t, s)["0/live"]; r.Step != 200 || r.State != Running || *r.WallSeconds != 4 {
		t.Errorf("after: %+v", r)
	}
	// It finishes.
	write(t, filepath.Join(live, run.SummaryFile), `{"wall_seconds": 5, "steps": 1250}`)
	os.Remove(filepath.Join(live, run.RunningFile))
	if r := runs(t, s)["0/live"]; r.State != Finished || *r.WallSeconds != 5 {
		t.Errorf("finished: %+v", r)
	}
	_, page := get(t, s, "/?partial=1")
	if strings.Contains(page, "<html") || !strings.Contains(page, `data-run="0/live" data-state="finished"`) {
		t.Errorf("partial page: %.300s", page)
	}
}

func TestParseMetrics(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{"", "empty file"},
		{"a,b\n1,2\n3", "line 3 has no end"},
		{"a,b\n1,2\n3\n", "line 3 has 1 cells, the header 2"},
		{"a,b\n1,x\n", `line 2, column b: "x" is not a number`},
		{"a,,c\n", "column 2 has no name"},
		{"a,a\n", `column "a" appears twice`},
		{"a,\"b\n", "header"},
	} {
		_, err := ParseMetrics([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, want %q", c.in, err, c.err)
		}
	}
	m, err := ParseMetrics([]byte("a,b\n1,\n2,NaN\n"))
	if err != nil || len(m.Rows) != 2 || m.Last("a") != 2 {
		t.Errorf("%+v %v", m, err)
	}
}

func TestMarkdown(t *testing.T) {
	got := Markdown([]byte("## d2 H128\n\nPaper: **Table 1** [link](https://x.org/a?b=1&c=2).\n\n- one\n- two `a|b`\n\n```\n<raw>\n```\n| a | b \\| c |\n|:--|--:|\n| 1 | 2 |\n"))
	for _, w := range []string{"<h2>d2 H128</h2>", "<strong>Table 1</strong>", `<a href="https://x.org/a?b=1&amp;c=2">link</a>`,
		"<li>two <code>a|b</code></li>", "<pre><code>&lt;raw&gt;\n</code></pre>", "<th>b | c</th>", "<td>2</td>"} {
		if !strings.Contains(got, w) {
			t.Errorf("lacks %s:\n%s", w, got)
		}
	}
}

func TestLabels(t *testing.T) {
	for v, w := range map[float64]string{0: "0", 1.5: "1.5", 0.00012: "0.00012", 1.7e-5: "1.7e-5", 25000: "25000", 2e6: "2e6", 0.1 + 0.2: "0.3"} {
		if got := label(v); got != w {
			t.Errorf("label(%v) = %s, want %s", v, got, w)
		}
	}
}
