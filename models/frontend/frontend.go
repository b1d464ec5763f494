package frontend

import (
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
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

// String returns the mode's name.
func (h Handoff) String() string {
	if h < 0 || int(h) >= len(handoffNames) {
		return fmt.Sprintf("Handoff(%d)", int(h))
	}
	return handoffNames[h]
}

// ParseHandoff returns the mode named s (bound, perthread or queue).
func ParseHandoff(s string) (Handoff, error) {
	for i, n := range handoffNames {
		if s == n {
			return Handoff(i), nil
		}
	}
	return 0, fmt.Errorf("frontend: unknown hand-off %q (accepted: %s)", s, strings.Join(handoffNames[:], ", "))
}

// MarshalText implements encoding.TextMarshaler.
func (h Handoff) MarshalText() ([]byte, error) {
	if h < 0 || int(h) >= len(handoffNames) {
		return nil, fmt.Errorf("frontend: invalid hand-off %d", int(h))
	}
	return []byte(handoffNames[h]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseHandoff.
func (h *Handoff) UnmarshalText(b []byte) error {
	v, err := ParseHandoff(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// DefaultThreads is the default bound on client connection threads.
const DefaultThreads = 1024

// DefaultUpstreamConns is the default number of multiplexed upstream
// connections: the paper's one.
const DefaultUpstreamConns = 1

// MaxUpstreamConns is the largest UpstreamConns accepted.
const MaxUpstreamConns = 1024

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
	shared  []*link            // the multiplexed links (bound, queue)

	nextID atomic.Uint64 // upstream id sequence

	// Model counters (see doc.go, "Counters").
	handoffs, ownResponses, promotions atomic.Uint64
	upstreamFailed, upstreamInvalid    atomic.Uint64
	upstreamOpened, upstreamDialFailed atomic.Uint64

	closeOnce sync.Once
	closeErr  error
}

var _ models.Server = (*Server)(nil)

// Start dials the back end (the multiplexed connections, for bound and
// queue), listens on cfg.Addr and starts the acceptor thread.
func Start(cfg models.Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults(DefaultThreads)
	if opts.UpstreamConns == 0 {
		opts.UpstreamConns = DefaultUpstreamConns
	}
	switch {
	case opts.Backend == "":
		return nil, fmt.Errorf("frontend: no back end address (--backend host:port)")
	case opts.UpstreamConns < 0 || opts.UpstreamConns > MaxUpstreamConns:
		return nil, fmt.Errorf("frontend: upstream connections %d out of range (accepted: 0 for %d, or 1..%d)", opts.UpstreamConns, DefaultUpstreamConns, MaxUpstreamConns)
	case opts.Handoff < 0 || int(opts.Handoff) >= len(handoffNames):
		return nil, fmt.Errorf("frontend: invalid hand-off %d", int(opts.Handoff))
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
			s.shared = append(s.shared, l)
		}
	}
	s.ln, err = handleset.Listen(cfg.Addr, handleset.ListenOptions{Backlog: cfg.Backlog, Blocking: true})
	if err != nil {
		s.closeLinks()
		return nil, err
	}
	s.acceptSh = s.counters.NewThreadShard("acceptor")
	if opts.Handoff == Queue {
		for _, l := range s.shared {
			sh := s.counters.NewThreadShard("reader")
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				runtime.LockOSThread() // exits locked: see doc.go
				sh.SetTID(models.CurrentThreadID())
				l.readLoop()
			}()
		}
	}
	s.reaper = connio.NewReaper(&s.cfg, &s.counters)
	s.limit = connio.NewLimit(&s.cfg, "frontend")
	s.wg.Add(1)
	go s.acceptor()
	return s, nil
}

// dial opens a blocking TCP connection to the back end and registers it
// as a link.
func (s *Server) dial() (*link, error) {
	fd, err := connect(s.backend)
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

// dropLink shuts down and closes a link nobody uses any more.
func (s *Server) dropLink(l *link) {
	s.mu.Lock()
	delete(s.links, l)
	s.mu.Unlock()
	handleset.Shutdown(l.fd)
	handleset.Close(l.fd)
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
	}
	return st
}

// acceptor is the accepting thread.
func (s *Server) acceptor() {
	defer s.wg.Done()
	runtime.LockOSThread()
	s.acceptSh.SetTID(models.CurrentThreadID())
	var backoff connio.AcceptBackoff
	refusal := connio.Refusal(s.cfg.Codec, fmt.Sprintf(
		"front end: all %d connection threads are taken (--threads); try again later", s.cfg.Threads))
	for n := 0; ; n++ {
		fd, _, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.stop:
				return
			default:
			}
			if !backoff.AcceptFailed(err, s.acceptSh, s.stop) {
				return
			}
			continue
		}
		backoff.Reset()
		if !s.limit.Admit() {
			connio.Refuse(fd, s.limit.Refusal(), s.acceptSh)
			continue
		}
		select {
		case s.slots <- struct{}{}:
		default:
			s.limit.Release()
			connio.Refuse(fd, refusal, s.acceptSh)
			continue
		}
		s.acceptSh.AddAccepted()
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			handleset.Close(fd)
			s.limit.Release()
			s.acceptSh.AddClosed()
			<-s.slots
			return
		}
		s.conns[fd] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		var l *link
		if len(s.shared) > 0 {
			l = s.shared[n%len(s.shared)]
		}
		go s.serveConn(fd, l)
	}
}

// Close stops the server; see models.Server.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.reaper.Close()
		s.mu.Lock()
		s.closing = true
		close(s.stop)
		for fd := range s.conns {
			handleset.Shutdown(fd) // wakes the connection's thread; it closes fd
		}
		for l := range s.links {
			l.fail(errServerClosing) // wakes the leader, the reader and every waiter
		}
		s.mu.Unlock()
		s.closeErr = s.ln.Shutdown()
		s.wg.Wait()
		s.closeLinks()
		if err := s.ln.Close(); s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}
