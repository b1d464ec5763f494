package frontend

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sync/atomic"

	"concbench/handleset"
	"concbench/internal/futex"
	"concbench/internal/monoclock"
	"concbench/wire"
)

// Waiter roles (waiter.role): a thread waiting for its response is a
// follower until a leader promotes it.
const (
	roleFollower uint32 = iota
	roleLeader
)

// waiter is one client thread's registration for the response it expects
// (the paper's "expecting-response" entry): the upstream id it sent, where
// the response goes, and the futex the thread sleeps on. It belongs to one
// client connection thread and is reused for each of its requests; it is
// heap-allocated and never copied (its Parker is a futex word).
type waiter struct {
	parker futex.Parker
	role   atomic.Uint32 // roleFollower or roleLeader (bound pool only)
	ready  atomic.Bool   // res holds the response: set after res is written

	upID uint64 // the id the request carries upstream
	op   wire.Op
	size int   // the OpWork body size the request asked for
	sent int64 // when it was registered (monoclock): the upstream timeout runs from here
	res  result
}

// result is the response a waiter receives: the back-end's status and
// body, or the front end's own error (failure) when the back end could not
// answer.
type result struct {
	status wire.Status
	// payload is a copy of a body of at most wire.MaxInlineBody bytes; a
	// longer OpWork body, verified byte by byte as it streamed through the
	// link, is pattern bytes long and sent from the shared table.
	payload []byte
	pattern int
	failure string // non-empty: the front end answers status with this reason
}

// link is one upstream TCP connection to the back end, multiplexed by the
// threads that send on it. Its monitor (mu) holds the table of expected
// responses, the leader flag and the follower set of its bound pool. A
// link that breaks stays broken: its slot dials a new one.
//
// Ownership: in, progress and partial are read and written only by the
// link's reader of the moment — the leader (handoff bound, perthread) or
// the reader thread (handoff queue); leadership passes under mu, which
// orders the accesses. The descriptor is closed once the link is broken
// and its last user has left (users: every thread with a request
// registered on it, and a queue reader reading it), so that no thread
// ever reads or writes a descriptor number that a new link has reused.
type link struct {
	fd  int
	srv *Server

	wmu futex.Mutex // serialises writes of whole requests

	mu        futex.Mutex
	pending   map[uint64]*waiter // expected responses by upstream id
	leader    bool               // a thread is leading (bound pool)
	followers []*waiter          // parked followers, most recent last
	broken    error              // set once; every later request fails at once

	down  atomic.Bool  // broken is set (read without mu)
	users atomic.Int32 // threads using the descriptor (see above)

	in       []byte // buffered response bytes [r, w)
	r        int
	w        int
	progress int64 // when bytes last arrived (monoclock)
	partial  bool  // a response is being read whose waiter left the table
}

// linkBuffer is a link's input buffer: a response header and an inline
// body fit at once; a longer body streams through it.
const linkBuffer = 16 << 10

func newLink(fd int, s *Server) *link {
	return &link{fd: fd, srv: s, pending: make(map[uint64]*waiter), in: make([]byte, linkBuffer)}
}

// errBackendClosed is the failure of a link whose back end closed it.
var errBackendClosed = errors.New("the back end closed the connection")

// register records w as expecting the response to upID, before the
// request is sent (so that a fast response always finds its thread), and
// makes its thread a user of the link until it leaves. It reports the
// link's failure instead if it is broken.
func (l *link) register(w *waiter) error {
	w.ready.Store(false)
	w.role.Store(roleFollower)
	w.res = result{payload: w.res.payload[:0]}
	w.sent = monoclock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken != nil {
		return l.broken
	}
	l.pending[w.upID] = w
	l.users.Add(1)
	return nil
}

// acquire makes a queue reader a user of the link, unless it is broken.
func (l *link) acquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken != nil {
		return false
	}
	l.users.Add(1)
	return true
}

// leave ends a user's use of the link (register, acquire); the last user
// of a broken link closes its descriptor.
func (l *link) leave() {
	if l.users.Add(-1) == 0 && l.down.Load() {
		l.srv.dropLink(l)
	}
}

// send writes one encoded request whole. A failed write breaks the link
// (every registered waiter, this one included, gets the failure), and so
// does one that makes no progress for the upstream timeout (the socket's
// send timeout: a back end that reads nothing).
func (l *link) send(b []byte) {
	l.wmu.Lock()
	var err error
	for len(b) > 0 && err == nil {
		var n int
		n, err = handleset.Write(l.fd, b)
		b = b[n:]
	}
	l.wmu.Unlock()
	if handleset.IsWouldBlock(err) {
		err = fmt.Errorf("the back end read nothing of a request within the %w (%v, --upstream-timeout)", errUpstreamTimeout, l.srv.opts.UpstreamTimeout)
	}
	if err != nil {
		l.fail(err)
	}
}

// fail breaks the link: it records err, answers every registered waiter
// with it and wakes them, and shuts the socket down so that a thread
// blocked reading it (the leader, the reader) wakes too. Idempotent.
func (l *link) fail(err error) {
	l.mu.Lock()
	if l.broken == nil {
		l.broken = err
		l.down.Store(true)
		if errors.Is(err, errUpstreamTimeout) {
			l.srv.upstreamTimeouts.Add(1)
		}
	}
	// Answered and marked ready under mu, as the follower set is
	// emptied, for the reason handOff gives: a thread joining after the
	// set is emptied sees its response and does not join it.
	var failed []*waiter
	for id, w := range l.pending {
		delete(l.pending, id)
		w.res.failure = "front end: back end connection failed: " + err.Error()
		w.res.status = wire.StatusUnavailable
		l.srv.upstreamFailed.Add(1)
		w.ready.Store(true)
		failed = append(failed, w)
	}
	l.followers = l.followers[:0]
	l.mu.Unlock()
	_ = handleset.Shutdown(l.fd) // ENOTCONN and the like: it is down already
	for _, w := range failed {
		w.parker.Unpark()
	}
}

// fill reads more bytes into the input buffer, moving what is buffered to
// its front first. It returns errBackendClosed at the end of the stream,
// and the upstream timeout's failure (overdue) when a response is due and
// none has come. The socket's receive timeout (dial) makes a read that
// gets nothing return every check interval, for overdue to look.
func (l *link) fill() error {
	if l.r > 0 {
		l.w = copy(l.in, l.in[l.r:l.w])
		l.r = 0
	}
	for {
		n, err := handleset.Read(l.fd, l.in[l.w:])
		switch {
		case handleset.IsWouldBlock(err):
			if err := l.overdue(); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		case n == 0:
			return errBackendClosed
		}
		l.w += n
		l.progress = monoclock.Now()
		return nil
	}
}

// errUpstreamTimeout is wrapped by the failure of a link on which the
// back end answered nothing for the upstream timeout while a response
// was due, or read nothing of a request.
var errUpstreamTimeout = errors.New("upstream timeout")

// overdue returns the upstream timeout's failure if the back end has sent
// nothing for the timeout while a response was due: since the oldest
// registered request was sent or since bytes last arrived, whichever is
// later (the back end answers a link's requests in order, so each gets
// the whole timeout once the one before it is answered); since bytes last
// arrived, while a response is being read. Nil otherwise. The reader
// calls it.
func (l *link) overdue() error {
	since := l.progress
	if !l.partial {
		oldest := int64(math.MaxInt64)
		l.mu.Lock()
		for _, w := range l.pending {
			oldest = min(oldest, w.sent)
		}
		l.mu.Unlock()
		if oldest == math.MaxInt64 {
			return nil // nothing due
		}
		since = max(since, oldest)
	}
	if t := l.srv.opts.UpstreamTimeout; monoclock.Now()-since >= int64(t) {
		return fmt.Errorf("no response within the %w (%v, --upstream-timeout)", errUpstreamTimeout, t)
	}
	return nil
}

// need reads until n bytes (at most len(l.in)) are buffered.
func (l *link) need(n int) error {
	for l.w-l.r < n {
		if err := l.fill(); err != nil {
			return err
		}
	}
	return nil
}

// Binary response frame layout (package wire's documentation): must match
// wire's encoder.
const (
	frameHeader = 24
	offStatus   = 3
	offID       = 8
	offLen      = 16
	offSum      = 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// readOne reads one response from the back end and fills in the result of
// the waiter that registered its id, which it removes from the table and
// returns; the caller delivers it (sets ready, wakes its thread). An error
// breaks the link: an I/O failure, the end of the stream, or a frame that
// is not a response the front end expects (after which the stream cannot
// be trusted). With an error, a non-nil waiter is the one whose response
// was cut off: its result holds the failure, and it is delivered too.
func (l *link) readOne() (*waiter, error) {
	if err := l.need(frameHeader); err != nil {
		return nil, err
	}
	h := l.in[l.r : l.r+frameHeader]
	if h[0] != 'C' || h[1] != 'R' || h[2] != 1 || binary.LittleEndian.Uint32(h[4:8]) != 0 {
		return nil, fmt.Errorf("malformed response header from the back end (is it serving --protocol binary?)")
	}
	id := binary.LittleEndian.Uint64(h[offID:])
	n := int(binary.LittleEndian.Uint32(h[offLen:]))
	sum := binary.LittleEndian.Uint32(h[offSum:])
	status := wire.Status(h[offStatus])
	if n > l.srv.upstream.Limits().MaxPayload {
		return nil, fmt.Errorf("response of %d bytes from the back end, over the limit", n)
	}
	l.mu.Lock()
	w := l.pending[id]
	delete(l.pending, id)
	l.mu.Unlock()
	if w == nil {
		return nil, fmt.Errorf("response with id %d from the back end, which no thread expects", id)
	}
	l.partial = true
	defer func() { l.partial = false }()
	res := &w.res
	if n <= wire.MaxInlineBody {
		if err := l.need(frameHeader + n); err != nil {
			l.deliverFailure(w, err)
			return w, err
		}
		var resp wire.Response
		k, err := l.srv.upstream.DecodeResponse(l.in[l.r:l.w], &resp)
		if err != nil || k != frameHeader+n {
			err = fmt.Errorf("malformed response from the back end: %v", err)
			l.deliverFailure(w, err)
			return w, err
		}
		l.r += k
		if wire.Checksum(id, resp.Payload) != sum {
			res.status, res.failure = wire.StatusInternal, "front end: back end response failed its checksum"
			l.srv.upstreamInvalid.Add(1)
		} else {
			res.status = resp.Status
			res.payload = append(res.payload, resp.Payload...)
		}
		return w, nil
	}
	// A long body streams through the buffer. The front end relays it only
	// if it is the OpWork body the request asked for, verified byte by byte
	// and by checksum, and sends it on from the shared table: a connection
	// never holds a long body (models doc, "Memory per connection").
	l.r += frameHeader
	relay := status == wire.StatusOK && w.op == wire.OpWork && w.size == n
	crc := wire.Checksum(id, nil)
	for off := 0; off < n; {
		if l.r == l.w {
			if err := l.fill(); err != nil {
				l.deliverFailure(w, err)
				return w, err
			}
		}
		chunk := l.in[l.r:min(l.w, l.r+n-off)]
		if relay {
			relay = string(chunk) == string(wire.BodyWindow(id, off, len(chunk)))
			crc = crc32.Update(crc, castagnoli, chunk)
		}
		off += len(chunk)
		l.r += len(chunk)
	}
	if relay && crc == sum {
		res.status, res.pattern = wire.StatusOK, n
	} else {
		res.status = wire.StatusInternal
		res.failure = fmt.Sprintf("front end: a back end response of %d bytes is not the body the request asked for", n)
		l.srv.upstreamInvalid.Add(1)
	}
	return w, nil
}

// deliverFailure sets w's result, whose response was cut off, to err; the
// caller delivers it and breaks the link for everyone else.
func (l *link) deliverFailure(w *waiter, err error) {
	w.res.status = wire.StatusUnavailable
	w.res.failure = "front end: back end connection failed: " + err.Error()
	l.srv.upstreamFailed.Add(1)
}
