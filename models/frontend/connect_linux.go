package frontend

import (
	"errors"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// errSelfConnect is the failure of a connect(2) that connected the socket
// to itself: a back end's port in the ephemeral range, with nothing
// listening, can be the port the kernel picks for the dialling socket.
var errSelfConnect = errors.New("connected to itself (nothing listens on the back end's port)")

// connect opens a blocking TCP socket connected to ap, with TCP_NODELAY
// (requests and responses are small and must not wait for Nagle). The
// connect waits at most dialT (SO_SNDTIMEO bounds a blocking connect);
// afterwards a write blocks at most writeT and a read at most readT
// without progress (SO_SNDTIMEO, SO_RCVTIMEO: EAGAIN then).
func connect(ap netip.AddrPort, dialT, writeT, readT time.Duration) (int, error) {
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
	fail := func(call string, err error) (int, error) {
		unix.Close(fd)
		return -1, os.NewSyscallError(call, err)
	}
	if err := setTimeout(fd, unix.SO_SNDTIMEO, dialT); err != nil {
		return fail("setsockopt", err)
	}
	// Go's signal handlers are SA_RESTART, so connect(2) is restarted;
	// should it return EINTR anyway, the connection is still being made:
	// retrying says EALREADY until it is made, then EISCONN. A connect
	// that times out returns EINPROGRESS.
	for err = unix.Connect(fd, sa); err == unix.EINTR || err == unix.EALREADY; err = unix.Connect(fd, sa) {
	}
	switch err {
	case nil, unix.EISCONN:
	case unix.EINPROGRESS:
		return fail("connect", unix.ETIMEDOUT)
	default:
		return fail("connect", err)
	}
	if self, err := unix.Getsockname(fd); err == nil && sameAddr(self, sa) {
		unix.Close(fd)
		return -1, errSelfConnect
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		return fail("setsockopt", err)
	}
	if err := setTimeout(fd, unix.SO_SNDTIMEO, writeT); err != nil {
		return fail("setsockopt", err)
	}
	if err := setTimeout(fd, unix.SO_RCVTIMEO, readT); err != nil {
		return fail("setsockopt", err)
	}
	return fd, nil
}

// setTimeout sets the socket timeout opt (SO_SNDTIMEO, SO_RCVTIMEO) to d.
func setTimeout(fd, opt int, d time.Duration) error {
	tv := unix.NsecToTimeval(int64(d))
	return unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, opt, &tv)
}

// sameAddr reports whether a and b are the same address and port.
func sameAddr(a, b unix.Sockaddr) bool {
	switch a := a.(type) {
	case *unix.SockaddrInet4:
		b, ok := b.(*unix.SockaddrInet4)
		return ok && a.Port == b.Port && a.Addr == b.Addr
	case *unix.SockaddrInet6:
		b, ok := b.(*unix.SockaddrInet6)
		return ok && a.Port == b.Port && a.Addr == b.Addr
	}
	return false
}
