package halfsynchalfreactive

import (
	"errors"
	"runtime"
	"sync/atomic"

	"concbench/handleset"
	"concbench/internal/futex"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/wire"
)

// waiterEvents is how many events the reactor takes from the handle set
// per Wait.
const waiterEvents = 128

// reactor is the asynchronous (reactive) layer: one locked OS thread that
// waits on the handle set, accepts connections, reads and decodes requests
// and puts them on the queue. It never blocks in I/O (every descriptor is
// non-blocking); it blocks only in the handle set's Wait, on a full queue,
// and briefly on a connection's mutex while a worker writes to it.
type reactor struct {
	s *Server
	thread
	w     *handleset.Waiter
	conns map[*conn]struct{} // open connections

	// req is the decode target; its Payload aliases a conn's In until
	// copied. The reactor's thread.done list doubles as its supply of free
	// request objects (pooled variant): those it released itself and those
	// the queue handed back.
	req wire.Request

	stopped       bool                 // the queue was closed while putting: exit
	acceptBackoff connio.AcceptBackoff // the delay after a descriptor or memory shortage
	acceptPause   connio.ListenPause   // when to re-arm the listener after a shortage

	// Counters; the reactor is their only writer.
	allocs        models.Counter // request objects allocated with new
	inflightHigh  atomic.Uint64  // the most requests one connection had in flight
	notifications models.Counter // connections handled because a worker asked
}

func newReactor(s *Server) *reactor {
	return &reactor{
		s:      s,
		thread: thread{sh: s.counters.NewThreadShard("reactor")},
		w:      s.set.NewWaiter(waiterEvents),
		conns:  make(map[*conn]struct{}),
	}
}

// run is the reactor thread. Like every model thread it exits still locked,
// so the runtime destroys the thread instead of reusing it.
func (rc *reactor) run() {
	defer rc.s.wg.Done()
	runtime.LockOSThread()
	rc.sh.SetTID(models.CurrentThreadID())
	rc.s.started.Done()
	for !rc.stopped {
		rc.slice.Refresh()
		evs, err := rc.w.Wait(rc.acceptPause.Timeout())
		if err != nil {
			if !errors.Is(err, handleset.ErrClosed) {
				rc.sh.AddError(models.ErrIO) // epoll_wait failed: nothing can be served
			}
			return
		}
		for _, ev := range evs {
			rc.sh.AddEvent()
			ev.Handler.HandleEvent(ev.Fd, ev.Ready) // the pattern's hook method
			if rc.stopped {
				return
			}
		}
		if rc.acceptPause.End() {
			rc.s.set.Reactivate(rc.s.ln.Fd(), handleset.Readable) // ErrClosed: exiting anyway
		}
	}
}

// acceptor is the listener's event handler.
type acceptor struct{ rc *reactor }

var _ handleset.EventHandler = acceptor{}

// HandleEvent accepts the pending connections.
func (a acceptor) HandleEvent(int, handleset.Events) { a.rc.accept() }

// accept accepts a batch of connections (connio.AcceptBatch) and registers
// them (level-triggered: only this thread waits on the set). When accept
// fails with a descriptor or memory shortage the listener is disarmed and
// re-armed after the back-off's delay, instead of spinning.
func (rc *reactor) accept() {
	s := rc.s
	wait, err := connio.AcceptBatch(s.ln, &rc.acceptBackoff, rc.sh, rc.addConn)
	if err != nil {
		rc.sh.AddError(models.ErrAccept)
	}
	if wait > 0 {
		s.set.Deactivate(s.ln.Fd()) // ErrClosed: exiting anyway
		rc.acceptPause.Start(wait)
	}
}

// addConn registers an accepted connection with the handle set, or
// refuses it past Config.MaxConns. It always reports true: a connection
// that cannot be registered is closed, and the batch goes on.
func (rc *reactor) addConn(fd int) bool {
	s := rc.s
	if !s.limit.Admit() {
		connio.Refuse(fd, s.limit.Refusal(), rc.sh)
		return true
	}
	c := &conn{
		fd:    fd,
		in:    connio.NewIn(connio.MaxRequest(s.cfg.Codec.Limits())),
		srv:   s,
		armed: handleset.Readable,
	}
	c.ring.Init(models.MaxInFlight, s.cfg.MaxPendingOutput)
	if err := s.set.Register(fd, handleset.Readable, c); err != nil {
		handleset.Close(fd)
		s.limit.Release()
		rc.sh.AddError(models.ErrAccept)
		return true
	}
	rc.conns[c] = struct{}{}
	s.reaper.Track(fd, &c.timer)
	rc.sh.AddAccepted()
	return true
}

var _ handleset.EventHandler = (*conn)(nil)

// HandleEvent serves a readiness event of the connection; only the reactor
// thread dispatches it.
func (c *conn) HandleEvent(_ int, ready handleset.Events) { c.srv.reactor.serve(c, ready, true) }

// serve is the reactor's step for one connection: on a readiness event
// (event set), or for a worker's notification (event unset, ready 0). It
// writes what waits for the socket, dispatches buffered requests a bound had
// held back, reads and dispatches new requests, and finally reconciles the
// handle's interest with the connection's state, or closes it.
func (rc *reactor) serve(c *conn, ready handleset.Events, event bool) {
	// c.closed and c.armed are written only by this thread (with c.mu
	// held, for the workers' sake), so it reads them without the lock.
	if c.closed {
		return // a notification queued before the connection was closed
	}
	flush := ready&(handleset.Writable|handleset.HangUp|handleset.Error) != 0 && c.outPending.Load() > 0
	if !event || flush || c.armed&handleset.OneShot != 0 {
		c.mu.Lock()
		if event {
			if c.armed&handleset.OneShot != 0 {
				c.armed = 0 // the kernel disarmed the handle when it reported it
			}
		} else {
			c.notified = false
		}
		if flush && !c.broken.Load() {
			c.flushLocked(&rc.thread)
		}
		c.mu.Unlock()
	}

	if c.stalled {
		rc.dispatch(c)
	}
	if ready&(handleset.Readable|handleset.HangUp|handleset.Error) != 0 {
		rc.read(c)
	}
	for !rc.stopped {
		c.mu.Lock()
		if c.stalled && !c.inputDone && !c.broken.Load() && c.admits() {
			// A worker made room after dispatch stopped: no notification
			// will come for it (the reactor has not disarmed Readable yet),
			// so serve the buffered requests now.
			c.mu.Unlock()
			rc.dispatch(c)
			continue
		}
		closeNow := rc.reconcile(c)
		if closeNow {
			c.closed = true
		}
		c.mu.Unlock()
		if closeNow {
			rc.closeConn(c)
		}
		return
	}
}

// read reads the connection while it admits requests, dispatching each
// complete request as soon as it is decoded. It stops when the socket is
// drained, after connio.MaxReadsPerEvent reads (the handle is level-triggered: the
// rest is reported again), at end of input, or on an error.
func (rc *reactor) read(c *conn) {
	for range connio.MaxReadsPerEvent {
		if rc.stopped || c.inputDone || c.broken.Load() || !c.admits() {
			return // back-pressure: what the client sends stays in the kernel's buffers
		}
		r, err := c.in.ReadOnce(c.fd, &c.timer, rc.sh)
		switch r {
		case connio.ReadNone:
			return
		case connio.ReadFailed:
			c.mu.Lock()
			c.breakLocked(&rc.thread, err)
			c.mu.Unlock()
			return
		case connio.ReadEnd:
			// Every complete request was dispatched (the connection
			// admitted more), so buffered bytes were a partial one,
			// counted by ReadOnce.
			rc.endInput(c)
			return
		}
		rc.dispatch(c)
		if r == connio.ReadDrained {
			return // a level-triggered handle reports more
		}
	}
}

// dispatch decodes the connection's buffered requests and puts each on the
// queue as a request object, while the connection admits more. It sets
// c.stalled if it stopped at a bound with input still buffered.
func (rc *reactor) dispatch(c *conn) {
	codec := rc.s.cfg.Codec
	c.stalled = false
	// Whatever stops it, a request left incomplete starts the header
	// timeout's clock (one held back by a bound does not).
	defer func() { c.timer.Partial(!c.stalled && !c.inputDone && c.in.Buffered() > 0) }()
	for !rc.stopped && !c.inputDone && !c.broken.Load() {
		if !c.admits() {
			c.stalled = c.in.Buffered() > 0
			return
		}
		ok, err := c.in.Next(codec, &rc.req)
		if err != nil {
			rc.decodeError(c, err)
			return
		}
		if !ok {
			return
		}
		if rc.req.Close {
			rc.endInput(c) // the client asked to close after this response
		}
		if !rc.handoff(c, &rc.req) {
			rc.stopped = true // the queue is closed: the server is shutting down
			return
		}
	}
}

// handoff is the reactor's half of passing one request to a worker: it makes
// the request object for req, the connection's next request (allocating it,
// or recycling one in the pooled variant), and puts it on the queue, waiting
// while the queue is full. It reports false if the queue is closed.
func (rc *reactor) handoff(c *conn, req *wire.Request) bool {
	r := rc.acquire()
	r.fill(req, c, rc.s.opts.Pooled) // copies the payload out of c.in
	rc.account(c, r)
	spare, ok := rc.s.q.put(r, rc.s.opts.Pooled && len(rc.done) == 0)
	if spare != nil {
		rc.done = append(rc.done, spare)
	}
	return ok
}

// account puts r in flight on the connection's ring, which gives it its
// sequence number.
func (rc *reactor) account(c *conn, r *request) {
	seq, n := c.ring.Push(r.est)
	r.seq = seq
	if uint64(n) > rc.inflightHigh.Load() {
		rc.inflightHigh.Store(uint64(n))
	}
}

// decodeError answers a request that cannot be decoded with the protocol's
// error response, in its turn after the responses still in flight, and
// stops the connection's input; it closes once everything is written.
func (rc *reactor) decodeError(c *conn, err error) {
	rc.sh.AddError(wire.KindOf(err).String())
	r := rc.acquire()
	r.conn, r.est, r.err = c, models.ResponseOverhead, err
	rc.account(c, r)
	rc.endInput(c)
	c.complete(&rc.thread, r, nil, false)
}

// endInput records that no more requests will be dispatched.
func (rc *reactor) endInput(c *conn) {
	c.mu.Lock()
	c.inputDone = true
	c.mu.Unlock()
}

// acquire returns a request object: a recycled one (pooled variant) or a new
// allocation.
func (rc *reactor) acquire() *request {
	if k := len(rc.done); k > 0 {
		r := rc.done[k-1]
		rc.done[k-1] = nil
		rc.done = rc.done[:k-1]
		return r
	}
	rc.allocs.Inc()
	return new(request)
}

// reconcile arms the connection's handle with the interest its state calls
// for, or reports that it is to be closed. c.mu must be held. Only the
// reactor changes a connection's interest, so c.armed is what the kernel
// has (except for a one-shot handle that fired, whose event the reactor has
// yet to receive; serve then re-arms it).
func (rc *reactor) reconcile(c *conn) (closeNow bool) {
	want, closeNow := c.desired()
	if closeNow || want == c.armed {
		return closeNow
	}
	var err error
	if want&(handleset.Readable|handleset.Writable) == 0 {
		err = rc.s.set.Deactivate(c.fd)
	} else {
		err = rc.s.set.Reactivate(c.fd, want)
	}
	c.armed = want
	if err != nil && !errors.Is(err, handleset.ErrClosed) {
		c.breakLocked(&rc.thread, err)
		return c.ring.InFlight() == 0
	}
	return false
}

// closeConn unregisters and closes a connection that c.closed marks closed.
// Nothing is in flight on it, so no worker holds a reference to it and no
// descriptor number can be reused while a worker might still write to it.
func (rc *reactor) closeConn(c *conn) {
	rc.s.set.Unregister(c.fd) // ErrClosed: shutting down; close the descriptor anyway
	rc.s.reaper.Untrack(c.fd)
	handleset.Close(c.fd)
	rc.s.limit.Release()
	rc.sh.AddClosed()
	delete(rc.conns, c)
}

// close closes every connection still open. It runs after every thread has
// exited, so it is the only one touching them.
func (rc *reactor) close() error {
	var errs []error
	for c := range rc.conns {
		if err := handleset.Close(c.fd); err != nil {
			errs = append(errs, err)
		}
		rc.sh.AddClosed()
		delete(rc.conns, c)
	}
	return errors.Join(errs...)
}

// notifier is how workers wake the reactor for a connection that needs it
// (see conn.complete): a list of connections, guarded by a futex.Mutex, and
// an eventfd registered in the handle set, signalled when the list becomes
// non-empty.
type notifier struct {
	mu   futex.Mutex
	list []*conn
	next []*conn // the other list, swapped in by take
	wake *handleset.Wakeup
}

func newNotifier() (*notifier, error) {
	w, err := handleset.NewWakeup()
	if err != nil {
		return nil, err
	}
	return &notifier{wake: w}, nil
}

// push queues c for the reactor. The caller set c.notified (with c.mu
// held), so c is on the list at most once.
func (n *notifier) push(c *conn) {
	n.mu.Lock()
	first := len(n.list) == 0
	n.list = append(n.list, c)
	n.mu.Unlock()
	if first {
		n.wake.Signal() // fails only if the eventfd is gone: after Close
	}
}

// take returns the queued connections; the slice is valid until the next
// take.
func (n *notifier) take() []*conn {
	n.mu.Lock()
	l := n.list
	clear(n.next)
	n.list = n.next[:0]
	n.next = l
	n.mu.Unlock()
	return l
}

// notifyHandler is the eventfd's event handler.
type notifyHandler struct{ rc *reactor }

var _ handleset.EventHandler = notifyHandler{}

func (n *notifier) handler(rc *reactor) notifyHandler { return notifyHandler{rc} }

// HandleEvent serves the connections workers queued. The eventfd is drained
// before the list is taken, so a connection queued after the take signals
// again and is not missed.
func (h notifyHandler) HandleEvent(int, handleset.Events) {
	rc := h.rc
	rc.s.notes.wake.Drain()
	for _, c := range rc.s.notes.take() {
		rc.notifications.Inc()
		rc.serve(c, 0, false)
		if rc.stopped {
			return
		}
	}
}
