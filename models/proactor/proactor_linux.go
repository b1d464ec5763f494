package proactor

import (
	"errors"
	"runtime"

	"concbench/handleset"
	"concbench/internal/uring"
	"concbench/models"
	"concbench/models/internal/connio"

	"golang.org/x/sys/unix"
)

// Operation kinds, the low byte of an SQE's user data; the rest names the
// connection (slot and generation) for connection operations.
const (
	opWake       uint8 = iota + 1 // poll of the stop eventfd
	opAccept                      // the multishot accept
	opBackoff                     // the timer pausing accepts after an accept error
	opStopCancel                  // cancellation of the accept or the timer at stop
	opRecv                        // a connection's receive (multishot or single)
	opSend                        // a connection's send
	opCancel                      // cancellation of a connection's receive, or of all its operations
	opClose                       // a connection's close
	opHup                         // a connection's poll for its peer's hang-up (hupPoll)
)

// bufGroup is the provided-buffer group id of every ring.
const bufGroup = 0

// tag builds an SQE's user data.
func tag(op uint8, slot, gen uint32) uint64 {
	return uint64(op) | uint64(slot)<<8 | uint64(gen)<<32
}

// untag splits user data.
func untag(ud uint64) (op uint8, slot, gen uint32) {
	return uint8(ud), uint32(ud>>8) & (1<<24 - 1), uint32(ud >> 32)
}

// counters are one dispatcher's model-specific counters; see doc.go.
type counters struct {
	partialSends     models.Counter // sends that completed with fewer bytes than submitted
	buffersExhausted models.Counter // receives ended by ENOBUFS: the provided-buffer ring was empty
	accepts          models.Counter // connections accepted
	rearms           models.Counter // multishot receives armed again on a connection
	pauses           models.Counter // times a connection's receiving stopped for back-pressure
	plainFiles       models.Counter // connections served by their descriptor, not a registered file
}

// maxFixedFiles is the most registered-file slots a ring has: one per
// connection slot below it (conn.fixed). A connection in a slot beyond it,
// or on a ring whose registration failed, is served by its descriptor. A
// variable for tests, which mix the two.
var maxFixedFiles = 1 << 14

// proactor is one dispatcher thread with its ring: the pattern's Proactor
// (it waits on the Completion Event Queue — the ring's CQ — and
// demultiplexes each completion to its Completion Handler) and, through its
// initiator methods, the Initiator of every operation on its connections.
// Everything here is touched only by the proactor's own locked thread,
// except what Stats reads: ring's counters, cnt and sh (single-writer
// atomics), and ring itself, set before the thread reports ready.
type proactor struct {
	s         *Server
	lfd       int // this ring's SO_REUSEPORT listening socket; -1 for none
	wake      *handleset.Wakeup
	sh        *models.Shard
	slice     connio.Slice // the thread's time slice as the Go runtime sees it
	cnt       counters
	multishot bool // receive mode
	// adopted are connected sockets to serve from the start, besides
	// accepted ones (benchmarks hand it one end of a socket pair).
	adopted []int

	ring  *uring.Ring
	bufs  *uring.BufRing
	files int         // registered-file slots (0: none registered)
	cqes  []uring.CQE // one batch of reaped completions

	conns []*conn  // by slot; nil slots are free
	free  []uint32 // free slots
	live  int      // connections not yet closed
	gen   uint32   // the last connection generation handed out

	// Ring-level operations: their number in flight, and which are armed.
	inflight     int
	acceptArmed  bool
	backoffArmed bool
	acceptFailed bool
	backoff      connio.AcceptBackoff

	stopping bool
	err      error     // a failure of the ring itself; the thread stops
	scratch  uring.SQE // handed out after a fatal error, never submitted
}

// run is the dispatcher thread. It locks itself to its OS thread for the
// ring's life (SetupSingleIssuer requires it) and exits still locked, so
// the Go runtime destroys the thread rather than reusing it.
func (p *proactor) run(ready chan<- error) {
	runtime.LockOSThread()
	p.sh.SetTID(models.CurrentThreadID())
	if err := p.init(); err != nil {
		p.release()
		ready <- err
		return
	}
	ready <- nil
	p.loop()
	if p.err != nil {
		p.abandon()
	}
	p.release()
}

// init sets up the ring and its provided buffers, and starts the
// ring-level operations: the stop poll and the multishot accept.
func (p *proactor) init() error {
	o := p.s.opts
	r, err := uring.New(uint32(o.Entries), uring.Options{
		CQEntries: uint32(o.Entries * cqPerSQ),
		Flags:     uring.SetupSingleIssuer | uring.SetupDeferTaskrun | uring.SetupSubmitAll,
	})
	if err != nil {
		return err
	}
	p.ring = r
	if p.bufs, err = r.NewBufRing(bufGroup, o.Buffers, o.BufferSize); err != nil {
		return err
	}
	p.registerFiles()
	// At most 3 SQEs follow from one CQE (e.g. a send, a receive and a
	// re-armed accept), so a batch of Entries/4 CQEs never fills the SQ
	// between two submissions.
	p.cqes = make([]uring.CQE, max(1, o.Entries/4))
	p.startWakePoll()
	if p.lfd >= 0 {
		p.startAccept()
	}
	for _, fd := range p.adopted {
		p.adopt(fd, false)
	}
	_, err = r.Submit()
	return err
}

// registerFiles registers an empty table of files with the ring, a slot
// per connection slot up to maxFixedFiles (and the descriptor limit, which
// bounds it): a connection's operations then name its registered file,
// and the kernel takes no reference on the file for each of them (an
// atomic pair per send, measured in docs/findings.md, "Lean"). The
// descriptor stays open beside it, for the reaper and the refusal write.
// Without a table every connection is served by its descriptor.
func (p *proactor) registerFiles() {
	n := maxFixedFiles
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < uint64(n) {
		n = int(lim.Cur)
	}
	if n <= 0 {
		return
	}
	fds := make([]int32, n)
	for i := range fds {
		fds[i] = -1
	}
	if p.ring.RegisterFiles(fds) == nil {
		p.files = n
	}
}

// loop is the event loop: submit what the handlers initiated, wait for at
// least one completion (with DeferTaskrun the kernel runs the completion
// work right here, in this thread), dispatch a batch, hand the recycled
// buffers back. It returns once stopping and nothing is in flight.
func (p *proactor) loop() {
	for p.err == nil {
		if p.stopping && p.inflight == 0 && p.live == 0 {
			return
		}
		p.slice.Refresh()
		if _, err := p.ring.SubmitAndWait(1); err != nil &&
			!errors.Is(err, unix.EBUSY) && !errors.Is(err, unix.EAGAIN) {
			// EBUSY, EAGAIN: completions are waiting for CQ space or the
			// kernel for memory; reaping makes progress. Anything else
			// is a broken ring.
			p.err = err
			return
		}
		n := p.ring.Reap(p.cqes)
		for i := range n {
			p.dispatch(&p.cqes[i])
		}
		p.bufs.Publish()
	}
}

// dispatch demultiplexes one completion to its Completion Handler.
func (p *proactor) dispatch(cqe *uring.CQE) {
	p.sh.AddEvent()
	op, slot, gen := untag(cqe.UserData)
	switch op {
	case opWake:
		p.handleWake(cqe)
		return
	case opAccept:
		p.handleAccept(cqe)
		return
	case opBackoff:
		p.handleBackoff(cqe)
		return
	case opStopCancel:
		p.inflight--
		return
	}
	c := p.conns[slot]
	if c == nil || c.gen != gen {
		// A connection's slot is freed only after the CQE of its close,
		// which the kernel posts after every other CQE of the connection.
		panic("proactor: completion for a connection that is gone")
	}
	switch op {
	case opRecv:
		p.handleRecv(c, cqe)
	case opSend:
		p.handleSend(c, cqe)
	case opCancel:
		c.inflight--
		p.advance(c)
	case opClose:
		p.handleClose(c, cqe)
	case opHup:
		p.handleHup(c, cqe)
	default:
		panic("proactor: completion of an unknown operation")
	}
}

// sqe returns a free SQE tagged ud. The SQ cannot fill within a batch (see
// init); if it is full anyway, what is queued is submitted first.
func (p *proactor) sqe(ud uint64) *uring.SQE {
	for p.err == nil {
		if s := p.ring.GetSQE(); s != nil {
			s.UserData = ud
			return s
		}
		p.bufs.Publish() // a receive submitted now must find the recycled buffers
		if _, err := p.ring.Submit(); err != nil {
			p.err = err
		}
	}
	return &p.scratch
}

// withFile points s, prepared with connection c's descriptor, at c's
// registered file where it has one.
func withFile(c *conn, s *uring.SQE) {
	if c.fixed {
		s.Fd = int32(c.slot)
		s.Flags |= uring.SQEFixedFile
	}
}

// Initiator: the methods that start asynchronous operations.

// startWakePoll arms a poll of the stop eventfd.
func (p *proactor) startWakePoll() {
	p.sqe(tag(opWake, 0, 0)).PrepPollAdd(p.wake.Fd(), unix.POLLIN)
	p.inflight++
}

// startAccept arms the multishot accept on this ring's listening socket.
func (p *proactor) startAccept() {
	p.sqe(tag(opAccept, 0, 0)).PrepMultishotAccept(p.lfd, unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK)
	p.acceptArmed = true
	p.inflight++
}

// startBackoff arms the timer that re-arms the accept after an accept
// error: 1 ms, doubling to 1 s while errors repeat.
func (p *proactor) startBackoff() {
	p.ring.PrepTimeout(p.sqe(tag(opBackoff, 0, 0)), p.backoff.Next(), 0, 0)
	p.backoffArmed = true
	p.inflight++
}

// startRecv arms a receive into a provided buffer.
func (p *proactor) startRecv(c *conn) {
	s := p.sqe(tag(opRecv, c.slot, c.gen))
	if p.multishot && !c.hungUp {
		s.PrepRecvMultishot(c.fd, bufGroup, 0)
		if c.arms > 0 {
			p.cnt.rearms.Inc()
		}
	} else {
		s.PrepRecvProvided(c.fd, bufGroup, 0)
	}
	withFile(c, s)
	c.arms++
	c.recv = true
	c.inflight++
}

// startSend sends the connection's pending output. The bytes handed to the
// kernel stay where they are until the send completes: see conn.sending.
func (p *proactor) startSend(c *conn) {
	c.sending = c.sess.Out.Bytes()
	s := p.sqe(tag(opSend, c.slot, c.gen))
	s.PrepSend(c.fd, c.sending, unix.MSG_NOSIGNAL)
	withFile(c, s)
	c.inflight++
}

// cancelRecv cancels the connection's armed receive.
func (p *proactor) cancelRecv(c *conn) {
	p.sqe(tag(opCancel, c.slot, c.gen)).PrepCancel(tag(opRecv, c.slot, c.gen), 0)
	c.recvStop = true
	c.inflight++
}

// cancelAll cancels every operation in flight on the connection.
// hupEvents are what the hang-up poll waits for: the peer's end of its
// stream or a reset (POLLERR and POLLHUP are always reported).
const hupEvents = unix.POLLRDHUP

// startHupPoll arms the connection's one-shot poll for its peer's
// hang-up (hupPoll).
func (p *proactor) startHupPoll(c *conn) {
	s := p.sqe(tag(opHup, c.slot, c.gen))
	s.PrepPollAdd(c.fd, hupEvents)
	withFile(c, s)
	c.hupArmed = true
	c.inflight++
}

// cancelHupPoll cancels the hang-up poll of a connection that is done.
func (p *proactor) cancelHupPoll(c *conn) {
	p.sqe(tag(opCancel, c.slot, c.gen)).PrepCancel(tag(opHup, c.slot, c.gen), 0)
	c.hupStop = true
	c.inflight++
}

func (p *proactor) cancelAll(c *conn) {
	s := p.sqe(tag(opCancel, c.slot, c.gen))
	flags := uint32(uring.CancelAll)
	if c.fixed {
		flags |= uring.CancelFdFixed
	}
	s.PrepCancelFd(c.fd, flags)
	withFile(c, s)
	c.cancelled = true
	c.inflight++
}

// startClose closes the connection's descriptor; nothing else is in flight
// on it.
func (p *proactor) startClose(c *conn) {
	p.s.reaper.Untrack(c.fd)
	if c.fixed {
		// The registered file holds the socket open: empty its slot
		// first, so that closing the descriptor closes the connection.
		p.unregister(c)
	}
	p.sqe(tag(opClose, c.slot, c.gen)).PrepClose(c.fd)
	c.closing = true
	c.inflight++
}

// Completion Handlers of the ring-level operations.

// handleWake handles the stop eventfd's poll: Close wants the thread to
// stop.
func (p *proactor) handleWake(cqe *uring.CQE) {
	p.inflight--
	if _, err := p.wake.Drain(); err != nil {
		p.err = err
		return
	}
	if !p.s.stop.Load() {
		p.startWakePoll() // not a stop request (cannot happen today): keep listening
		return
	}
	p.beginStop()
}

// beginStop cancels the accept and the backoff timer and aborts every
// connection. The loop ends when their last CQEs have arrived.
func (p *proactor) beginStop() {
	p.stopping = true
	if p.acceptArmed {
		p.sqe(tag(opStopCancel, 0, 0)).PrepCancel(tag(opAccept, 0, 0), 0)
		p.inflight++
	}
	if p.backoffArmed {
		p.sqe(tag(opStopCancel, 0, 0)).PrepCancel(tag(opBackoff, 0, 0), 0)
		p.inflight++
	}
	for _, c := range p.conns {
		if c != nil {
			c.abort = true
			p.advance(c)
		}
	}
}

// handleAccept is the Completion Handler of the multishot accept: each
// completion is a new connection (or an accept error, which ends the
// multishot accept; it is re-armed after a backoff).
func (p *proactor) handleAccept(cqe *uring.CQE) {
	if !cqe.More() {
		p.acceptArmed = false
		p.inflight--
	}
	switch err := cqe.Err(); {
	case err == nil:
		fd := int(cqe.Res)
		if p.stopping {
			unix.Close(fd)
			break
		}
		p.backoff.Reset()
		// Note: a refusal (Limit.Accept) is one synchronous write(2),
		// not a send on the ring: a new connection's send buffer is
		// empty and the refusal small, so it cannot block, and a
		// connection that is never served needs no completion handling.
		if !p.s.limit.Accept(fd, p.sh) {
			break
		}
		p.cnt.accepts.Inc()
		p.adopt(fd, true)
	case p.stopping && errors.Is(err, unix.ECANCELED):
	case handleset.IsTemporary(err):
		p.sh.AddError(models.ErrAcceptBackoff) // EMFILE, ENFILE, ENOBUFS, ENOMEM
		p.acceptFailed = true
	default:
		p.sh.AddError(models.ErrAccept)
		p.acceptFailed = true
	}
	if !p.acceptArmed && !p.stopping {
		if p.acceptFailed {
			p.acceptFailed = false
			p.startBackoff()
		} else {
			p.startAccept()
		}
	}
}

// handleBackoff re-arms the accept when the backoff timer expires.
func (p *proactor) handleBackoff(cqe *uring.CQE) {
	p.backoffArmed = false
	p.inflight--
	if !p.stopping {
		p.startAccept()
	}
}

// adopt makes fd one of this ring's connections and starts receiving.
// limited is set for an accepted connection, which holds a place under
// the connection cap (an adopted socket does not).
func (p *proactor) adopt(fd int, limited bool) {
	var slot uint32
	if n := len(p.free); n > 0 {
		slot, p.free = p.free[n-1], p.free[:n-1]
	} else {
		slot = uint32(len(p.conns))
		p.conns = append(p.conns, nil)
	}
	p.gen++
	c := &conn{fd: fd, slot: slot, gen: p.gen, sess: connio.NewSession(&p.s.cfg), limited: limited}
	p.conns[slot] = c
	if int(slot) < p.files {
		_, err := p.ring.UpdateFiles(slot, []int32{int32(fd)})
		c.fixed = err == nil
	}
	if !c.fixed {
		p.cnt.plainFiles.Inc()
	}
	p.live++
	p.s.reaper.Track(fd, &c.sess.Timer)
	p.advance(c)
}

// unregister empties connection c's registered-file slot; c is served by
// its descriptor from now on. A failure leaves the socket open until the
// ring closes, so it counts as an I/O error.
func (p *proactor) unregister(c *conn) {
	if _, err := p.ring.UpdateFiles(c.slot, []int32{-1}); err != nil {
		p.sh.AddError(models.ErrIO)
	}
	c.fixed = false
}

// abandon closes everything synchronously after the ring failed: shutting
// the sockets down first makes any operation the kernel still holds fail
// rather than move data.
func (p *proactor) abandon() {
	p.sh.AddError(models.ErrIO)
	for _, c := range p.conns {
		if c != nil {
			p.s.reaper.Untrack(c.fd)
			unix.Shutdown(c.fd, unix.SHUT_RDWR)
			unix.Close(c.fd)
			if c.limited {
				p.s.limit.Release()
			}
			p.sh.AddClosed()
		}
	}
	p.conns, p.live = nil, 0
}

// release closes the ring (unregistering and unmapping the provided
// buffers) and the listening socket.
func (p *proactor) release() {
	if p.ring != nil {
		if err := p.ring.Close(); err != nil && p.err == nil {
			p.err = err
		}
	}
	if p.lfd >= 0 {
		unix.Close(p.lfd)
		p.lfd = -1
	}
}
