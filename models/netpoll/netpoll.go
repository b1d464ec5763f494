package netpoll

import (
	"errors"
	"net"
	"net/netip"
	"sync"

	"concbench/models"
	"concbench/models/internal/connio"
)

// Options are the model's own settings; it has none.
type Options struct{}

// Server is a running goroutine-per-connection server.
type Server struct {
	cfg      models.Config
	ln       *net.TCPListener
	addr     netip.AddrPort
	counters models.Counters
	acceptSh *models.Shard

	mu      sync.Mutex
	conns   map[*net.TCPConn]struct{}
	closing bool
	reaper  *connio.Reaper // the header timeout (nil if disabled)
	limit   *connio.Limit  // the connection cap (Config.MaxConns)

	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

var _ models.Server = (*Server)(nil)

// Start listens on cfg.Addr and starts the accept loop.
func Start(cfg models.Config, _ Options) (*Server, error) {
	cfg, err := cfg.Resolve(0)
	if err != nil {
		return nil, err
	}
	// Note: net.Listen takes its backlog from net.core.somaxconn; Go offers
	// no per-listener backlog, so Config.Backlog is ignored by this model.
	//
	// An IPv4 address, or none ("0.0.0.0:0", ":0"), listens on IPv4 only,
	// as handleset.Listen does for the other models: Go's "tcp" would make
	// the wildcard a dual-stack IPv6 socket.
	ta, err := net.ResolveTCPAddr("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	network := "tcp"
	if ta.IP == nil || ta.IP.To4() != nil {
		network = "tcp4"
	}
	tl, err := net.ListenTCP(network, ta)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:   cfg,
		ln:    tl,
		addr:  tl.Addr().(*net.TCPAddr).AddrPort(),
		conns: make(map[*net.TCPConn]struct{}),
		stop:  make(chan struct{}),
	}
	s.acceptSh = s.counters.NewConnShard()
	s.reaper = connio.NewReaper(&s.cfg, &s.counters)
	s.limit = connio.NewLimit(&s.cfg, "netpoll")
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// Addr returns the listening address.
func (s *Server) Addr() netip.AddrPort { return s.addr }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() models.Stats {
	st := models.Stats{Model: "netpoll", Threads: s.cfg.Threads}
	s.counters.Stats(&st)
	s.mu.Lock()
	st.Counters = map[string]uint64{"conn_goroutines": uint64(len(s.conns))}
	s.mu.Unlock()
	return st
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	var backoff connio.AcceptBackoff
	for {
		c, err := s.ln.AcceptTCP()
		if err != nil {
			select {
			case <-s.stop:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) || !backoff.AcceptFailed(err, s.acceptSh, s.stop) {
				return
			}
			continue
		}
		backoff.Reset()
		if !s.limit.Admit() {
			s.refuse(c)
			continue
		}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			c.Close()
			s.limit.Release()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		s.acceptSh.AddAccepted()
		go s.serveConn(c)
	}
}

// refuse answers a connection accepted past Config.MaxConns with the
// limit's refusal and closes it, as connio.Refuse does for a descriptor:
// counted first, the write cannot block for long (a new connection's send
// buffer is empty, the refusal small), and the FIN follows the response.
func (s *Server) refuse(c *net.TCPConn) {
	connio.CountRefused(s.acceptSh)
	_, _ = c.Write(s.limit.Refusal()) // a client already gone needs no answer
	_ = c.CloseWrite()
	c.Close()
}

func (s *Server) serveConn(c *net.TCPConn) {
	defer s.wg.Done()
	sh := s.counters.NewConnShard()
	sess := connio.NewSession(&s.cfg)
	// The reaper shuts the socket down by its descriptor, which stays
	// open until c.Close below (after Untrack).
	fd := -1
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(d uintptr) { fd = int(d) })
	}
	if fd >= 0 {
		s.reaper.Track(fd, &sess.Timer)
	}
	connio.ServeStream(c, sess, sh)
	if fd >= 0 {
		s.reaper.Untrack(fd)
	}
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
	s.limit.Release()
	sh.AddClosed()
	s.counters.Retire(sh)
}

// Close stops the server; see models.Server.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.reaper.Close() // before any connection is closed here
		s.mu.Lock()
		s.closing = true
		close(s.stop)
		for c := range s.conns {
			c.Close() // wakes the goroutine; closing twice is harmless for net.Conn
		}
		s.mu.Unlock()
		s.closeErr = s.ln.Close()
		s.wg.Wait()
	})
	return s.closeErr
}
