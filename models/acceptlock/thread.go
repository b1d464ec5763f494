package acceptlock

import (
	"errors"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/models/internal/eventloop"
)

// thread is one OS thread of the pool: its event loop (its own poll set
// and the connections it accepted) and its side of the listeners' lock.
type thread struct {
	s  *Server
	l  *eventloop.Loop
	lh listenHandler // the listener's handler while this thread leads

	blocked models.Counter // leadership rounds begun by blocking on the lock (the thread owned nothing)
	busy    models.Counter // try-locks that found another leader (the thread had connections)
	batches models.Counter // accept bursts
}

// run is Cherokee's thread_routine: steps until the server stops.
func (th *thread) run() {
	for {
		if err := th.step(); err != nil {
			th.s.g.Stop(err)
			return
		}
	}
}

// step is one turn of the thread, cherokee_thread_step_MULTI_THREAD, with
// watch_accept_MULTI_THREAD: the thread takes the listeners' lock —
// blocking on it if it owns no connection, trying it otherwise — and,
// holding it, adds the listener to its own poll set, waits on listener and
// connections together, accepts a burst, removes the listener and
// releases the lock; then it serves its ready connections. A thread that
// does not get the lock waits on its own connections only. Cherokee's
// can_block is a thread with no connection at all: its active list holds
// every connection the thread owns, idle keep-alive ones included.
func (th *thread) step() error {
	s, l := th.s, th.l
	if l.Open() == 0 {
		s.listeners.Lock()
		th.blocked.Inc()
	} else if !s.listeners.TryLock() {
		th.busy.Inc()
		return l.Round(s.opts.Watch, th.dispatch)
	}
	locked := true
	unlock := func() {
		if locked {
			locked = false
			s.listeners.Unlock()
		}
	}
	defer unlock()
	l.Sh.AddPromotion()
	if l.Paused() && !l.PauseOver() {
		// After a descriptor shortage the listener stays out for the
		// back-off's pause; Round bounds the wait by it.
		return l.Round(s.opts.Watch, func(evs []handleset.Event) {
			unlock()
			th.dispatch(evs)
		})
	}
	lfd := s.ln.Fd()
	if err := l.Set.Register(lfd, handleset.Readable, &th.lh); err != nil {
		return err
	}
	in := true
	err := l.Round(s.opts.Watch, func(evs []handleset.Event) {
		for _, ev := range evs {
			if ev.Handler == handleset.EventHandler(&th.lh) {
				l.Dispatch(ev)
			}
		}
		in = false
		if err := l.Set.Unregister(lfd); err != nil && !errors.Is(err, handleset.ErrClosed) {
			s.g.Fail(err)
		}
		unlock()
		for _, ev := range evs {
			if ev.Handler != handleset.EventHandler(&th.lh) {
				l.Dispatch(ev)
			}
		}
	})
	if in {
		l.Set.Unregister(lfd) // the wait failed: the set is closing, or the group fails
	}
	return err
}

// dispatch serves every event of a round in the order the set reported
// them.
func (th *thread) dispatch(evs []handleset.Event) {
	for _, ev := range evs {
		th.l.Dispatch(ev)
	}
}

// listenHandler is the listener's event handler in the leader's poll set.
type listenHandler struct{ th *thread }

// HandleEvent accepts a burst (Cherokee's accept_new_connection while
// cherokee_bind_accept_more): as many connections as acceptMore allows,
// ending at the first EAGAIN (eventloop.Loop.Accept), each owned by the
// leading thread from now on; with Options.FixedBurst, up to
// connio.MaxAcceptsPerEvent. After a descriptor or memory shortage the
// loop pauses; the listener leaves the set at the end of the round anyway.
// The leader holds the listeners' lock, which guards acceptMore.
func (h *listenHandler) HandleEvent(int, handleset.Events) {
	th := h.th
	th.batches.Inc()
	if th.s.opts.FixedBurst {
		th.l.Accept(th.s.ln, connio.MaxAcceptsPerEvent)
		return
	}
	limit := th.s.more.limit()
	took, backoff := th.l.Accept(th.s.ln, limit)
	th.s.more.done(took, took < limit || backoff)
	th.s.moreMax.Store(uint64(th.s.more.max))
	th.s.moreRelearns.Store(th.s.more.relearns)
}

// acceptMore is cherokee_bind_accept_more, the listener's adaptive burst,
// taken a burst at a time. In a relearning round the leader accepts until
// accept fails (EAGAIN: the backlog is empty) and the count before the
// failure becomes the burst's maximum; in the rounds after it, the leader
// accepts up to that maximum (at least one: Cherokee checks the maximum
// after an accept), and each round that ends in a failure before it counts
// down towards the next relearning round, ten failures away. A maximum of
// one — learned when the backlog was empty after one connection — stays
// until ten rounds have failed, so one leader no longer takes a storm.
// Relearning rounds are bounded by connio.MaxAcceptsPerEvent too, where
// Cherokee's are not: a round that reaches it without a failure relearns
// again next time.
type acceptMore struct {
	max         int    // accept_continuous_max
	recalculate int    // accept_recalculate: failed rounds to the next relearning round; 0: this one relearns
	relearns    uint64 // relearning rounds begun (Stats.Counters accept_relearns)
}

// limit returns how many connections this burst may accept.
func (a *acceptMore) limit() int {
	if a.recalculate <= 0 {
		a.relearns++
		return connio.MaxAcceptsPerEvent
	}
	return max(a.max, 1)
}

// done records a burst that accepted took connections and ended in a
// failed accept (EAGAIN, a shortage) or not (it reached its limit).
func (a *acceptMore) done(took int, failed bool) {
	if a.recalculate <= 0 && took > 0 {
		a.max = took
	}
	if !failed {
		return
	}
	if a.recalculate > 0 {
		a.recalculate--
	} else {
		a.recalculate = 10
	}
}
