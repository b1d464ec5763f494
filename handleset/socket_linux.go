package handleset

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"
)

// Listener is a raw listening TCP socket. Its descriptor is never registered
// with Go's netpoller; register it with a Set (non-blocking) or accept on it
// from a dedicated thread (blocking).
type Listener struct {
	fd       int
	addr     netip.AddrPort
	blocking bool
}

// Listen opens a TCP listening socket on addr ("host:port"; port 0 picks a
// free port) with SO_REUSEADDR set. An empty host listens on all IPv4
// addresses.
func Listen(addr string, opts ListenOptions) (*Listener, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	backlog := opts.Backlog
	backlog = cmp.Or(backlog, DefaultBacklog)
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("handleset: listen address %q: %w", addr, err)
	}
	ip, ok := netip.AddrFromSlice(ta.IP)
	if !ok || ta.IP == nil {
		ip = netip.IPv4Unspecified()
	}
	ip = ip.Unmap()
	family := unix.AF_INET
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: ta.Port, Addr: ip.As4()}
	if ip.Is6() {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: ta.Port, Addr: ip.As16()}
	}
	typ := unix.SOCK_STREAM | unix.SOCK_CLOEXEC
	if !opts.Blocking {
		typ |= unix.SOCK_NONBLOCK
	}
	fd, err := unix.Socket(family, typ, unix.IPPROTO_TCP)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	fail := func(call string, err error) (*Listener, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("handleset: listen on %s: %w", addr, os.NewSyscallError(call, err))
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fail("setsockopt", err)
	}
	if opts.ReusePort {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			return fail("setsockopt", err)
		}
	}
	if err := unix.Bind(fd, sa); err != nil {
		return fail("bind", err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		return fail("listen", err)
	}
	bound, err := unix.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	return &Listener{fd: fd, addr: sockaddrToAddrPort(bound), blocking: opts.Blocking}, nil
}

// Fd returns the listening descriptor.
func (l *Listener) Fd() int { return l.fd }

// Addr returns the bound address (with the port the kernel chose for port 0).
func (l *Listener) Addr() netip.AddrPort { return l.addr }

// Accept accepts one connection with accept4, non-blocking and close-on-exec
// (blocking if the listener is), and sets TCP_NODELAY on it: every model
// writes whole responses, so Nagle's algorithm would only add delay. On a
// non-blocking listener with no pending connection it returns an error
// satisfying IsWouldBlock. EINTR and ECONNABORTED (a client that gave up
// while queued) are retried here.
func (l *Listener) Accept() (int, netip.AddrPort, error) {
	flags := unix.SOCK_CLOEXEC
	if !l.blocking {
		flags |= unix.SOCK_NONBLOCK
	}
	for {
		nfd, sa, err := unix.Accept4(l.fd, flags)
		switch err {
		case nil:
		case unix.EINTR, unix.ECONNABORTED:
			continue
		default:
			return -1, netip.AddrPort{}, os.NewSyscallError("accept4", err)
		}
		if err := unix.SetsockoptInt(nfd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			unix.Close(nfd)
			return -1, netip.AddrPort{}, os.NewSyscallError("setsockopt", err)
		}
		return nfd, sockaddrToAddrPort(sa), nil
	}
}

// Shutdown makes a thread blocked in Accept on this listener return (with
// EINVAL); it is how a blocking acceptor is stopped. Close the listener after
// the acceptor has returned.
func (l *Listener) Shutdown() error { return Shutdown(l.fd) }

// Close closes the listening descriptor.
func (l *Listener) Close() error { return Close(l.fd) }

func sockaddrToAddrPort(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	}
	return netip.AddrPort{}
}

// Preallocated would-block errors: a non-blocking descriptor returns EAGAIN
// all the time, and wrapping it anew would allocate on every such call.
var (
	errReadAgain  = os.NewSyscallError("read", unix.EAGAIN)
	errWriteAgain = os.NewSyscallError("write", unix.EAGAIN)
)

// Read reads from a raw descriptor, retrying EINTR. It returns (0, nil) at
// end of stream, and an error satisfying IsWouldBlock when a non-blocking
// descriptor has nothing to read.
func Read(fd int, p []byte) (int, error) {
	for {
		n, err := unix.Read(fd, p)
		if err != unix.EINTR {
			return ioResult(n, err, "read", errReadAgain)
		}
	}
}

// Write writes to a raw descriptor, retrying EINTR. It may write less than
// len(p) (a partial write); on a non-blocking descriptor with a full send
// buffer it returns an error satisfying IsWouldBlock. MSG_NOSIGNAL semantics
// come from the Go runtime, which ignores SIGPIPE on non-standard descriptors.
func Write(fd int, p []byte) (int, error) {
	for {
		n, err := unix.Write(fd, p)
		if err != unix.EINTR {
			return ioResult(n, err, "write", errWriteAgain)
		}
	}
}

// ioResult is what Read and Write return for a read or write(2), named op,
// that was not interrupted: n and nil on success, the preallocated again
// for EAGAIN (so that a would-block costs no allocation), and a
// *os.SyscallError for any other error.
func ioResult(n int, err error, op string, again error) (int, error) {
	switch err {
	case nil:
		return n, nil
	case unix.EAGAIN:
		return 0, again
	}
	return 0, os.NewSyscallError(op, err)
}

// Shutdown shuts down both directions of a connected socket, waking any
// thread blocked reading or writing it.
func Shutdown(fd int) error {
	if err := unix.Shutdown(fd, unix.SHUT_RDWR); err != nil && err != unix.ENOTCONN {
		return os.NewSyscallError("shutdown", err)
	}
	return nil
}

// Close closes a raw descriptor.
func Close(fd int) error {
	if err := unix.Close(fd); err != nil {
		return os.NewSyscallError("close", err)
	}
	return nil
}

// IsWouldBlock reports whether err means "not ready: wait for readiness".
func IsWouldBlock(err error) bool { return errors.Is(err, unix.EAGAIN) }

// IsTemporary reports whether an Accept error is a resource shortage that
// will pass (descriptor or buffer limits): the caller backs off and retries
// instead of spinning or giving up.
func IsTemporary(err error) bool {
	return errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) ||
		errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.ENOMEM)
}

// IsPeerGone reports whether a Read or Write error means the peer went away
// abruptly (reset, broken pipe), as opposed to a local failure.
func IsPeerGone(err error) bool {
	return errors.Is(err, unix.ECONNRESET) || errors.Is(err, unix.EPIPE) ||
		errors.Is(err, unix.ETIMEDOUT) || errors.Is(err, unix.ENOTCONN)
}

// Wakeup is an eventfd that threads use to wake a waiter on a Set (register
// its Fd like any handle) or to signal each other. Signals coalesce until
// Drain.
type Wakeup struct{ fd int }

// NewWakeup creates a non-blocking eventfd.
func NewWakeup() (*Wakeup, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("eventfd", err)
	}
	return &Wakeup{fd: fd}, nil
}

// Fd returns the eventfd.
func (w *Wakeup) Fd() int { return w.fd }

// eventfdOne is the 8-byte counter increment an eventfd write takes, in the
// host's byte order.
var eventfdOne = binary.NativeEndian.AppendUint64(nil, 1)

// Signal makes the eventfd readable.
func (w *Wakeup) Signal() error {
	for {
		_, err := unix.Write(w.fd, eventfdOne)
		switch err {
		case nil, unix.EAGAIN: // EAGAIN: the counter is saturated, i.e. already readable
			return nil
		case unix.EINTR:
			continue
		}
		return os.NewSyscallError("write", err)
	}
}

// Drain consumes pending signals and reports how many were coalesced.
func (w *Wakeup) Drain() (uint64, error) {
	var b [8]byte
	for {
		_, err := unix.Read(w.fd, b[:])
		switch err {
		case nil:
			return binary.NativeEndian.Uint64(b[:]), nil
		case unix.EAGAIN:
			return 0, nil
		case unix.EINTR:
			continue
		}
		return 0, os.NewSyscallError("read", err)
	}
}

// Close closes the eventfd.
func (w *Wakeup) Close() error { return Close(w.fd) }
