package sharedqueue

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"concbench/handleset"
	"concbench/internal/cpuset"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/models/internal/enum"
	"concbench/service"
)

// DefaultShards is Options.Shards' default.
const DefaultShards = 16

// MaxShards is the most ledger shards accepted.
const MaxShards = 1024

// maxEvents is the most ready handles one reactor turn takes (asio's
// epoll_reactor takes 128); the rest are found by the next turn.
const maxEvents = 128

// DefaultThreads returns the pool size when Config.Threads is 0: a thread
// per CPU this process may run on (asio's server3 example runs one per
// hardware thread).
func DefaultThreads() int { return cpuset.Count() }

// Completion is how the completion of a response's write reaches the
// connection's next read. The zero value is Posted, asio's.
type Completion int

// The completion modes.
const (
	// Posted: a write that completes at once (asio's speculative write in
	// start_op) is still delivered through the scheduler: its completion
	// is posted to the shared queue (post_immediate_completion), which
	// wakes an idle thread or interrupts the reactor, and whichever
	// thread dequeues it runs the write handler, which starts the next
	// read. An asio server that chains async_read_some → async_write →
	// async_read_some, as asio's HTTP server examples do, runs so.
	Posted Completion = iota
	// Inline: the read handler writes the responses itself and starts
	// the next read at once, in the one op: an application that writes
	// synchronously from its read handler.
	Inline
)

// completionNames must match the constants above.
var completionNames = [...]string{Posted: "posted", Inline: "inline"}

// completions is the text form of Completion.
var completions = enum.New[Completion]("Completion", "sharedqueue", "completion mode", completionNames[:])

// String returns the mode's name: posted or inline.
func (c Completion) String() string { return completions.String(c) }

// ParseCompletion returns the mode named s (posted or inline).
func ParseCompletion(s string) (Completion, error) { return completions.Parse(s) }

// MarshalText implements encoding.TextMarshaler (for flag.TextVar and JSON).
func (c Completion) MarshalText() ([]byte, error) { return completions.MarshalText(c) }

// UnmarshalText implements encoding.TextUnmarshaler with ParseCompletion.
func (c *Completion) UnmarshalText(b []byte) error { return completions.UnmarshalText(b, c) }

// Options are the model's own settings.
type Options struct {
	// Shards is how many shards the ledger's accounts are split into,
	// each served through its own strand; 0 means DefaultShards. It is
	// capped at the service's accounts (a shard holds one at least) and
	// may be at most MaxShards.
	Shards int
	// Completion is how a write's completion reaches the next read;
	// default Posted.
	Completion Completion
}

// hooks alter the model for tests; Start uses the zero value.
type hooks struct {
	// unserialized breaks the strands on purpose: dispatch runs every
	// handler at once on the calling thread, whether another thread is
	// in the strand or not. It shows that the owner check (checkStrands)
	// detects handlers that overlap.
	unserialized bool
	// inServant, if set, is called by every handler inside its shard's
	// servant, after the owner check.
	inServant func(sh *shard)
}

// Server is a running shared-queue server.
type Server struct {
	cfg   models.Config
	opts  Options
	hooks hooks

	sched    scheduler
	ln       *handleset.Listener
	acc      acceptor
	pause    connio.ListenPause // the listener stays disarmed after a descriptor shortage
	shards   []*shard
	accounts uint32          // the ledger's, service.Config.Accounts
	supply   *service.Supply // the ledger's money, shared by the shards

	threads  []*thread
	counters models.Counters
	closeSh  *models.Shard // connections closed by Close, after every thread exited
	reaper   *connio.Reaper
	limit    *connio.Limit
	conns    *connio.Conns[*conn] // open connections by descriptor
	fatal    connio.Fatal

	deferred      atomic.Uint64 // connections resumed by a strand that ran their request later
	writesPosted  atomic.Uint64 // writes whose completion was posted (Posted)
	acceptsPosted atomic.Uint64 // accepts posted after the one before took a connection
	continuations atomic.Uint64 // strands re-queued through their thread's private queue

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

var _ models.Server = (*Server)(nil)

// Start listens on cfg.Addr, splits the ledger into shards, and starts
// cfg.Threads locked OS threads (default DefaultThreads) that run the
// scheduler.
func Start(cfg models.Config, opts Options) (*Server, error) {
	return start(cfg, opts, hooks{})
}

func start(cfg models.Config, opts Options, hk hooks) (*Server, error) {
	cfg, err := cfg.Resolve(DefaultThreads())
	if err != nil {
		return nil, err
	}
	scfg := cfg.Service.Config()
	switch {
	case opts.Shards == 0:
		opts.Shards = DefaultShards
	case opts.Shards < 0 || opts.Shards > MaxShards:
		return nil, fmt.Errorf("sharedqueue: shards %d out of range (accepted: 0 for the default %d, or 1..%d)", opts.Shards, DefaultShards, MaxShards)
	}
	if err := completions.Check(opts.Completion); err != nil {
		return nil, err
	}
	opts.Shards = min(opts.Shards, scfg.Accounts)
	s := &Server{cfg: cfg, opts: opts, hooks: hk, accounts: uint32(scfg.Accounts)}
	s.acc.s = s
	s.sched.wakeup.L = &s.sched.mu
	s.sched.taskInterrupted = true
	s.supply = service.NewSupply(int64(scfg.Accounts) * scfg.InitialBalance)
	for i := range opts.Shards {
		first, n := shardRange(i, opts.Shards, s.accounts)
		sh := &shard{idx: i, s: s, ledger: service.NewShard(first, n, scfg.InitialBalance, s.supply)}
		sh.expiry.sh = sh
		s.shards = append(s.shards, sh)
	}
	if err := s.open(); err != nil {
		return nil, err
	}
	s.closeSh = s.counters.NewConnShard()
	s.reaper = connio.NewReaper(&s.cfg, &s.counters)
	s.limit = connio.NewLimit(&s.cfg, "sharedqueue")
	s.conns = connio.NewConns[*conn](s.reaper, s.limit)
	s.sched.queue.push(&s.sched.task)
	for range cfg.Threads {
		s.threads = append(s.threads, &thread{s: s, sh: s.counters.NewThreadShard("pool"), w: s.sched.set.NewWaiter(maxEvents)})
	}
	started := make(chan struct{}, len(s.threads))
	for _, th := range s.threads {
		s.wg.Add(1)
		go th.run(started)
	}
	for range s.threads {
		<-started
	}
	return s, nil
}

// open creates the handle set with the interrupter and the listener in it.
func (s *Server) open() error {
	set, err := handleset.New()
	if err != nil {
		return err
	}
	w, err := handleset.NewWakeup()
	if err != nil {
		set.Close()
		return err
	}
	s.sched.set, s.sched.intr = set, &interrupter{w: w}
	fail := func(err error) error {
		if s.ln != nil {
			s.ln.Close()
		}
		w.Close()
		set.Close()
		return err
	}
	if err := set.Register(w.Fd(), handleset.Readable, s.sched.intr); err != nil {
		return fail(err)
	}
	if s.ln, err = handleset.Listen(s.cfg.Addr, handleset.ListenOptions{Backlog: s.cfg.Backlog}); err != nil {
		return fail(err)
	}
	if err := set.Register(s.ln.Fd(), handleset.Readable|handleset.OneShot, &s.acc); err != nil {
		return fail(err)
	}
	return nil
}

// shardRange returns the accounts shard i of n holds: [first, first+count),
// the contiguous split Active Object's servants use.
func shardRange(i, n int, accounts uint32) (first, count uint32) {
	lo := uint64(i) * uint64(accounts) / uint64(n)
	hi := uint64(i+1) * uint64(accounts) / uint64(n)
	return uint32(lo), uint32(hi - lo)
}

// shardOf returns the shard that holds account a, or shard 0 for an
// account that does not exist (whose ledger then reports
// service.ErrNoAccount). Shard i holds [i·N/K, (i+1)·N/K), so first(i) ≤
// a holds for i ≤ ((a+1)·K − 1)/N.
func (s *Server) shardOf(a uint32) *shard {
	if a >= s.accounts {
		return s.shards[0]
	}
	return s.shards[((uint64(a)+1)*uint64(len(s.shards))-1)/uint64(s.accounts)]
}

// Addr returns the listening address.
func (s *Server) Addr() netip.AddrPort { return s.ln.Addr() }

// Stats returns a snapshot of the counters. PerThread has one entry per
// pool thread (role "pool") in thread order; Counters are listed in the
// package documentation.
func (s *Server) Stats() models.Stats {
	st := models.Stats{Model: "sharedqueue", Variant: "shards=" + strconv.Itoa(len(s.shards)) + ",completion=" + s.opts.Completion.String(), Threads: s.cfg.Threads}
	s.counters.Stats(&st)
	sc := &s.sched
	sc.mu.Lock()
	st.Counters = map[string]uint64{
		"polls":            sc.polls.Load(),
		"poll_events":      sc.pollEvents.Load(),
		"wakeups":          sc.wakeups.Load(),
		"interrupts":       sc.interrupts.Load(),
		"queue_high_water": sc.highWater.Load(),
	}
	sc.mu.Unlock()
	var inline, queued, runs, cross, waits, timeouts, violations uint64
	for _, sh := range s.shards {
		inline += sh.inline.Load()
		queued += sh.queued.Load()
		runs += sh.runs.Load()
		cross += sh.cross.Load()
		waits += sh.guardWaits.Load()
		timeouts += sh.guardTimeouts.Load()
		violations += sh.violations.Load()
	}
	for k, v := range map[string]uint64{
		"shards": uint64(len(s.shards)), "strand_inline": inline, "strand_queued": queued, "strand_runs": runs,
		"cross_shard_transfers": cross, "guard_waits": waits, "guard_timeouts": timeouts,
		"deferred_completions": s.deferred.Load(), "posted_writes": s.writesPosted.Load(), "posted_accepts": s.acceptsPosted.Load(),
		"continuations": s.continuations.Load(), "open_conns": uint64(s.conns.Len()), "stale_events": sc.set.Stale(),
	} {
		st.Counters[k] = v
	}
	if checkStrands {
		st.Counters["strand_overlaps"] = violations
	}
	return st
}

// waitTimeout is how long the reactor may block: until the nearest
// deadline of a guarded withdrawal or the end of a listener pause, or
// without bound (-1). mu is held.
func (s *Server) waitTimeout() time.Duration {
	d := s.pause.Timeout()
	if len(s.sched.timers) > 0 {
		t := max(time.Until(s.sched.timers[0].at), 0)
		if d < 0 || t < d {
			d = t
		}
	}
	return d
}

// fail records the first fatal error (the handle set or the listener
// failed in a way that leaves the server unable to serve) and stops the
// scheduler; Close returns the error.
func (s *Server) fail(err error) {
	s.fatal.Set("sharedqueue: stopped", err)
	s.stop()
}

// stop stops the scheduler: idle threads are woken, the reactor's wait
// ends (the handle set closes), and every thread leaves after the op it
// is performing.
func (s *Server) stop() error {
	sc := &s.sched
	sc.mu.Lock()
	sc.stopped = true
	sc.mu.Unlock()
	sc.wakeup.Broadcast()
	return sc.set.Close()
}

// Close stops the server; see models.Server. It stops the scheduler,
// waits for every thread to exit — one performing an op finishes it
// first — and then closes every connection, the listener and the
// interrupter. Ledger requests queued in strands and guarded withdrawals
// waiting for funds are abandoned with their connections.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.reaper.Close() // before any descriptor is closed here
		errs := []error{s.stop()}
		s.wg.Wait()
		// Every thread has exited: this goroutine owns what is left (the
		// lock is for Stats).
		errs = append(errs, s.conns.CloseAll(s.closeSh)...)
		errs = append(errs, s.ln.Close(), s.sched.intr.w.Close(), s.fatal.Err())
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}
