package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"concbench/internal/testenv"
	"concbench/results"
)

// TestFindCPUCgroup checks which hierarchy the quota is set in: a v1
// mount whose options name cpu (alone or with cpuacct), else a cgroup2
// mount that offers the controller; and the errors that say what to
// mount.
func TestFindCPUCgroup(t *testing.T) {
	const (
		tmpfs  = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		v1     = "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
		v1acct = "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
		v2     = "40 31 0:31 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
	)
	offers := func(dir string) string {
		if dir == "/sys/fs/cgroup/unified" {
			return "cpuset cpu io memory pids\n"
		}
		return ""
	}
	for _, tc := range []struct {
		name, mountinfo string
		controllers     func(string) string
		want            cgroupMount
		err             string
	}{
		{name: "v1", mountinfo: tmpfs + v1acct + v1 + v2, controllers: offers, want: cgroupMount{dir: "/sys/fs/cgroup/cpu,cpuacct"}},
		{name: "v2", mountinfo: tmpfs + v1acct + v2, controllers: offers, want: cgroupMount{dir: "/sys/fs/cgroup/unified", v2: true}},
		{name: "v2 without cpu", mountinfo: tmpfs + v2, controllers: func(string) string { return "pids\n" }, err: "cgroup2 at /sys/fs/cgroup/unified offers none"},
		{name: "none", mountinfo: tmpfs + v1acct, controllers: offers, err: "mount -t cgroup2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := findCPUCgroup(strings.NewReader(tc.mountinfo), tc.controllers)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one saying %q", err, tc.err)
			case tc.err == "" && (err != nil || got != tc.want):
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// quotaOrSkip returns a new quota of share, or skips t where none can
// be set (not root, no cpu controller), with the reason.
func quotaOrSkip(t *testing.T, share float64) *cpuQuota {
	t.Helper()
	q, err := newCPUQuota(share)
	if err != nil {
		if os.Geteuid() != 0 || strings.Contains(err.Error(), "cpu controller") {
			t.Skipf("a CPU quota cannot be set here: %v", err)
		}
		t.Fatal(err)
	}
	return q
}

// inCgroup reports whether process pid is in the cgroup directory dir.
func inCgroup(t *testing.T, pid int, dir string) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), "/"+filepath.Base(dir)+"\n")
}

// TestCPUQuota sets a quota, moves a process into it and removes it
// once the process is gone.
func TestCPUQuota(t *testing.T) {
	q := quotaOrSkip(t, 0.5)
	defer q.close()
	if !strings.Contains(q.desc, "0.5 of a CPU") || !strings.Contains(q.desc, "5000") {
		t.Errorf("description %q, want the share and the 5000-µs quota", q.desc)
	}
	quota := "5000\n"
	b, err := os.ReadFile(filepath.Join(q.dir, "cpu.cfs_quota_us"))
	if errors.Is(err, os.ErrNotExist) {
		quota = "5000 10000\n"
		b, err = os.ReadFile(filepath.Join(q.dir, "cpu.max"))
	}
	if err != nil || string(b) != quota {
		t.Errorf("the cgroup's quota reads %q, %v; want %q", b, err, quota)
	}
	cmd := exec.Command("cat") // runs until its input ends
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := q.place([]int{cmd.Process.Pid}); err != nil {
		t.Error(err)
	}
	if !inCgroup(t, cmd.Process.Pid, q.dir) {
		t.Errorf("process %d is not in %s after place", cmd.Process.Pid, q.dir)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Error(err)
	}
	q.close()
	if _, err := os.Stat(q.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cgroup %s is still there after close: %v", q.dir, err)
	}
}

// TestRunCPUQuota runs a point under a server CPU quota: the server is
// in the quota's cgroup during its window, the provenance says so, and
// the cgroup is gone after the run.
func TestRunCPUQuota(t *testing.T) {
	testenv.EndToEnd(t)
	quotaOrSkip(t, 0.5).close() // skip where none can be set
	exp := shortRun([]Config{{Name: "netpoll", Model: "netpoll"}}, Workload{Workload: connsWorkload(4)})
	exp.Fractions, exp.Rates, exp.Repetitions = nil, []float64{1000}, 1
	exp.ServerCPUQuota = 0.5
	var placed []bool
	opt := Options{onWindow: func(_ *results.Point, pid int) {
		placed = append(placed, inCgroup(t, pid, fmt.Sprintf("concbench-%d", os.Getpid())))
	}}
	dir, sum := runTest(t, exp, opt)
	run, pts, _ := readPoints(t, dir)
	if sum.Points != 1 || len(pts) != 1 || pts[0].Status != results.StatusOK {
		t.Fatalf("summary %s, points %+v: want one measured point", sum, pts)
	}
	if len(placed) != 1 || !placed[0] {
		t.Errorf("the server in the quota's cgroup during its windows: %v, want [true]", placed)
	}
	if q := run.Provenance.ServerCPUQuota; !strings.Contains(q, "0.5 of a CPU") {
		t.Errorf("provenance's server CPU quota %q, want the share", q)
	}
	matches, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/*/concbench-%d", os.Getpid()))
	more, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/concbench-%d", os.Getpid()))
	if left := append(matches, more...); len(left) > 0 {
		t.Errorf("cgroups left after the run: %v", left)
	}
}
