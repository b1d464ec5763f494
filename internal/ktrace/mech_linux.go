package ktrace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"concbench/internal/cpuset"
	"concbench/results"
)

// tracefsRoots are where tracefs is mounted: its own mount point, or
// under debugfs on older systems.
var tracefsRoots = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// FutexWakeFilter selects the futex(2) calls that wake: FUTEX_WAKE (1),
// FUTEX_WAKE_OP (5) and FUTEX_WAKE_BITSET (10), each also with
// FUTEX_PRIVATE_FLAG (128), which the Go runtime and internal/futex use.
// The kernel's filters compare a field with a constant, so the op is
// listed value by value (no "op & 127 == 1").
const FutexWakeFilter = "op == 1 || op == 129 || op == 5 || op == 133 || op == 10 || op == 138"

// ipiEvents are the tracepoints of the IPIs that run a thread another
// CPU woke — a reschedule IPI, or a call-function-single IPI that runs
// the wake-ups queued on an idle CPU's wake list —, in the order they are
// tried: where the kernel sends them (Linux 6.5 and later, any
// architecture: one tracepoint, counted on every CPU and filtered on the
// target), else where they arrive (x86's irq_vectors, on the server's
// CPUs).
var ipiEvents = []struct {
	group string
	names []string
	sent  bool // counted where sent, filtered on the target CPU
}{
	{group: "ipi", names: []string{"ipi_send_cpu"}, sent: true},
	{group: "irq_vectors", names: []string{"reschedule_entry", "call_function_single_entry"}},
}

// mechRole is what one per-thread counter of a mechanisms point adds to:
// a kind of system call, the total, or the futex wake calls.
type mechRole struct {
	kind         string
	total, wakes bool
}

// mechPlan is what a mechanisms point counts on this kernel: the
// per-thread counters and what each adds to, and the per-CPU ones.
//
// Note: one counter per kind of raw_syscalls:sys_enter, filtered on the
// system calls' numbers, rather than one per system call of
// syscalls:sys_enter_<name> (whose names need no table of numbers):
// closing the last counter of a tracepoint waits for an RCU grace period
// under a mutex the kernel holds across it, one tracepoint after
// another, and with a tracepoint per system call closing took longer
// than the point's window on a VM; these are two, and the IPIs one
// more.
type mechPlan struct {
	thread []counterSpec
	roles  []mechRole
	// uncounted are the system calls of results.SyscallKinds that do not
	// exist on this architecture.
	uncounted []string
	root      string // tracefs
}

// tracepoint returns the counter of tracepoint group:name under tracefs
// root, with filter.
func tracepoint(root, group, name, filter string) (counterSpec, error) {
	b, err := os.ReadFile(filepath.Join(root, "events", group, name, "id"))
	if err != nil {
		return counterSpec{}, err
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return counterSpec{}, fmt.Errorf("tracepoint %s:%s: id %q: %w", group, name, b, err)
	}
	return counterSpec{name: group + ":" + name, typ: unix.PERF_TYPE_TRACEPOINT, config: id, filter: filter}, nil
}

// idFilter is the filter of raw_syscalls:sys_enter that selects the
// system calls nrs.
func idFilter(nrs []uint64) string {
	terms := make([]string, len(nrs))
	for i, nr := range nrs {
		terms[i] = fmt.Sprintf("id == %d", nr)
	}
	return strings.Join(terms, " || ")
}

// MountTracefs makes the system-call tracepoints readable where they can
// be: if no tracefs root has them, and this process is root, it mounts
// tracefs at its own mount point (a fresh machine often has the kernel's
// tracepoints but no tracefs mounted) and leaves it mounted. It returns
// what it found or did, for the provenance: "" when tracefs was mounted
// already, else a sentence — mounted, or exactly what to run.
func MountTracefs() string {
	for _, r := range tracefsRoots {
		if _, err := os.Stat(filepath.Join(r, "events", "raw_syscalls", "sys_enter", "id")); err == nil {
			return ""
		}
	}
	const root = "/sys/kernel/tracing"
	const howto = "mount -t tracefs nodev " + root + " (as root)"
	if os.Geteuid() != 0 {
		return "tracefs is not mounted, and this process is not root: the mechanisms are not counted; run " + howto
	}
	if err := unix.Mount("nodev", root, "tracefs", 0, ""); err != nil {
		return fmt.Sprintf("tracefs is not mounted, and mounting it failed (%v): the mechanisms are not counted; run %s", os.NewSyscallError("mount", err), howto)
	}
	if _, err := os.Stat(filepath.Join(root, "events", "raw_syscalls", "sys_enter", "id")); err != nil {
		return "tracefs was not mounted: the harness mounted it at " + root + ", but the kernel has no system-call tracepoints (CONFIG_FTRACE_SYSCALLS)"
	}
	return "tracefs was not mounted: the harness mounted it at " + root + " (and left it mounted)"
}

// planMechanisms finds the tracepoints (tracefs, readable by root only
// on most systems) and returns what this kernel can count, or why it
// cannot count system calls at all.
func planMechanisms() (*mechPlan, error) {
	nrs := syscallNumbers()
	if nrs == nil {
		return nil, fmt.Errorf("no table of the system calls' numbers for GOARCH=%s in concbench (amd64, arm64)", runtime.GOARCH)
	}
	var root string
	var total counterSpec
	var errs []error
	for _, r := range tracefsRoots {
		t, err := tracepoint(r, "raw_syscalls", "sys_enter", "")
		if err == nil {
			root, total = r, t
			break
		}
		errs = append(errs, err)
	}
	if root == "" {
		hint := "no tracefs with the system-call tracepoints here (a kernel with CONFIG_FTRACE_SYSCALLS, tracefs mounted)"
		if errors.Is(errs[0], fs.ErrPermission) {
			hint = "tracefs is readable by root only: run as root"
		}
		return nil, fmt.Errorf("tracefs: %w: %s", errs[0], hint)
	}
	p := &mechPlan{root: root}
	add := func(spec counterSpec, role mechRole) {
		p.thread, p.roles = append(p.thread, spec), append(p.roles, role)
	}
	for _, k := range results.SyscallKinds {
		var ks []uint64
		for _, name := range k.Syscalls {
			if nr, ok := nrs[name]; ok {
				ks = append(ks, nr)
			} else {
				p.uncounted = append(p.uncounted, name)
			}
		}
		if len(ks) > 0 {
			spec := total
			spec.name, spec.filter = "raw_syscalls:sys_enter ("+k.Name+")", idFilter(ks)
			add(spec, mechRole{kind: k.Name})
		}
	}
	add(total, mechRole{total: true})
	wakes, err := tracepoint(root, "syscalls", "sys_enter_futex", FutexWakeFilter)
	if err != nil {
		return nil, fmt.Errorf("tracefs: %w: no futex wake calls to count", err)
	}
	add(wakes, mechRole{wakes: true})
	if nr, ok := nrs["futex_wake"]; ok {
		spec := total
		spec.name, spec.filter = "raw_syscalls:sys_enter (futex_wake)", idFilter([]uint64{nr})
		add(spec, mechRole{wakes: true})
	}
	return p, nil
}

// planIPIs returns the per-CPU counters of the wake-up IPIs sent to the
// CPUs server, named, and the CPUs to open them on; or why there are
// none.
func planIPIs(root string, server cpuset.Set) (specs []counterSpec, events string, on cpuset.Set, why string) {
	for _, ev := range ipiEvents {
		specs = nil
		var names []string
		for _, name := range ev.names {
			filter := ""
			if ev.sent {
				filter = TargetFilter(server)
			}
			t, err := tracepoint(root, ev.group, name, filter)
			if err != nil {
				why = fmt.Sprintf("%s:%s: %v", ev.group, name, err)
				break
			}
			specs, names = append(specs, t), append(names, ev.group+":"+name)
		}
		if len(specs) < len(ev.names) {
			continue
		}
		if !ev.sent {
			return specs, strings.Join(names, " + "), server, ""
		}
		online, err := cpuset.Online()
		if err != nil {
			return nil, "", nil, "the online CPUs: " + err.Error()
		}
		return specs, strings.Join(names, " + "), online, ""
	}
	return nil, "", nil, "no tracepoint of IPIs (ipi:ipi_send_cpu, Linux 6.5 and later; irq_vectors, x86): " + why
}

// TargetFilter is ipi:ipi_send_cpu's filter for IPIs sent to a CPU of
// set, a range at a time.
func TargetFilter(set cpuset.Set) string {
	var terms []string
	for i := 0; i < len(set); {
		j := i
		for j+1 < len(set) && set[j+1] == set[j]+1 {
			j++
		}
		if i == j {
			terms = append(terms, fmt.Sprintf("cpu == %d", set[i]))
		} else {
			terms = append(terms, fmt.Sprintf("(cpu >= %d && cpu <= %d)", set[i], set[j]))
		}
		i = j + 1
	}
	return strings.Join(terms, " || ")
}

// MechSet is a mechanisms point's counters: per server thread (with
// inherit) the system calls by kind, their total and the futex wake
// calls; per CPU the wake-up IPIs sent to the server's CPUs.
type MechSet struct {
	plan      *mechPlan
	threads   *counterSet
	nthreads  int
	cpus      *counterSet // nil when the IPIs are not counted (ipiWhy)
	ipiWhy    string
	ipiEvents string
	cpuList   string // the server's CPUs, the IPIs' targets
}

// MechSample is the counters' sums at one edge of the window.
type MechSample struct {
	threads, cpus []uint64
}

// OpenMechanisms opens the counters on every thread of the processes
// pids (a concbench server, or nginx's master and workers) and those of
// the IPIs sent to cpus (a cpulist; empty: every online CPU), or returns
// nil and why it cannot.
func OpenMechanisms(pids []int, cpus string) (*MechSet, string) {
	plan, err := planMechanisms()
	if err != nil {
		return nil, err.Error()
	}
	m := &MechSet{plan: plan}
	var why string
	if m.threads, m.nthreads, why = openThreads(pids, plan.thread); m.threads == nil {
		return nil, why
	}
	set, err := cpuset.Parse(cpus)
	if err == nil && len(set) == 0 {
		set, err = cpuset.Online()
	}
	if err != nil {
		m.ipiWhy = "not counted: the server's CPUs: " + err.Error()
		return m, ""
	}
	m.cpuList = set.String()
	specs, events, on, why := planIPIs(plan.root, set)
	if specs == nil {
		m.ipiWhy = "not counted: " + why
		return m, ""
	}
	if m.cpus, why = openCPUs(on, specs); m.cpus == nil {
		m.ipiWhy = "not counted: " + why
		return m, ""
	}
	m.ipiEvents = events
	return m, ""
}

// Read returns the counters' sums now, at the window's start or end.
// Reading a counter of a thread that is running on another CPU sends
// that CPU an IPI: the IPIs are read last at the start and first at the
// end, so that the reads' own are outside the window.
func (m *MechSet) Read(start bool) (MechSample, error) {
	var s MechSample
	var err error
	readCPUs := func() {
		if m.cpus != nil && err == nil {
			s.cpus, err = m.cpus.read()
		}
	}
	if !start {
		readCPUs()
	}
	if err == nil {
		s.threads, err = m.threads.read()
	}
	if start {
		readCPUs()
	}
	return s, err
}

// Close closes every counter.
func (m *MechSet) Close() {
	m.threads.close()
	if m.cpus != nil {
		m.cpus.close()
	}
}

// Counts returns the counts between samples b and a: each kind's system
// calls, other as the total less the named ones, the futex wake calls
// (the futex(2) calls with a wake op and every futex_wake(2)) and the
// wake-up IPIs.
func (m *MechSet) Counts(b, a MechSample) *results.Mechanisms {
	d := func(x, y uint64) uint64 { return y - min(x, y) }
	r := &results.Mechanisms{Syscalls: map[string]uint64{}, Uncounted: m.plan.uncounted, Threads: m.nthreads,
		IPICPUs: m.cpuList, IPIEvents: m.ipiEvents, WakeIPIsUnavailable: m.ipiWhy}
	for _, k := range results.SyscallKindNames() {
		r.Syscalls[k] = 0
	}
	var named uint64
	for i, role := range m.plan.roles {
		v := d(b.threads[i], a.threads[i])
		switch {
		case role.total:
			r.Total = v
		case role.wakes:
			r.FutexWakes += v
		default:
			r.Syscalls[role.kind] += v
			named += v
		}
	}
	// Counters read one after another: a system call between two reads
	// may be in the named ones and not in the total.
	r.Syscalls[results.SyscallOther] = r.Total - min(named, r.Total)
	if m.cpus != nil {
		for i := range a.cpus {
			r.WakeIPIs += d(b.cpus[i], a.cpus[i])
		}
	}
	return r
}

// IPIEvents names the IPI tracepoints counted ("" when the IPIs are not
// counted).
func (m *MechSet) IPIEvents() string { return m.ipiEvents }

// IPICPUs is the cpulist whose incoming IPIs are counted (the server's
// CPUs; "" when none are).
func (m *MechSet) IPICPUs() string { return m.cpuList }
