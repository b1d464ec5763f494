package threadperconn

import (
	"fmt"
	"net/netip"
	"runtime"
	"sync"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
)

// DefaultThreads is the default bound on connection threads.
const DefaultThreads = 1024

// Options are the model's own settings; it has none.
type Options struct{}

// Server is a running thread-per-connection server.
type Server struct {
	cfg      models.Config
	ln       *handleset.Listener
	counters models.Counters
	acceptSh *models.Shard

	mu      sync.Mutex
	conns   map[int]struct{} // open connection descriptors
	closing bool
	slots   chan struct{}  // one token per connection thread allowed
	reaper  *connio.Reaper // the header timeout (nil if disabled)
	limit   *connio.Limit  // the connection cap (Config.MaxConns)

	stop      chan struct{}
	wg        sync.WaitGroup // acceptor and connection threads
	closeOnce sync.Once
	closeErr  error
}

var _ models.Server = (*Server)(nil)

// Start listens on cfg.Addr and starts the acceptor thread.
func Start(cfg models.Config, _ Options) (*Server, error) {
	cfg, err := cfg.Resolve(DefaultThreads)
	if err != nil {
		return nil, err
	}
	ln, err := handleset.Listen(cfg.Addr, handleset.ListenOptions{Backlog: cfg.Backlog, Blocking: true})
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:   cfg,
		ln:    ln,
		conns: make(map[int]struct{}),
		slots: make(chan struct{}, cfg.Threads),
		stop:  make(chan struct{}),
	}
	s.acceptSh = s.counters.NewThreadShard("acceptor")
	s.reaper = connio.NewReaper(&s.cfg, &s.counters)
	s.limit = connio.NewLimit(&s.cfg, "threadperconn")
	s.wg.Add(1)
	go s.acceptor()
	return s, nil
}

// Addr returns the listening address.
func (s *Server) Addr() netip.AddrPort { return s.ln.Addr() }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() models.Stats {
	st := models.Stats{Model: "threadperconn", Threads: s.cfg.Threads}
	s.counters.Stats(&st)
	// Connection threads are counted by the slots they hold, the cap's own
	// measure: a connection thread gives its slot back last, so a count
	// below the cap means a new client is served, not refused.
	st.Counters = map[string]uint64{"conn_threads": uint64(len(s.slots))}
	return st
}

// acceptor is the accepting thread (connio.ThreadAcceptor). Like every
// model thread it exits still locked, so the runtime destroys the thread
// instead of reusing it.
func (s *Server) acceptor() {
	defer s.wg.Done()
	acc := connio.ThreadAcceptor{Listener: s.ln, Shard: s.acceptSh, Stop: s.stop,
		Limit: s.limit, Slots: s.slots, Refusal: s.refusal()}
	acc.Run(func(fd int) bool {
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			handleset.Close(fd)
			s.limit.Release()
			<-s.slots
			return false
		}
		s.conns[fd] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		s.acceptSh.AddAccepted()
		go s.serveConn(fd)
		return true
	})
}

// refusal returns the response that refuses a connection at the thread
// cap (connio.Refusal: status unavailable, HTTP 503) with its reason.
func (s *Server) refusal() []byte {
	return connio.Refusal(s.cfg.Codec, fmt.Sprintf(
		"thread per connection: all %d connection threads are taken (--threads); try again later", s.cfg.Threads))
}

// serveConn is a connection thread. It exits locked: see the package doc.
func (s *Server) serveConn(fd int) {
	defer s.wg.Done()
	runtime.LockOSThread()
	sh := s.counters.NewConnShard()
	sess := connio.NewSession(&s.cfg)
	connio.ServeFD(fd, sess, sh, s.reaper)
	s.mu.Lock()
	delete(s.conns, fd)
	s.mu.Unlock()
	handleset.Close(fd)
	s.limit.Release()
	sh.AddClosed()
	s.counters.Retire(sh)
	<-s.slots
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
		s.mu.Unlock()
		s.closeErr = s.ln.Shutdown()
		s.wg.Wait()
		if err := s.ln.Close(); s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}
