package harness

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"concbench/internal/testenv"
	"concbench/results"
	"concbench/results/resultstest"
)

// TestConfigServerBinary checks Config.ServerBinary: each configuration's
// servers run its own binary (read from /proc/<pid>/exe while they
// serve), configurations interleave within the repetition (A B A B), and
// each point's provenance carries its own binary's VCS stamp (b is built
// without one: "unknown", not the run's commit).
func TestConfigServerBinary(t *testing.T) {
	testenv.EndToEnd(t)
	dir := t.TempDir()
	binA, binB := filepath.Join(dir, "concbench-a"), filepath.Join(dir, "concbench-b")
	if err := buildConcbench(binA, "-buildvcs=true"); err != nil {
		t.Skipf("no concbench with a VCS stamp (not a git checkout?): %v", err)
	}
	if err := buildConcbench(binB, "-buildvcs=false"); err != nil {
		t.Fatal(err)
	}
	commitA, dirtyA, ok := vcsStamp(binA)
	if !ok && gitWorktree() {
		// Go stamps only a checkout whose .git is a directory: in a git
		// worktree (.git is a file) it builds without one.
		t.Skipf("%s built with -buildvcs=true has no VCS stamp: Go stamps none in a git worktree", binA)
	}
	if !ok {
		t.Fatalf("%s built with -buildvcs=true has no VCS stamp", binA)
	}

	exp := shortRun([]Config{
		{Name: "netpoll/a", Model: "netpoll", ServerBinary: binA},
		{Name: "netpoll/b", Model: "netpoll", ServerBinary: binB},
	}, Workload{Workload: connsWorkload(4)})
	exp.Repetitions, exp.Duration, exp.Seed = 2, Duration(100*time.Millisecond), 3
	exp.ServerBinary = "/nonexistent/never-used" // every configuration has its own

	// An experiment binary that does not exist is still refused at once
	// even when unused, and so is a configuration's.
	if _, err := Run(context.Background(), exp, filepath.Join(dir, "refused"), Options{}); err == nil {
		t.Fatalf("Run with a missing experiment binary succeeded")
	}
	exp.ServerBinary = serverBinary
	bad := exp
	bad.Configs = slices.Clone(exp.Configs)
	bad.Configs[1].ServerBinary = filepath.Join(dir, "missing")
	if _, err := Run(context.Background(), bad, filepath.Join(dir, "refused2"), Options{}); err == nil || !strings.Contains(err.Error(), `configuration "netpoll/b"`) {
		t.Fatalf("Run with a missing configuration binary: %v, want an error naming netpoll/b", err)
	}

	var mu sync.Mutex
	exe := map[string][]string{} // configuration → the executables that served it
	var order []string
	opt := Options{onWindow: func(p *results.Point, pid int) {
		path, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
		if err != nil {
			t.Errorf("%s: %v", p.Label(), err)
		}
		mu.Lock()
		exe[p.Config.Name] = append(exe[p.Config.Name], path)
		order = append(order, p.Config.Name+" "+string(p.Kind))
		mu.Unlock()
	}}
	run := filepath.Join(dir, "run")
	sum, err := Run(context.Background(), exp, run, opt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if sum.OK+sum.Invalid != 8 {
		t.Fatalf("summary %s: want 8 measured points", sum)
	}
	for name, want := range map[string]string{"netpoll/a": binA, "netpoll/b": binB} {
		if len(exe[name]) != 4 {
			t.Errorf("%s: %d windows, want 4", name, len(exe[name]))
		}
		for _, got := range exe[name] {
			if got != want {
				t.Errorf("%s served by %s, want %s", name, got, want)
			}
		}
	}
	wantOrder := []string{"netpoll/a capacity", "netpoll/a open", "netpoll/b capacity", "netpoll/b open"}
	wantOrder = append(wantOrder, wantOrder...)
	if !slices.Equal(order, wantOrder) {
		t.Errorf("window order %v, want %v", order, wantOrder)
	}

	_, pts := resultstest.ReadRun(t, run)
	for i := range pts {
		p := &pts[i]
		commit, dirty := commitA, dirtyA
		if p.Config.Name == "netpoll/b" {
			commit, dirty = "unknown", false
		}
		if p.Provenance.Commit != commit || p.Provenance.Dirty != dirty {
			t.Errorf("%s: provenance commit %q dirty %t, want its binary's %q %t", p.Label(), p.Provenance.Commit, p.Provenance.Dirty, commit, dirty)
		}
	}
}

// gitWorktree reports whether the nearest .git above the working
// directory is a file, as in a linked git worktree.
func gitWorktree() bool {
	dir, err := os.Getwd()
	for err == nil {
		if fi, serr := os.Stat(filepath.Join(dir, ".git")); serr == nil {
			return fi.Mode().IsRegular()
		}
		if dir == filepath.Dir(dir) {
			break
		}
		dir = filepath.Dir(dir)
	}
	return false
}
