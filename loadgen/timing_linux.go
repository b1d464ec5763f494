package loadgen

import (
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeSamples is how many timed waits probeLateness measures.
const probeSamples = 64

// probeLateness measures how late this machine wakes a thread from a
// timed wait: probeSamples waits in epoll_pwait2 with nothing to wake
// them, of 50–450 µs each (about 16 ms in all). A sleeping worker sets
// its spin margin from it (and from every timed wait of the run); every
// result reports it, busy or not, as the machine's wake-up lateness.
func (w *worker) probeLateness() {
	if w.noPwait {
		return
	}
probe:
	for i := range probeSamples {
		timeout := int64(50*time.Microsecond) + int64(i%9)*int64(50*time.Microsecond)
		w.ts = unix.NsecToTimespec(timeout)
		t0 := w.clock()
		r, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(w.epfd),
			uintptr(unsafe.Pointer(&w.events[0])), uintptr(len(w.events)),
			uintptr(unsafe.Pointer(&w.ts)), 0, 0)
		late := w.clock() - t0 - timeout
		switch {
		case e == unix.ENOSYS:
			w.noPwait = true
			return
		case e == unix.EINTR:
			continue
		case e != 0 || r != 0:
			// An error, or an event (the run interrupted, a server that
			// speaks first; level-triggered, it is reported again): the
			// loop deals with it. Stop probing.
			break probe
		case late >= 0:
			w.late.add(late)
		}
	}
	w.lateStart = w.late.summary()
	if w.autoSpin {
		w.spin = spinFor(&w.late)
	}
}

// stallNow is the test hook of Config.stall: the worker stops for
// stall.dur (spinning, as a thread the machine does not run), then goes
// on; everything due meanwhile is late.
func (w *worker) stallNow() {
	until := w.clock() + int64(w.cfg.stall.dur)
	for w.clock() < until {
	}
	w.nextStall += int64(w.cfg.stall.every)
}

// sampleSlices records the overload detector's boundary samples that are
// due: the requests in flight, and how far the next send lags its
// schedule when no connection has room for it.
func (w *worker) sampleSlices(now int64) {
	for w.sl.sampled <= numSlices && now >= w.sl.next {
		i := w.sl.sampled
		w.sl.inflight[i] = int64(w.inflight)
		if w.blocked {
			w.sl.debt[i] = max(now-(w.start+w.arr.next), 0)
		}
		w.sl.sampled++
		w.sl.next = w.measureAt + (w.endAt-w.measureAt)*int64(w.sl.sampled)/numSlices
	}
}

// waitTime returns how long the next epoll wait may block, in ns (0: poll).
func (w *worker) waitTime(now int64) int64 {
	if w.busy {
		return 0
	}
	d := w.nextTick - now
	if w.sending && !w.closed && !w.blocked {
		send := w.start + w.arr.next - now
		if w.spin >= 0 {
			send -= w.spin // spin (poll) for the last Spin before the send
		}
		d = min(d, send)
	}
	return max(d, 0)
}

// wait waits for events for up to timeout ns (0: poll) and returns how many
// are in w.events.
func (w *worker) wait(timeout int64) int {
	var n int
	var err error
	switch {
	case timeout == 0:
		// A poll never blocks: a raw system call keeps the worker's P and
		// spares the Go scheduler's system-call bookkeeping, which a
		// busy-polling worker would pay millions of times a second, and
		// which keeps sysmon waking up on the generator's CPU: the raw call
		// cut the worker's preemptions and run-queue wait by an order of
		// magnitude (docs/findings.md).
		r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(w.epfd),
			uintptr(unsafe.Pointer(&w.events[0])), uintptr(len(w.events)), 0, 0, 0)
		n = int(r)
		if e != 0 {
			err = e
		}
	case w.noPwait:
		// Millisecond resolution: sleep the whole milliseconds, poll the rest.
		n, err = unix.EpollWait(w.epfd, w.events, int(timeout/int64(time.Millisecond)))
	default:
		w.ts = unix.NsecToTimespec(timeout)
		r, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(w.epfd),
			uintptr(unsafe.Pointer(&w.events[0])), uintptr(len(w.events)),
			uintptr(unsafe.Pointer(&w.ts)), 0, 0)
		n = int(r)
		if e == unix.ENOSYS {
			w.noPwait = true
			return 0
		}
		if e != 0 {
			err = e
		}
	}
	switch {
	case err == unix.EINTR:
		return 0
	case err != nil:
		w.fatal = os.NewSyscallError("epoll_wait", err)
		w.stop.Store(true)
		return 0
	}
	return n
}
