package results

// SyscallKind is one kind of system call that a mechanisms point
// (KindMechanisms) counts: its name, and the system calls it sums, by
// their kernel names (the tracepoint syscalls:sys_enter_<name>, what
// perf stat -e 'syscalls:sys_enter_*' reports).
type SyscallKind struct {
	Name     string
	Syscalls []string
}

// SyscallOther is the kind of every system call that no kind of
// SyscallKinds names: the total (raw_syscalls:sys_enter) less the named
// ones — the Go runtime's own (nanosleep, sched_yield, madvise, tgkill,
// rt_sigreturn …) and the block workload's blocking call (nanosleep).
const SyscallOther = "other"

// SyscallKinds are the kinds of system call a mechanisms point counts,
// in the order tables list them (SyscallOther after them): the ones the
// models differ by. Each is the sum of its system calls; one that does
// not exist on the architecture (epoll_wait on arm64) is listed in
// Mechanisms.Uncounted.
var SyscallKinds = []SyscallKind{
	{Name: "epoll_wait", Syscalls: []string{"epoll_wait", "epoll_pwait", "epoll_pwait2"}},
	{Name: "epoll_ctl", Syscalls: []string{"epoll_ctl"}},
	{Name: "read", Syscalls: []string{"read", "readv", "recvfrom", "recvmsg", "recvmmsg"}},
	{Name: "write", Syscalls: []string{"write", "writev", "sendto", "sendmsg", "sendmmsg"}},
	{Name: "futex", Syscalls: []string{"futex", "futex_wait", "futex_wake", "futex_waitv", "futex_requeue"}},
	{Name: "io_uring_enter", Syscalls: []string{"io_uring_enter"}},
	{Name: "accept", Syscalls: []string{"accept", "accept4"}},
}

// SyscallKindNames returns the kinds' names in table order, SyscallOther
// last.
func SyscallKindNames() []string {
	names := make([]string, 0, len(SyscallKinds)+1)
	for _, k := range SyscallKinds {
		names = append(names, k.Name)
	}
	return append(names, SyscallOther)
}

// Mechanisms are a mechanisms point's counts over its window (between
// the same two control-channel snapshots whose requests ServerCost
// counts; the counters are read just outside them, so the snapshots' own
// few system calls are in the counts). Per request, each divides by
// ServerCost.Requests (Metric SyscallsPerReq and the others).
type Mechanisms struct {
	// Syscalls are the system calls the server's threads entered, by
	// kind (SyscallKinds' names and SyscallOther): per-thread counters of
	// the raw_syscalls:sys_enter tracepoint filtered on the kind's
	// system-call numbers, with inherit, so that threads created later
	// are counted too.
	Syscalls map[string]uint64 `json:"syscalls"`
	// Total is every system call the threads entered
	// (raw_syscalls:sys_enter): the kinds sum to it.
	Total uint64 `json:"total"`
	// Uncounted are the system calls of SyscallKinds that do not exist on
	// this architecture (epoll_wait on arm64): none entered any.
	Uncounted []string `json:"uncounted,omitempty"`
	// FutexWakes are the futex wake calls among them: futex(2) with
	// FUTEX_WAKE, FUTEX_WAKE_OP or FUTEX_WAKE_BITSET, private or not (a
	// tracepoint filter on the op argument), and futex_wake(2). A call,
	// not a thread woken: a call may wake none, or several.
	FutexWakes uint64 `json:"futex_wakes"`
	// WakeIPIs are the cross-CPU wake-ups: the interrupts other CPUs
	// sent the server's CPUs (IPICPUs) to run a thread woken there —
	// reschedule IPIs, and call-function-single IPIs (the kernel queues
	// a wake-up on an idle CPU's wake list and sends one) —, counted
	// per CPU (IPIEvents: where the kernel sends them, ipi:ipi_send_cpu
	// filtered on the target, on Linux 6.5 and later; else where they
	// arrive, x86's irq_vectors:reschedule_entry and
	// call_function_single_entry). They are the wake-ups that cost a CPU
	// an interrupt (a VM exit on a VM); a wake-up on the waker's own CPU,
	// or of a CPU polling in idle, sends none. Being per CPU, they
	// include whatever else runs on the server's CPUs, and a few are not
	// wake-ups (a remote preemption check, reading a perf counter of a
	// running thread). WakeIPIsUnavailable says why there is no count.
	WakeIPIs            uint64 `json:"wake_ipis"`
	WakeIPIsUnavailable string `json:"wake_ipis_unavailable,omitempty"`
	IPICPUs             string `json:"ipi_cpus,omitempty"`
	IPIEvents           string `json:"ipi_events,omitempty"`
	// Threads is the server threads the counters were opened on (those
	// created later are inherited).
	Threads int `json:"threads"`
}
