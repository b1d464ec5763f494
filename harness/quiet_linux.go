package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"concbench/results"
)

// disturber is a kind of kernel thread that wakes at a fixed period and
// then runs for milliseconds on whichever CPU it wakes on: a stall that
// lands on the server's CPU delays every request behind it, and one on a
// load generator's CPU delays its sends. Such a thread is given
// SCHED_IDLE for the run, so that it runs only when its CPU has nothing
// else to do and yields at once when a server or generator thread wakes;
// its work is not lost, only moved into idle time.
type disturber struct {
	prefix string // the thread's comm starts with it
	why    string
}

// disturbers are the kernel threads known to stall a CPU periodically.
//
// Note: kdamond is DAMON's monitoring thread (mm/damon): some hosts run
// it on their guests to find cold memory; in physical-address mode it
// scans page access bits every sampling interval for milliseconds at a
// time: a stall of the CPU several times a second, enough to decide a
// short window's p99 (docs/findings.md). Kernel
// workers (kworker) and RCU threads are not here: they are per-CPU or
// short-lived, and their work cannot wait for idle time.
var disturbers = []disturber{
	{prefix: "kdamond", why: "DAMON's monitoring thread: wakes every sampling interval and scans memory for milliseconds"},
}

// quietLock is the file through which concurrent runs on one machine
// share the quieting, under an exclusive flock for the moment each reads
// and writes it: the threads' policies before the first run changed
// them, and the runs (process ids) that hold them quiet. The last run to
// end restores the policies; a run that died without ending is dropped
// from the holders by the next one that looks.
var quietLock = filepath.Join(os.TempDir(), "concbench-kernel-threads.lock")

// quietState is quietLock's content.
type quietState struct {
	Saved   []saved `json:"saved"`   // the policies to restore
	Holders []int   `json:"holders"` // the runs holding the threads quiet
}

// saved is a quieted thread's policy before the first run changed it.
type saved struct {
	PID  int            `json:"pid"`
	Comm string         `json:"comm"`
	Attr unix.SchedAttr `json:"attr"`
}

// quietKernel gives every disturbing kernel thread SCHED_IDLE and returns
// what it found and did, and the function that ends this run's hold on
// it: the last run on the machine to end restores each thread's policy
// (and restore reports whether it did). A thread whose policy cannot be
// changed (not root) is reported with the error, and the run goes on.
func quietKernel() ([]results.KernelThread, func() bool) {
	var found []results.KernelThread
	err := withQuietState(func(st *quietState) {
		var changed []saved
		found, changed = quietThreads(st.Saved)
		st.Saved = append(st.Saved, changed...)
		st.Holders = append(st.Holders, os.Getpid())
	})
	if err != nil {
		return []results.KernelThread{{Name: "kernel threads", Err: err.Error()}}, func() bool { return false }
	}
	return found, func() bool {
		restored := false
		withQuietState(func(st *quietState) {
			st.Holders = slices.DeleteFunc(st.Holders, func(pid int) bool { return pid == os.Getpid() })
			if len(st.Holders) > 0 {
				return
			}
			for _, s := range st.Saved {
				if comm(s.PID) == s.Comm {
					a := s.Attr
					unix.SchedSetAttr(s.PID, &a, 0)
					restored = true
				}
			}
			st.Saved = nil
		})
		return restored
	}
}

// withQuietState runs f on quietLock's state under its exclusive lock,
// live holders only, and writes back what f leaves.
func withQuietState(f func(*quietState)) error {
	file, err := os.OpenFile(quietLock, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := flock(int(file.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	var st quietState
	if b, err := os.ReadFile(quietLock); err == nil && len(b) > 0 {
		json.Unmarshal(b, &st) // a damaged file: treated as empty
	}
	st.Holders = slices.DeleteFunc(st.Holders, func(pid int) bool {
		return unix.Kill(pid, 0) == unix.ESRCH // a run that died without ending
	})
	f(&st)
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := file.Truncate(0); err != nil {
		return err
	}
	_, err = file.WriteAt(b, 0)
	return err // closing the file releases the lock
}

// quietThreads gives SCHED_IDLE to every disturbing kernel thread and
// returns what it found, and the policies it changed (to be restored);
// prior are the policies an earlier run recorded, reported as each
// thread's policy before the runs.
func quietThreads(prior []saved) (found []results.KernelThread, changed []saved) {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil || !kernelThread(dir) {
			continue
		}
		c := comm(pid)
		for _, d := range disturbers {
			if !strings.HasPrefix(c, d.prefix) {
				continue
			}
			kt := results.KernelThread{Name: c, PID: pid, Why: d.why}
			old, err := unix.SchedGetAttr(pid, 0)
			if err != nil {
				kt.Err = os.NewSyscallError("sched_getattr", err).Error()
				found = append(found, kt)
				continue
			}
			kt.From = policyName(old.Policy)
			for _, s := range prior {
				if s.PID == pid && s.Comm == c {
					kt.From = policyName(s.Attr.Policy)
				}
			}
			if old.Policy != unix.SCHED_IDLE {
				idle := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
				if err := unix.SchedSetAttr(pid, &idle, 0); err != nil {
					kt.Err = fmt.Sprintf("%v (as root: chrt --idle -p 0 %d)", os.NewSyscallError("sched_setattr", err), pid)
					found = append(found, kt)
					continue
				}
				changed = append(changed, saved{PID: pid, Comm: c, Attr: *old})
			}
			kt.To = policyName(unix.SCHED_IDLE)
			found = append(found, kt)
		}
	}
	return found, changed
}

// flock is flock(2), retried on EINTR.
func flock(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if err != unix.EINTR {
			if err != nil {
				return os.NewSyscallError("flock", err)
			}
			return nil
		}
	}
}

// comm returns the comm of process pid, "" if it is gone.
func comm(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// kernelThread reports whether the process in dir is a kernel thread:
// PF_KTHREAD in the flags of its stat line.
func kernelThread(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	return err == nil && kthreadStat(string(b))
}

// kthreadStat reports whether a /proc/<pid>/stat line has PF_KTHREAD.
func kthreadStat(s string) bool {
	// The comm in parentheses may hold spaces: the fields after it count
	// from the last ")".
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 7 {
		return false
	}
	flags, err := strconv.ParseUint(f[6], 10, 64) // field 9: flags
	const pfKthread = 0x00200000
	return err == nil && flags&pfKthread != 0
}

// policyName names a scheduling policy.
func policyName(p uint32) string {
	switch p {
	case unix.SCHED_NORMAL:
		return "SCHED_OTHER"
	case unix.SCHED_FIFO:
		return "SCHED_FIFO"
	case unix.SCHED_RR:
		return "SCHED_RR"
	case unix.SCHED_BATCH:
		return "SCHED_BATCH"
	case unix.SCHED_IDLE:
		return "SCHED_IDLE"
	case unix.SCHED_DEADLINE:
		return "SCHED_DEADLINE"
	}
	return fmt.Sprintf("policy %d", p)
}
