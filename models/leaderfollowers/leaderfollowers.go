package leaderfollowers

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/models/internal/enum"
)

// DefaultThreads is the pool size when Config.Threads is 0.
const DefaultThreads = 4

// Promotion is the order in which a leader chooses the follower it promotes.
// The zero value is LIFO.
type Promotion int

// The promotion orders of implementation activity 5.2 of the pattern.
const (
	// LIFO promotes the most recently parked follower (a stack): its cache
	// is the warmest ("fresh work before stale").
	LIFO Promotion = iota
	// FIFO promotes the longest-waiting follower (a queue).
	FIFO
	// Priority promotes the follower with the highest priority, i.e. the
	// lowest nice value from Options.Priorities (a heap; longest-waiting
	// first among equals).
	Priority
	// OS parks every follower on one shared futex word and lets the kernel
	// choose which one a promotion wakes (implementation-defined order).
	// The role is reserved for the follower the kernel wakes.
	OS
	// OSVacant is OS as the paper's promote_new_leader does it: the
	// promotion leaves the role vacant (NO_CURRENT_LEADER) and wakes a
	// follower, and whichever thread joins first leads, the woken follower
	// or a processing thread that rejoins before it runs.
	OSVacant
)

// promotionNames must match the constants above.
var promotionNames = [...]string{LIFO: "lifo", FIFO: "fifo", Priority: "priority", OS: "os", OSVacant: "os-vacant"}

// promotions is the text form of Promotion.
var promotions = enum.New[Promotion]("Promotion", "leaderfollowers", "promotion order", promotionNames[:])

// String returns the order's name: lifo, fifo, priority, os or os-vacant.
func (p Promotion) String() string { return promotions.String(p) }

// ParsePromotion returns the order named s (lifo, fifo, priority, os or
// os-vacant).
func ParsePromotion(s string) (Promotion, error) { return promotions.Parse(s) }

// MarshalText implements encoding.TextMarshaler (for flag.TextVar and JSON).
func (p Promotion) MarshalText() ([]byte, error) { return promotions.MarshalText(p) }

// UnmarshalText implements encoding.TextUnmarshaler with ParsePromotion.
func (p *Promotion) UnmarshalText(b []byte) error { return promotions.UnmarshalText(b, p) }

// Deactivation is how a connection's handle is deactivated while a thread
// processes it (deactivate_handle and reactivate_handle of the pattern).
// The zero value is User. The listener and the accept-retry timer are
// deactivated in the kernel either way.
type Deactivation int

const (
	// User keeps the handle set's deactivation in user space, as the
	// paper's select-based reactor does (a bit cleared in its own handle
	// set; ACE_TP_Reactor suspends a handler so): each connection is
	// registered once, edge-triggered, for reading and writing, and
	// carries an owner word. The leader claims the word (compare-and-swap)
	// before it promotes a follower; an event for a handle another thread
	// owns is not dispatched but marked on the word. Reactivating clears
	// the word, with no system call when the session drained its input
	// and output; it re-arms with epoll_ctl only when an event was marked
	// meanwhile, input was left unread or output waits, so that the kernel
	// reports the handle again.
	User Deactivation = iota
	// Kernel registers each connection with EPOLLONESHOT: the kernel
	// disarms the handle in the step in which it reports the event, and the
	// processing thread re-arms it with epoll_ctl (EPOLL_CTL_MOD) when it is
	// done — one system call per event (ACE_Dev_Poll_Reactor's protocol).
	Kernel
)

// deactivationNames must match the constants above.
var deactivationNames = [...]string{User: "user", Kernel: "kernel"}

// deactivations is the text form of Deactivation.
var deactivations = enum.New[Deactivation]("Deactivation", "leaderfollowers", "deactivation", deactivationNames[:])

// String returns the protocol's name: kernel or user.
func (d Deactivation) String() string { return deactivations.String(d) }

// MarshalText implements encoding.TextMarshaler (for flag.TextVar and JSON).
func (d Deactivation) MarshalText() ([]byte, error) { return deactivations.MarshalText(d) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Deactivation) UnmarshalText(b []byte) error { return deactivations.UnmarshalText(b, d) }

// The range of nice values (setpriority(2)).
const (
	// MinNice is the lowest nice value: the highest priority.
	MinNice = -20
	// MaxNice is the highest nice value: the lowest priority.
	MaxNice = 19
)

// ParsePriorities parses a comma-separated list of nice values, e.g.
// "-5,0,5,10", as Options.Priorities. An empty string gives nil.
func ParsePriorities(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("leaderfollowers: priority %q is not an integer nice value (%d..%d)", f, MinNice, MaxNice)
		}
		out = append(out, n)
	}
	return out, nil
}

// Options are the model's own settings.
type Options struct {
	// Promotion is the order in which leaders promote followers.
	Promotion Promotion
	// Priorities are the pool threads' nice values, one per thread
	// (Config.Threads of them), each in MinNice..MaxNice; a lower value is a
	// higher priority. They are required by, and only accepted with,
	// Priority promotion. Each thread applies its own value with
	// setpriority(PRIO_PROCESS, tid, nice); values below the process's
	// current nice need root or CAP_SYS_NICE.
	Priorities []int
	// Lanes, if set (two or more), split the threads into priority lanes,
	// each its own Leader/Followers pool over its own handle set; a
	// connection is served by the lane of its first request's priority
	// (see the package documentation). The threads of every lane above
	// the lowest run at a higher priority, given as LaneSched says.
	// Config.Threads must be 0 or the lanes' sum. Not with Priority
	// promotion, whose nice values are per thread.
	Lanes []Lane
	// LaneSched is how the higher lanes' threads get their priority
	// (default SchedAuto: SCHED_FIFO where permitted and bounded by the
	// kernel's RT throttling, nice values otherwise).
	LaneSched LaneSched
	// Events is the most ready handles one wait of a leader takes from
	// the handle set (0: DefaultEvents; at most MaxEvents). The handles a
	// wait reported beyond the first stay with the leader role as its
	// ready set: each next leader takes the next of them without waiting,
	// one per leadership turn, as ACE_TP_Reactor dispatches the rest of a
	// select's ready set; each is deactivated when a leader takes it (its
	// owner word claimed; with Kernel deactivation it was disarmed when the
	// kernel reported it), so no two threads process one handle at once.
	// 1 is ACE's epoll reactor (ACE_Dev_Poll_Reactor): one event per
	// wait, every leader waiting.
	Events int
	// Deactivation is how connections' handles are deactivated while
	// processed (default User, an owner word per connection).
	Deactivation Deactivation
}

// DefaultEvents is Options.Events' default: as many as the suite's
// default workload has connections, so that one wait can take every ready
// one (nginx's workers take up to 512 per epoll_wait, asio's reactor 128).
const DefaultEvents = 64

// MaxEvents bounds Options.Events.
const MaxEvents = 1024

// validate checks o for a pool of n threads.
func (o Options) validate(n int) error {
	if err := promotions.Check(o.Promotion); err != nil {
		return err
	}
	if o.Events < 0 || o.Events > MaxEvents {
		return fmt.Errorf("leaderfollowers: events %d per wait out of range (accepted: 1 to %d, or 0 for the default %d)", o.Events, MaxEvents, DefaultEvents)
	}
	if err := laneScheds.Check(o.LaneSched); err != nil {
		return err
	}
	if err := deactivations.Check(o.Deactivation); err != nil {
		return err
	}
	if len(o.Lanes) > 0 && o.Promotion == Priority {
		return errors.New("leaderfollowers: lanes and promotion=priority do not combine (lanes give priority per lane; use lifo, fifo or os in each lane)")
	}
	if o.Promotion != Priority {
		if len(o.Priorities) > 0 {
			return fmt.Errorf("leaderfollowers: thread priorities are used only by promotion=priority, not promotion=%s", o.Promotion)
		}
		return nil
	}
	if len(o.Priorities) != n {
		return fmt.Errorf("leaderfollowers: promotion=priority needs one nice value per thread: got %d for %d threads (e.g. --nice %s)",
			len(o.Priorities), n, examplePriorities(n))
	}
	for i, v := range o.Priorities {
		if v < MinNice || v > MaxNice {
			return fmt.Errorf("leaderfollowers: priority of thread %d is nice %d, out of range (accepted: %d..%d; lower is more urgent)",
				i, v, MinNice, MaxNice)
		}
	}
	return nil
}

// examplePriorities returns a valid, non-negative priority list for n
// threads, for error messages.
func examplePriorities(n int) string {
	parts := make([]string, min(n, 8))
	for i := range parts {
		parts[i] = strconv.Itoa(min(2*i, MaxNice))
	}
	if n > len(parts) {
		parts = append(parts, "…")
	}
	return strings.Join(parts, ",")
}

// ErrPriorityNotPermitted is wrapped by Start's error when the process may
// not give a pool thread the nice value asked for.
var ErrPriorityNotPermitted = errors.New("leaderfollowers: not permitted to set the thread priorities asked for")

// hooks alter the model for tests; Start uses the zero value.
type hooks struct {
	// promoteEarly breaks the pattern on purpose: a leader promotes its
	// successor as soon as it becomes leader, before it has an event, so
	// two threads wait on the handle set at once. It exists to show that
	// the leader check (checkLeaders) detects a broken promotion.
	promoteEarly bool
	// laneFor, if set, replaces the lane a placed connection's first
	// priority maps to (laneOf), so that the conformance suite, whose
	// requests all have priority 0, runs connections in every lane and
	// through the move between lanes.
	laneFor func(fd int, prio uint8) int
}

// Server is a running Leader/Followers server.
type Server struct {
	cfg   models.Config
	opts  Options
	hooks hooks

	set   *handleset.Set // lanes[0].set: the listener's and the timer's
	ln    *handleset.Listener
	acc   *acceptor
	timer *retryTimer
	pool  *pool // lanes[0].pool

	lanes         []*lane  // one without Options.Lanes
	rt            rtBudget // the kernel's RT throttling, read at Start with lanes
	laneMoves     atomic.Uint64
	laneUndecided atomic.Uint64

	threads  []*thread
	counters models.Counters
	closeSh  *models.Shard // connections closed by Close, after every thread exited
	inv      *leaderCheck  // lanes[0].inv

	conns  *connio.Conns[*conn] // open connections by descriptor
	reaper *connio.Reaper       // the header timeout (nil if disabled)
	limit  *connio.Limit        // the connection cap (Config.MaxConns)
	fatal  connio.Fatal         // the first fatal error of a pool thread

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

var _ models.Server = (*Server)(nil)

// Start listens on cfg.Addr, registers the listening socket in a new handle
// set and starts the pool of cfg.Threads locked OS threads (default
// DefaultThreads). With Priority promotion each thread sets its nice value
// first; if the process may not, Start fails with an error wrapping
// ErrPriorityNotPermitted that says how to run it.
func Start(cfg models.Config, opts Options) (*Server, error) {
	return start(cfg, opts, hooks{})
}

func start(cfg models.Config, opts Options, hk hooks) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	laneSpec := []Lane{{MinPriority: 0, Threads: 0}}
	if len(opts.Lanes) > 0 {
		total, err := validateLanes(opts.Lanes, cfg.Threads)
		if err != nil {
			return nil, err
		}
		cfg.Threads = total
		laneSpec = append([]Lane(nil), opts.Lanes...)
		opts.Lanes = laneSpec
	}
	cfg = cfg.WithDefaults(DefaultThreads)
	if len(opts.Lanes) == 0 {
		laneSpec[0].Threads = cfg.Threads
	}
	if err := opts.validate(cfg.Threads); err != nil {
		return nil, err
	}
	opts.Priorities = append([]int(nil), opts.Priorities...)
	opts.Events = cmp.Or(opts.Events, DefaultEvents)
	var lanes []*lane
	closeSets := func() {
		for _, l := range lanes {
			l.set.Close()
		}
	}
	first := 0
	for i, sp := range laneSpec {
		set, err := handleset.New()
		if err != nil {
			closeSets()
			return nil, err
		}
		l := &lane{idx: i, minPrio: sp.MinPriority, set: set, pool: newPool(opts.Promotion, sp.Threads), first: first, nthread: sp.Threads}
		if opts.Events > 1 && !hk.promoteEarly {
			l.ready = &readySet{w: set.NewWaiter(opts.Events)}
		}
		lanes = append(lanes, l)
		first += sp.Threads
	}
	set := lanes[0].set
	ln, err := handleset.Listen(cfg.Addr, handleset.ListenOptions{Backlog: cfg.Backlog})
	if err != nil {
		closeSets()
		return nil, err
	}
	tfd, err := newTimerFd()
	if err != nil {
		ln.Close()
		closeSets()
		return nil, err
	}
	s := &Server{
		cfg:   cfg,
		opts:  opts,
		hooks: hk,
		set:   set,
		ln:    ln,
		pool:  lanes[0].pool,
		lanes: lanes,
		inv:   &lanes[0].inv,
	}
	if len(lanes) > 1 {
		s.rt = readRTBudget()
	}
	s.acc = &acceptor{s: s}
	s.timer = &retryTimer{s: s, fd: tfd}
	s.closeSh = s.counters.NewConnShard()
	s.reaper = connio.NewReaper(&s.cfg, &s.counters)
	s.limit = connio.NewLimit(&s.cfg, "leaderfollowers")
	s.conns = connio.NewConns[*conn](s.reaper, s.limit)
	fail := func(err error) (*Server, error) {
		s.reaper.Close()
		handleset.Close(tfd)
		ln.Close()
		closeSets()
		return nil, err
	}
	// The retry timer is registered armed-for-reading but its clock is not
	// running, so it reports nothing until the acceptor backs off.
	if err := set.Register(tfd, handleset.Readable|handleset.OneShot, s.timer); err != nil {
		return fail(err)
	}
	if err := set.Register(ln.Fd(), handleset.Readable|handleset.OneShot, s.acc); err != nil {
		return fail(err)
	}
	for _, l := range lanes {
		for i := range l.nthread {
			th := &thread{s: s, ln: l, m: &member{id: l.first + i}, sh: s.counters.NewThreadShard("pool")}
			if opts.Priorities != nil {
				th.m.nice = opts.Priorities[l.first+i]
			}
			s.threads = append(s.threads, th)
		}
	}
	if err := connio.StartThreads(&s.wg, s.threads, (*thread).run); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Addr returns the listening address.
func (s *Server) Addr() netip.AddrPort { return s.ln.Addr() }

// Stats returns a snapshot of the counters. PerThread has one entry per pool
// thread (role "pool") in thread order; Counters holds the model-specific
// counters listed in the package documentation.
func (s *Server) Stats() models.Stats {
	st := models.Stats{
		Model:   "leaderfollowers",
		Variant: s.variant(),
		Threads: s.cfg.Threads,
	}
	s.counters.Stats(&st)
	var noFollower, batches, retries, skips uint64
	for _, th := range s.threads {
		noFollower += th.noFollower.Load()
		batches += th.acceptBatches.Load()
		retries += th.acceptRetries.Load()
		skips += th.ownedSkips.Load()
	}
	st.Counters = map[string]uint64{
		"no_follower_promotions": noFollower,
		"accept_batches":         batches,
		"accept_retries":         retries,
		"open_conns":             uint64(s.conns.Len()),
	}
	var followers int
	var stale uint64
	var oc orderCounts
	for _, l := range s.lanes {
		followers += l.pool.followers()
		stale += l.set.Stale()
		c := l.pool.counts()
		oc.choices += c.choices
		oc.longest += c.longest
		oc.rewaits += c.rewaits
		oc.rejoins += c.rejoins
	}
	st.Counters["promotions_with_choice"] = oc.choices
	st.Counters["promoted_longest_waiting"] = oc.longest
	if s.opts.Promotion == OS || s.opts.Promotion == OSVacant {
		st.Counters["os_rewaits"] = oc.rewaits
	}
	if s.opts.Promotion == OSVacant {
		st.Counters["vacancy_rejoins"] = oc.rejoins
	}
	if s.userDeact() {
		st.Counters["owned_skips"] = skips
	}
	st.Counters["followers"] = uint64(followers)
	st.Counters["stale_events"] = stale
	if len(s.lanes) > 1 {
		st.Counters["lane_moves"] = s.laneMoves.Load()
		st.Counters["lane_undecided"] = s.laneUndecided.Load()
		for _, l := range s.lanes {
			var req uint64
			for _, ts := range st.PerThread[l.first : l.first+l.nthread] {
				req += ts.Requests
			}
			p := "lane" + strconv.Itoa(l.idx) + "_"
			st.Counters[p+"conns"] = l.conns.Load()
			st.Counters[p+"requests"] = req
		}
	}
	return st
}

// variant describes the configuration for Stats.Variant (and so for the
// server's info and every result): the promotion order, the events per
// wait when not the default, and, with lanes, each lane's priorities and
// threads, how the higher lanes' threads got their priority, and the
// kernel's RT throttling budget.
func (s *Server) variant() string {
	v := "promotion=" + s.opts.Promotion.String()
	if s.opts.Events != DefaultEvents {
		v += " events=" + strconv.Itoa(s.opts.Events)
	}
	if s.opts.Deactivation != User {
		v += " deactivation=" + s.opts.Deactivation.String()
	}
	if len(s.lanes) == 1 {
		return v
	}
	v += " lanes=" + FormatLanes(s.opts.Lanes)
	for _, l := range s.lanes[1:] {
		v += " lane" + strconv.Itoa(l.idx) + "=" + l.sched
	}
	return v + " rt_budget=" + s.rt.String()
}

// userDeact reports whether connections are deactivated in user space.
func (s *Server) userDeact() bool { return s.opts.Deactivation == User }

// fail records the first fatal error of a pool thread (the handle set or the
// listener failed in a way that leaves the pool unable to serve) and stops
// the pool; Close returns the error.
func (s *Server) fail(err error) {
	s.fatal.Set("leaderfollowers: pool stopped", err)
	for _, l := range s.lanes {
		l.pool.close()
		l.set.Close()
	}
}

// Close stops the server; see models.Server. It closes the pool (waking
// every follower) and the handle set (waking the leader), waits for every
// pool thread to exit — a thread processing an event finishes it first —
// and then closes every connection, the listener and the retry timer.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.reaper.Close() // before any descriptor is closed here
		var errs []error
		for _, l := range s.lanes {
			l.pool.close()
			errs = append(errs, l.set.Close())
		}
		s.wg.Wait()
		// Every pool thread has exited: this goroutine is the only owner of
		// what is left (the lock is for Stats).
		errs = append(errs, s.conns.CloseAll(s.closeSh)...)
		errs = append(errs, s.ln.Close(), handleset.Close(s.timer.fd), s.fatal.Err())
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}
