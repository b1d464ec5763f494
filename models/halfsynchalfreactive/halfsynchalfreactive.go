package halfsynchalfreactive

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
)

// DefaultThreads is the default number of worker threads (Config.Threads).
const DefaultThreads = 4

// DefaultQueueSize is Options.QueueSize's default.
const DefaultQueueSize = 256

// MaxQueueSize is the largest Options.QueueSize accepted.
const MaxQueueSize = 1 << 16

// Model is the model's name in Stats.
const Model = "halfsynchalfreactive"

// Options are the model's own settings.
type Options struct {
	// QueueSize is the capacity of the request queue between the reactor
	// and the workers; 0 means DefaultQueueSize, range 1..MaxQueueSize.
	QueueSize int
	// Pooled selects the variant that recycles request objects through a
	// free list instead of allocating one per request (Variant "pooled").
	Pooled bool
	// Priority makes the request queue a priority queue: workers take the
	// queued request with the highest wire.Request.Priority first (the
	// oldest among equals) instead of the oldest (Variant "priority"). Each
	// connection's responses still leave in request order.
	Priority bool
}

// WithDefaults returns o with zero-valued settings replaced by their
// defaults.
func (o Options) WithDefaults() Options {
	o.QueueSize = cmp.Or(o.QueueSize, DefaultQueueSize)
	return o
}

// Validate reports the first setting of o outside its accepted range.
func (o Options) Validate() error {
	if o.QueueSize < 0 || o.QueueSize > MaxQueueSize {
		return fmt.Errorf("queue size %d out of range (accepted: 0 for the default %d, or 1..%d)",
			o.QueueSize, DefaultQueueSize, MaxQueueSize)
	}
	return nil
}

// Variant returns the variant's label in Stats: "" for the default variant
// (one request object allocated per request), "pooled", "priority" or
// "pooled,priority".
func (o Options) Variant() string {
	switch {
	case o.Pooled && o.Priority:
		return "pooled,priority"
	case o.Pooled:
		return "pooled"
	case o.Priority:
		return "priority"
	}
	return ""
}

// Server is a running Half-Sync/Half-Reactive server.
type Server struct {
	cfg  models.Config
	opts Options

	ln       *handleset.Listener
	set      *handleset.Set
	q        *queue
	notes    *notifier
	counters models.Counters

	reactor *reactor
	reaper  *connio.Reaper // the header timeout (nil if disabled)
	limit   *connio.Limit  // the connection cap (Config.MaxConns)
	workers []*worker

	wg        sync.WaitGroup // the reactor and the workers, until they exit
	started   sync.WaitGroup // the reactor and the workers, until they run locked
	closeOnce sync.Once
	closeErr  error
}

var _ models.Server = (*Server)(nil)

// Start validates cfg and opts, listens on cfg.Addr, and starts the reactor
// thread and cfg.Threads worker threads (default DefaultThreads). It returns
// once every thread runs, so Stats reports all their TIDs from the start.
func Start(cfg models.Config, opts Options) (*Server, error) {
	cfg, err := cfg.Resolve(DefaultThreads)
	if err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.WithDefaults()

	s := &Server{cfg: cfg, opts: opts}
	freeCap := 0
	if opts.Pooled {
		freeCap = opts.QueueSize + models.MaxInFlight
	}
	s.q = newQueue(opts.QueueSize, freeCap)
	if opts.Priority {
		s.q.prio = newPrioHeap(opts.QueueSize)
	}
	if s.ln, err = handleset.Listen(cfg.Addr, handleset.ListenOptions{Backlog: cfg.Backlog}); err != nil {
		return nil, err
	}
	if s.set, err = handleset.New(); err != nil {
		s.ln.Close()
		return nil, err
	}
	if s.notes, err = newNotifier(); err != nil {
		s.set.Close()
		s.ln.Close()
		return nil, err
	}
	s.reactor = newReactor(s)
	err = errors.Join(
		s.set.Register(s.ln.Fd(), handleset.Readable, acceptor{s.reactor}),
		s.set.Register(s.notes.wake.Fd(), handleset.Readable, s.notes.handler(s.reactor)),
	)
	if err != nil {
		s.set.Close()
		s.notes.wake.Close()
		s.ln.Close()
		return nil, err
	}
	s.reaper = connio.NewReaper(&s.cfg, &s.counters)
	s.limit = connio.NewLimit(&s.cfg, "halfsynchalfreactive")
	for range cfg.Threads {
		s.workers = append(s.workers, &worker{s: s, thread: thread{sh: s.counters.NewThreadShard("worker")}})
	}
	s.wg.Add(1 + len(s.workers))
	s.started.Add(1 + len(s.workers))
	go s.reactor.run()
	for _, w := range s.workers {
		go w.run()
	}
	s.started.Wait() // every thread is locked and has recorded its TID
	return s, nil
}

// Addr returns the listening address.
func (s *Server) Addr() netip.AddrPort { return s.ln.Addr() }

// Stats returns a snapshot of the counters. PerThread lists the reactor
// first (role "reactor": Events are handle-set events it dispatched;
// Requests stays 0, it serves none) and then the workers (role "worker":
// Events are requests taken from the queue, Requests the responses they
// produced). Counters are described in the package documentation.
func (s *Server) Stats() models.Stats {
	st := models.Stats{Model: Model, Variant: s.opts.Variant(), Threads: s.cfg.Threads}
	s.counters.Stats(&st)
	rc := s.reactor
	parked := rc.parked.Load()
	for _, w := range s.workers {
		parked += w.parked.Load()
	}
	st.Counters = map[string]uint64{
		"queue_capacity":           uint64(len(s.q.ring)),
		"queue_high_water":         s.q.highWater.Load(),
		"reactor_blocked":          s.q.blocked.Load(),
		"handoffs":                 s.q.handoffs.Load(),
		"request_allocs":           rc.allocs.Load(),
		"out_of_order":             parked,
		"conn_inflight_high_water": rc.inflightHigh.Load(),
		"notifications":            rc.notifications.Load(),
	}
	return st
}

// release gives back a request object that no thread or connection refers
// to any more. The default variant leaves it to the garbage collector; the
// pooled variant keeps it on the releasing thread's list, which returns to
// the queue's free list (a worker's, at its next get) or feeds the reactor's
// next requests directly (the reactor's).
func (s *Server) release(t *thread, r *request) {
	if !s.opts.Pooled {
		return
	}
	r.reset()
	if len(t.done) < maxDone {
		t.done = append(t.done, r)
	}
}

// Close stops the server; see models.Server. Requests still queued are
// dropped and their connections closed; a worker in the middle of a request
// finishes it first (and writes its response if it can).
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.reaper.Close()          // before any connection is closed
		s.q.close()               // wakes the workers, and the reactor if it waits for room
		err := s.set.Close()      // wakes the reactor if it waits for events
		s.wg.Wait()               // every thread has exited (still locked: destroyed)
		err2 := s.reactor.close() // no thread is left: close every connection
		s.closeErr = errors.Join(err, err2, s.notes.wake.Close(), s.ln.Close())
	})
	return s.closeErr
}
