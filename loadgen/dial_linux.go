package loadgen

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"concbench/internal/sysstat"
)

// enableRxTimestamps asks the kernel to timestamp the data received on fd
// (SO_TIMESTAMPNS: recvmsg(2) returns the wall-clock time at which the
// kernel received the last segment read). Where the kernel refuses, the
// worker timestamps after the read, and the result counts those reads.
// Enabling it makes the kernel timestamp every received packet
// system-wide (a clock read per packet, tens of ns), the server's too.
func enableRxTimestamps(fd int) {
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
}

// resolve returns the socket address of host:port addr and its family. An
// empty host means this machine (127.0.0.1), as in net.Dial.
func resolve(addr string) (unix.Sockaddr, int, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, 0, fmt.Errorf("loadgen: address %q: %w", addr, err)
	}
	ap := ta.AddrPort()
	ip := ap.Addr().Unmap()
	if !ip.IsValid() || ip.IsUnspecified() {
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	if ip.Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ip.As4()}, unix.AF_INET, nil
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ip.As16()}, unix.AF_INET6, nil
}

// dial opens a non-blocking TCP connection to sa with TCP_NODELAY, waiting
// up to timeout for the handshake.
func dial(sa unix.Sockaddr, family int, timeout time.Duration) (int, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	err = unix.Connect(fd, sa)
	if err == unix.EINPROGRESS {
		err = waitConnected(fd, timeout)
	} else if err != nil {
		err = os.NewSyscallError("connect", err)
	}
	if err == nil {
		if serr := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); serr != nil {
			err = os.NewSyscallError("setsockopt", serr)
		}
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// waitConnected waits for a non-blocking connect on fd to finish.
func waitConnected(fd int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("connect: timed out after %v", timeout)
		}
		n, err := unix.Poll(pfd, int((left+time.Millisecond-1)/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("poll", err)
		}
		if n > 0 {
			break
		}
	}
	soerr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return os.NewSyscallError("getsockopt", err)
	}
	if soerr != 0 {
		return os.NewSyscallError("connect", syscall.Errno(soerr))
	}
	return nil
}

// descriptorHeadroom is what checkDescriptors leaves for the process's
// other descriptors: the runtime's, files, the server's pipes, an hlog.
const descriptorHeadroom = 64

// checkDescriptors refuses, before any connection is opened, a run whose
// conns connections cannot all get a descriptor under this process's
// RLIMIT_NOFILE. It first raises the soft limit to the hard limit
// (sysstat.RaiseNoFile: the Go runtime does so at start-up too, silently),
// so the soft limit is all the system allows; the error says so, why the
// raise failed if it did, and how to raise the hard limit, instead of
// failing with EMFILE somewhere in the middle of opening the connections.
func checkDescriptors(conns int) error {
	soft, hard, raiseErr := sysstat.RaiseNoFile()
	if soft == 0 && raiseErr != nil {
		return nil // cannot tell: let the connections speak for themselves
	}
	if need := uint64(conns) + descriptorHeadroom; soft != unix.RLIM_INFINITY && need > soft {
		why := "raise the hard limit (ulimit -Hn, or LimitNOFILE= for a service) and run again"
		if raiseErr != nil {
			why = fmt.Sprintf("raising the soft limit to the hard limit failed (%v); raise the soft limit (ulimit -n) and run again", raiseErr)
		}
		return fmt.Errorf("loadgen: %d connections need about %d descriptors, and this process may open %d (RLIMIT_NOFILE soft limit; hard limit %d): %s",
			conns, need, soft, hard, why)
	}
	return nil
}

// pinThread pins the calling thread, which must be locked to its
// goroutine, to cpu.
func pinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin to CPU %d: %w", cpu, os.NewSyscallError("sched_setaffinity", err))
	}
	return nil
}
