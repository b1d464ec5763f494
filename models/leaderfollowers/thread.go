package leaderfollowers

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
)

// thread is one OS thread of the pool. Its counters are written only by
// itself.
type thread struct {
	_ [64]byte // keep threads' counters off each other's cache lines

	s  *Server
	ln *lane // the lane whose pool the thread belongs to
	m  *member
	sh *models.Shard

	slice connio.Slice // the thread's time slice as the Go runtime sees it

	peek [peekSize]byte // place's buffer: the front of an unplaced connection

	noFollower    models.Counter // promotions this thread made that found no follower
	acceptBatches models.Counter // listener events this thread processed
	acceptRetries models.Counter // backoff timer expiries this thread processed
	ownedSkips    models.Counter // events this thread, as leader, left to their handle's owner (Deactivation User)

	_ [64]byte
}

// run is a pool thread: it locks itself to its OS thread, applies its
// priority, reports to Start, then alternates between the three states
// until the pool closes. It exits still locked, so the Go runtime destroys
// the OS thread (with its nice value) instead of reusing it.
func (th *thread) run(started chan<- error) {
	s := th.s
	runtime.LockOSThread()
	tid := models.CurrentThreadID()
	th.sh.SetTID(tid)
	if s.opts.Promotion == Priority {
		if err := setNice(tid, th.m.nice); err != nil {
			started <- niceError(th.m.id, tid, th.m.nice, err)
			return
		}
	}
	if th.ln.idx > 0 {
		if err := th.applyLaneSched(tid); err != nil {
			started <- err
			return
		}
	}
	started <- nil

	ln := th.ln
	var w *handleset.Waiter // one event per turn, for a lane without a ready set (--events 1)
	if ln.ready == nil {
		w = ln.set.NewWaiter(1)
	}
	for res := ln.pool.join(th.m); res != joinClosed; res = ln.pool.join(th.m) {
		if res == joinPromoted {
			th.sh.AddPromotion()
		}
		ev, ok := th.lead(w)
		if !ok {
			return
		}
		// Processing state.
		th.sh.AddEvent()
		h := ev.Handler.(handler)
		h.bind(th)
		h.HandleEvent(ev.Fd, ev.Ready)
		th.slice.Refresh()
	}
}

// applyLaneSched gives the calling thread (tid), of a lane above the
// lowest, its lane's priority and records how (the first thread of the lane
// records it; all threads of a lane decide alike).
func (th *thread) applyLaneSched(tid int) error {
	ln := th.ln
	rec, err := laneSched(th.s.opts.LaneSched, ln.idx, laneNice(ln.idx), th.s.rt,
		func(p int) error { return setFIFO(tid, p) },
		func(n int) error { return setNice(tid, n) })
	if err != nil {
		return fmt.Errorf("leaderfollowers: lane %d thread %d (tid %d): %w", ln.idx, th.m.id, tid, err)
	}
	if th.m.id == ln.first {
		ln.sched = rec
	}
	return nil
}

// niceError explains why pool thread id (tid) could not take nice value
// nice. The thread still has the nice value it was created with, the
// process's (a nice value passes from a thread to those it creates), so
// the advice names it: "non-negative" was wrong for a process started
// under nice(1).
func niceError(id, tid, nice int, err error) error {
	if errors.Is(err, os.ErrPermission) {
		// EACCES: a nice value below the process's without CAP_SYS_NICE
		// (or a sufficient RLIMIT_NICE); EPERM: another user's thread.
		least := "the process's"
		if base, berr := threadNice(tid); berr == nil {
			least = fmt.Sprintf("the process's (%d)", base)
		}
		return fmt.Errorf("%w: pool thread %d (tid %d) at nice %d: %w; "+
			"lowering a thread's nice value below the process's needs root or CAP_SYS_NICE: "+
			"run as root, grant the binary the capability (setcap cap_sys_nice+ep), "+
			"raise RLIMIT_NICE, or use nice values no lower than %s",
			ErrPriorityNotPermitted, id, tid, nice, err, least)
	}
	return fmt.Errorf("leaderfollowers: pool thread %d (tid %d) at nice %d: %w", id, tid, nice, err)
}

// lead is the leader state: the thread waits on the handle set for one
// event, deactivates its handle, then promotes a follower and returns the
// event to process. With Kernel deactivation the handle is deactivated
// already: it is registered with OneShot, so the kernel disarmed it in the
// same step in which it reported the event, before any other thread can
// wait on the set. With User deactivation a connection's handle is claimed
// here (conn.claim); an event for one another thread owns is passed over.
// With a ready set
// (Options.Events above one) the leader takes the next event the last wait
// reported, if one is left, instead of waiting. lead reports false when the
// thread must exit (the handle set is closed or failed).
func (th *thread) lead(w *handleset.Waiter) (handleset.Event, bool) {
	s, ln := th.s, th.ln
	if checkLeaders {
		ln.inv.begin()
	}
	if s.hooks.promoteEarly {
		th.promote()
	}
	rs := ln.ready
	if rs != nil {
		w = rs.w
	}
	for {
		var ev handleset.Event
		if rs != nil {
			var ok bool
			if ev, ok = rs.take(); !ok {
				evs, ok := th.wait(w)
				if !ok {
					return handleset.Event{}, false
				}
				rs.fill(evs)
				continue
			}
		} else {
			evs, ok := th.wait(w)
			if !ok {
				return handleset.Event{}, false
			}
			ev = evs[0]
		}
		// deactivate_handle, before promote_new_leader: with user-space
		// deactivation, an event for a handle that another thread owns
		// is marked on it and not dispatched; the leader goes on.
		if c, ok := ev.Handler.(*conn); ok && s.userDeact() && !c.claim() {
			th.ownedSkips.Inc()
			continue
		}
		return th.led(ev), true
	}
}

// wait is the leader's wait on the handle set: it returns at least one
// event, or false when the thread must exit (the set is closed or failed).
func (th *thread) wait(w *handleset.Waiter) ([]handleset.Event, bool) {
	for {
		evs, err := w.Wait(-1)
		if err != nil {
			if checkLeaders {
				th.ln.inv.end()
			}
			if !errors.Is(err, handleset.ErrClosed) {
				th.s.fail(err)
			}
			return nil, false
		}
		if len(evs) > 0 {
			return evs, true
		}
		// None is not reported with an unbounded wait; still the leader.
	}
}

// led ends the leader state with ev taken: the role passes to a follower.
func (th *thread) led(ev handleset.Event) handleset.Event {
	if checkLeaders {
		th.ln.inv.end()
	}
	if !th.s.hooks.promoteEarly {
		th.promote()
	}
	return ev
}

// readySet is the leader role's ready set: the events one wait reported,
// taken one per leadership turn. Only the leader uses it, the waiter
// included.
type readySet struct {
	w    *handleset.Waiter
	evs  []handleset.Event // the waiter's buffer: valid until its next Wait
	next int
}

// take returns the next event not yet taken, if any.
func (r *readySet) take() (handleset.Event, bool) {
	if r.next >= len(r.evs) {
		return handleset.Event{}, false
	}
	r.next++
	return r.evs[r.next-1], true
}

// fill makes evs, just reported, the ready set.
func (r *readySet) fill(evs []handleset.Event) {
	r.evs, r.next = evs, 0
}

// promote hands the leader role to a follower (promote_new_leader).
func (th *thread) promote() {
	if !th.ln.pool.promote(th.m) {
		th.noFollower.Inc()
	}
}

// handler is a concrete event handler of this pool. The handle set calls
// its hook HandleEvent with the descriptor and readiness; bind first tells
// it which processing thread dispatches it (whose counters it charges).
// Between bind and the end of HandleEvent the handle is deactivated, so no
// other thread touches the handler.
type handler interface {
	handleset.EventHandler
	bind(th *thread)
}

// dispatched implements bind for the concrete handlers.
type dispatched struct{ th *thread }

func (d *dispatched) bind(th *thread) { d.th = th }

// conn is the concrete event handler of a connection: its Session is the
// whole protocol state, processed by one thread per event.
type conn struct {
	dispatched
	s    *Server
	ln   *lane // the lane whose handle set holds the connection
	sess *connio.Session
	// placed is set once the connection has been mapped to its lane (or
	// when the server has no lanes); only the thread that owns the
	// deactivated handle touches it.
	placed bool
	// own is the handle's user-space deactivation (Deactivation User):
	// ownOwned while a thread processes it, with ownMarked added when an
	// event for it was passed over meanwhile. Unused with Kernel.
	own atomic.Uint32
}

// The states of conn.own.
const (
	ownOwned  = 1 << iota // deactivated: a thread processes the connection
	ownMarked             // an event was reported while it was deactivated
)

// claim deactivates the handle for the calling leader: it reports whether
// the connection was free and is now the caller's. If another thread owns
// it, claim marks it, so that its owner has the kernel report it again
// when it reactivates, and reports false.
func (c *conn) claim() bool {
	for {
		switch old := c.own.Load(); {
		case old == 0:
			if c.own.CompareAndSwap(0, ownOwned) {
				return true
			}
		case c.own.CompareAndSwap(old, old|ownMarked):
			return false
		}
	}
}

// userEvents is the one registration of a connection with User
// deactivation: edge-triggered, for reading and writing, never changed (so
// that a re-arm racing with another thread's is harmless).
const userEvents = handleset.Readable | handleset.Writable | handleset.EdgeTriggered

// drained is the interest connio.Session.OnReady returns when its input
// is drained and nothing waits to be written.
const drained = handleset.Readable | handleset.OneShot

// reactivateUser is reactivate_handle with User deactivation, ready the
// event's readiness and interest the session's. The connection is released
// first; then, unless the session drained its input with nothing left to
// write (quiet) and no event was passed over meanwhile, the handle is
// re-armed (EPOLL_CTL_MOD), which has the kernel report it again if it is
// ready. A short read is not a drained input when the event reported a
// hang-up: the end of input (or the reset) behind the bytes was reported
// with them and will not be again, so that release re-arms too (nginx
// reads on for EPOLLRDHUP likewise). That re-arm comes after the
// release, so the connection may by then be another thread's, or closed
// and its number reused: it only ever adds an event, which a free handle
// serves and an owned one marks, and a handle gone from the set is no
// error.
func (c *conn) reactivateUser(fd int, ready, interest handleset.Events) {
	if interest == 0 {
		return // suspended: stays deactivated, as Kernel's disarmed handle
	}
	quiet := interest == drained && !c.sess.Unread() &&
		ready&(handleset.HangUp|handleset.Error) == 0
	set := c.ln.set
	if c.own.Swap(0) == ownOwned && quiet {
		return
	}
	if err := set.Reactivate(fd, userEvents); err != nil &&
		!errors.Is(err, handleset.ErrClosed) && !errors.Is(err, handleset.ErrNotRegistered) &&
		!errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EBADF) {
		c.s.fail(err)
	}
}

var _ handler = (*conn)(nil)

// HandleEvent reads, serves every complete request and writes the
// responses (connio.Session.OnReady), then reactivates the handle with the
// interest the session returns, or unregisters and closes the connection.
// After a successful Reactivate it touches nothing: the handle may already
// be dispatched to another thread.
func (c *conn) HandleEvent(fd int, ready handleset.Events) {
	sh := c.th.sh
	if injectRegression { // the CI gate's self-test only (inject_regression.go)
		injectCost()
	}
	if c.s.userDeact() && ready&(handleset.Readable|handleset.HangUp|handleset.Error) == 0 && c.sess.Out.Pending() == 0 {
		// Room to write and nothing to write: the edge of a new
		// registration (edge-triggered handles report writable at once).
		// Nothing to read either, so nothing to serve or to place yet.
		c.reactivateUser(fd, ready, drained)
		return
	}
	if !c.placed && c.place(fd, c.th) {
		return // moved to another lane, whose thread now owns it
	}
	interest, done := c.sess.OnReady(fd, sh)
	if !done {
		if c.s.userDeact() {
			c.reactivateUser(fd, ready, interest)
			return
		}
		err := c.ln.set.Reactivate(fd, interest)
		if err == nil || errors.Is(err, handleset.ErrClosed) {
			return // closed: Close closes the descriptor
		}
		sh.AddError(models.ErrIO)
	}
	c.s.dropConn(fd, sh, c.ln)
}

// addConn registers a newly accepted connection. It reports false if the
// handle set is closed (the server is stopping).
func (s *Server) addConn(fd int, sh *models.Shard) bool {
	c := &conn{s: s, ln: s.lanes[0], sess: connio.NewSession(&s.cfg), placed: len(s.lanes) == 1}
	return s.conns.RegisterAs(s.set, fd, s.connEvents(), c, &c.sess.Timer, sh)
}

// connEvents is a connection's registration: one-shot reading with Kernel
// deactivation, userEvents with User.
func (s *Server) connEvents() handleset.Events {
	if s.userDeact() {
		return userEvents
	}
	return handleset.Readable | handleset.OneShot
}

// dropConn unregisters and closes a connection of lane ln that is done. It
// is forgotten before its descriptor is closed, since the number may be
// reused by the next accept at once.
func (s *Server) dropConn(fd int, sh *models.Shard, ln *lane) {
	ln.set.Unregister(fd) // fails only if the set is closed (which closes nothing) or fd left it
	s.conns.Close(fd, sh)
}

// acceptor is the concrete event handler of the listening socket.
type acceptor struct {
	dispatched
	s *Server
	// backoff is the delay for which the listener stays deactivated after
	// accept ran out of descriptors or memory. Only the thread processing
	// the (deactivated) listener touches it.
	backoff connio.AcceptBackoff
}

var _ handler = (*acceptor)(nil)

// HandleEvent accepts a batch of connections (connio.AcceptAdmitted: at most
// connio.MaxAcceptsPerEvent, so a connection storm cannot keep a thread
// from rejoining the pool), registers each with its own Session, and
// reactivates the listener. When accept fails for lack of descriptors or
// memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) the connection stays in the
// backlog and the listener stays deactivated: the retry timer reactivates
// it after a delay that doubles from connio.MinAcceptBackoff to
// connio.MaxAcceptBackoff while the shortage lasts, so the pool keeps
// serving the open connections instead of spinning on a listener that is
// always readable.
func (a *acceptor) HandleEvent(fd int, _ handleset.Events) {
	s, th := a.s, a.th
	th.acceptBatches.Inc()
	wait, closed := connio.AcceptAdmitted(s.ln, &a.backoff, s.limit, th.sh, func(nfd int) bool {
		return s.addConn(nfd, th.sh)
	})
	switch {
	case closed:
		return
	case wait > 0:
		// Not a single access to a after this: once the timer is armed
		// another thread may own the listener.
		s.timer.arm(wait)
		return
	}
	if err := s.set.Reactivate(fd, handleset.Readable|handleset.OneShot); err != nil && !errors.Is(err, handleset.ErrClosed) {
		s.fail(err)
	}
}

// retryTimer is the concrete event handler of the accept backoff: a timerfd
// in the handle set whose expiry reactivates the listener. The backoff thus
// costs no thread: nobody sleeps, and the pool serves other handles
// meanwhile.
//
// Note: a Go timer (time.AfterFunc) reactivating the listener would work
// too, but would run the reactivation on a runtime goroutine outside the
// pool; the timerfd keeps every event source a handle of the one set.
type retryTimer struct {
	dispatched
	s  *Server
	fd int
}

var _ handler = (*retryTimer)(nil)

// arm starts the timer for d and reactivates its handle. Failures leave the
// listener deactivated for good, so they stop the pool.
func (t *retryTimer) arm(d time.Duration) {
	if err := setTimer(t.fd, d); err != nil {
		t.s.fail(err)
		return
	}
	if err := t.s.set.Reactivate(t.fd, handleset.Readable|handleset.OneShot); err != nil && !errors.Is(err, handleset.ErrClosed) {
		t.s.fail(err)
	}
}

// HandleEvent consumes the expiry and reactivates the listener; the timer's
// own handle stays deactivated until the next arm.
func (t *retryTimer) HandleEvent(fd int, _ handleset.Events) {
	t.th.acceptRetries.Inc()
	if err := drainTimer(fd); err != nil {
		t.s.fail(err)
		return
	}
	if err := t.s.set.Reactivate(t.s.ln.Fd(), handleset.Readable|handleset.OneShot); err != nil && !errors.Is(err, handleset.ErrClosed) {
		t.s.fail(err)
	}
}
