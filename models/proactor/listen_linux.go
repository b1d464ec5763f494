package proactor

import (
	"fmt"
	"net/netip"
	"os"

	"concbench/handleset"

	"golang.org/x/sys/unix"
)

// listenGroup opens n listening TCP sockets on one address, all with
// SO_REUSEPORT (handleset.ListenGroup), so that the kernel spreads
// incoming connections over them by a hash of the connection's addresses:
// one socket per dispatcher ring, each with its own multishot accept. It
// returns the descriptors, which the caller owns and closes.
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
	lns, err := handleset.ListenGroup(addr, handleset.ListenOptions{Backlog: backlog}, n)
	if err != nil {
		return nil, netip.AddrPort{}, fmt.Errorf("proactor: %w", err)
	}
	fds := make([]int, len(lns))
	for i, ln := range lns {
		fds[i] = ln.Fd()
	}
	for _, fd := range fds {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return nil, netip.AddrPort{}, fmt.Errorf("proactor: %w", os.NewSyscallError("setsockopt", err))
		}
	}
	return fds, lns[0].Addr(), nil
}
