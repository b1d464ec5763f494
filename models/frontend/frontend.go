package frontend

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/models/internal/enum"
	"concbench/wire"
)

// Handoff is how a response read off an upstream connection reaches the
// thread waiting for it.
type Handoff int

// The hand-off modes.
const (
	// Bound is the paper's bound Leader/Followers: the threads that sent
	// on an upstream connection take turns reading it; the leader hands
	// other threads' responses to them and promotes a follower when its
	// own comes.
	Bound Handoff = iota
	// PerThread gives every client connection thread an upstream
	// connection of its own (no multiplexing): each thread reads only its
	// own responses. UpstreamConns does not apply.
	PerThread
	// Queue is the unbound hand-off: a reader thread per upstream
	// connection reads every response and hands it to its thread.
	Queue
)

var handoffNames = [...]string{Bound: "bound", PerThread: "perthread", Queue: "queue"}

// handoffs is the text form of Handoff.
var handoffs = enum.New[Handoff]("Handoff", "frontend", "hand-off", handoffNames[:])

// String returns the mode's name.
func (h Handoff) String() string { return handoffs.String(h) }

// ParseHandoff returns the mode named s (bound, perthread or queue).
func ParseHandoff(s string) (Handoff, error) { return handoffs.Parse(s) }

// MarshalText implements encoding.TextMarshaler.
func (h Handoff) MarshalText() ([]byte, error) { return handoffs.MarshalText(h) }

// UnmarshalText implements encoding.TextUnmarshaler with ParseHandoff.
func (h *Handoff) UnmarshalText(b []byte) error { return handoffs.UnmarshalText(b, h) }

// DefaultThreads is the default bound on client connection threads.
const DefaultThreads = 1024

// DefaultUpstreamConns is the default number of multiplexed upstream
// connections: the paper's one.
const DefaultUpstreamConns = 1

// MaxUpstreamConns is the largest UpstreamConns accepted.
const MaxUpstreamConns = 1024

// DefaultUpstreamTimeout returns the upstream timeout for clients held to
// lim (Options.UpstreamTimeout 0): twice the longest a request may
// legitimately keep the back end busy — CPU work, blocking work and a
// guarded withdrawal's wait, each up to lim.MaxWork, on a back end whose
// CPU is shared, so that its CPU work may take longer than asked — plus
// 10 s for the back end's queue and the network.
func DefaultUpstreamTimeout(lim wire.Limits) time.Duration {
	return 2*3*lim.WithDefaults().MaxWork + 10*time.Second
}

// connectTimeout bounds one connect(2) to the back end (and the upstream
// timeout bounds it further): a connection to a live back end takes one
// round trip, and a SYN that was lost is sent again only after a second,
// so a dial that has not completed by then is failed and tried again
// after the back-off, rather than hold its request.
const connectTimeout = time.Second

// Options are the front end's own settings.
type Options struct {
	// Backend is the back end's address (host:port), a concbench server of
	// any model serving the binary protocol. Required.
	Backend string
	// UpstreamConns is the number of multiplexed connections to the back
	// end (bound, queue); 0 means DefaultUpstreamConns.
	UpstreamConns int
	// Handoff is how responses reach their threads.
	Handoff Handoff
	// UpstreamTimeout bounds how long the back end may leave a request
	// unanswered: a link on which nothing arrives for this long while a
	// response is due (since the oldest request in flight on it was
	// sent, or since bytes last came, whichever is later) breaks, and so
	// does one whose write makes no progress for this long. 0 means
	// DefaultUpstreamTimeout of the clients' limits.
	UpstreamTimeout time.Duration
}

// Server is a running front end.
type Server struct {
	cfg      models.Config
	opts     Options
	backend  netip.AddrPort
	upstream wire.Codec // binary, with the front end's limits
	ln       *handleset.Listener
	counters models.Counters
	acceptSh *models.Shard
	reaper   *connio.Reaper
	limit    *connio.Limit // the connection cap (Config.MaxConns)
	slots    chan struct{} // one token per client connection thread allowed
	stop     chan struct{}
	wg       sync.WaitGroup // every thread the server started

	mu      sync.Mutex
	closing bool
	conns   map[int]struct{}   // open client connection descriptors
	links   map[*link]struct{} // open upstream connections
	shared  []*slot            // the multiplexed slots (bound, queue)
	closed  atomic.Bool        // Close has begun (the queue readers' stop)

	nextID atomic.Uint64 // upstream id sequence

	// Model counters (see doc.go, "Counters").
	handoffs, ownResponses, promotions atomic.Uint64
	upstreamFailed, upstreamInvalid    atomic.Uint64
	upstreamOpened, upstreamDialFailed atomic.Uint64
	redials, upstreamTimeouts          atomic.Uint64

	closeOnce sync.Once
	closeErr  error
}

var _ models.Server = (*Server)(nil)

// Start dials the back end (the multiplexed connections, for bound and
// queue), listens on cfg.Addr and starts the acceptor thread.
func Start(cfg models.Config, opts Options) (*Server, error) {
	cfg, err := cfg.Resolve(DefaultThreads)
	if err != nil {
		return nil, err
	}
	opts.UpstreamConns = cmp.Or(opts.UpstreamConns, DefaultUpstreamConns)
	switch {
	case opts.Backend == "":
		return nil, fmt.Errorf("frontend: no back end address (--backend host:port)")
	case opts.UpstreamConns < 0 || opts.UpstreamConns > MaxUpstreamConns:
		return nil, fmt.Errorf("frontend: upstream connections %d out of range (accepted: 0 for %d, or 1..%d)", opts.UpstreamConns, DefaultUpstreamConns, MaxUpstreamConns)
	case !handoffs.Valid(opts.Handoff):
		return nil, fmt.Errorf("frontend: invalid hand-off %d", int(opts.Handoff))
	case opts.UpstreamTimeout < 0:
		return nil, fmt.Errorf("frontend: upstream timeout %v out of range (accepted: 0 for the default, %v here, or more)", opts.UpstreamTimeout, DefaultUpstreamTimeout(cfg.Codec.Limits()))
	}
	if opts.UpstreamTimeout == 0 {
		opts.UpstreamTimeout = DefaultUpstreamTimeout(cfg.Codec.Limits())
	}
	tcp, err := net.ResolveTCPAddr("tcp", opts.Backend)
	if err != nil {
		return nil, fmt.Errorf("frontend: back end address: %w", err)
	}
	upstream, err := wire.New("binary", cfg.Codec.Limits())
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		opts:     opts,
		backend:  tcp.AddrPort(),
		upstream: upstream,
		slots:    make(chan struct{}, cfg.Threads),
		stop:     make(chan struct{}),
		conns:    make(map[int]struct{}),
		links:    make(map[*link]struct{}),
	}
	if opts.Handoff != PerThread {
		for range opts.UpstreamConns {
			l, err := s.dial()
			if err != nil {
				s.closeLinks()
				return nil, err
			}
			u := &slot{}
			u.cur.Store(l)
			s.shared = append(s.shared, u)
		}
	}
	s.ln, err = handleset.Listen(cfg.Addr, handleset.ListenOptions{Backlog: cfg.Backlog, Blocking: true})
	if err != nil {
		s.closeLinks()
		return nil, err
	}
	s.acceptSh = s.counters.NewThreadShard("acceptor")
	if opts.Handoff == Queue {
		for _, u := range s.shared {
			sh := s.counters.NewThreadShard("reader")
			s.wg.Go(func() {
				runtime.LockOSThread() // exits locked: see doc.go
				sh.SetTID(models.CurrentThreadID())
				u.readLoop(s)
			})
		}
	}
	s.reaper = connio.NewReaper(&s.cfg, &s.counters)
	s.limit = connio.NewLimit(&s.cfg, "frontend")
	s.wg.Add(1)
	go s.acceptor()
	return s, nil
}

// dial opens a blocking TCP connection to the back end and registers it
// as a link. Its socket's timeouts (connect: the upstream timeout, at
// most connectTimeout; a write: the upstream timeout; a read: a quarter
// of it, the link's check interval, fill) make sure that no thread waits
// on the back end longer than the upstream timeout allows.
func (s *Server) dial() (*link, error) {
	t := s.opts.UpstreamTimeout
	fd, err := connect(s.backend, min(t, connectTimeout), t, max(t/4, time.Millisecond))
	if err != nil {
		s.upstreamDialFailed.Add(1)
		return nil, fmt.Errorf("frontend: back end %s: %w", s.backend, err)
	}
	l := newLink(fd, s)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		handleset.Close(fd)
		return nil, errServerClosing
	}
	s.links[l] = struct{}{}
	s.mu.Unlock()
	s.upstreamOpened.Add(1)
	return l, nil
}

// dropLink shuts down and closes a link nobody uses any more, unless it
// is closed already (a broken link's last user, and Close, drop it).
func (s *Server) dropLink(l *link) {
	s.mu.Lock()
	_, open := s.links[l]
	delete(s.links, l)
	s.mu.Unlock()
	if open {
		handleset.Shutdown(l.fd)
		handleset.Close(l.fd)
	}
}

// closeLinks closes every link (after every thread has exited, or before
// any started).
func (s *Server) closeLinks() {
	s.mu.Lock()
	links := s.links
	s.links = map[*link]struct{}{}
	s.mu.Unlock()
	for l := range links {
		handleset.Close(l.fd)
	}
}

// Addr returns the listening address.
func (s *Server) Addr() netip.AddrPort { return s.ln.Addr() }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() models.Stats {
	st := models.Stats{Model: "frontend", Threads: s.cfg.Threads,
		Variant: fmt.Sprintf("handoff=%s,upstream=%d", s.opts.Handoff, s.opts.UpstreamConns)}
	if s.opts.Handoff == PerThread {
		st.Variant = "handoff=perthread"
	}
	s.counters.Stats(&st)
	s.mu.Lock()
	open := len(s.links)
	s.mu.Unlock()
	st.Counters = map[string]uint64{
		"conn_threads":         uint64(len(s.slots)),
		"upstream_conns":       uint64(open),
		"upstream_opened":      s.upstreamOpened.Load(),
		"upstream_dial_failed": s.upstreamDialFailed.Load(),
		"handoffs":             s.handoffs.Load(),
		"own_responses":        s.ownResponses.Load(),
		"leader_turns":         s.promotions.Load(),
		"upstream_failed":      s.upstreamFailed.Load(),
		"upstream_invalid":     s.upstreamInvalid.Load(),
		"upstream_redials":     s.redials.Load(),
		"upstream_timeouts":    s.upstreamTimeouts.Load(),
	}
	return st
}

// acceptor is the accepting thread (connio.ThreadAcceptor); it exits
// locked, so the runtime destroys its OS thread.
func (s *Server) acceptor() {
	defer s.wg.Done()
	acc := connio.ThreadAcceptor{Listener: s.ln, Shard: s.acceptSh, Stop: s.stop, Limit: s.limit, Slots: s.slots,
		Refusal: connio.Refusal(s.cfg.Codec, fmt.Sprintf(
			"front end: all %d connection threads are taken (--threads); try again later", s.cfg.Threads))}
	n := 0
	acc.Run(func(fd int) bool {
		s.acceptSh.AddAccepted()
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			handleset.Close(fd)
			s.limit.Release()
			s.acceptSh.AddClosed()
			<-s.slots
			return false
		}
		s.conns[fd] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		var u *slot
		if len(s.shared) > 0 {
			u = s.shared[n%len(s.shared)]
		}
		n++
		go s.serveConn(fd, u)
		return true
	})
}

// Close stops the server; see models.Server.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.reaper.Close()
		s.mu.Lock()
		s.closing = true
		s.closed.Store(true)
		close(s.stop)
		for fd := range s.conns {
			handleset.Shutdown(fd) // wakes the connection's thread; it closes fd
		}
		// Under s.mu, so that no link's last user closes its descriptor
		// (dropLink) meanwhile.
		for l := range s.links {
			l.fail(errServerClosing) // wakes the leader, the reader and every waiter
		}
		s.mu.Unlock()
		for _, u := range s.shared {
			u.reader.Unpark() // a queue reader waiting for a new link
		}
		s.closeErr = s.ln.Shutdown()
		s.wg.Wait()
		s.closeLinks()
		if err := s.ln.Close(); s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}
