package service

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadUsage returns the calling thread's CPU time and voluntary
// context switches so far. The CPU time is CLOCK_THREAD_CPUTIME_ID's,
// exact: getrusage's is sampled at scheduler ticks, and 2 ms of work may
// not show in it.
func threadUsage(t *testing.T) (cpu time.Duration, voluntary int64) {
	t.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatal(err)
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ts.Nano()), ru.Nvcsw
}

// TestWork checks what Work does to the calling thread: CPU work runs on
// it (its CPU time grows) without blocking it; blocking work puts it to
// sleep in the kernel (a voluntary context switch), interrupted or not;
// negative amounts do neither.
func TestWork(t *testing.T) {
	s := newTestService(t) // 1 ns per iteration: 2 ms of work is 2e6 iterations
	for _, tc := range []struct {
		name         string
		cpu, block   time.Duration
		wantCPU      bool
		wantSwitches bool
		noSwitches   bool // (CPU work may be preempted; nothing else blocks)
	}{
		{name: "cpu", cpu: 2 * time.Millisecond, wantCPU: true},
		{name: "block", block: 200 * time.Microsecond, wantSwitches: true},
		{name: "negative", cpu: -time.Second, block: -time.Second, noSwitches: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Locked here, in the subtest's own goroutine: both readings
			// and the work must be on one thread. (Locked in the parent
			// test, the subtests' goroutines were free to move: a move
			// between the readings read another thread's counters, once
			// 207 fewer switches than before.)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			work := func() (cpu0, cpu1 time.Duration, switches int64) {
				cpu0, sw0 := threadUsage(t)
				s.Work(tc.cpu, tc.block)
				cpu1, sw1 := threadUsage(t)
				return cpu0, cpu1, sw1 - sw0
			}
			cpu0, cpu1, switches := work()
			// A locked thread also parks when its goroutine is stopped
			// for a garbage collection: a switch the work did not make.
			// Work that blocks switches every time; up to 3 tries.
			for try := 1; tc.noSwitches && switches > 0 && try < 3; try++ {
				cpu0, cpu1, switches = work()
			}
			if grew := cpu1 > cpu0; tc.wantCPU && !grew {
				t.Errorf("Work(%v, %v): the thread's CPU time did not grow (%v)", tc.cpu, tc.block, cpu0)
			}
			if slept := switches > 0; tc.wantSwitches && !slept || tc.noSwitches && slept {
				t.Errorf("Work(%v, %v): %d voluntary context switches, want some: %t", tc.cpu, tc.block, switches, tc.wantSwitches)
			}
		})
	}
}
