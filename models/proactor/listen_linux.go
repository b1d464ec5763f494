package proactor

import (
	"fmt"
	"net/netip"
	"os"

	"concbench/handleset"

	"golang.org/x/sys/unix"
)

// listenGroup opens n listening TCP sockets on one address, all with
// SO_REUSEPORT, so that the kernel spreads incoming connections over them
// by a hash of the connection's addresses: one socket per dispatcher ring,
// each with its own multishot accept. The first socket binds addr (port 0
// picks a free port); the others bind the port it got. It returns the
// descriptors, which the caller owns and closes.
//
// TCP_NODELAY is set on the listening sockets: sockets accepted through
// io_uring inherit it, which saves a setsockopt per connection (every model
// writes whole responses, so Nagle's algorithm would only add delay).
//
// Note: a single shared listener with a multishot accept armed in every
// ring would work too, but the kernel wakes the first armed waiter (accept
// polls are exclusive), which piles connections onto one ring instead of
// spreading them.
func listenGroup(addr string, backlog, n int) ([]int, netip.AddrPort, error) {
	var fds []int
	fail := func(err error) ([]int, netip.AddrPort, error) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, netip.AddrPort{}, fmt.Errorf("proactor: %w", err)
	}
	bound := addr
	var first netip.AddrPort
	for range n {
		ln, err := handleset.Listen(bound, handleset.ListenOptions{Backlog: backlog, ReusePort: true})
		if err != nil {
			return fail(err)
		}
		fds = append(fds, ln.Fd())
		if err := unix.SetsockoptInt(ln.Fd(), unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			return fail(os.NewSyscallError("setsockopt", err))
		}
		if !first.IsValid() {
			first = ln.Addr()
			bound = first.String()
		}
	}
	return fds, first, nil
}
