package connio

import (
	"runtime"
	"time"
)

// SliceLength is how long a locked thread runs its goroutine between the
// yields of Slice.Refresh: under the runtime's forced-preemption slice
// (10 ms), so that the Go scheduler never finds the goroutine running on
// one time slice for that long.
const SliceLength = 5 * time.Millisecond

// Slice is a locked model thread's time slice as the Go runtime sees it.
// Why it exists (docs/design.md, GOMAXPROCS): a model thread is a
// goroutine locked to its OS thread that blocks in system calls (epoll_wait,
// futex, io_uring_enter, read) and never parks in the Go scheduler, so the
// scheduler's count of its time slices never moves. The runtime's monitor
// thread (sysmon) takes that for a goroutine that has run for over 10 ms:
// it takes the thread's P at every system call it finds it in, and, having
// taken one, polls every 20 µs again — thousands of wake-ups a second on
// the server's CPUs, each preempting a model thread. One yield per
// SliceLength (runtime.Gosched, which on a locked thread hands the P to
// another thread and back: a few context switches) starts a new slice and
// keeps the monitor at its 10 ms sleep.
//
// A Slice belongs to one thread; its zero value is ready. Refresh costs a
// clock read.
type Slice struct{ start int64 }

// Refresh yields the thread's goroutine if SliceLength has passed since it
// last did. Call it where the thread holds no lock, once per iteration of
// its loop.
func (s *Slice) Refresh() {
	now := monoNow()
	if now-s.start < int64(SliceLength) {
		return
	}
	s.start = now
	runtime.Gosched()
}
