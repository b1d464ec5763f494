package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Text describes the binary, one "key: value" per line: the commit, the
// Go version and platform, then each build setting (tags, -trimpath,
// -race, GOAMD64, …; vcs.time of the VCS ones).
func Text() string {
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
