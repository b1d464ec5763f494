package frontend

import (
	"net/netip"
	"os"

	"golang.org/x/sys/unix"
)

// connect opens a blocking TCP socket connected to ap, with TCP_NODELAY
// (requests and responses are small and must not wait for Nagle).
func connect(ap netip.AddrPort) (int, error) {
	family, sa := unix.AF_INET, unix.Sockaddr(nil)
	if ap.Addr().Unmap().Is4() {
		sa = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().Unmap().As4()}
	} else {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	// Go's signal handlers are SA_RESTART, so connect(2) is restarted;
	// should it return EINTR anyway, the connection is still being made:
	// retrying says EALREADY until it is made, then EISCONN.
	for err = unix.Connect(fd, sa); err == unix.EINTR || err == unix.EALREADY; err = unix.Connect(fd, sa) {
	}
	if err == unix.EISCONN {
		err = nil
	}
	if err != nil {
		unix.Close(fd)
		return -1, os.NewSyscallError("connect", err)
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		unix.Close(fd)
		return -1, os.NewSyscallError("setsockopt", err)
	}
	return fd, nil
}
