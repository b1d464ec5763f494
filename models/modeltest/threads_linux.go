package modeltest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// busyNewThreads returns the threads that did not exist before the server
// started and are doing something other than idling in the Go runtime. Go
// keeps the threads it started for goroutines in blocking system calls (a
// netpoll model's blocking work, the test's clients) and never destroys an
// unlocked one: they sleep in futex (an idle M) or in epoll_pwait (the
// runtime's netpoller). Any other new thread — one still in accept4, read,
// io_uring_enter, nanosleep, or running — was left behind by the server.
//
// The caller must be locked to its thread: its own thread, reading /proc, is
// busy by definition and is skipped.
func busyNewThreads(before map[int]bool) []string {
	var busy []string
	self := syscall.Gettid()
	for tid := range threadIDs() {
		if before[tid] || tid == self {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/syscall", tid))
		if err != nil {
			continue // exited meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) > 0 {
			if nr, err := strconv.Atoi(f[0]); err == nil && (nr == syscall.SYS_FUTEX || nr == syscall.SYS_EPOLL_PWAIT) {
				continue
			}
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/comm", tid))
		busy = append(busy, fmt.Sprintf("%d (%s, syscall %s)", tid, strings.TrimSpace(string(comm)), strings.TrimSpace(string(b))))
	}
	return busy
}
