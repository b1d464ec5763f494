package halfsynchalfreactive

import (
	"sync/atomic"
	"unsafe"

	"concbench/handleset"
	"concbench/internal/futex"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/wire"
)

// thread is what a model thread (the reactor or a worker) brings to the
// operations it performs on connections: its counters, and the request
// objects it has released and will hand back to the pool.
type thread struct {
	sh     *models.Shard
	done   []*request    // released request objects (pooled variant)
	parked atomic.Uint64 // responses this thread parked in a reorder ring (one writer)
	slice  connio.Slice  // the thread's time slice as the Go runtime sees it
}

// maxDone bounds thread.done; further released objects go to the garbage
// collector.
const maxDone = 2 * models.MaxInFlight

// A request object in flight fits the record the models package's memory
// bound allows: this fails to compile if it outgrows models.InFlightRecord.
const _ = models.InFlightRecord - unsafe.Sizeof(request{})

// conn is one connection: the reactor's input side and the output side that
// workers and the reactor share. See the package documentation for the
// ordering and back-pressure protocol.
type conn struct {
	fd int

	// The input side, owned by the reactor thread alone.
	in      connio.In
	stalled bool         // dispatch stopped at a bound with input still buffered
	timer   connio.Timer // the header timeout's clock (set by dispatch)

	// ring holds the requests in flight: pushed by the reactor when it
	// dispatches one; a response completed out of order parks in its slot
	// until its turn; the slots, the order and the retiring of requests
	// are guarded by mu (see connio.Ring).
	ring       connio.Ring[*request]
	outPending atomic.Int64 // out.Pending(), stored with mu held by every flush and break (emit is always followed by a flush)
	broken     atomic.Bool  // set with mu held: I/O failed, responses are dropped

	// The output side, guarded by mu.
	mu        futex.Mutex
	out       connio.Out
	inputDone bool             // no request will be dispatched any more (written by the reactor)
	closed    bool             // the reactor closed the descriptor
	armed     handleset.Events // the interest the reactor last set (written by the reactor)
	notified  bool             // queued on the reactor's notification list

	srv *Server // for the codec and the pool
}

// admits reports whether the connection may have one more request
// dispatched: the admission rule of every model that hands requests off
// (connio.Ring.Admits), on the output pending as last stored. The reactor
// calls it without mu (a worker may only lower the counts meanwhile);
// desired calls it with mu held.
func (c *conn) admits() bool { return c.ring.Admits(c.outPending.Load()) }

// desired returns the interest the connection's handle should be armed
// with, or closeNow when the connection is finished and no thread holds a
// reference to it any more (nothing in flight). mu must be held.
//
// Readable (level-triggered) is wanted while requests may be dispatched;
// Writable while output waits for the socket, one-shot: a worker may drain
// the output before the reactor sees the event, and a one-shot handle then
// reports at most one needless event.
func (c *conn) desired() (ev handleset.Events, closeNow bool) {
	if c.broken.Load() {
		return 0, c.ring.InFlight() == 0
	}
	pending := c.out.Pending() > 0
	if c.inputDone {
		if !pending && c.ring.InFlight() == 0 {
			return 0, true
		}
	} else if c.admits() {
		ev = handleset.Readable
	}
	if pending {
		ev |= handleset.Writable | handleset.OneShot
	}
	return ev, false
}

// flushLocked writes pending output until it is all written or the socket
// would block; a failed write breaks the connection. mu must be held: it is
// what serializes writers (workers and the reactor) on the socket, and what
// keeps the descriptor open (the reactor closes it only with mu held and
// nothing in flight).
func (c *conn) flushLocked(t *thread) {
	if err := c.out.Flush(c.fd, t.sh); err != nil {
		c.breakLocked(t, err)
		return
	}
	c.outPending.Store(int64(c.out.Pending()))
}

// breakLocked records a failed read or write: the error is counted, pending
// output and parked responses are dropped, and so will be every response
// still to come. mu must be held.
func (c *conn) breakLocked(t *thread, err error) {
	connio.CountIOError(t.sh, err)
	c.broken.Store(true)
	c.out = connio.Out{}
	c.outPending.Store(0)
	c.ring.Each(func(slot **request) {
		if r := *slot; r != nil {
			*slot = nil
			c.drop(t, r)
		}
	})
}

// drop retires r, whose response will never be written (the connection
// broke), and releases it. mu must be held.
func (c *conn) drop(t *thread, r *request) {
	c.ring.Drop(r.est)
	c.srv.release(t, r)
}

// complete delivers the response to r (resp, computed by a worker; nil for
// an error response the reactor built) in request order: if it is the next
// response due, it and every consecutive response already parked are
// encoded into out and written; otherwise it is parked in the reorder ring.
// It reports whether the reactor must be woken to act on the connection
// (arm Writable, resume reading, or close it); only a worker asks for that
// (notify), the reactor reconciles on its own.
func (c *conn) complete(t *thread, r *request, resp *wire.Response, notify bool) (wake bool) {
	c.mu.Lock()
	switch {
	case c.broken.Load():
		c.drop(t, r)
	case r.seq != c.ring.Next():
		if resp != nil {
			r.park(resp)
		}
		slot := c.ring.Slot(r.seq)
		if *slot != nil {
			panic("halfsynchalfreactive: reorder slot in use; in-flight bound violated")
		}
		*slot = r
		t.parked.Store(t.parked.Load() + 1)
	default:
		c.emit(t, r, resp)
		for {
			slot := c.ring.Slot(c.ring.Next())
			next := *slot
			if next == nil {
				break
			}
			*slot = nil
			c.emit(t, next, &next.resp)
		}
		c.flushLocked(t)
	}
	if notify && !c.notified {
		want, closeNow := c.desired()
		// Only what the reactor must add matters: a Readable or Writable
		// it has not armed, or the close. An interest no longer needed is
		// dropped by the reactor the next time it handles the connection.
		if closeNow || want&^c.armed&(handleset.Readable|handleset.Writable) != 0 {
			c.notified = true
			wake = true
		}
	}
	c.mu.Unlock()
	return wake
}

// emit encodes r's response (resp; for an error response r.err) into out,
// retires r from the ring and releases it. r must be the next response
// due. mu must be held.
func (c *conn) emit(t *thread, r *request, resp *wire.Response) {
	codec := c.srv.cfg.Codec
	if r.err != nil {
		c.out.AppendError(codec, r.err)
	} else {
		c.out.AppendResponse(codec, resp)
	}
	c.ring.Pop(r.est)
	c.srv.release(t, r)
}
