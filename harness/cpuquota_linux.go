package harness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// quotaPeriod is the CPU quota's enforcement period. The kernel's
// default is 100 ms; a server that spends its quota in the first half of
// such a period then stalls for 50 ms, which a 700-ms window sees as a
// few long gaps. 10 ms keeps the throttled stretches short and many.
const quotaPeriod = 10 * time.Millisecond

// cpuQuota is a cgroup whose CPU bandwidth is limited to a share of one
// CPU (Experiment.ServerCPUQuota): every process of the measured server
// is moved into it once it is ready, so the server's threads together
// run at most that long per period, whatever the CPUs they are pinned to.
type cpuQuota struct {
	dir  string // the cgroup's directory
	desc string // what was set up, for the run's provenance
}

// cgroupMount is a mounted cgroup hierarchy that has the cpu controller.
type cgroupMount struct {
	dir string
	v2  bool
}

// findCPUCgroup returns the hierarchy with the cpu controller, from a
// mountinfo listing: a cgroup (v1) mount whose options name cpu, else a
// cgroup2 mount that offers it.
func findCPUCgroup(mountinfo io.Reader, controllers func(dir string) string) (cgroupMount, error) {
	var v2 []string
	sc := bufio.NewScanner(mountinfo)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		switch g[0] {
		case "cgroup":
			if slices.Contains(strings.Split(g[2], ","), "cpu") {
				return cgroupMount{dir: f[4]}, nil
			}
		case "cgroup2":
			v2 = append(v2, f[4])
		}
	}
	if err := sc.Err(); err != nil {
		return cgroupMount{}, err
	}
	for _, dir := range v2 {
		if slices.Contains(strings.Fields(controllers(dir)), "cpu") {
			return cgroupMount{dir: dir, v2: true}, nil
		}
	}
	if len(v2) > 0 {
		return cgroupMount{}, fmt.Errorf("no cgroup hierarchy has the cpu controller (cgroup2 at %s offers none)", strings.Join(v2, ", "))
	}
	return cgroupMount{}, errors.New("no cgroup hierarchy is mounted with the cpu controller (mount one: mount -t cgroup2 none /sys/fs/cgroup, or mount -t cgroup -o cpu cgroup /sys/fs/cgroup/cpu)")
}

// newCPUQuota creates the run's cgroup, limited to share of one CPU. It
// needs the cpu controller and the right to create a cgroup (root).
func newCPUQuota(share float64) (*cpuQuota, error) {
	fail := func(err error) (*cpuQuota, error) {
		return nil, fmt.Errorf("harness: a server CPU quota of %s needs a cgroup: %w", fmtShare(share), err)
	}
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fail(err)
	}
	m, err := findCPUCgroup(mi, func(dir string) string {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		return string(b)
	})
	mi.Close()
	if err != nil {
		return fail(err)
	}
	period := quotaPeriod.Microseconds()
	quota := int64(share * float64(period))
	q := &cpuQuota{dir: filepath.Join(m.dir, fmt.Sprintf("concbench-%d", os.Getpid()))}
	if err := os.Mkdir(q.dir, 0o755); err != nil {
		return fail(err)
	}
	write := func(name, v string) error { return os.WriteFile(filepath.Join(q.dir, name), []byte(v), 0o644) }
	if m.v2 {
		err = os.WriteFile(filepath.Join(m.dir, "cgroup.subtree_control"), []byte("+cpu"), 0o644)
		if err == nil {
			err = write("cpu.max", fmt.Sprintf("%d %d", quota, period))
		}
		q.desc = fmt.Sprintf("cgroup v2 cpu.max %d %d", quota, period)
	} else {
		err = write("cpu.cfs_period_us", strconv.FormatInt(period, 10))
		if err == nil {
			err = write("cpu.cfs_quota_us", strconv.FormatInt(quota, 10))
		}
		q.desc = fmt.Sprintf("cgroup v1 cpu.cfs_quota_us %d per cpu.cfs_period_us %d", quota, period)
	}
	if err != nil {
		q.close()
		return fail(err)
	}
	q.desc = fmt.Sprintf("%s of a CPU for all the server's processes together (%s, at %s)", fmtShare(share), q.desc, q.dir)
	return q, nil
}

// place moves each process (all its threads) into the cgroup.
func (q *cpuQuota) place(pids []int) error {
	for _, pid := range pids {
		if err := os.WriteFile(filepath.Join(q.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("harness: moving server process %d into the CPU quota's cgroup: %w", pid, err)
		}
	}
	return nil
}

// close removes the cgroup once the processes in it are gone (a process
// that has just exited may hold it a moment longer).
func (q *cpuQuota) close() {
	for range 50 {
		if err := os.Remove(q.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
