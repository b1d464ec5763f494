package service

import (
	"time"

	"golang.org/x/sys/unix"
)

// sleep blocks the calling OS thread in nanosleep(2) for d, resuming with the
// remaining time when a signal interrupts it (EINTR: the Go runtime's
// preemption signals do so routinely). unix.Nanosleep is a non-raw system
// call, so the runtime may hand the thread's P to another thread meanwhile.
// Other errors (EINVAL, EFAULT) cannot happen with a valid Timespec.
//
// Note: the thread, not just the goroutine, sleeps. In the goroutine-per-
// connection model (netpoll) that pins one M per blocked goroutine, as any
// blocking system call or cgo call does — the runtime starts more threads
// rather than parking the goroutine on a timer. That is intended: blocking
// work means the same thing, a thread held by a synchronous back-end call,
// in every model. time.Sleep was rejected because it would let netpoll alone
// turn blocking work into a cheap timer wait.
func sleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		// ts now holds the time that was left.
	}
}
