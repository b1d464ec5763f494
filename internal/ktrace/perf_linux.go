package ktrace

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

// counterSpec is one perf event to count: its type and config, its name
// for messages, and for a tracepoint an optional filter (the kernel's
// event filter syntax, PERF_EVENT_IOC_SET_FILTER).
type counterSpec struct {
	name   string
	typ    uint32
	config uint64
	filter string
}

// perfEvents are the software events counted per point, in the order of
// PerfSet's sums.
var perfEvents = []counterSpec{
	{name: "context-switches", typ: unix.PERF_TYPE_SOFTWARE, config: unix.PERF_COUNT_SW_CONTEXT_SWITCHES},
	{name: "cpu-migrations", typ: unix.PERF_TYPE_SOFTWARE, config: unix.PERF_COUNT_SW_CPU_MIGRATIONS},
	{name: "task-clock", typ: unix.PERF_TYPE_SOFTWARE, config: unix.PERF_COUNT_SW_TASK_CLOCK},
}

// counterSet is counters of several events on several threads or
// CPUs: rows[j] are the j-th thread's (or CPU's) counters, one per event
// in the events' order (fewer if the thread exited while they were
// opened), read as one sum per event. A row's counters are read one after
// another, so that the events of one thread are read at nearly the same
// instant.
type counterSet struct {
	events int
	rows   [][]int
}

// openCounter opens a counter of spec on thread tid (-1: any) and CPU
// cpu (-1: any) — with inherit for a thread's, so that the threads it
// creates later are counted in its counter (and an exiting child's
// count is added to its parent's) — and returns its descriptor.
func openCounter(spec counterSpec, tid, cpu int) (int, error) {
	attr := unix.PerfEventAttr{
		Type:   spec.typ,
		Config: spec.config,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
	}
	if tid >= 0 {
		attr.Bits = unix.PerfBitInherit
	}
	fd, err := unix.PerfEventOpen(&attr, tid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return -1, os.NewSyscallError("perf_event_open", err)
	}
	if spec.filter != "" {
		// Inherited counters use their parent's filter.
		if err := unix.IoctlSetString(fd, unix.PERF_EVENT_IOC_SET_FILTER, spec.filter); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("%w (filter %q)", os.NewSyscallError("ioctl PERF_EVENT_IOC_SET_FILTER", err), spec.filter)
		}
	}
	return fd, nil
}

// openRow opens a counter of every spec on thread tid and CPU cpu, as a
// row of s. A thread that exits meanwhile (ESRCH) leaves a short row.
func (s *counterSet) openRow(specs []counterSpec, tid, cpu int) (failed *counterSpec, err error) {
	var row []int
	defer func() {
		if len(row) > 0 {
			s.rows = append(s.rows, row)
		}
	}()
	for i := range specs {
		fd, err := openCounter(specs[i], tid, cpu)
		if tid >= 0 && errors.Is(err, unix.ESRCH) {
			return nil, nil // the thread exited meanwhile
		}
		if err != nil {
			return &specs[i], err
		}
		row = append(row, fd)
	}
	return nil, nil
}

// openThreads opens a counter of every spec on every thread of the
// processes pids (a concbench server, or nginx's master and workers),
// with inherit. It returns nil and the reason when the kernel refuses
// (not root, perf_event_paranoid, no perf support), so that the point
// records why it has no counts, and the threads it opened them on.
//
// Note: a single counter on the process (pid = server pid, inherit) would
// see only the main thread and the threads it creates later — Go creates
// threads from other threads (sysmon, the template thread), so it misses
// most of a server's switches (docs/findings.md) — so there is one per
// existing thread.
func openThreads(pids []int, specs []counterSpec) (*counterSet, int, string) {
	s := &counterSet{events: len(specs)}
	threads := 0
	for _, pid := range pids {
		n, why := s.openProcess(pid, specs)
		if why != "" {
			s.close()
			return nil, 0, why
		}
		threads += n
	}
	return s, threads, ""
}

// openProcess opens a counter of every spec on every thread of process
// pid, as rows of s, and returns the threads, or why it could not.
func (s *counterSet) openProcess(pid int, specs []counterSpec) (int, string) {
	seen := map[int]bool{}
	for { // until a pass finds no new thread: threads start while we open
		tids, err := sysstat.TaskIDs(pid)
		if err != nil {
			return 0, "perf: " + err.Error()
		}
		fresh := 0
		for _, tid := range tids {
			if seen[tid] {
				continue
			}
			seen[tid] = true
			fresh++
			if spec, err := s.openRow(specs, tid, -1); err != nil {
				return 0, fmt.Sprintf("%v (%s, thread %d): %v", err, spec.name, tid, perfHint(err))
			}
		}
		if fresh == 0 {
			return len(seen), ""
		}
	}
}

// openCPUs opens a counter of every spec on each of cpus, for every
// process. It returns nil and the reason when the kernel refuses.
func openCPUs(cpus []int, specs []counterSpec) (*counterSet, string) {
	s := &counterSet{events: len(specs)}
	for _, cpu := range cpus {
		if spec, err := s.openRow(specs, -1, cpu); err != nil {
			s.close()
			return nil, fmt.Sprintf("%v (%s, CPU %d): %v", err, spec.name, cpu, perfHint(err))
		}
	}
	return s, ""
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
	case errors.Is(err, unix.EINVAL):
		return "the kernel refused the event or its filter"
	}
	return "unexpected"
}

// read returns each event's counters' sum now.
func (s *counterSet) read() ([]uint64, error) {
	sums := make([]uint64, s.events)
	buf := make([]byte, 8)
	for _, row := range s.rows {
		for i, fd := range row {
			n, err := unix.Read(fd, buf)
			if err != nil {
				return nil, os.NewSyscallError("read", err)
			}
			if n != 8 {
				return nil, fmt.Errorf("perf: read %d bytes of a counter, want 8", n)
			}
			sums[i] += binary.NativeEndian.Uint64(buf)
		}
	}
	return sums, nil
}

// close closes every counter.
func (s *counterSet) close() {
	for _, row := range s.rows {
		for _, fd := range row {
			unix.Close(fd)
		}
	}
	s.rows = nil
}

// PerfSet is the perf software counters (perfEvents) on a server's
// threads. They are opened before the load generator starts and read at
// the window's edges, so that the window's edges cost only a read per
// counter, on the load generator's CPU.
type PerfSet struct {
	c *counterSet
}

// OpenPerf opens the counters on every thread of the processes pids (a
// concbench server, or nginx's master and workers), or returns nil and
// why not.
func OpenPerf(pids ...int) (*PerfSet, string) {
	c, _, why := openThreads(pids, perfEvents)
	if c == nil {
		return nil, why
	}
	return &PerfSet{c: c}, ""
}

// Read returns the counters' sums now.
func (p *PerfSet) Read() (results.PerfCounters, error) {
	s, err := p.c.read()
	if err != nil {
		return results.PerfCounters{}, err
	}
	return results.PerfCounters{ContextSwitches: s[0], CPUMigrations: s[1], TaskClockNs: s[2]}, nil
}

func (p *PerfSet) Close() { p.c.close() }
