package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	for _, c := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{nil, "gfn (unknown)\n" + runtime.Version() + " os/arch\n"},
		{&debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/gfngo/gfn", Version: "(devel)"}},
			"gfn (devel)\ngo1.99.1 os/arch\n"},
		{&debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/gfngo/gfn", Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "vcs", Value: "git"},
				{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}},
			"gfn v1.2.3\ngo1.99.1 os/arch\nrevision 0123abcd (2026-01-02T03:04:05Z, modified)\n"},
		{&debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Version: "v0.0.0-20260102030405-0123abcd"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "false"}}},
			"gfn v0.0.0-20260102030405-0123abcd\ngo1.99.1 os/arch\nrevision 0123abcd\n"},
	} {
		if got := versionText(c.info, "os/arch"); got != c.want {
			t.Errorf("versionText(%+v) = %q, want %q", c.info, got, c.want)
		}
	}
}

// gfn version prints the module version this test binary was built as
// and the Go version and platform it runs on.
func TestVersionCommand(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build information")
	}
	version := info.Main.Version
	if version == "" {
		version = "(unknown)"
	}
	for _, arg := range []string{"version", "--version"} {
		out, _, err := runCLI(arg)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out, "\n")
		if len(lines) < 3 || lines[0] != "gfn "+version || lines[1] != runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH {
			t.Errorf("gfn %s printed %q", arg, out)
		}
	}
	if _, _, err := runCLI("version", "extra"); err == nil {
		t.Error("gfn version extra: no error")
	}
}
