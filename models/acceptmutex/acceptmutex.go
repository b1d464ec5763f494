package acceptmutex

import (
	"fmt"
	"net/netip"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/models/internal/eventloop"
)

// DefaultThreads returns the number of workers when Config.Threads is 0:
// one per CPU this process may run on (nginx's worker_processes auto).
func DefaultThreads() int { return eventloop.DefaultThreads() }

// hooks alter the model for tests; Start uses the zero value.
type hooks struct {
	// holdMutex makes Start take the accept mutex for a worker that does
	// not exist (id Config.Threads) before any worker runs, so that a
	// test can show what the workers do while another holds it; the test
	// frees it with Server.mu.unlock.
	holdMutex bool
}

// Server is a running acceptmutex server.
type Server struct {
	opts     Options
	g        *eventloop.Group
	ln       *handleset.Listener   // Mutex, Exclusive: the one listening socket
	lns      []*handleset.Listener // ReusePort: a socket per worker; lns[0] is ln
	mu       acceptMutex           // Mutex
	perEvent int                   // connections accepted per listener event
	workers  []*worker
}

var _ models.Server = (*Server)(nil)

// Start listens on cfg.Addr (a socket per worker with ReusePort, all on
// the port the first got) and starts Config.Threads workers (default
// DefaultThreads), each a locked OS thread with its own handle set.
func Start(cfg models.Config, opts Options) (*Server, error) { return start(cfg, opts, hooks{}) }

func start(cfg models.Config, opts Options, hk hooks) (*Server, error) {
	cfg, err := cfg.Resolve(DefaultThreads())
	if err != nil {
		return nil, err
	}
	opts, err = opts.withDefaults()
	if err != nil {
		return nil, err
	}
	g, err := eventloop.NewGroup("acceptmutex", cfg, eventloop.Options{
		Trigger: eventloop.Edge, MaxEvents: EpollEvents, Slots: opts.WorkerConns, SlotsFlag: "--worker-conns",
	}, "worker")
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, g: g, perEvent: 1}
	if opts.MultiAccept {
		s.perEvent = connio.MaxAcceptsPerEvent
	}
	n := 1
	if opts.Accept == ReusePort {
		n = cfg.Threads
	}
	s.lns, err = g.Listen(n)
	if err != nil {
		g.Close()
		return nil, err
	}
	s.ln = s.lns[0]
	for i, l := range g.Loops {
		w := &worker{s: s, l: l}
		w.lh = &listenHandler{w: w}
		w.sl = slotsListener{ln: s.ln, l: l}
		s.workers = append(s.workers, w)
		switch opts.Accept {
		case ReusePort:
			w.own = eventloop.NewOwnListener(l, s.lns[i], s.perEvent)
			err = w.own.Arm()
		case Exclusive:
			err = w.register(handleset.Exclusive)
		}
		if err != nil {
			g.Close()
			return nil, err
		}
	}
	if hk.holdMutex {
		s.mu.tryLock(cfg.Threads)
	}
	g.Start(func(l *eventloop.Loop) { s.workers[l.ID].run() })
	return s, nil
}

// Addr returns the listening address (every ReusePort socket's).
func (s *Server) Addr() netip.AddrPort { return s.ln.Addr() }

// Stats returns a snapshot of the counters. PerThread has one entry per
// worker (role "worker") in order, with the connections it accepted;
// Counters holds the model's own, listed in the package documentation.
func (s *Server) Stats() models.Stats {
	st := models.Stats{Model: "acceptmutex", Variant: s.opts.variant()}
	c := s.g.Stats(&st)
	var taken, missed, satOut, adds, removes, reorders, empty uint64
	for i, w := range s.workers {
		e := w.empty.Load()
		empty += e
		if s.opts.Accept != ReusePort {
			c[fmt.Sprintf("w%d_empty_accepts", i)] = e
		}
		taken += w.taken.Load()
		missed += w.missed.Load()
		satOut += w.satOut.Load()
		adds += w.adds.Load()
		removes += w.removes.Load()
		reorders += w.reorders.Load()
	}
	if s.opts.Accept != ReusePort {
		c["empty_accepts"] = empty
	}
	switch s.opts.Accept {
	case Mutex:
		c["mutex_taken"] = taken
		c["mutex_missed"] = missed
		c["rounds_sat_out"] = satOut
		c["listener_adds"] = adds
		c["listener_removes"] = removes
	case Exclusive:
		c["reorders"] = reorders
	}
	st.Counters = c
	return st
}

// Close stops the server; see models.Server. It stops every worker (each
// finishes the connection it is serving), closes every connection, then
// the listening sockets (eventloop.Group.Close).
func (s *Server) Close() error { return s.g.Close() }
