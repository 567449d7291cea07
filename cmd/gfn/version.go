package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// runVersion prints gfn's version.
func runVersion(args []string, stdout io.Writer) error {
	fs := newFlagSet("version", `Print gfn's module version ("(devel)" for a build from a source tree), the Go
version and platform, and the VCS revision when the build recorded one.`)
	if err := parse(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	info, _ := debug.ReadBuildInfo()
	fmt.Fprint(stdout, versionText(info, runtime.GOOS+"/"+runtime.GOARCH))
	return nil
}

// versionText is gfn version's output for the build information info
// (nil if the binary has none) on platform: the module version, then the
// Go version and platform, then the VCS revision with its time and
// whether the tree was modified, if recorded.
func versionText(info *debug.BuildInfo, platform string) string {
	version, goVersion := "(unknown)", runtime.Version()
	var rev, when, modified string
	if info != nil {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "gfn %s\n%s %s\n", version, goVersion, platform)
	if rev != "" {
		b.WriteString("revision " + rev)
		var notes []string
		if when != "" {
			notes = append(notes, when)
		}
		if modified == "true" {
			notes = append(notes, "modified")
		}
		if len(notes) > 0 {
			b.WriteString(" (" + strings.Join(notes, ", ") + ")")
		}
		b.WriteByte('\n')
	}
	return b.String()
}
