package eventloop

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"concbench/handleset"
	"concbench/internal/cpuset"
	"concbench/models"
	"concbench/models/internal/connio"
)

// DefaultThreads returns the default number of loops: one per CPU this
// process may run on (its affinity mask), since a loop's thread never
// blocks in I/O — nginx's worker_processes auto.
func DefaultThreads() int { return cpuset.Count() }

// Group is the loops of one server, a thread each, and what they share.
type Group struct {
	// Cfg is the server's configuration, defaults applied.
	Cfg models.Config
	// Counters are the server's counters: a shard per loop, in order.
	Counters models.Counters
	// Limit is the server's connection cap (Config.MaxConns).
	Limit *connio.Limit
	// Reaper enforces the header timeout (nil if disabled).
	Reaper *connio.Reaper
	// Loops are the group's loops, Cfg.Threads of them.
	Loops []*Loop

	lns          []*handleset.Listener // the server's listening sockets (Listen)
	model        string
	opts         Options
	slotsRefusal []byte
	closeSh      *models.Shard // connections closed by Close

	fatal connio.Fatal // the first fatal error of a loop

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// NewGroup returns the group of a server of the model named model:
// cfg.Threads loops (cfg validated, defaults applied), each with its own
// handle set and an owner shard of role role, and the connection cap. The
// threads start with Start; until then nothing runs.
func NewGroup(model string, cfg models.Config, opts Options, role string) (*Group, error) {
	g := &Group{Cfg: cfg, model: model, opts: opts}
	if opts.Slots > 0 {
		g.slotsRefusal = connio.Refusal(cfg.Codec, fmt.Sprintf(
			"%s: the %s that accepted this connection holds all its %d connections (%s); try again later",
			model, role, opts.Slots, opts.SlotsFlag))
	}
	for i := range cfg.Threads {
		set, err := handleset.New()
		if err != nil {
			for _, l := range g.Loops {
				l.Set.Close()
			}
			return nil, fmt.Errorf("%s: %w", model, err)
		}
		l := &Loop{ID: i, Set: set, Sh: g.Counters.NewOwnerShard(role), g: g,
			w: set.NewWaiter(opts.MaxEvents), conns: make(map[int]*conn)}
		g.Loops = append(g.Loops, l)
	}
	g.Limit = connio.NewLimit(&g.Cfg, model)
	g.closeSh = g.Counters.NewConnShard()
	return g, nil
}

// Listen opens the server's n listening sockets on Cfg.Addr, with
// Cfg.Backlog: one, or with n > 1 a handleset.ListenGroup (a SO_REUSEPORT
// socket each, on one port). Close closes them, after the loops.
func (g *Group) Listen(n int) ([]*handleset.Listener, error) {
	lns, err := handleset.ListenGroup(g.Cfg.Addr, handleset.ListenOptions{Backlog: g.Cfg.Backlog}, n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", g.model, err)
	}
	g.lns = lns
	return lns, nil
}

// Start starts a locked OS thread per loop, running run with its loop,
// and returns once every thread runs (its id recorded). run returns when
// its loop's Round fails (Stop); the thread then exits still locked, so
// the Go runtime destroys it. The reaper starts with the threads.
func (g *Group) Start(run func(l *Loop)) {
	g.Reaper = connio.NewReaper(&g.Cfg, &g.Counters)
	started := make(chan struct{}, len(g.Loops))
	for _, l := range g.Loops {
		g.wg.Go(func() {
			runtime.LockOSThread()
			l.Sh.SetTID(models.CurrentThreadID())
			started <- struct{}{}
			run(l)
		})
	}
	for range g.Loops {
		<-started
	}
}

// Stop is how a loop's thread ends on err, Round's error: a closed set
// is the server closing; any other error is fatal to the server (Fail).
func (g *Group) Stop(err error) {
	if !errors.Is(err, handleset.ErrClosed) {
		g.Fail(err)
	}
}

// Fail records the first fatal error of a loop (its handle set or its
// listener failed in a way that leaves it unable to serve) and stops every
// loop; Close returns the error. Any thread may call it.
func (g *Group) Fail(err error) {
	g.fatal.Set(g.model+": stopped", err)
	for _, l := range g.Loops {
		l.Set.Close()
	}
}

// Close stops the group: it stops the reaper, closes every loop's set
// (waking its thread), waits for every thread to exit — a thread serving
// a connection finishes it first — and then closes every connection and
// the listening sockets. It returns the errors of closing and the first
// fatal error. Close is idempotent.
func (g *Group) Close() error {
	g.closeOnce.Do(func() {
		g.Reaper.Close() // before any descriptor is closed here
		var errs []error
		for _, l := range g.Loops {
			errs = append(errs, l.Set.Close())
		}
		g.wg.Wait()
		// Every thread has exited: this goroutine owns what is left.
		for _, l := range g.Loops {
			for fd, c := range l.conns {
				c.closed = true
				errs = append(errs, handleset.Close(fd))
				l.open.Add(-1)
				g.closeSh.AddClosed()
			}
			clear(l.conns)
		}
		for _, ln := range g.lns {
			errs = append(errs, ln.Close())
		}
		errs = append(errs, g.fatal.Err())
		g.closeErr = errors.Join(errs...)
	})
	return g.closeErr
}

// Stats fills st's common fields and PerThread (a loop each, in order:
// events, requests, connections accepted) and returns the loops' counters
// as Stats.Counters, for the model to add its own to:
//
//   - open_conns: connections open;
//   - rounds: waits on the loops' sets;
//   - reruns: connections served again without an event, having left
//     bytes unread (edge-triggered);
//   - rearms: connections re-armed with another interest
//     (level-triggered);
//   - stale_events: events dropped because their handle had left the set.
func (g *Group) Stats(st *models.Stats) map[string]uint64 {
	st.Threads = g.Cfg.Threads
	g.Counters.Stats(st)
	c := map[string]uint64{}
	for _, l := range g.Loops {
		c["open_conns"] += uint64(l.Open())
		c["rounds"] += l.rounds.Load()
		c["reruns"] += l.reruns.Load()
		c["rearms"] += l.rearms.Load()
		c["stale_events"] += l.Set.Stale()
	}
	return c
}
