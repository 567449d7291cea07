package kernel

import (
	"os"
	"os/exec"
	"testing"
)

// The portable fallbacks must keep compiling: the purego tag and arm64
// (which has no assembly here) build the whole module.
func TestPortableBuildsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module twice")
	}
	// go test puts its own go first on PATH.
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"purego", nil, []string{"vet", "-tags", "purego", "./..."}},
		{"arm64", []string{"GOARCH=arm64"}, []string{"vet", "./..."}},
	} {
		cmd := exec.Command(goBin, c.args...)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), c.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s build: %v\n%s", c.name, err, out)
		}
	}
}
