package cpuset

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Pin sets the CPU affinity of every thread of process pid (0: this process)
// to s. Threads created later inherit the affinity of the thread that
// creates them, so pinning all current threads pins the process. In this
// process, call it early, before the work starts.
func Pin(pid int, s Set) error {
	if len(s) == 0 {
		return fmt.Errorf("cpuset: empty CPU set")
	}
	// The kernel drops CPUs that are not online from a mask without a
	// word, and fails with a bare EINVAL when none is left: say which.
	if on, err := Online(); err == nil {
		var missing Set
		for _, c := range s {
			if !slices.Contains(on, c) {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("cpuset: CPU %v not online on this machine (online: %v)", missing, on)
		}
	}
	var mask unix.CPUSet
	for _, c := range s {
		mask.Set(c)
	}
	dir := "/proc/self/task"
	if pid > 0 {
		dir = "/proc/" + strconv.Itoa(pid) + "/task"
	}
	// Pin until a pass finds no thread it has not pinned: threads started
	// during a pass may have copied an old mask.
	done := map[int]bool{}
	for {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		fresh := 0
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			fresh++
			if err := unix.SchedSetaffinity(tid, &mask); err != nil && err != unix.ESRCH {
				hint := ""
				if err == unix.EINVAL {
					hint = " (none of them is allowed to this process: a cgroup cpuset may restrict it)"
				}
				return fmt.Errorf("cpuset: pin thread %d to CPUs %v%s: %w", tid, s, hint, os.NewSyscallError("sched_setaffinity", err))
			}
			done[tid] = true
		}
		if fresh == 0 {
			return nil
		}
	}
}

// Online returns the CPUs online on this machine
// (/sys/devices/system/cpu/online).
func Online() (Set, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, err
	}
	return Parse(strings.TrimSpace(string(b)))
}

// Current returns the CPUs the calling thread may run on.
func Current() (Set, error) {
	var mask unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mask); err != nil {
		return nil, os.NewSyscallError("sched_getaffinity", err)
	}
	var s Set
	for c := range 1024 {
		if mask.IsSet(c) {
			s = append(s, c)
		}
	}
	return s, nil
}
