package handleset

import (
	"errors"
	"fmt"
	"strings"
)

// Events is a set of readiness conditions (in an Event) or of interests (when
// registering). OneShot is an interest flag only.
type Events uint32

// The readiness conditions and registration flags.
const (
	Readable Events = 1 << iota // data (or a connection, on a listener) can be read without blocking
	Writable                    // data can be written without blocking
	HangUp                      // the peer closed its side, or the connection is gone
	Error                       // an error is pending on the handle
	OneShot                     // registration flag: deactivate the handle when an event is reported
)

// String lists the set's members, e.g. "readable|hangup".
func (e Events) String() string {
	var parts []string
	for _, n := range []struct {
		bit  Events
		name string
	}{{Readable, "readable"}, {Writable, "writable"}, {HangUp, "hangup"}, {Error, "error"}, {OneShot, "oneshot"}} {
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
