// Package scripts holds the repository's shell scripts; its tests run
// them where bash, awk and flock exist.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "awk", "flock"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("lanes.sh needs %s: %v", tool, err)
		}
	}
}

// lanes runs lanes.sh on queue with two lanes and returns its output.
func lanes(t *testing.T, queue string) (string, error) {
	t.Helper()
	out, err := exec.Command("bash", "lanes.sh", queue, "2").CombinedOutput()
	return string(out), err
}

// TestLanesContinuesByCommand: a second start runs only what did not
// finish: failed commands again, and commands inserted above finished ones
// (a finished command is known by its text, not its line number).
func TestLanesContinuesByCommand(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	queue, log := filepath.Join(dir, "queue"), filepath.Join(dir, "ran")
	cmd := func(name string) string { return "echo " + name + " >> " + log }
	fail := "echo fail >> " + log + "; exit 3"
	write := func(lines ...string) {
		if err := os.WriteFile(queue, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ran := func() []string {
		b, _ := os.ReadFile(log)
		os.Remove(log)
		f := strings.Fields(string(b))
		slices.Sort(f) // two lanes: the order within a start is not fixed
		return f
	}
	write("# a comment", cmd("a"), "", cmd("b"), fail)
	if out, err := lanes(t, queue); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := strings.Join(ran(), " "); got != "a b fail" {
		t.Errorf("first start ran %q, want a b fail", got)
	}
	write(cmd("new"), "# a comment", cmd("a"), "", cmd("b"), fail)
	if out, err := lanes(t, queue); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := strings.Join(ran(), " "); got != "fail new" {
		t.Errorf("second start ran %q, want the failed and the inserted command only", got)
	}
	done, _ := os.ReadFile(queue + ".done")
	if !strings.Contains(string(done), "3 0 5 "+fail) && !strings.Contains(string(done), "3 1 5 "+fail) {
		t.Errorf("QUEUE.done lacks the failure with its status and line:\n%s", done)
	}
}

// TestLanesOneInvocation: a second lanes.sh on a queue that one runs is
// refused, so that no two processes resume one run.
func TestLanesOneInvocation(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	queue, started := filepath.Join(dir, "queue"), filepath.Join(dir, "started")
	os.WriteFile(queue, []byte("touch "+started+"; sleep 2\n"), 0o644)
	first := exec.Command("bash", "lanes.sh", queue, "1")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first invocation's command did not start")
		}
	}
	out, err := lanes(t, queue)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(out, "another lanes.sh") {
		t.Errorf("second invocation: %v\n%s\nwant exit 2 naming the other", err, out)
	}
}
