package activeobject

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"sync"

	"concbench/handleset"
	"concbench/internal/futex"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/service"
)

// Defaults and bounds of the model's settings.
const (
	// DefaultThreads is the default number of I/O threads (Config.Threads).
	DefaultThreads = 1
	// DefaultObjects is the default number of active objects: one per core
	// of the 2-vCPU machine the suite is measured on.
	DefaultObjects = 2
	// MaxObjects is the largest Options.Objects accepted.
	MaxObjects = 256
	// DefaultQueueCapacity is the default activation queue capacity.
	DefaultQueueCapacity = 1024
	// DefaultMaxInFlight is the default bound on a connection's requests in
	// flight (enqueued, responses not yet encoded): models.MaxInFlight, the
	// bound of every model that hands requests off, so that back-pressure
	// is the same as in Half-Sync/Half-Reactive.
	DefaultMaxInFlight = models.MaxInFlight
	// MaxInFlightLimit is the largest Options.MaxInFlight accepted.
	MaxInFlightLimit = 4096
)

// Options are the model's own settings. The zero value means the defaults.
type Options struct {
	// Objects is the number of active objects K: scheduler threads, each
	// with its activation queue and its servant holding a contiguous shard
	// of the accounts. Range 1..MaxObjects, and at most the number of
	// accounts; 0 means DefaultObjects.
	Objects int
	// QueueCapacity is each activation queue's capacity in method requests
	// (see ActivationQueue); range 1..MaxQueueCapacity; 0 means
	// DefaultQueueCapacity.
	QueueCapacity int
	// MaxInFlight bounds one connection's requests in flight: decoded and
	// enqueued, response not yet encoded. Range 1..MaxInFlightLimit; 0
	// means DefaultMaxInFlight. Another value makes back-pressure differ
	// from the other models', and the memory bound the models package
	// states (models.ConnMemoryBound) assumes the default: it is for
	// experiments and tests.
	MaxInFlight int

	// observe, if set (by in-package tests), is called on the scheduler
	// thread just before each method request executes.
	observe func(object int, mr MethodRequest)
	// unboundedLedger, if set (by in-package tests), gives the shards no
	// shared service.Supply, so that a balance can reach math.MaxInt64 and
	// the paths that handle an overflowing credit (refunds that wait for
	// room) can be driven; with the Supply those paths cannot be reached.
	unboundedLedger bool
	// afterRounds, if set (by in-package tests), is called with c.mu held
	// by a connection step after its decode/dispatch/collect rounds,
	// before its last collect and write, with the step's readiness (0 for
	// a step run from a completion port).
	afterRounds func(c *conn, ready handleset.Events)
	// contributed, if set (by in-package tests), is called by the thread
	// that contributed object's part of a snapshot, after the part has
	// been added and counted (with the snapshot's mutex released), before
	// the last part completes the snapshot's future.
	contributed func(object int)
}

// withDefaults returns o with zero fields replaced by their defaults.
func (o Options) withDefaults() Options {
	o.Objects = cmp.Or(o.Objects, DefaultObjects)
	o.QueueCapacity = cmp.Or(o.QueueCapacity, DefaultQueueCapacity)
	o.MaxInFlight = cmp.Or(o.MaxInFlight, DefaultMaxInFlight)
	return o
}

// validate reports the first setting (after defaults) outside its range.
func (o Options) validate(accounts int) error {
	switch {
	case o.Objects < 1 || o.Objects > MaxObjects:
		return fmt.Errorf("activeobject: objects %d out of range (accepted: 0 for the default %d, or 1..%d)",
			o.Objects, DefaultObjects, MaxObjects)
	case o.Objects > accounts:
		return fmt.Errorf("activeobject: objects %d exceed the %d ledger accounts (each active object owns at least one account)",
			o.Objects, accounts)
	case o.QueueCapacity < 1 || o.QueueCapacity > MaxQueueCapacity:
		return fmt.Errorf("activeobject: queue capacity %d out of range (accepted: 0 for the default %d, or 1..%d)",
			o.QueueCapacity, DefaultQueueCapacity, MaxQueueCapacity)
	case o.MaxInFlight < 1 || o.MaxInFlight > MaxInFlightLimit:
		return fmt.Errorf("activeobject: max in flight %d out of range (accepted: 0 for the default %d, or 1..%d)",
			o.MaxInFlight, DefaultMaxInFlight, MaxInFlightLimit)
	}
	return nil
}

// Server is a running Active Object server: I/O threads on the handle set
// and Options.Objects active objects behind one Proxy.
type Server struct {
	cfg   models.Config
	opts  Options
	set   *handleset.Set
	ln    *handleset.Listener
	lh    *listenHandler
	proxy *Proxy
	objs  []*scheduler
	ports []*completionPort

	counters models.Counters

	connsMu futex.Mutex
	conns   map[*conn]struct{} // open connections; guarded by connsMu
	reaper  *connio.Reaper     // the header timeout (nil if disabled)
	limit   *connio.Limit      // the connection cap (Config.MaxConns)
	nextID  uint64             // connection numbering, for the home object; guarded by connsMu

	wg        sync.WaitGroup // I/O threads and schedulers
	closeOnce sync.Once
	closeErr  error
}

var _ models.Server = (*Server)(nil)

// Start starts the active objects (their scheduler threads), listens on
// cfg.Addr and starts cfg.Threads I/O threads (default DefaultThreads).
func Start(cfg models.Config, opts Options) (*Server, error) {
	cfg, err := cfg.Resolve(DefaultThreads)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	scfg := cfg.Service.Config()
	if err := opts.validate(scfg.Accounts); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, opts: opts, conns: make(map[*conn]struct{})}
	s.limit = connio.NewLimit(&s.cfg, "activeobject")
	if s.set, err = handleset.New(); err != nil {
		return nil, err
	}
	s.proxy = &Proxy{accounts: uint32(scfg.Accounts), contributed: opts.contributed}
	// One Supply for all shards: the ledger's money, initial plus deposits
	// minus withdrawals, stays ≤ math.MaxInt64, so /total cannot wrap.
	var supply *service.Supply
	if !opts.unboundedLedger {
		supply = service.NewSupply(int64(scfg.Accounts) * scfg.InitialBalance)
	}
	for i := range opts.Objects {
		port, err := newCompletionPort(s, i)
		if err != nil {
			s.release()
			return nil, err
		}
		s.ports = append(s.ports, port)
		first, n := shardRange(i, opts.Objects, uint32(scfg.Accounts))
		sc := &scheduler{
			index:   i,
			queue:   NewActivationQueue(opts.QueueCapacity),
			servant: newServant(first, n, scfg.InitialBalance, supply),
			svc:     cfg.Service,
			port:    port,
			observe: opts.observe,
		}
		s.objs = append(s.objs, sc)
	}
	s.proxy.objs = s.objs
	for _, sc := range s.objs {
		sc.peers = s.objs
	}
	if s.ln, err = handleset.Listen(cfg.Addr, handleset.ListenOptions{Backlog: cfg.Backlog}); err != nil {
		s.release()
		return nil, err
	}
	s.lh = &listenHandler{srv: s, sh: s.counters.NewConnShard()}
	for _, p := range s.ports {
		if err := s.set.Register(p.wake.Fd(), handleset.Readable|handleset.OneShot, p); err != nil {
			s.release()
			return nil, err
		}
	}
	if err := s.set.Register(s.ln.Fd(), handleset.Readable|handleset.OneShot, s.lh); err != nil {
		s.release()
		return nil, err
	}
	s.reaper = connio.NewReaper(&s.cfg, &s.counters)
	for _, sc := range s.objs {
		s.wg.Add(1)
		go sc.run(s.wg.Done)
	}
	for range cfg.Threads {
		sh := s.counters.NewThreadShard("io")
		s.wg.Add(1)
		go s.ioThread(sh)
	}
	return s, nil
}

// release closes what a failed Start opened (no thread runs yet).
func (s *Server) release() {
	s.set.Close()
	for _, p := range s.ports {
		p.wake.Close()
	}
	if s.ln != nil {
		s.ln.Close()
	}
}

// Addr returns the listening address.
func (s *Server) Addr() netip.AddrPort { return s.ln.Addr() }

// Proxy returns the proxy of the server's active objects, for clients in
// the same process (tests, benchmarks). The network side uses the same
// proxy.
func (s *Server) Proxy() *Proxy { return s.proxy }

// Stats returns a snapshot of the counters. PerThread lists the I/O threads
// (role "io"; Events: handle-set events dispatched) and then the schedulers
// (role "scheduler"; Events: takes from the activation queue; Requests:
// method requests executed — a transfer between objects is two, a Total a
// start and K−1 markers per object — which are therefore not part of
// Stats.Requests, the number of responses produced). Counters are
// documented in the package doc.
func (s *Server) Stats() models.Stats {
	st := models.Stats{Model: "activeobject", Variant: "objects=" + strconv.Itoa(len(s.objs)), Threads: s.cfg.Threads}
	s.counters.Stats(&st)
	c := map[string]uint64{
		"objects":        uint64(len(s.objs)),
		"queue_capacity": uint64(s.opts.QueueCapacity),
	}
	var hw uint64
	for i, sc := range s.objs {
		st.PerThread = append(st.PerThread, models.ThreadStats{
			TID:      int(sc.tid.Load()),
			Role:     "scheduler",
			Events:   sc.batches.Load(),
			Requests: sc.calls.Load(),
		})
		q := sc.queue.stats()
		c["queue_high_water_"+strconv.Itoa(i)] = uint64(q.highWater)
		hw = max(hw, uint64(q.highWater))
		c["handoffs"] += q.handoffs
		c["enqueue_blocked"] += q.blocked
		c["guard_deferrals"] += sc.deferrals.Load()
		c["guard_timeouts"] += sc.timeouts.Load()
		c["cross_shard_transfers"] += sc.crossShard.Load()
		c["completion_signals"] += s.ports[i].signals.Load()
	}
	c["queue_high_water"] = hw
	s.connsMu.Lock()
	c["open_conns"] = uint64(len(s.conns))
	s.connsMu.Unlock()
	st.Counters = c
	return st
}

// Close stops the server; see models.Server. Pending method requests are
// cancelled (their futures complete with ErrClosed); connections are closed
// with whatever they had in flight.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.reaper.Close() // before any connection is closed
		// Wake the schedulers (they cancel what is pending and exit) and
		// any thread blocked enqueuing on a full queue.
		for _, sc := range s.objs {
			sc.queue.Close()
		}
		// Wake the I/O threads: every Wait returns ErrClosed.
		s.closeErr = s.set.Close()
		s.wg.Wait()
		// No thread runs now: close what is left.
		s.connsMu.Lock()
		for c := range s.conns {
			c.mu.Lock()
			c.release()
			c.mu.Unlock()
		}
		clear(s.conns)
		s.connsMu.Unlock()
		for _, p := range s.ports {
			if err := p.wake.Close(); err != nil && s.closeErr == nil {
				s.closeErr = err
			}
		}
		if err := s.ln.Close(); err != nil && s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}

// errClosing reports whether err means the handle set was closed under us.
func errClosing(err error) bool { return errors.Is(err, handleset.ErrClosed) }
