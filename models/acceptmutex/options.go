package acceptmutex

import (
	"cmp"
	"fmt"
	"time"

	"concbench/models/internal/enum"
)

// Mode is how the workers come to accept (nginx's accept_mutex, the
// listener's EPOLLEXCLUSIVE registration, listen … reuseport). The zero
// value is Exclusive, nginx's default.
type Mode int

// The accept modes.
const (
	// Exclusive: every worker's set holds the one listening socket,
	// registered EPOLLEXCLUSIVE, so that a connection wakes one waiting
	// worker; a worker re-registers it every 16th accept (and whenever it
	// is short of connection slots) to move to the back of the kernel's
	// list of exclusive waiters. nginx's default since 1.11.3 on Linux
	// (accept_mutex off).
	Exclusive Mode = iota
	// Mutex: the worker that wins a try-lock of the accept mutex puts the
	// one listening socket into its set and waits; the others wait on
	// their own connections, at most AcceptDelay, and try again (nginx's
	// accept_mutex on, its default before 1.11.3).
	Mutex
	// ReusePort: a listening socket per worker, all bound to one port with
	// SO_REUSEPORT; the kernel's hash of each connection's addresses
	// chooses the worker (nginx's listen … reuseport).
	ReusePort
)

// modeNames must match the constants above.
var modeNames = [...]string{Exclusive: "exclusive", Mutex: "mutex", ReusePort: "reuseport"}

// modes is the text form of Mode.
var modes = enum.New[Mode]("Mode", "acceptmutex", "accept mode", modeNames[:])

// String returns the mode's name: exclusive, mutex or reuseport.
func (m Mode) String() string { return modes.String(m) }

// ParseMode returns the mode named s (exclusive, mutex or reuseport).
func ParseMode(s string) (Mode, error) { return modes.Parse(s) }

// MarshalText implements encoding.TextMarshaler (for flag.TextVar and JSON).
func (m Mode) MarshalText() ([]byte, error) { return modes.MarshalText(m) }

// UnmarshalText implements encoding.TextUnmarshaler with ParseMode.
func (m *Mode) UnmarshalText(b []byte) error { return modes.UnmarshalText(b, m) }

// Defaults: nginx's.
const (
	// DefaultAcceptDelay is Options.AcceptDelay's default, nginx's
	// accept_mutex_delay.
	DefaultAcceptDelay = 500 * time.Millisecond
	// DefaultWorkerConns is Options.WorkerConns's default, nginx's
	// worker_connections.
	DefaultWorkerConns = 512
	// MaxWorkerConns is the largest Options.WorkerConns accepted.
	MaxWorkerConns = 1 << 20
	// EpollEvents is the most events a worker's wait returns, nginx's
	// epoll_events.
	EpollEvents = 512
	// ReorderEvery is how often, in accept events, an Exclusive worker
	// re-registers the listener (nginx's ngx_reorder_accept_events).
	ReorderEvery = 16
)

// Options are the model's own settings.
type Options struct {
	// Accept is how the workers come to accept; default Exclusive.
	Accept Mode
	// MultiAccept makes a worker accept until the backlog is empty, at
	// most connio.MaxAcceptsPerEvent connections, on each listener event
	// (nginx's multi_accept on); without it a worker takes one connection
	// per event, and the level-triggered listener reports the rest again.
	MultiAccept bool
	// AcceptDelay bounds the wait of a worker that lost the accept mutex,
	// so that it tries the lock again that soon (Mutex only); 0 means
	// DefaultAcceptDelay.
	AcceptDelay time.Duration
	// WorkerConns is each worker's connection slots (nginx's
	// worker_connections): past them a worker refuses the connections it
	// accepts, and a Mutex worker with under an eighth of them free sits
	// out rounds of the lock. 0 means DefaultWorkerConns. It is not
	// derived from Config.MaxConns: a share of the server's cap per worker
	// would refuse connections below the cap whenever the hash or the
	// mutex gives one worker more than its share.
	WorkerConns int
}

// withDefaults returns o with its zero values replaced by the defaults,
// or the first setting out of range.
func (o Options) withDefaults() (Options, error) {
	if err := modes.Check(o.Accept); err != nil {
		return o, err
	}
	switch {
	case o.AcceptDelay < 0:
		return o, fmt.Errorf("acceptmutex: accept delay %v is negative (accepted: 0 for %v, or a positive duration)", o.AcceptDelay, DefaultAcceptDelay)
	case o.WorkerConns < 0 || o.WorkerConns > MaxWorkerConns:
		return o, fmt.Errorf("acceptmutex: worker connections %d out of range (accepted: 0 for %d, or 1..%d)", o.WorkerConns, DefaultWorkerConns, MaxWorkerConns)
	}
	o.AcceptDelay = cmp.Or(o.AcceptDelay, DefaultAcceptDelay)
	o.WorkerConns = cmp.Or(o.WorkerConns, DefaultWorkerConns)
	return o, nil
}

// variant is the configuration as Stats.Variant gives it.
func (o Options) variant() string {
	multi := "off"
	if o.MultiAccept {
		multi = "on"
	}
	v := fmt.Sprintf("accept=%s multi_accept=%s worker_conns=%d", o.Accept, multi, o.WorkerConns)
	if o.Accept == Mutex {
		v += " accept_delay=" + o.AcceptDelay.String()
	}
	return v
}
