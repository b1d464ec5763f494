package ktrace

import (
	"errors"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"concbench/results"
)

// TestMechanismCounts checks how the counters' sums become counts: each
// kind's counter adds to its kind, other is the total less the named
// ones (never below 0), the futex wake calls are the sum of their
// counters (futex(2) with a wake op, futex_wake(2)), and the IPIs are
// summed over the CPUs.
func TestMechanismCounts(t *testing.T) {
	plan := &mechPlan{roles: []mechRole{
		{kind: "read"}, {kind: "write"}, {kind: "futex"}, {wakes: true}, {wakes: true}, {total: true},
	}}
	m := &MechSet{plan: plan, nthreads: 3, cpus: &counterSet{}, cpuList: "0-1"}
	before := MechSample{threads: []uint64{10, 10, 10, 10, 10, 100}, cpus: []uint64{5, 7}}
	after := MechSample{threads: []uint64{110, 60, 45, 25, 15, 400}, cpus: []uint64{15, 8}}
	got := m.Counts(before, after)
	want := map[string]uint64{"read": 100, "write": 50, "futex": 35, "other": 300 - 185}
	for _, k := range results.SyscallKindNames() {
		if got.Syscalls[k] != want[k] {
			t.Errorf("%s = %d, want %d", k, got.Syscalls[k], want[k])
		}
	}
	if got.Total != 300 || got.FutexWakes != 15+5 || got.WakeIPIs != 11 || got.IPICPUs != "0-1" || got.Threads != 3 || got.WakeIPIsUnavailable != "" {
		t.Errorf("counts %+v, want total 300, 20 futex wakes, 11 IPIs on 0-1, 3 threads", got)
	}

	// The named ones read past the total: other is 0, not a wrapped
	// number; no IPI counters: why, and no count.
	m = &MechSet{plan: plan, ipiWhy: "not counted: no irq_vectors"}
	after.threads[5] = 150
	got = m.Counts(before, after)
	if got.Syscalls["other"] != 0 || got.WakeIPIs != 0 || got.WakeIPIsUnavailable != "not counted: no irq_vectors" {
		t.Errorf("counts %+v, want other 0 and the IPIs' reason", got)
	}
}

// TestMechanismsOfSelf counts this process's own system calls: reads of
// /dev/zero, writes to /dev/null, futex wakes and futex waits that
// return at once (the word differs) must each be counted, by kind, and
// the waits must not be counted as wakes. Without permission (not root)
// it checks that the reason is said instead.
func TestMechanismsOfSelf(t *testing.T) {
	m, why := OpenMechanisms([]int{os.Getpid()}, "")
	if m == nil {
		if why == "" {
			t.Fatal("OpenMechanisms: no counters and no reason")
		}
		t.Skipf("not counted here (the reason is recorded): %s", why)
	}
	defer m.Close()
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer zero.Close()
	null, err := os.OpenFile("/dev/null", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	const reads, writes, wakes, waits = 300, 200, 100, 5000
	buf := make([]byte, 8)
	var word uint32 = 1
	b, err := m.Read(true)
	if err != nil {
		t.Fatal(err)
	}
	for range reads {
		if _, err := unix.Read(int(zero.Fd()), buf); err != nil {
			t.Fatal(err)
		}
	}
	for range writes {
		if _, err := unix.Write(int(null.Fd()), buf); err != nil {
			t.Fatal(err)
		}
	}
	for range wakes {
		futexCall(t, &word, 1|128, 1) // FUTEX_WAKE_PRIVATE
	}
	for range waits {
		futexCall(t, &word, 0|128, 0) // FUTEX_WAIT_PRIVATE; word is 1: EAGAIN at once
	}
	a, err := m.Read(false)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Counts(b, a)
	for k, min := range map[string]uint64{"read": reads, "write": writes, "futex": wakes + waits} {
		if c.Syscalls[k] < min {
			t.Errorf("%s system calls %d, want at least %d", k, c.Syscalls[k], min)
		}
	}
	var named uint64
	for _, k := range slices.Sorted(maps.Keys(c.Syscalls)) {
		named += c.Syscalls[k]
	}
	if c.Total < reads+writes+wakes+waits || named != c.Total {
		t.Errorf("total %d, kinds %v summing to %d: want the kinds to sum to a total of at least %d", c.Total, c.Syscalls, named, reads+writes+wakes+waits)
	}
	// The runtime's own wakes are few over these microseconds; thousands
	// of waits counted as wakes would exceed the bound.
	if c.FutexWakes < wakes || c.FutexWakes >= wakes+waits/2 {
		t.Errorf("futex wakes %d, want at least the %d wakes and not the %d waits", c.FutexWakes, wakes, waits)
	}
	if c.WakeIPIsUnavailable == "" && c.IPICPUs == "" {
		t.Errorf("wake IPIs counted on no CPU: %+v", c)
	}
	if c.Threads < 1 {
		t.Errorf("counters on %d threads", c.Threads)
	}
}

// futexCall makes one futex(2) call on word; EAGAIN (a wait whose word
// differs) is what the waits expect.
func futexCall(t *testing.T, word *uint32, op, val int) {
	t.Helper()
	_, _, errno := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), uintptr(op), uintptr(val), 0, 0, 0)
	if errno != 0 && !errors.Is(errno, unix.EAGAIN) {
		t.Fatal(os.NewSyscallError("futex", errno))
	}
	runtime.KeepAlive(word)
}

// TestMechanismsRefused checks that a process the counters cannot be
// opened on gives a reason, never zeros.
func TestMechanismsRefused(t *testing.T) {
	m, why := OpenMechanisms([]int{1 << 30}, "") // no such process
	if m != nil {
		m.Close()
		t.Fatal("counters opened on a process that does not exist")
	}
	if why == "" || !strings.Contains(why, "perf") && !strings.Contains(why, "tracefs") {
		t.Errorf("reason %q, want one naming perf or tracefs", why)
	}
}

// TestTargetFilter checks the IPI counter's filter on its target CPUs:
// a range at a time.
func TestTargetFilter(t *testing.T) {
	for _, tc := range []struct {
		set  []int
		want string
	}{
		{[]int{0}, "cpu == 0"},
		{[]int{0, 1, 2, 3}, "(cpu >= 0 && cpu <= 3)"},
		{[]int{0, 1, 2, 5, 7, 8}, "(cpu >= 0 && cpu <= 2) || cpu == 5 || (cpu >= 7 && cpu <= 8)"},
	} {
		if got := TargetFilter(tc.set); got != tc.want {
			t.Errorf("TargetFilter(%v) = %q, want %q", tc.set, got, tc.want)
		}
	}
}

// TestSyscallNumbersMatchKernel checks the table of system-call numbers
// against the kernel's tracepoints, where tracefs can be read (root): a
// system call of results.SyscallKinds is in the table exactly when this
// kernel has its syscalls:sys_enter_<name> tracepoint.
func TestSyscallNumbersMatchKernel(t *testing.T) {
	nrs := syscallNumbers()
	if nrs == nil {
		t.Skipf("no table for %s", runtime.GOARCH)
	}
	plan, err := planMechanisms()
	if err != nil {
		t.Skipf("tracefs: %v", err)
	}
	for _, k := range results.SyscallKinds {
		for _, name := range k.Syscalls {
			_, err := tracepoint(plan.root, "syscalls", "sys_enter_"+name, "")
			_, inTable := nrs[name]
			if exists := err == nil; exists != inTable {
				t.Errorf("%s: tracepoint exists %t (%v), in the table %t", name, exists, err, inTable)
			}
		}
	}
	for name := range nrs {
		if !slices.ContainsFunc(results.SyscallKinds, func(k results.SyscallKind) bool { return slices.Contains(k.Syscalls, name) }) {
			t.Errorf("%s is in the table but in no kind", name)
		}
	}
}
