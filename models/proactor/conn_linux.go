package proactor

import (
	"errors"

	"concbench/internal/uring"
	"concbench/models"
	"concbench/models/internal/connio"

	"golang.org/x/sys/unix"
)

// conn is one connection of a ring: its protocol state (a connio.Session)
// and the state of its asynchronous operations. It is touched only by its
// ring's dispatcher thread.
//
// Buffer ownership:
//
//   - Received bytes arrive in a provided buffer (mmap'd memory of the
//     ring's BufRing). The kernel owns it until the receive's CQE; the
//     receive handler then copies the bytes into sess.In (or spill) and
//     recycles the buffer at once, so it goes back to the kernel at the end
//     of the dispatch batch.
//   - sending is the exact slice handed to the kernel by the send in
//     flight: a view of sess.Out's pending bytes. The kernel reads it until
//     the send's CQE. Meanwhile the protocol code may append responses to
//     Out — connio.Out only ever appends past its pending bytes, and moves
//     or reuses its array only after Advance has consumed all of them — so
//     the bytes in flight are never modified; if an append reallocates,
//     the old array stays alive because sending references it (Go's
//     collector does not move objects, so the address the kernel has stays
//     valid). Advance is called only by the send handler, with the count
//     the kernel reports. At most one send is in flight per connection,
//     which also keeps responses in order.
type conn struct {
	fd        int
	slot, gen uint32
	fixed     bool // registered as file slot (proactor.registerFiles); the descriptor stays open too
	sess      *connio.Session

	inflight  int    // operations whose final CQE is due
	recv      bool   // a receive is armed
	recvStop  bool   // its cancellation was submitted
	arms      int    // receives armed so far
	paused    bool   // receiving is stopped for back-pressure
	sending   []byte // the bytes of the send in flight; nil when none
	spill     []byte // received bytes sess.In could not take yet, in order
	unserved  bool   // new input or drained output: Process may serve more
	eof       bool   // the peer ended its stream
	done      bool   // no further request will be served; close once output is written
	abort     bool   // close now, dropping pending output
	cancelled bool   // all operations were cancelled (abort)
	closing   bool   // the close was submitted
	limited   bool   // accepted: holds a place under the connection cap
	hupArmed  bool   // the hang-up poll is in flight
	hupStop   bool   // its cancellation was submitted
	hungUp    bool   // the hang-up poll fired: receive single-shot from now on
}

// The hang-up poll (hupPoll). A multishot receive can miss its peer's
// reset: on the kernel this project was measured on (6.18), a client that
// sends part of a request and resets the connection at once left about
// one connection in 2 000 with its multishot receive armed and no
// completion ever posted — neither the reset's error nor anything else
// (the conformance suite's AbruptDisconnect, one connection of 20 never
// closed; liburing issue 1549 reports the same kind of lost wake-up for
// an end of stream on AF_UNIX). A single-shot receive does not miss it, and
// neither does a plain poll. So each connection also has a one-shot poll
// for POLLRDHUP (and, implicitly, POLLERR and POLLHUP), armed once with
// its first receive: when it fires, an armed multishot receive is
// cancelled and the connection receives single-shot from then on, which
// reads what is left and then the end of stream or the error. It costs
// one operation per connection, not per request, and a normal close
// cancels it.

// advance is the connection's state machine, run after every completion on
// it: serve what can be served, and initiate what the state calls for — a
// send of pending output, a receive (unless back-pressure, the end of
// input or closing forbid it), a cancellation, or the close once nothing
// is in flight.
func (p *proactor) advance(c *conn) {
	if c.closing {
		return
	}
	if !c.abort {
		p.serve(c)
	}
	if c.abort {
		switch {
		case c.inflight == 0:
			p.startClose(c)
		case !c.cancelled:
			p.cancelAll(c)
		}
		return
	}
	if c.sending == nil && c.sess.Out.Pending() > 0 {
		p.startSend(c)
	}
	full := c.sess.OutputFull()
	wantRecv := !c.done && !c.eof && !full && len(c.spill) == 0
	switch {
	case wantRecv && !c.recv:
		c.paused = false
		p.startRecv(c)
	case c.recv && !c.recvStop && p.multishot && c.hungUp:
		// The multishot receive may have missed the hang-up: replace it
		// with a single-shot one (handleHup).
		p.cancelRecv(c)
	case !wantRecv && c.recv && !c.recvStop && (p.multishot || c.done):
		// A multishot receive would keep delivering: cancel it. A
		// single-shot one is left to complete once (at most one buffer
		// more) unless the connection is done.
		p.cancelRecv(c)
	}
	if full && !c.done && !c.paused && (!c.recv || c.recvStop) {
		// Back-pressure has stopped the receiving: no receive is armed,
		// or the armed one is being cancelled.
		c.paused = true
		p.cnt.pauses.Inc()
	}
	switch {
	case !c.done && !c.hupArmed && !c.hungUp:
		p.startHupPoll(c)
	case c.done && c.hupArmed && !c.hupStop:
		p.cancelHupPoll(c)
	}
	if c.done && c.sending == nil && c.sess.Out.Pending() == 0 && c.inflight == 0 {
		p.startClose(c)
	}
}

// serve runs the protocol over the buffered input: Process serves complete
// requests while output is below its bound, feeding spilled bytes in as
// the input buffer makes room. At the end of input, what remains is a
// truncated request.
func (p *proactor) serve(c *conn) {
	for c.unserved && !c.sess.Closing() && !c.sess.OutputFull() {
		c.sess.Process(p.sh)
		if c.sess.Closing() || c.sess.OutputFull() {
			break // served again when output drains
		}
		if len(c.spill) == 0 {
			c.unserved = false
			break
		}
		n := c.sess.In.Append(c.spill)
		if n == 0 {
			// The input buffer is full and holds no complete request: the
			// codec's limits make this impossible (it reports a too-large
			// request first). Fail the connection rather than stall it.
			p.sh.AddError(models.ErrIO)
			c.abort = true
			return
		}
		c.spill = c.spill[n:]
		if len(c.spill) == 0 {
			c.spill = nil
		}
	}
	switch {
	case c.done:
	case c.sess.Closing():
		c.done = true
	case c.eof && !c.unserved:
		c.sess.Timer.EndOfInput(p.sh, c.sess.In.Buffered())
		c.done = true
	}
}

// handleRecv is the receive Completion Handler: data goes into the
// session's input buffer (the provided buffer is recycled at once), the end
// of the stream or an error is recorded, and a receive that ended is
// re-armed by advance when it should be.
func (p *proactor) handleRecv(c *conn, cqe *uring.CQE) {
	if !cqe.More() {
		c.recv, c.recvStop = false, false
		c.inflight--
	}
	bid, hasBuf := cqe.BufferID()
	switch err := cqe.Err(); {
	case cqe.Res > 0:
		data := p.bufs.Buf(bid)[:cqe.Res]
		p.sh.AddRead(len(data))
		if !c.done && !c.abort {
			if len(c.spill) == 0 {
				n := c.sess.In.Append(data)
				data = data[n:]
			}
			c.spill = append(c.spill, data...)
			c.unserved = true
		}
	case cqe.Res == 0:
		c.eof, c.unserved = true, true
	case errors.Is(err, unix.ENOBUFS):
		p.cnt.buffersExhausted.Inc() // re-armed by advance; the buffers come back this batch
	case errors.Is(err, unix.ECANCELED):
	default:
		p.fail(c, err)
	}
	if hasBuf {
		p.bufs.Recycle(bid)
	}
	p.advance(c)
}

// handleSend is the send Completion Handler: the kernel's count is
// consumed from the output buffer; a partial send leaves the rest pending,
// and advance sends it (with any responses appended meanwhile).
func (p *proactor) handleSend(c *conn, cqe *uring.CQE) {
	c.inflight--
	sent := c.sending
	c.sending = nil
	switch err := cqe.Err(); {
	case c.abort:
	case cqe.Res > 0:
		// Requests held back by the output bound are still marked
		// unserved: advance serves them if this drained enough.
		n := int(cqe.Res)
		c.sess.Out.Advance(n)
		p.sh.AddWritten(n)
		if n < len(sent) {
			p.cnt.partialSends.Inc()
		}
	case err == nil: // 0 bytes of a non-empty send: the socket is unusable
		p.fail(c, unix.EPIPE)
	default:
		p.fail(c, err)
	}
	p.advance(c)
}

// handleHup is the hang-up poll's Completion Handler: the peer ended its
// stream or reset the connection (or the poll was cancelled: the
// connection is done). advance replaces a multishot receive with
// single-shot ones, which see what the multishot one may have missed.
func (p *proactor) handleHup(c *conn, cqe *uring.CQE) {
	c.inflight--
	c.hupArmed, c.hupStop = false, false
	if cqe.Res > 0 {
		c.hungUp = true
	}
	p.advance(c)
}

// handleClose completes a connection: its slot is free for reuse.
func (p *proactor) handleClose(c *conn, cqe *uring.CQE) {
	if cqe.Res < 0 {
		p.sh.AddError(models.ErrIO)
	}
	p.conns[c.slot] = nil
	p.free = append(p.free, c.slot)
	p.live--
	if c.limited {
		p.s.limit.Release()
	}
	p.sh.AddClosed()
}

// fail counts a failed receive or send and aborts the connection.
func (p *proactor) fail(c *conn, err error) {
	if c.abort {
		return
	}
	connio.CountIOError(p.sh, err)
	c.abort = true
}
