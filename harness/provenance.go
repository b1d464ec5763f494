package harness

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"concbench/results"
)

// provenance describes the machine and the build measured. The commit and
// dirty flag come from the server binary's embedded VCS stamp (bin; go
// build records vcs.revision and vcs.modified), which names exactly the
// code that served, even when it is another build (the CI gate's base);
// without one, "unknown" (never the working directory's HEAD, which may
// be another tree). The CPU lists and GOMAXPROCS values are filled in by the
// caller.
func provenance(bin stamp, now time.Time) results.Provenance {
	p := results.Provenance{
		Commit:    "unknown",
		GoVersion: runtime.Version(),
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		Kernel:    "unknown",
		CPUModel:  cpuModel(),
		NumCPU:    runtime.NumCPU(),
		Time:      now.UTC(),
	}
	// Only the binary's own stamp says what was built: the HEAD of the
	// current directory may be another tree altogether (a binary built
	// with -buildvcs=false, or elsewhere). Without a stamp the commit is
	// "unknown", and the run says why (runner.runWarnings).
	if bin.ok {
		p.Commit, p.Dirty = bin.commit, bin.dirty
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		p.Kernel = strings.TrimSpace(string(b)) // uname -r
	}
	if h, err := os.Hostname(); err == nil {
		p.Hostname = h
	}
	return p
}

// stamp is a binary's VCS stamp, as vcsStamp returns it.
type stamp struct {
	commit string
	dirty  bool
	ok     bool // the binary has one
}

// vcsStamp reads the VCS revision that go build embedded in binary.
func vcsStamp(binary string) (commit string, dirty, ok bool) {
	bi, err := buildinfo.ReadFile(binary)
	if err != nil {
		return "", false, false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return commit, dirty, commit != ""
}

// GitHead asks git for the commit checked out in dir ("": the current
// directory) and whether the tree has uncommitted changes (also reported
// when git status fails). Its error is os/exec's for git rev-parse HEAD,
// unwrapped, so that callers word it as they like.
func GitHead(ctx context.Context, dir string) (commit string, dirty bool, err error) {
	git := func(args ...string) *exec.Cmd {
		if dir != "" {
			args = append([]string{"-C", dir}, args...)
		}
		return exec.CommandContext(ctx, "git", args...)
	}
	out, err := git("rev-parse", "HEAD").Output()
	if err != nil {
		return "", false, err
	}
	st, err := git("status", "--porcelain").Output()
	return strings.TrimSpace(string(out)), err != nil || len(bytes.TrimSpace(st)) > 0, nil
}

// cpuModel returns /proc/cpuinfo's first "model name", or "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
