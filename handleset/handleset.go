package handleset

import (
	"errors"
	"fmt"
	"strings"
)

// Events is a set of readiness conditions (in an Event) or of interests (when
// registering). OneShot, EdgeTriggered and Exclusive are interest flags
// only.
type Events uint32

// The readiness conditions and registration flags.
const (
	Readable Events = 1 << iota // data (or a connection, on a listener) can be read without blocking
	Writable                    // data can be written without blocking
	HangUp                      // the peer closed its side, or the connection is gone
	Error                       // an error is pending on the handle
	OneShot                     // registration flag: deactivate the handle when an event is reported
	// EdgeTriggered is a registration flag (EPOLLET): an event is
	// reported when a condition arises (bytes arrive, room frees up), not
	// for as long as it lasts. The set's one waiter must then read until
	// the socket would block, or remember that it did not: nothing
	// reports the bytes it left. For a set that one thread alone waits
	// on, where it saves re-arming (nginx registers its connections so),
	// or whose handles carry their own owner (Leader/Followers' user-space
	// deactivation).
	EdgeTriggered
	// Exclusive is a registration flag (EPOLLEXCLUSIVE) for a handle that
	// several sets hold, such as one listening socket in every worker's
	// set: an event wakes one thread waiting on one of those sets, not a
	// waiter in each. Only Register takes it; the kernel refuses to
	// Reactivate or Deactivate such a handle (EINVAL): Unregister and
	// Register it again. A Readable interest asks for no hang-up
	// notice with it (EPOLLRDHUP is not allowed with EPOLLEXCLUSIVE).
	Exclusive
)

// String lists the set's members, e.g. "readable|hangup".
func (e Events) String() string {
	var parts []string
	for _, n := range []struct {
		bit  Events
		name string
	}{{Readable, "readable"}, {Writable, "writable"}, {HangUp, "hangup"}, {Error, "error"}, {OneShot, "oneshot"},
		{EdgeTriggered, "edge"}, {Exclusive, "exclusive"}} {
		if e&n.bit != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// EventHandler is the object associated with a handle in the set. The thread
// that receives an event for the handle dispatches HandleEvent (the pattern's
// hook method) with the descriptor and the conditions that are ready.
type EventHandler interface {
	HandleEvent(fd int, ready Events)
}

// Event is one ready handle reported by Waiter.Wait.
type Event struct {
	Fd      int
	Ready   Events
	Handler EventHandler
}

// Errors returned by this package.
var (
	// ErrClosed is returned by every operation on a Set after Close.
	ErrClosed = errors.New("handleset: closed")
	// ErrUnsupported is returned where there is no epoll (not Linux).
	ErrUnsupported = errors.New("handleset: not supported on this operating system (epoll is Linux-only)")
	// ErrNotRegistered is returned for a descriptor that has no registration.
	ErrNotRegistered = errors.New("handleset: descriptor not registered")
)

// ListenOptions configure Listen.
type ListenOptions struct {
	// Backlog is the listen(2) backlog; 0 means DefaultBacklog. The kernel
	// caps it at net.core.somaxconn.
	Backlog int
	// Blocking makes the listening socket, and the sockets it accepts,
	// blocking (for thread-per-connection); by default both are non-blocking.
	Blocking bool
	// ReusePort sets SO_REUSEPORT, so that several listening sockets (one
	// per thread, e.g. one per io_uring) can bind the same address and the
	// kernel spreads connections among them.
	ReusePort bool
}

// DefaultBacklog is the listen backlog when ListenOptions.Backlog is 0.
const DefaultBacklog = 4096

// MaxBacklog is the largest backlog Listen accepts.
const MaxBacklog = 1 << 16

func (o ListenOptions) validate() error {
	if o.Backlog < 0 || o.Backlog > MaxBacklog {
		return fmt.Errorf("handleset: backlog %d out of range (accepted: 0 for the default %d, or 1..%d)",
			o.Backlog, DefaultBacklog, MaxBacklog)
	}
	return nil
}

// ListenGroup opens n listening sockets on one address, each with
// SO_REUSEPORT (opts.ReusePort is implied), so that the kernel spreads
// incoming connections over them by a hash of each connection's
// addresses and ports: a socket, and so an accept queue, per thread that
// accepts alone. The first binds addr (port 0 picks a free port); the
// others bind the port it got, so every socket has the first's Addr. On
// failure it closes the sockets it opened.
func ListenGroup(addr string, opts ListenOptions, n int) ([]*Listener, error) {
	if n < 1 {
		return nil, fmt.Errorf("handleset: a listen group of %d sockets (accepted: 1 or more)", n)
	}
	opts.ReusePort = true
	lns := make([]*Listener, 0, n)
	for range n {
		ln, err := Listen(addr, opts)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		if len(lns) == 0 {
			addr = ln.Addr().String()
		}
		lns = append(lns, ln)
	}
	return lns, nil
}
