package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gfnrun "github.com/gfngo/gfn/run"
)

// chromium is the headless browser of TestViewBrowser ("" if absent).
func chromium() string {
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	return ""
}

// browse runs headless Chromium on url with the extra flags and returns
// its standard output.
func browse(t *testing.T, bin, url string, extra ...string) string {
	t.Helper()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir()}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, append(args, url)...).Output()
	if err != nil {
		t.Fatalf("chromium %s: %v", url, err)
	}
	return string(out)
}

// TestViewBrowser starts gfn view on a run that is still training (a
// goroutine appends a point to its metrics.csv every 200 ms) beside a
// finished run and a bench table, loads the page twice in headless
// Chromium, checks the DOM (the run listed as running, its curves drawn,
// its step grown between the loads, the page's script polling) and saves
// a screenshot. Skipped without Chromium (Debian: apt-get install
// chromium).
func TestViewBrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no chromium (apt-get install chromium)")
	}
	root := filepath.Join(t.TempDir(), "runs")
	host, _ := os.Hostname()
	put := func(path, s string) {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := func(method string, seed int) string {
		return fmt.Sprintf(`{"kind": "grid", "unit": "iteration", "done": 0, "total": 1250, "config": {"env": {"task": "hypergrid"}, "train": {"method": %q, "seed": %d}}}`, method, seed)
	}
	row := func(i int, slow float64) string {
		loss := ""
		if i > 0 {
			loss = strconv.FormatFloat(60/(1+slow*float64(i)), 'g', 6, 64)
		}
		return fmt.Sprintf("%d,%d,%s,%g,%d,%g\n", i*25, i*400, loss, 1e-4*mathExp(-float64(i)/(8*slow)), min(676, i*12), float64(i)*0.4)
	}
	const head = "step,reward_calls,student_loss,student_l1,modes,wall_seconds\n"
	live := filepath.Join(root, "hypergrid-d2-H128-teacher-seed0")
	put(filepath.Join(live, gfnrun.ConfigFile), cfg("teacher", 0))
	b, _ := json.Marshal(gfnrun.Running{PID: os.Getpid(), Host: host, Started: time.Now()})
	put(filepath.Join(live, gfnrun.RunningFile), string(b))
	done := filepath.Join(root, "hypergrid-d2-H128-tb-seed0")
	put(filepath.Join(done, gfnrun.ConfigFile), cfg("tb", 0))
	var csv strings.Builder
	csv.WriteString(head)
	for i := range 51 {
		csv.WriteString(row(i, 0.5))
	}
	put(filepath.Join(done, gfnrun.MetricsFile), csv.String())
	put(filepath.Join(done, gfnrun.SummaryFile), `{"family": "grid", "task": "hypergrid", "method": "tb", "seed": 0, "steps": 1250, "modes": 600, "empirical_l1": 2.04e-05, "wall_seconds": 57.2}`)
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for x := range 64 {
		for y := range 48 {
			img.Set(x, y, color.RGBA{uint8(4 * x), uint8(5 * y), 160, 255})
		}
	}
	f, _ := os.Create(filepath.Join(done, "distributions.png"))
	png.Encode(f, img)
	f.Close()
	put(filepath.Join(root, "bench", "results.md"), "# gfn bench grid --table tb\n\nMean ± std over seeds.\n\n| method | runs | modes | L1 ×1e-05 |\n|---|---|---|---|\n| tb | 5 | 661.2 ± 14.1 | 2.040 ± 0.155 |\n| teacher | 5 | 676.0 ± 0.0 | 2.203 ± 0.168 |\n")

	// The training goroutine: a point every 200 ms, written as the driver
	// writes metrics.csv (a temporary file renamed over it).
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var csv strings.Builder
		csv.WriteString(head)
		for i := 0; i <= 50; i++ {
			csv.WriteString(row(i, 1))
			tmp := filepath.Join(live, ".metrics.csv.tmp")
			os.WriteFile(tmp, []byte(csv.String()), 0o644)
			os.Rename(tmp, filepath.Join(live, gfnrun.MetricsFile))
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	// gfn view itself, on a free port.
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, []string{"view", "--addr", "127.0.0.1:0", root}, pw, io.Discard); pw.Close() }()
	defer func() {
		cancel()
		wg.Wait()
		if err := <-errc; err != nil {
			t.Errorf("gfn view: %v", err)
		}
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	m := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/) `).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("gfn view said %q", line)
	}
	url := m[1]
	time.Sleep(300 * time.Millisecond)

	stepRe := regexp.MustCompile(`data-run="0/hypergrid-d2-H128-teacher-seed0" data-state="running"[\s\S]*?data-step="(\d+)"`)
	load := func() (string, int) {
		dom := browse(t, bin, url, "--dump-dom", "--virtual-time-budget=3000")
		m := stepRe.FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("the running run is not listed as running:\n%.3000s", dom)
		}
		n, _ := strconv.Atoi(m[1])
		return dom, n
	}
	dom1, step1 := load()
	for _, w := range []string{`data-column="student_loss"`, `data-column="student_l1"`, `data-column="modes"`,
		`data-run="0/hypergrid-d2-H128-tb-seed0" data-state="finished"`, `<h1>gfn bench grid --table tb</h1>`,
		`<td>661.2 ± 14.1</td>`, `alt="distributions.png"`, `class="line" data-run="0/hypergrid-d2-H128-teacher-seed0"`} {
		if !strings.Contains(dom1, w) {
			t.Errorf("the page lacks %s", w)
		}
	}
	// The page's script ran and polled the server.
	if !regexp.MustCompile(`id="status" class="status">live, (checked|updated)`).MatchString(dom1) {
		t.Errorf("the page's script did not poll: %s", regexp.MustCompile(`<span id="status"[^<]*</span>`).FindString(dom1))
	}
	time.Sleep(time.Second)
	_, step2 := load()
	if step2 <= step1 {
		t.Errorf("the running run's step went from %d to %d between two loads a second apart", step1, step2)
	}
	shot := filepath.Join(t.TempDir(), "view.png")
	browse(t, bin, url, "--screenshot="+shot, "--window-size=1280,1500", "--hide-scrollbars", "--virtual-time-budget=3000")
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	if out := os.Getenv("GFN_VIEW_SCREENSHOT"); out != "" {
		b, _ := os.ReadFile(shot)
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("steps %d then %d; screenshot %s", step1, step2, shot)
}

func mathExp(x float64) float64 { return math.Exp(x) }
