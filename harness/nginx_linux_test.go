package harness

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"concbench/internal/testenv"
	"concbench/results"
)

// TestNginxAbsent checks that nginx missing from the machine is a
// reason to give (make nginx installs it), wrapped as a server that did
// not start, so that its configurations are unavailable, never failed.
func TestNginxAbsent(t *testing.T) {
	saved := nginxPaths
	nginxPaths = []string{filepath.Join(t.TempDir(), "nginx")}
	t.Cleanup(func() { nginxPaths = saved })
	t.Setenv("PATH", t.TempDir())
	_, err := startNginx(nil, &nginxConf{Workers: 1}, "127.0.0.1", []string{"--accept", "mutex"})
	if !errors.Is(err, ErrNotStarted) || !strings.Contains(err.Error(), "make nginx") {
		t.Errorf("startNginx without nginx = %v, want ErrNotStarted saying make nginx installs it", err)
	}
}

// TestNginxRun runs real nginx for one short capacity point and one open
// point in each accept mode with two workers, where nginx is installed:
// every point measured through stub_status and /proc (requests, CPU,
// context switches), each worker's connections and responses counted
// and adding up, no allocations claimed, and nothing of nginx left
// running after the run.
func TestNginxRun(t *testing.T) {
	testenv.EndToEnd(t)
	if _, err := lookNginx(); err != nil {
		t.Skip(err)
	}
	w := DefaultWorkload()
	w.Conns, w.CPU = 8, "0"
	exp := shortRun(nil, Workload{Workload: w})
	exp.Duration, exp.Seed = Duration(300*time.Millisecond), 5
	for _, mode := range NginxModes {
		exp.Configs = append(exp.Configs, Config{Name: "nginx/" + mode, Model: NginxModel, Args: []string{"--accept", mode}, Threads: 2})
	}
	dir, sum := runTest(t, exp, Options{})
	if sum.Failed+sum.Unavailable > 0 {
		t.Fatalf("run: %s", sum)
	}
	_, pts, _ := readPoints(t, dir)
	for i := range pts {
		p := &pts[i]
		s := &p.Server
		if p.Status != results.StatusOK || !strings.HasPrefix(s.Foreign, "nginx/") || s.Requests == 0 || s.CPUNsPerRequest <= 0 || p.ServerInfo.Threads != 2 {
			t.Errorf("%s: status %s, foreign %q, %d requests, %g ns CPU each, %d workers; want measured nginx, 2 workers",
				p.Label(), p.Status, s.Foreign, s.Requests, s.CPUNsPerRequest, p.ServerInfo.Threads)
			continue
		}
		if v, ok := results.AllocsPerReq.Value(p); ok {
			t.Errorf("%s: %g allocations per request claimed for nginx", p.Label(), v)
		}
		// Requests per worker may be withheld, with a warning, when the
		// machine is too busy for the workers' counts to be checked.
		b := s.Balance
		withheld := slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "requests per worker are not reported") })
		if b == nil || b.Threads != 2 || b.Conns != uint64(w.Conns) || !withheld && (b.RequestsMaxMean < 1 || b.RequestsMaxMean > 2) {
			t.Errorf("%s: balance %+v; want 2 workers holding the %d connections, requests max/mean in [1, 2] (warnings %q)", p.Label(), b, w.Conns, p.Warnings)
		}
		if !exited(p.ServerInfo.PID) {
			t.Errorf("%s: nginx's master %d still runs after the run", p.Label(), p.ServerInfo.PID)
		}
		for _, th := range s.PerThread {
			if !exited(th.TID) {
				t.Errorf("%s: nginx's worker %d still runs after the run", p.Label(), th.TID)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nginx", "nginx_mutex.conf")); err != nil {
		t.Errorf("the generated configuration is not in the run folder: %v", err)
	}
}

// exited reports whether process pid has ended (and been reaped, or
// lingers as a zombie).
func exited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f, ok := statFields(b)
	return ok && len(f) > 0 && f[0] == "Z"
}
