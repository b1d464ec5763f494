package harness

import (
	"bufio"
	"bytes"
	"debug/buildinfo"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"concbench/results"
)

// provenance describes the machine and the build measured. The commit and
// dirty flag come from the server binary's embedded VCS stamp (go build
// records vcs.revision and vcs.modified), which names exactly the code
// that served, even when it is another build (the CI gate's base); failing
// that, from git in the working directory; failing that, "unknown". The
// CPU lists and GOMAXPROCS values are filled in by the caller.
func provenance(serverBinary string, now time.Time) results.Provenance {
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
	if commit, dirty, ok := vcsStamp(serverBinary); ok {
		p.Commit, p.Dirty = commit, dirty
	} else if commit, dirty, ok := gitHead(); ok {
		p.Commit, p.Dirty = commit, dirty
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		p.Kernel = strings.TrimSpace(string(b)) // uname -r
	}
	if h, err := os.Hostname(); err == nil {
		p.Hostname = h
	}
	return p
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

// gitHead asks git for the working directory's HEAD and whether the tree
// has uncommitted changes.
func gitHead() (commit string, dirty, ok bool) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false, false
	}
	commit = strings.TrimSpace(string(out))
	st, err := exec.Command("git", "status", "--porcelain").Output()
	return commit, err != nil || len(bytes.TrimSpace(st)) > 0, commit != ""
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
