package partitioned

import (
	"net/netip"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/eventloop"
)

// DefaultThreads returns the number of threads when Config.Threads is 0:
// one per CPU this process may run on, as the ZygOS paper's baseline
// starts one per CPU of its affinity mask.
func DefaultThreads() int { return eventloop.DefaultThreads() }

// MaxEvents is the most events a thread's wait returns: one, as the
// baseline's CONFIG_MAX_EVENTS.
const MaxEvents = 1

// Options are the model's own settings; it has none yet, and takes the
// struct so that its Start reads like every model's.
type Options struct{}

// Server is a running partitioned server.
type Server struct {
	g      *eventloop.Group
	lns    []*handleset.Listener // a socket per thread, one port
	owners []*eventloop.OwnListener
}

var _ models.Server = (*Server)(nil)

// Start listens on cfg.Addr with a SO_REUSEPORT socket per thread, all on
// the port the first got, and starts Config.Threads threads (default
// DefaultThreads), each a locked OS thread with its own handle set that
// holds its own listening socket and the connections it accepts.
func Start(cfg models.Config, _ Options) (*Server, error) {
	cfg, err := cfg.Resolve(DefaultThreads())
	if err != nil {
		return nil, err
	}
	g, err := eventloop.NewGroup("partitioned", cfg, eventloop.Options{Trigger: eventloop.Level, MaxEvents: MaxEvents}, "thread")
	if err != nil {
		return nil, err
	}
	s := &Server{g: g}
	s.lns, err = g.Listen(cfg.Threads)
	if err != nil {
		g.Close()
		return nil, err
	}
	for i, l := range g.Loops {
		o := eventloop.NewOwnListener(l, s.lns[i], 1)
		if err := o.Arm(); err != nil {
			g.Close()
			return nil, err
		}
		s.owners = append(s.owners, o)
	}
	g.Start(func(l *eventloop.Loop) { s.owners[l.ID].Run() })
	return s, nil
}

// Addr returns the listening address (every thread's socket's).
func (s *Server) Addr() netip.AddrPort { return s.lns[0].Addr() }

// Stats returns a snapshot of the counters. PerThread has one entry per
// thread (role "thread") in order, with the connections it accepted;
// Counters are the event loop's (see the package documentation).
func (s *Server) Stats() models.Stats {
	st := models.Stats{Model: "partitioned", Variant: "trigger=level events=1"}
	st.Counters = s.g.Stats(&st)
	return st
}

// Close stops the server; see models.Server. It stops every thread (each
// finishes the connection it is serving), closes every connection, then
// the listening sockets (eventloop.Group.Close).
func (s *Server) Close() error { return s.g.Close() }
