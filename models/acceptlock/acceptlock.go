package acceptlock

import (
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"concbench/handleset"
	"concbench/internal/futex"
	"concbench/models"
	"concbench/models/internal/eventloop"
)

// DefaultWatch is Options.Watch's default: Cherokee's fdwatch_msecs
// (1000 ms).
const DefaultWatch = time.Second

// MaxWatch is the longest Options.Watch accepted.
const MaxWatch = time.Minute

// MaxEvents is the most events one wait returns; the connections beyond
// are level-triggered and reported again by the thread's next wait.
const MaxEvents = 256

// DefaultThreads returns the pool size when Config.Threads is 0: a thread
// per CPU this process may run on. A thread blocks only on the listeners'
// lock or in its own wait with nothing to do, so more threads than CPUs
// would add no parallelism.
func DefaultThreads() int { return eventloop.DefaultThreads() }

// Options are the model's own settings.
type Options struct {
	// Watch is the longest a thread waits on its poll set in one step
	// (Cherokee's fdwatch_msecs), with or without the listener: a busy
	// thread that found the listeners' lock taken tries it again after
	// at most this long. 0 means DefaultWatch; at most MaxWatch.
	Watch time.Duration

	// FixedBurst makes every leader accept up to
	// connio.MaxAcceptsPerEvent connections, until the backlog is empty,
	// instead of Cherokee's learned maximum (acceptMore): the model before
	// it learned, kept to measure what the learning does to balance.
	FixedBurst bool
}

func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Watch == 0:
		o.Watch = DefaultWatch
	case o.Watch < time.Millisecond || o.Watch > MaxWatch:
		return o, fmt.Errorf("acceptlock: watch %v out of range (accepted: 0 for the default %v, or 1ms..%v)", o.Watch, DefaultWatch, MaxWatch)
	}
	return o, nil
}

// Server is a running accept-lock server.
type Server struct {
	opts Options
	g    *eventloop.Group
	ln   *handleset.Listener

	// listeners is Cherokee's listeners_mutex: its holder (the leader) is
	// the only thread with the listener in its poll set.
	listeners futex.Mutex
	more      acceptMore // the listener's accept bursts; guarded by listeners
	// moreMax and moreRelearns mirror more's maximum and relearning
	// rounds for Stats, which must not wait for the lock (its holder
	// waits on its poll set while holding it).
	moreMax, moreRelearns atomic.Uint64

	threads []*thread
}

var _ models.Server = (*Server)(nil)

// Start listens on cfg.Addr and starts cfg.Threads locked OS threads
// (default DefaultThreads), each with its own poll set.
func Start(cfg models.Config, opts Options) (*Server, error) {
	cfg, err := cfg.Resolve(DefaultThreads())
	if err != nil {
		return nil, err
	}
	opts, err = opts.withDefaults()
	if err != nil {
		return nil, err
	}
	g, err := eventloop.NewGroup("acceptlock", cfg, eventloop.Options{Trigger: eventloop.Level, MaxEvents: MaxEvents}, "pool")
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, g: g}
	lns, err := g.Listen(1)
	if err != nil {
		g.Close()
		return nil, err
	}
	s.ln = lns[0]
	for _, l := range g.Loops {
		th := &thread{s: s, l: l}
		th.lh.th = th
		s.threads = append(s.threads, th)
	}
	g.Start(func(l *eventloop.Loop) { s.threads[l.ID].run() })
	return s, nil
}

// Addr returns the listening address.
func (s *Server) Addr() netip.AddrPort { return s.ln.Addr() }

// Stats returns a snapshot of the counters. PerThread has one entry per
// pool thread (role "pool") in thread order, with the connections it
// accepted (Accepted: it owns each for the connection's life) and the
// rounds it led (Promotions: times it held the listeners' lock).
// Counters are listed in the package documentation.
func (s *Server) Stats() models.Stats {
	st := models.Stats{Model: "acceptlock", Variant: "watch=" + s.opts.Watch.String()}
	if s.opts.FixedBurst {
		st.Variant += ",burst=fixed"
	}
	c := s.g.Stats(&st)
	for _, th := range s.threads {
		c["lock_blocks"] += th.blocked.Load()
		c["lock_busy"] += th.busy.Load()
		c["accept_batches"] += th.batches.Load()
		c["most_owned"] = max(c["most_owned"], uint64(th.l.Open()))
	}
	if !s.opts.FixedBurst {
		c["accept_max"], c["accept_relearns"] = s.moreMax.Load(), s.moreRelearns.Load()
	}
	st.Counters = c
	return st
}

// Close stops the server; see models.Server. It closes every thread's
// poll set, which wakes a thread waiting in it; the leader then releases
// the listeners' lock, and each thread blocked on the lock takes it in
// turn, finds its set closed and leaves. Once every thread has exited it
// closes every connection and the listener (eventloop.Group.Close).
func (s *Server) Close() error { return s.g.Close() }
