package leaderfollowers

import (
	"os"
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
