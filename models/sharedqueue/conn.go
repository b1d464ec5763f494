package sharedqueue

import (
	"errors"
	"sync/atomic"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/wire"
)

// The states of a connection's ledger request in flight (conn.state),
// which decide who goes on with the connection when the request's strand
// handler has run.
const (
	callRunning   uint32 = iota // begun; the connection's thread is still inside its op
	callDone                    // finished before the connection's thread left: it goes on itself
	callSuspended               // the connection's thread left: the finisher posts the connection
)

// conn is a connection: its descriptor's op (asio's descriptor_state with
// the connection's read and write operations and their handlers) and the
// service its session calls (connio.AsyncService), which sends ledger
// requests to their shards' strands.
type conn struct {
	opLink
	fd   int
	s    *Server
	sess *connio.Session

	call    call          // the ledger request in flight (at most one)
	state   atomic.Uint32 // callRunning, callDone or callSuspended
	resp    wire.Response // its response, built when the connection resumes
	scratch []byte

	// answered counts the responses the op in progress appended; with
	// none pending after it, they were written at once.
	answered int
	// writing marks the op, posted, as the completion of those writes
	// (Posted): its performer runs the write handler, which re-arms the
	// handle with interest, or closes the connection if interest is 0.
	writing  bool
	interest handleset.Events
}

var (
	_ op                     = (*conn)(nil)
	_ connio.AsyncService    = (*conn)(nil)
	_ handleset.EventHandler = (*conn)(nil)
)

// HandleEvent is never called: the reactor queues the connection's op.
func (*conn) HandleEvent(int, handleset.Events) {}

// perform is what a thread does with the connection's op (asio's
// descriptor_state::do_complete: perform_io, then the first completed
// operation's handler inline): it reads, serves every complete request and
// writes (connio.Session.OnReady), then re-arms the handle, closes the
// connection, or leaves it suspended on a ledger request in a strand. Run
// for a resumption (the op posted by the strand that finished the
// request), it first appends that request's response. With Posted, a
// write of responses that completed at once does not re-arm the handle
// here: its completion is posted (asio's post_immediate_completion), and
// the thread that dequeues it runs the write handler, which does (or
// closes the connection, if it is done).
func (c *conn) perform(th *thread) {
	sh := th.sh
	c.answered = 0
	switch {
	case c.writing: // the write handler: it starts the next read, or closes
		c.writing = false
		if c.interest == 0 {
			c.s.dropConn(c.fd, sh)
		} else {
			c.rearm(sh, c.interest)
		}
		return
	case c.sess.Suspended():
		c.resume(sh)
	default:
		sh.AddEvent()
	}
	for {
		interest, done := c.sess.OnReady(c.fd, sh)
		if !done && interest == 0 { // suspended on a ledger request
			if c.state.CompareAndSwap(callRunning, callSuspended) {
				return // its strand's handler posts the connection when it has run
			}
			c.resume(sh) // it ran meanwhile, on another thread
			continue
		}
		if c.answered > 0 && c.sess.Out.Pending() == 0 && c.s.opts.Completion == Posted {
			// The responses were written at once: the write handler,
			// posted, re-arms with interest, or closes the connection if
			// it is done (interest 0). After the post nothing of c is
			// touched: another thread may already be running it.
			c.writing, c.interest = true, interest
			c.s.writesPosted.Add(1)
			c.s.sched.post(c)
			return
		}
		if done {
			c.s.dropConn(c.fd, sh)
			return
		}
		c.rearm(sh, interest)
		return
	}
}

// rearm re-arms the handle with interest, or drops the connection if that
// fails. After a successful Reactivate nothing of c is touched: the next
// event may already be with another thread.
func (c *conn) rearm(sh *models.Shard, interest handleset.Events) {
	err := c.s.sched.set.Reactivate(c.fd, interest)
	if err == nil || errors.Is(err, handleset.ErrClosed) {
		return // closed: Close closes the descriptor
	}
	sh.AddError(models.ErrIO)
	c.s.dropConn(c.fd, sh)
}

// Do serves a request at once: every request but the ledger's.
func (c *conn) Do(req *wire.Request, resp *wire.Response, scratch []byte) []byte {
	return c.s.cfg.Service.Do(req, resp, scratch)
}

// Start serves req: a ledger request is sent to its shard's strand after
// its work spec has run here (outside every strand, as Service.Do runs it
// outside the monitor's lock); others are served at once by Do. A ledger
// request whose handler ran at once (the strand was free) is answered at
// once too; otherwise the session suspends until the handler has run.
func (c *conn) Start(req *wire.Request, resp *wire.Response, scratch []byte) ([]byte, bool) {
	if req.Op == wire.OpWork || !req.Op.Valid() {
		c.answered++
		return c.Do(req, resp, scratch), true
	}
	c.s.cfg.Service.Work(req.CPU, req.Block)
	c.call = call{kind: kindOf(req.Op), account: req.Account, to: req.To, amount: req.Amount, timeout: req.Timeout,
		id: req.ID, close: req.Close, c: c}
	c.state.Store(callRunning)
	c.s.begin(&c.call)
	if c.state.Load() != callDone {
		return scratch, false
	}
	c.answered++
	return c.call.response(resp, scratch), true
}

// finished hands the connection back once its ledger request's handler
// has run (asio's post_deferred_completion): if the connection's thread
// is still inside its op it goes on itself, otherwise the connection's
// op is posted to the scheduler. The caller touches neither the call nor
// the connection afterwards.
func (c *conn) finished() {
	if c.state.CompareAndSwap(callRunning, callDone) {
		return
	}
	c.s.deferred.Add(1)
	c.s.sched.post(c)
}

// resume gives the session the response of its ledger request.
func (c *conn) resume(sh *models.Shard) {
	c.answered++
	c.scratch = c.call.response(&c.resp, c.scratch[:0])
	c.sess.Resume(&c.resp, sh)
}

// addConn registers a connection just accepted. It reports false if the
// handle set is closed (the server is stopping).
func (s *Server) addConn(fd int, sh *models.Shard) bool {
	c := &conn{fd: fd, s: s}
	c.sess = connio.NewSessionWith(&s.cfg, c)
	return s.conns.Register(s.sched.set, fd, c, &c.sess.Timer, sh)
}

// dropConn unregisters and closes a connection that is done.
func (s *Server) dropConn(fd int, sh *models.Shard) {
	s.sched.set.Unregister(fd) // fails only if the set is closed (which closes nothing)
	s.conns.Close(fd, sh)
}

// acceptor is the listener's op (asio's acceptor descriptor and its
// accept operation).
type acceptor struct {
	opLink
	s *Server
	// again marks the op, posted, as the completion of the next accept
	// rather than the listener's readiness. Only the thread performing
	// the (disarmed) listener's op touches it.
	again bool
	// backoff is the delay for which the listener stays disarmed after
	// accept ran out of descriptors or memory. Only the thread performing
	// the (disarmed) listener's op touches it.
	backoff connio.AcceptBackoff
}

var (
	_ op                     = (*acceptor)(nil)
	_ handleset.EventHandler = (*acceptor)(nil)
)

// HandleEvent is never called: the reactor queues the acceptor's op.
func (*acceptor) HandleEvent(int, handleset.Events) {}

// perform accepts one connection (connio.AcceptAdmittedUpTo) and
// registers it, as asio's acceptor completes one accept per operation.
// If it took one, the handler's next accept may complete at once too,
// and its completion goes through the queue (post_immediate_completion,
// waking a thread): the op is posted again. Once the backlog is empty
// the listener is re-armed. After a descriptor or memory shortage it
// leaves the listener disarmed for the back-off's delay
// (connio.ListenPause), which bounds the reactor's wait.
func (a *acceptor) perform(th *thread) {
	s := a.s
	if !a.again {
		th.sh.AddEvent()
	}
	a.again = false
	took, wait, closed := connio.AcceptAdmittedUpTo(s.ln, 1, &a.backoff, s.limit, th.sh, func(fd int) bool {
		return s.addConn(fd, th.sh)
	})
	switch {
	case closed:
		return
	case wait > 0:
		s.pause.Start(wait)
		s.sched.mu.Lock()
		s.sched.interruptAndUnlock() // a blocked reactor must bound its wait by the pause
		return
	case took > 0:
		a.again = true
		s.acceptsPosted.Add(1)
		s.sched.post(a)
		return
	}
	s.rearmListener()
}

// rearmListener re-arms the listener after its op, or after a pause.
func (s *Server) rearmListener() {
	if err := s.sched.set.Reactivate(s.ln.Fd(), handleset.Readable|handleset.OneShot); err != nil && !errors.Is(err, handleset.ErrClosed) {
		s.fail(err)
	}
}
