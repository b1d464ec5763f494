package leaderfollowers

import (
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// setNice sets the nice value of thread tid, which must be the calling
// thread: a nice value is per thread on Linux and does not pass to threads
// created later.
func setNice(tid, nice int) error {
	if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil {
		return os.NewSyscallError("setpriority", err)
	}
	return nil
}

// threadNice returns the nice value of thread tid. getpriority(2) returns
// 20 − nice, so that no valid result is negative.
func threadNice(tid int) (int, error) {
	p, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return 0, os.NewSyscallError("getpriority", err)
	}
	return 20 - p, nil
}

// setFIFO puts thread tid, which must be the calling thread, under
// SCHED_FIFO at real-time priority rtprio (1..99). It needs root,
// CAP_SYS_NICE or RLIMIT_RTPRIO ≥ rtprio, and, where the kernel groups
// real-time bandwidth by cgroup, a cgroup with real-time runtime (EPERM
// otherwise, even for root).
func setFIFO(tid, rtprio int) error {
	attr := unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: uint32(rtprio)}
	if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
		return os.NewSyscallError("sched_setattr", err)
	}
	return nil
}

// readRTBudget reads the kernel's RT throttling: sched_rt_runtime_us of
// every sched_rt_period_us.
func readRTBudget() rtBudget {
	read := func(name string) (int64, error) {
		b, err := os.ReadFile("/proc/sys/kernel/" + name)
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	}
	rt, err := read("sched_rt_runtime_us")
	if err != nil {
		return rtBudget{Err: err}
	}
	period, err := read("sched_rt_period_us")
	if err != nil {
		return rtBudget{Err: err}
	}
	return rtBudget{RuntimeUs: rt, PeriodUs: period}
}

// peekFd reads what is at the front of socket fd into buf without
// consuming it (MSG_PEEK) and without blocking.
func peekFd(fd int, buf []byte) (int, error) {
	for {
		n, _, err := unix.Recvfrom(fd, buf, unix.MSG_PEEK|unix.MSG_DONTWAIT)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, os.NewSyscallError("recvfrom", err)
		}
		return n, nil
	}
}

// newTimerFd creates the non-blocking monotonic timerfd of the accept
// backoff.
func newTimerFd() (int, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return -1, os.NewSyscallError("timerfd_create", err)
	}
	return fd, nil
}

// setTimer arms the timerfd to expire once, d from now.
func setTimer(fd int, d time.Duration) error {
	its := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := unix.TimerfdSettime(fd, 0, &its, nil); err != nil {
		return os.NewSyscallError("timerfd_settime", err)
	}
	return nil
}

// drainTimer reads the timerfd's expiry count, so that it is not readable
// until it expires again.
func drainTimer(fd int) error {
	var b [8]byte
	for {
		_, err := unix.Read(fd, b[:])
		switch err {
		case nil, unix.EAGAIN: // EAGAIN: nothing to consume (already read)
			return nil
		case unix.EINTR:
			continue
		}
		return os.NewSyscallError("read", err)
	}
}
