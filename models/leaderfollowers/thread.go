package leaderfollowers

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

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
// event, then promotes a follower and returns the event to process. The
// event's handle is already deactivated: every handle is registered with
// OneShot, so the kernel disarmed it in the same step in which it reported
// the event, before any other thread can wait on the set. With a ready set
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
		if ev, ok := rs.take(); ok {
			return th.led(ev), true
		}
		w = rs.w
	}
	for {
		evs, err := w.Wait(-1)
		if err != nil {
			if checkLeaders {
				ln.inv.end()
			}
			if !errors.Is(err, handleset.ErrClosed) {
				s.fail(err)
			}
			return handleset.Event{}, false
		}
		if len(evs) == 0 {
			continue // not reported with an unbounded wait; still the leader
		}
		if rs != nil {
			rs.fill(evs)
		}
		return th.led(evs[0]), true
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

// fill makes evs, just reported, the ready set, with the first taken.
func (r *readySet) fill(evs []handleset.Event) {
	r.evs, r.next = evs, 1
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
}

var _ handler = (*conn)(nil)

// HandleEvent reads, serves every complete request and writes the
// responses (connio.Session.OnReady), then reactivates the handle with the
// interest the session returns, or unregisters and closes the connection.
// After a successful Reactivate it touches nothing: the handle may already
// be dispatched to another thread.
func (c *conn) HandleEvent(fd int, _ handleset.Events) {
	sh := c.th.sh
	if injectRegression { // the CI gate's self-test only (inject_regression.go)
		injectCost()
	}
	if !c.placed && c.place(fd, c.th) {
		return // moved to another lane, whose thread now owns it
	}
	interest, done := c.sess.OnReady(fd, sh)
	if !done {
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
	return s.conns.Register(s.set, fd, c, &c.sess.Timer, sh)
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
