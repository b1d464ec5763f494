package sysstat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Self returns getrusage(RUSAGE_SELF): all threads, exited ones included.
func Self() (Rusage, error) { return getrusage(unix.RUSAGE_SELF) }

// Thread returns getrusage(RUSAGE_THREAD): the calling thread alone (lock
// the goroutine to its thread for two readings to be of one thread).
// MaxRSSKiB is still the process's. It does not allocate unless it fails.
func Thread() (Rusage, error) { return getrusage(unix.RUSAGE_THREAD) }

func getrusage(who int) (Rusage, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		return Rusage{}, os.NewSyscallError("getrusage", err)
	}
	return Rusage{
		UserNs:      ru.Utime.Nano(),
		SystemNs:    ru.Stime.Nano(),
		Voluntary:   ru.Nvcsw,
		Involuntary: ru.Nivcsw,
		MaxRSSKiB:   ru.Maxrss,
	}, nil
}

// taskDir returns the /proc directory of process pid's threads (0: this
// process).
func taskDir(pid int) string {
	if pid > 0 {
		return "/proc/" + strconv.Itoa(pid) + "/task"
	}
	return "/proc/self/task"
}

// TaskIDs lists the thread ids of process pid (0: this process), from
// /proc/<pid>/task.
func TaskIDs(pid int) ([]int, error) {
	ents, err := os.ReadDir(taskDir(pid))
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// errNoSchedstat is returned when no thread has a schedstat file: the
// kernel exposes none.
var errNoSchedstat = errors.New("sysstat: the kernel exposes no schedstat")

// ThreadRunQueueNs returns the calling thread's cumulative run-queue wait
// (ns runnable but waiting for a CPU), from /proc/thread-self/schedstat;
// lock the goroutine to its thread for two readings to be of one thread.
// It fails if the kernel exposes no schedstat.
func ThreadRunQueueNs() (int64, error) {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0, err
	}
	v, err := parseSchedstat(b)
	return v.WaitNs, err
}

// ThreadSched is one thread's cumulative scheduler counters, the three
// fields of its schedstat file.
type ThreadSched struct {
	RunNs  int64 // ns on a CPU
	WaitNs int64 // ns runnable, waiting for a CPU (the run-queue wait)
	Slices int64 // times it was put on a CPU: its switches in
}

// parseSchedstat parses a schedstat file's three fields.
func parseSchedstat(b []byte) (ThreadSched, error) {
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ThreadSched{}, fmt.Errorf("sysstat: malformed schedstat %q", b)
	}
	var v [3]int64
	for i := range v {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return ThreadSched{}, fmt.Errorf("sysstat: malformed schedstat %q: %w", b, err)
		}
		v[i] = n
	}
	return ThreadSched{RunNs: v[0], WaitNs: v[1], Slices: v[2]}, nil
}

// SchedByThread returns the scheduler counters of each live thread of
// process pid (0: this process), by thread id, from
// /proc/<pid>/task/<tid>/schedstat. A thread that exits while it is read
// is left out. It fails if the kernel exposes no schedstat.
//
// Unlike ReadTasks it does not sum: a thread that exits between two
// readings would make the difference of two sums wrong, whereas matching
// the two maps by thread id leaves it out.
func SchedByThread(pid int) (map[int]ThreadSched, error) {
	tids, err := TaskIDs(pid)
	if err != nil {
		return nil, err
	}
	dir := taskDir(pid) + "/"
	m := make(map[int]ThreadSched, len(tids))
	for _, tid := range tids {
		b, err := os.ReadFile(dir + strconv.Itoa(tid) + "/schedstat")
		if err != nil {
			continue // the thread exited meanwhile (or no schedstat: see below)
		}
		v, err := parseSchedstat(b)
		if err != nil {
			return nil, err
		}
		m[tid] = v
	}
	if len(m) == 0 { // a process always has a thread: the kernel has no schedstat
		return nil, errNoSchedstat
	}
	return m, nil
}

// ReadTasks sums /proc/<pid>/task/*/status context switches and
// /proc/<pid>/task/*/schedstat over the live threads of process pid (0: this
// process). It reads two files per thread: call it only at the edges of a
// measurement.
func ReadTasks(pid int) (Tasks, error) {
	dir := taskDir(pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return Tasks{}, err
	}
	t := Tasks{SchedStat: true}
	for _, e := range ents {
		b, err := os.ReadFile(dir + "/" + e.Name() + "/status")
		if err != nil {
			continue // the thread exited meanwhile
		}
		t.Threads++
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			switch k {
			case "voluntary_ctxt_switches":
				t.Voluntary += atoi(v)
			case "nonvoluntary_ctxt_switches":
				t.Involuntary += atoi(v)
			}
		}
		ss, err := os.ReadFile(dir + "/" + e.Name() + "/schedstat")
		if err != nil {
			t.SchedStat = false
			continue
		}
		f := strings.Fields(string(ss))
		if len(f) >= 3 {
			t.RunNs += atoi(f[0])
			t.RunQueueNs += atoi(f[1])
			t.Timeslices += atoi(f[2])
		}
	}
	return t, nil
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n
}

// RSS returns the resident set size of this process in bytes, from
// /proc/self/statm.
func RSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, os.ErrInvalid
	}
	return atoi(f[1]) * int64(os.Getpagesize()), nil
}

// userHz is the unit of /proc/stat's CPU times (USER_HZ): 100 ticks per
// second on every Linux architecture Go supports.
const userHz = 100

// StealNs returns the time the hypervisor ran something else while CPUs
// cpus (all CPUs if empty) of this machine wanted to run ("steal" in
// /proc/stat), summed, in ns, at the clock tick's resolution (10 ms). A
// kernel or hypervisor that does not account steal time reports 0.
func StealNs(cpus []int) (int64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseSteal(b, cpus)
}

// parseSteal sums the steal column of the "cpuN" lines of /proc/stat
// content b for the CPUs in cpus (all of them if empty).
func parseSteal(b []byte, cpus []int) (int64, error) {
	want := map[int]bool{}
	for _, c := range cpus {
		want[c] = true
	}
	var ticks int64
	found := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil || len(want) > 0 && !want[n] {
			continue
		}
		v, err := strconv.ParseInt(f[8], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("sysstat: /proc/stat: %s steal %q: %w", f[0], f[8], err)
		}
		ticks += v
		found++
	}
	if found == 0 {
		return 0, errors.New("sysstat: /proc/stat: no matching cpu lines")
	}
	return ticks * (1e9 / userHz), nil
}

// Threads returns the number of threads of process pid (0: this process),
// from the Threads line of /proc/<pid>/status: one small file, whatever
// the number of threads, unlike listing /proc/<pid>/task.
func Threads(pid int) (int, error) {
	b, err := os.ReadFile(procPath(pid, "status"))
	if err != nil {
		return 0, err
	}
	return parseThreads(b)
}

// procPath returns /proc/<pid>/name (0: this process, /proc/self).
func procPath(pid int, name string) string {
	if pid > 0 {
		return "/proc/" + strconv.Itoa(pid) + "/" + name
	}
	return "/proc/self/" + name
}

// parseThreads parses the Threads line of a /proc/<pid>/status file.
func parseThreads(b []byte) (int, error) {
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("Threads:")); ok {
			return strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	return 0, errors.New("sysstat: no Threads line in /proc/<pid>/status")
}

// OpenFDs returns the number of open file descriptors of process pid (0:
// this process), by listing /proc/<pid>/fd. The listing costs time in
// proportion to the descriptors (milliseconds at tens of thousands): read
// it outside any measured interval.
func OpenFDs(pid int) (int, error) {
	f, err := os.Open(procPath(pid, "fd"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	for {
		names, err := f.Readdirnames(4096)
		n += len(names)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, err
		}
	}
	if pid == 0 {
		n-- // the listing's own descriptor
	}
	return n, nil
}

// OpenSockets returns how many of process pid's open descriptors (0:
// this process) are sockets, by reading the links in /proc/<pid>/fd
// ("socket:[inode]"). It costs a readlink per descriptor: read it outside
// any measured interval. A descriptor closed during the listing is not
// counted.
func OpenSockets(pid int) (int, error) {
	dir := procPath(pid, "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n, nil
}

// RaiseNoFile raises this process's RLIMIT_NOFILE soft limit to its hard
// limit, so that it may hold as many descriptors (connections) as the
// system allows it, and returns the soft limit in force afterwards and
// the hard limit. The Go runtime does the same at start-up, silently, and
// restores the original limit for child processes; RaiseNoFile makes it
// explicit and reports a failure (setrlimit's error, wrapped), so that a
// caller short of descriptors can say why.
func RaiseNoFile() (soft, hard uint64, err error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, os.NewSyscallError("getrlimit", err)
	}
	if lim.Cur < lim.Max {
		want := lim
		want.Cur = lim.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &want); err != nil {
			return lim.Cur, lim.Max, os.NewSyscallError("setrlimit", err)
		}
		lim = want
	}
	return lim.Cur, lim.Max, nil
}
