package harness

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"concbench/internal/sysstat"
	"concbench/results"
)

// perfEvents are the software events counted per point, in the order of
// perfSet.fds.
var perfEvents = []struct {
	name   string
	config uint64
}{
	{"context-switches", unix.PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cpu-migrations", unix.PERF_COUNT_SW_CPU_MIGRATIONS},
	{"task-clock", unix.PERF_COUNT_SW_TASK_CLOCK},
}

// perfSet is one perf counter per event per server thread, with
// inherit, so that threads the server creates later are counted in their
// creator's counter (and an exiting child's count is added to its
// parent's). The counters are opened before the load generator starts
// and read at the window's edges, so that the window's edges cost only a
// read per counter, on the load generator's CPU.
//
// Note: a single counter on the process (pid = server pid, inherit) would
// see only the main thread and the threads it creates later — Go creates
// threads from other threads (sysmon, the template thread), and that
// counter saw 249 of 4155 switches in a measurement on a 2-vCPU VM — so
// there is one per existing thread.
type perfSet struct {
	fds [3][]int
}

// openPerf opens the counters on every thread of the processes pids (a
// concbench server, or nginx's master and workers). It returns nil and
// the reason when the kernel refuses (not root, perf_event_paranoid, no
// perf support), so that the point records why it has no perf counts.
func openPerf(pids ...int) (*perfSet, string) {
	p := &perfSet{}
	for _, pid := range pids {
		if why := p.open(pid); why != "" {
			p.close()
			return nil, why
		}
	}
	return p, ""
}

// open opens the counters on every thread of process pid, or returns why
// it could not.
func (p *perfSet) open(pid int) string {
	seen := map[int]bool{}
	for { // until a pass finds no new thread: threads start while we open
		tids, err := sysstat.TaskIDs(pid)
		if err != nil {
			return "perf: " + err.Error()
		}
		fresh := 0
		for _, tid := range tids {
			if seen[tid] {
				continue
			}
			seen[tid] = true
			fresh++
			for i, ev := range perfEvents {
				attr := unix.PerfEventAttr{
					Type:   unix.PERF_TYPE_SOFTWARE,
					Config: ev.config,
					Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
					Bits:   unix.PerfBitInherit,
				}
				fd, err := unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
				if errors.Is(err, unix.ESRCH) {
					break // the thread exited meanwhile
				}
				if err != nil {
					return fmt.Sprintf("%s (%s, thread %d): %v",
						os.NewSyscallError("perf_event_open", err), ev.name, tid, perfHint(err))
				}
				p.fds[i] = append(p.fds[i], fd)
			}
		}
		if fresh == 0 {
			return ""
		}
	}
}

// perfHint says what a perf_event_open error usually means.
func perfHint(err error) string {
	switch {
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return "not permitted: run as root or lower /proc/sys/kernel/perf_event_paranoid"
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENODEV), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
		return "this kernel does not support the event"
	case errors.Is(err, unix.EMFILE), errors.Is(err, unix.ENFILE):
		return "out of file descriptors (one per thread and event)"
	}
	return "unexpected"
}

// read returns the counters' sums now.
func (p *perfSet) read() (results.PerfCounters, error) {
	var sums [3]uint64
	buf := make([]byte, 8)
	for i, fds := range p.fds {
		for _, fd := range fds {
			n, err := unix.Read(fd, buf)
			if err != nil {
				return results.PerfCounters{}, os.NewSyscallError("read", err)
			}
			if n != 8 {
				return results.PerfCounters{}, fmt.Errorf("perf: read %d bytes of a counter, want 8", n)
			}
			sums[i] += binary.NativeEndian.Uint64(buf)
		}
	}
	return results.PerfCounters{ContextSwitches: sums[0], CPUMigrations: sums[1], TaskClockNs: sums[2]}, nil
}

func (p *perfSet) close() {
	for i, fds := range p.fds {
		for _, fd := range fds {
			unix.Close(fd)
		}
		p.fds[i] = nil
	}
}
