package futex

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Futex operations from <linux/futex.h> (x/sys/unix does not export them).
// The private variants: every futex word here is shared only by the threads
// of one process, which lets the kernel skip the mm lookup.
const (
	futexWait        = 0
	futexWake        = 1
	futexPrivateFlag = 128

	futexWaitPrivate = futexWait | futexPrivateFlag
	futexWakePrivate = futexWake | futexPrivateFlag
)

// wait sleeps while *addr == val, for at most d (d < 0: no bound). Spurious
// returns (EINTR, EAGAIN when the value changed, timeout) are the caller's to
// re-check. It uses Syscall6, not RawSyscall6: a blocking raw system call
// would keep its P and stall every goroutine queued on it.
func wait(addr *atomic.Uint32, val uint32, d time.Duration) {
	var tsp unsafe.Pointer
	var ts unix.Timespec
	if d >= 0 {
		ts = unix.NsecToTimespec(int64(d))
		tsp = unsafe.Pointer(&ts)
	}
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitPrivate,
		uintptr(val), uintptr(tsp), 0, 0)
}

// wake wakes at most n sleepers on addr and returns how many it woke.
func wake(addr *atomic.Uint32, n int) int {
	r, _, errno := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakePrivate,
		uintptr(n), 0, 0, 0)
	if errno != 0 {
		return 0
	}
	return int(r)
}
