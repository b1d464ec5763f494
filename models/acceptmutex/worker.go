package acceptmutex

import (
	"errors"
	"net/netip"
	"sync/atomic"
	"time"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/models/internal/eventloop"
)

// acceptMutex is nginx's accept mutex (ngx_accept_mutex, an ngx_shmtx_t
// over shared memory) as an atomic word between threads: 0 when free,
// else its holder's worker id plus one. It is only ever try-locked — a
// load, then a compare-and-swap (ngx_shmtx_trylock) — and never waited
// on; unlock compares the holder (ngx_shmtx_unlock), so a worker that
// unlocks a lock it does not hold changes nothing.
type acceptMutex struct {
	_    [64]byte // its own cache line: every worker tries it every round
	word atomic.Uint32
	_    [60]byte
}

// tryLock takes the lock for worker id if it is free, and reports whether
// it did. It never waits.
func (m *acceptMutex) tryLock(id int) bool {
	return m.word.Load() == 0 && m.word.CompareAndSwap(0, uint32(id)+1)
}

// unlock frees the lock if worker id holds it.
func (m *acceptMutex) unlock(id int) { m.word.CompareAndSwap(uint32(id)+1, 0) }

// holder returns the id of the worker holding the lock, or -1.
func (m *acceptMutex) holder() int { return int(m.word.Load()) - 1 }

// acceptState is one worker's accept bookkeeping in Mutex mode: nginx's
// per-process ngx_accept_disabled and ngx_accept_mutex_held.
type acceptState struct {
	disabled int  // rounds left in which the worker does not try the lock
	held     bool // the listener is in the worker's set: it won the lock at its last try
}

// decision is what a Mutex worker does in one round, before it waits.
type decision struct {
	tried  bool // it tried the lock
	locked bool // it holds the lock this round: accept events first, then unlock
	add    bool // put the listener into its set
	remove bool // take the listener out of its set
	capped bool // bound the wait by the accept delay: it lost the lock
}

// begin starts a round (ngx_process_events_and_timers with
// ngx_trylock_accept_mutex): a worker short of slots (disabled > 0) sits
// the round out, counting it down; any other tries the lock once, through
// try, never waiting. The winner puts the listener into its set unless it
// is there already; a loser that had it takes it out, and bounds its wait
// by the accept delay so that it tries again that soon — nobody wakes it
// when the lock is freed.
//
// Note: as in nginx, a worker that sits a round out keeps the listener if
// it had it (ngx_accept_mutex_held stays set) and accepts from it without
// the lock, beside the lock's holder; the rule stops it taking the lock,
// not accepting.
func (a *acceptState) begin(try func() bool) decision {
	if a.disabled > 0 {
		a.disabled--
		return decision{}
	}
	if try() {
		d := decision{tried: true, locked: true, add: !a.held}
		a.held = true
		return d
	}
	d := decision{tried: true, remove: a.held, capped: true}
	a.held = false
	return d
}

// disabledAfter is ngx_accept_disabled as ngx_event_accept computes it
// for each connection accepted, before the connection takes a slot
// (ngx_get_connection): an eighth of the worker's slots less its free
// slots.
// Positive — under an eighth free — the worker skips that many rounds of
// the lock (Mutex) or re-registers the listener after each accept
// (Exclusive).
func disabledAfter(slots, free int) int { return slots/8 - free }

// worker is one nginx worker process, as a thread: its own event loop and
// connections, and its side of the accept coordination.
type worker struct {
	s   *Server
	l   *eventloop.Loop
	own *eventloop.OwnListener // ReusePort: its own listening socket

	lh  *listenHandler // Mutex, Exclusive: the shared listener's handler in l.Set
	sl  slotsListener  // Mutex, Exclusive: the shared listener, as the worker accepts from it
	in  bool           // the shared listener is in l.Set
	acc acceptState    // Mutex
	// calls counts the accept events that took their bound (Exclusive):
	// the listening connection's request count of
	// ngx_reorder_accept_events.
	calls uint64

	taken, missed, satOut models.Counter // Mutex: rounds that took, missed or sat out the lock
	adds, removes         models.Counter // listener registrations in l.Set, and removals
	reorders              models.Counter // Exclusive: re-registrations of the listener
	// empty counts the listener events on which accept found the backlog
	// empty: another worker, woken by the same arrival or already running,
	// took the connection first.
	empty models.Counter
}

// slotsListener is the shared listener as one worker accepts from it: it
// records the worker's free slots when accept returns a connection,
// before the connection takes one, where ngx_event_accept computes
// ngx_accept_disabled. Only the worker's thread uses it.
type slotsListener struct {
	ln   connio.Listener
	l    *eventloop.Loop
	free int // the free slots when the last connection was accepted
}

func (sl *slotsListener) Accept() (int, netip.AddrPort, error) {
	fd, peer, err := sl.ln.Accept()
	if err == nil {
		sl.free = sl.l.Free()
	}
	return fd, peer, err
}

// listenHandler is the concrete event handler of the shared listening
// socket in one worker's set.
type listenHandler struct{ w *worker }

// HandleEvent accepts (worker.accept).
func (h *listenHandler) HandleEvent(int, handleset.Events) { h.w.accept() }

// run is the worker's thread (ngx_worker_process_cycle): rounds of its
// mode until the server closes.
func (w *worker) run() {
	switch w.s.opts.Accept {
	case ReusePort:
		w.own.Run()
	case Mutex:
		w.runMutex()
	default:
		w.runExclusive()
	}
}

// runMutex is a Mutex worker's rounds: begin (try the lock, or sit out),
// wait, and — holding the lock — accept first and free the lock before
// serving its connections, so that the lock is held for the wait and the
// accepts alone (nginx's NGX_POST_EVENTS and ngx_posted_accept_events).
// While an accept back-off lasts it does not try the lock.
func (w *worker) runMutex() {
	s, l := w.s, w.l
	for {
		var d decision
		if !l.Paused() || l.PauseOver() {
			d = w.acc.begin(func() bool { return s.mu.tryLock(l.ID) })
		}
		switch {
		case !d.tried:
			w.satOut.Inc()
		case d.locked:
			w.taken.Inc()
			l.Sh.AddPromotion() // it leads this round
		default:
			w.missed.Inc()
		}
		if d.add {
			w.addListener(0)
		}
		if d.remove {
			w.removeListener()
		}
		timeout := time.Duration(-1)
		if d.capped {
			timeout = s.opts.AcceptDelay
		}
		err := l.Round(timeout, func(evs []handleset.Event) {
			if !d.locked {
				for _, ev := range evs {
					l.Dispatch(ev)
				}
				return
			}
			for _, ev := range evs {
				if ev.Handler == handleset.EventHandler(w.lh) {
					l.Dispatch(ev)
				}
			}
			s.mu.unlock(l.ID)
			for _, ev := range evs {
				if ev.Handler != handleset.EventHandler(w.lh) {
					l.Dispatch(ev)
				}
			}
		})
		if d.locked {
			s.mu.unlock(l.ID) // if the wait failed before the events
		}
		if err != nil {
			s.g.Stop(err)
			return
		}
	}
}

// runExclusive is an Exclusive worker's rounds: its set holds the
// listener for good (but for an accept back-off), so a round is a wait
// and its events in order.
func (w *worker) runExclusive() {
	l := w.l
	for {
		if !w.in && l.PauseOver() {
			w.addListener(handleset.Exclusive)
		}
		err := l.Round(-1, func(evs []handleset.Event) {
			for _, ev := range evs {
				l.Dispatch(ev)
			}
		})
		if err != nil {
			w.s.g.Stop(err)
			return
		}
	}
}

// accept is the shared listener's event in this worker (ngx_event_accept):
// take one connection, or up to the batch with MultiAccept, with
// ngx_accept_disabled computed from the free slots as the last one was
// accepted, before it took one. On an accept back-off the listener leaves
// the set (and a Mutex worker frees the lock) until the back-off is over.
// An Exclusive worker then re-registers the listener every ReorderEvery
// accept events, or after every one while it is short of slots
// (ngx_reorder_accept_events), so that the kernel, which wakes the first
// exclusive waiter on its list, puts it at the back; unless the last
// connection found no slot, refused, on which nginx returns before the
// reorder.
func (w *worker) accept() {
	s, l := w.s, w.l
	took, backoff := l.Accept(&w.sl, s.perEvent)
	if backoff {
		w.removeListener()
		w.acc.held = false
		s.mu.unlock(l.ID)
		return
	}
	if took == 0 {
		w.empty.Inc() // another worker took it
		return
	}
	w.acc.disabled = disabledAfter(s.opts.WorkerConns, w.sl.free)
	// nginx reorders only after an accept loop that did not end on
	// EAGAIN: one accept, or a batch that took its bound.
	if s.opts.Accept != Exclusive || took < s.perEvent || w.sl.free == 0 {
		return
	}
	if w.calls++; (w.calls-1)%ReorderEvery != 0 && w.acc.disabled <= 0 {
		return
	}
	w.reorders.Inc()
	w.removeListener()
	w.addListener(handleset.Exclusive)
}

// addListener registers the shared listener in the worker's set,
// readable, level-triggered, with flags (Exclusive or 0). A failure stops
// the server: a worker that cannot take the listener cannot accept.
func (w *worker) addListener(flags handleset.Events) {
	if err := w.register(flags); err != nil && !errors.Is(err, handleset.ErrClosed) {
		w.s.g.Fail(err)
	}
}

// register is addListener's registration, returning its error.
func (w *worker) register(flags handleset.Events) error {
	if err := w.l.Set.Register(w.s.ln.Fd(), handleset.Readable|flags, w.lh); err != nil {
		return err
	}
	w.in = true
	w.adds.Inc()
	return nil
}

// removeListener takes the shared listener out of the worker's set.
func (w *worker) removeListener() {
	if !w.in {
		return
	}
	w.in = false
	if err := w.l.Set.Unregister(w.s.ln.Fd()); err != nil {
		if !errors.Is(err, handleset.ErrClosed) {
			w.s.g.Fail(err)
		}
		return
	}
	w.removes.Inc()
}
