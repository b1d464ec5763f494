package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// runVersion prints what this binary is: its commit (with "+dirty" when it
// was built from a modified tree), the Go version and the build settings
// that change the code (tags, -trimpath, -race, GOAMD64, …), from the build
// information go build embeds. A result file records the same commit.
func runVersion(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	if len(args) > 0 && args[0] != "-h" && args[0] != "--help" && args[0] != "-help" {
		return fmt.Errorf("version: unexpected argument %q (none accepted)", args[0])
	}
	if len(args) > 0 {
		_, err := fmt.Fprintln(stdout, "usage: concbench version\n\nPrints the commit this binary was built from, the Go version and the build settings.")
		return err
	}
	_, err := io.WriteString(stdout, versionText())
	return err
}

// versionText describes the binary, one "key: value" per line.
func versionText() string {
	var b strings.Builder
	commit, modified, settings := "unknown (built without VCS information: go build -buildvcs=false, or outside a git checkout)", false, []string{}
	goVersion := runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision":
				commit = s.Value
			case s.Key == "vcs.modified":
				modified = s.Value == "true"
			case s.Key == "vcs.time":
				settings = append(settings, "vcs.time="+s.Value)
			case strings.HasPrefix(s.Key, "vcs"):
			case s.Value != "":
				settings = append(settings, s.Key+"="+s.Value)
			}
		}
	}
	if modified {
		commit += "+dirty"
	}
	fmt.Fprintf(&b, "concbench %s\n", commit)
	fmt.Fprintf(&b, "go: %s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	for _, s := range settings {
		fmt.Fprintf(&b, "build: %s\n", s)
	}
	return b.String()
}
