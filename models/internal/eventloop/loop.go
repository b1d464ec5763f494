package eventloop

import (
	"errors"
	"sync/atomic"
	"time"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
)

// Trigger is how a loop registers its connections (see the package
// documentation).
type Trigger uint8

// The triggers.
const (
	// Edge registers a connection once, readable and writable,
	// edge-triggered (nginx's workers).
	Edge Trigger = iota
	// Level registers a connection readable, level-triggered, and re-arms
	// it when its interest changes (the ZygOS paper's Linux baseline).
	Level
)

// String returns "edge" or "level".
func (t Trigger) String() string {
	if t == Level {
		return "level"
	}
	return "edge"
}

// Options are what a group's loops do alike.
type Options struct {
	// Trigger is how connections are registered.
	Trigger Trigger
	// MaxEvents is the most events one wait returns (nginx's
	// epoll_events, 512; ZygOS's CONFIG_MAX_EVENTS, 1). 0 means 1.
	MaxEvents int
	// Slots, if positive, is the most connections one loop holds (nginx's
	// worker_connections): past it a connection the loop accepts is
	// refused, with a reason that names SlotsFlag, as past the server's
	// cap. 0: no cap of the loop's own.
	Slots int
	// SlotsFlag is the serve flag that sets Slots, named by the refusal.
	SlotsFlag string
}

// Loop is one thread's event loop: its handle set and the connections it
// owns. Its methods are called by its thread only, unless they say
// otherwise.
type Loop struct {
	// ID is the loop's index in its group.
	ID int
	// Set is the loop's own handle set; the model registers its listeners
	// in it.
	Set *handleset.Set
	// Sh is the thread's counters (an owner shard: ThreadStats.Accepted).
	Sh *models.Shard

	g      *Group
	w      *handleset.Waiter
	conns  map[int]*conn // by descriptor; the loop's thread's, then Group.Close's
	open   atomic.Int64  // len(conns), for any thread
	posted []*conn       // to serve again after the next wait
	now    []*conn       // the posted connections being served

	pause   connio.ListenPause   // the accept back-off's pause
	backoff connio.AcceptBackoff // its delay

	slice  connio.Slice   // the thread's time slice as the Go runtime sees it
	rounds models.Counter // waits
	reruns models.Counter // connections served again without an event (posted)
	rearms models.Counter // level-triggered connections re-armed with another interest
}

// Open returns the connections the loop holds. Any thread may call it.
func (l *Loop) Open() int { return int(l.open.Load()) }

// Free returns the loop's free connection slots (Options.Slots less the
// connections it holds; 0 if it has no slots of its own).
func (l *Loop) Free() int { return max(l.g.opts.Slots-l.Open(), 0) }

// Round is one pass of the loop: it waits on the set for at most timeout
// (negative: without bound) — not at all if connections are posted, and no
// longer than an accept pause lasts — then calls process with the events,
// then serves the connections posted before the wait. process dispatches
// each event (Dispatch) in the order the model chooses. Round returns the
// wait's error: handleset.ErrClosed when the group is closing.
func (l *Loop) Round(timeout time.Duration, process func(evs []handleset.Event)) error {
	if len(l.posted) > 0 {
		timeout = 0
		l.now, l.posted = l.posted, l.now[:0]
	}
	timeout = minTimeout(timeout, l.pause.Timeout())
	l.slice.Refresh()
	l.rounds.Inc()
	evs, err := l.w.Wait(timeout)
	if err != nil {
		return err
	}
	process(evs)
	for i, c := range l.now {
		l.now[i] = nil
		c.posted = false
		if !c.closed {
			l.reruns.Inc()
			l.serve(c, 0)
		}
	}
	l.now = l.now[:0]
	return nil
}

// minTimeout returns the shorter of two wait timeouts, a negative one
// being without bound.
func minTimeout(a, b time.Duration) time.Duration {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

// Dispatch runs the event's handler (a connection's, or a listener's the
// model registered) and counts the event.
func (l *Loop) Dispatch(ev handleset.Event) {
	l.Sh.AddEvent()
	ev.Handler.HandleEvent(ev.Fd, ev.Ready)
}

// Accept takes up to max connections (connio.AcceptUpTo: 1 is nginx
// without multi_accept) from ln, which the loop's set reported readable,
// and makes the loop their owner. A connection past the loop's slots or
// the server's cap is refused (connio.Refuse). It returns how many
// connections it took (refused ones included), and whether accept ran out
// of descriptors or memory: the caller must then take ln out of the set
// until PauseOver says the back-off is over (the one accept error policy
// of connio.AcceptBatch).
func (l *Loop) Accept(ln connio.Listener, max int) (took int, backoff bool) {
	wait, err := connio.AcceptUpTo(ln, max, &l.backoff, l.Sh, func(fd int) bool {
		took++
		return l.add(fd)
	})
	if err != nil {
		l.Sh.AddError(models.ErrAccept)
	}
	if wait > 0 {
		l.pause.Start(wait)
		return took, true
	}
	return took, false
}

// Paused reports whether an accept back-off is under way (its end not yet
// taken by PauseOver).
func (l *Loop) Paused() bool { return l.pause.Timeout() >= 0 }

// PauseOver reports, once, that the accept back-off that Accept began is
// over: the caller puts its listener back.
func (l *Loop) PauseOver() bool { return l.pause.End() }

// add makes the loop the owner of fd, a connection just accepted, or
// refuses it past the loop's slots or the server's cap. It reports false
// if the set is closed (the server is stopping).
func (l *Loop) add(fd int) bool {
	g := l.g
	if g.opts.Slots > 0 && l.Open() >= g.opts.Slots {
		connio.Refuse(fd, g.slotsRefusal, l.Sh)
		return true
	}
	if !g.Limit.Accept(fd, l.Sh) {
		return true
	}
	c := &conn{l: l, fd: fd, sess: connio.NewSession(&g.Cfg), interest: handleset.Readable}
	ev := handleset.Readable
	if g.opts.Trigger == Edge {
		ev = handleset.Readable | handleset.Writable | handleset.EdgeTriggered
	}
	l.conns[fd] = c
	l.open.Add(1)
	g.Reaper.Track(fd, &c.sess.Timer)
	err := l.Set.Register(fd, ev, c)
	if err == nil {
		return true
	}
	if !errors.Is(err, handleset.ErrClosed) {
		l.Sh.AddError(models.ErrIO)
	}
	l.drop(c)
	return !errors.Is(err, handleset.ErrClosed)
}

// conn is the concrete event handler of a connection the loop owns.
type conn struct {
	l        *Loop
	fd       int
	sess     *connio.Session
	interest handleset.Events // Level: the interest registered
	posted   bool             // in the loop's posted list
	closed   bool             // dropped: events and posts for it are stale
}

// HandleEvent serves the connection (Loop.serve), unless it was closed
// earlier in the same round (its descriptor number may be another
// connection's by now, but the event names this handler).
func (c *conn) HandleEvent(_ int, ready handleset.Events) {
	if !c.closed {
		c.l.serve(c, ready)
	}
}

// serve writes, reads, serves and writes again (connio.Session.OnReady),
// then closes the connection if it is done, posts it if it may have left
// input unread (edge-triggered), or re-arms it if its interest changed
// (level-triggered). ready is the event's readiness (0 for a posted
// connection).
//
// Edge-triggered, input is left unread when the session stopped at its
// bound of reads (connio.Session.Unread), and when the peer's end of
// stream had arrived (HangUp in ready, EPOLLRDHUP) behind bytes that a
// read returned short: the next read would say end of input, but no
// further edge will tell of it. nginx's recv keeps such a connection
// ready likewise (rev->pending_eof).
func (l *Loop) serve(c *conn, ready handleset.Events) {
	interest, done := c.sess.OnReady(c.fd, l.Sh)
	switch {
	case done:
		l.drop(c)
	case l.g.opts.Trigger == Edge:
		if (c.sess.Unread() || ready&(handleset.HangUp|handleset.Error) != 0) && !c.posted {
			c.posted = true
			l.posted = append(l.posted, c)
		}
	default:
		interest &^= handleset.OneShot
		if interest == c.interest {
			return
		}
		if err := l.Set.Reactivate(c.fd, interest); err != nil {
			if !errors.Is(err, handleset.ErrClosed) {
				l.Sh.AddError(models.ErrIO)
				l.drop(c)
			}
			return
		}
		c.interest = interest
		l.rearms.Inc()
	}
}

// drop unregisters and closes a connection that is done. It is forgotten
// before its descriptor is closed, since the number may be reused by the
// next accept at once.
func (l *Loop) drop(c *conn) {
	c.closed = true
	l.Set.Unregister(c.fd) // fails only if the set is closed (which closes nothing) or fd left it
	l.g.Reaper.Untrack(c.fd)
	delete(l.conns, c.fd)
	l.open.Add(-1)
	handleset.Close(c.fd)
	l.g.Limit.Release()
	l.Sh.AddClosed()
}
