package loadgen

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/sys/unix"

	"concbench/wire"
)

// connState is where a connection is in its life.
type connState uint8

const (
	connUp         connState = iota // connected; requests may be sent
	connConnecting                  // a non-blocking connect is in progress
	connDown                        // closed; reconnected at retryAt while the run sends
)

// conn is one connection of a worker. Only its worker touches it.
type conn struct {
	idx       int
	fd        int
	gen       uint32 // bumped at every close, so that stale epoll events are dropped
	state     connState
	writing   bool   // EPOLLOUT is armed: output is pending
	in        []byte // received bytes not yet decoded
	out       []byte // encoded requests not yet written, from outOff
	outOff    int
	fly       ring // requests written (or about to be), oldest first
	unsent    int  // entries at the back of fly not yet handed to write(2)
	dirty     bool // in the worker's dirty list
	retryAt   int64
	backoff   int64
	connStart int64
	skipped   uint64 // id of the request whose response came back out of order
	killing   bool   // chosen to be killed (Config.KillEvery): sends nothing more
	carried   int    // requests enqueued since it opened (Config.ConnRequests)
	fresh     bool   // opened and not yet answered anything (isRefusal)
	// answered are the ids of the last responses matched on the
	// connection (a ring, next at nAnswered), to tell a duplicate
	// response from a wrong id.
	answered  [answeredIDs]uint64
	nAnswered uint8
}

// answeredIDs is how many answered ids a connection remembers: a server
// that sends a response twice sends it soon after the first.
const answeredIDs = 16

// remember records id as answered on c.
func (c *conn) remember(id uint64) {
	c.answered[c.nAnswered%answeredIDs] = id
	c.nAnswered++
}

// wasAnswered reports whether id is one of the last answeredIDs ids
// answered on c.
func (c *conn) wasAnswered(id uint64) bool {
	return id != 0 && slices.Contains(c.answered[:], id)
}

// serverClose handles a response that said Connection: close: the
// requests pipelined behind it were never processed (RFC 9112 section
// 9.6), so they are resent on other connections; this one is reopened.
// recycle closes c, whose last response of Config.ConnRequests it has
// read, as a client without keep-alive does (a FIN), and reopens it at
// once for the next requests.
func (w *worker) recycle(c *conn) {
	w.st.recycled++
	w.closeConn(c, 0)
}

// spent reports whether c has carried its Config.ConnRequests requests.
func (w *worker) spent(c *conn) bool {
	return w.cfg.ConnRequests > 0 && c.carried >= w.cfg.ConnRequests
}

func (w *worker) serverClose(c *conn) {
	w.st.serverCloses++
	w.requeue(c)
	w.closeConn(c, 0)
}

// refused handles a server's refusal of c at its limit (isRefusal): it
// read none of c's requests, so they are all resent on other
// connections, and c is reopened after a backoff, as the server is at
// capacity.
func (w *worker) refused(c *conn) {
	w.st.refused++
	w.requeue(c)
	c.backoff = nextBackoff(c.backoff)
	w.closeConn(c, c.backoff)
}

// isRefusal reports whether w.resp is a server's refusal of c at its
// limit (connio.Refusal: id 0, status unavailable, then the server
// closes) rather than an answer: the first response on c since it was
// opened, and not while priming, which reports a refusal as its error.
// Only a concbench server's ids are trusted (VerifyFull): every request
// id is at least 1.
func (w *worker) isRefusal(c *conn) bool {
	return c.fresh && w.cfg.Verify == VerifyFull && w.resp.ID == 0 && w.resp.Status == wire.StatusUnavailable &&
		(c.fly.n == c.unsent || c.fly.at(0).flags&flagPrime == 0)
}

// requeue moves every request of c to be resent on another connection:
// the written ones as resent (their first attempt lost), priming ones
// dropped.
func (w *worker) requeue(c *conn) {
	written := c.fly.n - c.unsent
	w.written.Add(-int64(written))
	for i := 0; c.fly.n > 0; i++ {
		e := c.fly.pop()
		w.inflight--
		if e.flags&flagPrime != 0 {
			continue
		}
		if i < written { // lost in flight, not merely queued
			if e.flags&(flagMeasured|flagResent) == flagMeasured {
				w.st.resent++
			}
			e.flags |= flagResent
		}
		w.retry.push(e)
	}
	c.unsent = 0
}

// eof handles the server closing c: cleanly if nothing was in flight.
func (w *worker) eof(c *conn) {
	if c.fly.n == 0 {
		w.st.serverCloses++
		w.closeConn(c, 0)
		return
	}
	w.fail(c, errUnexpectedClose)
}

// fail closes c after a failure of kind: its requests in flight fail with
// that kind, those not yet written go back to be sent elsewhere, and c is
// reconnected after a backoff.
func (w *worker) fail(c *conn, kind errKind) {
	written := c.fly.n - c.unsent
	w.written.Add(-int64(written))
	for i := range c.fly.n {
		e := *c.fly.at(i)
		if i >= written {
			if e.flags&flagPrime == 0 {
				w.retry.push(e)
			}
			continue
		}
		w.countFailure(c, &e, kind)
		w.unanswered(&e)
	}
	w.inflight -= c.fly.n
	c.fly.n, c.fly.head, c.unsent = 0, 0, 0
	c.backoff = nextBackoff(c.backoff)
	w.closeConn(c, c.backoff)
}

// countFailure counts the failure of e.
func (w *worker) countFailure(c *conn, e *entry, kind errKind) {
	switch {
	case e.flags&flagPrime != 0:
		if w.primeErr == nil {
			w.primeErr = fmt.Errorf("loadgen: connection %d of worker %d: priming request %d failed: %s", c.idx, w.idx, e.id, kind)
		}
	case e.flags&flagMeasured == 0:
		w.st.warmupErrors++
	default:
		w.st.errs[kind]++
	}
}

// closeConn closes c's socket and schedules its reconnection delay ns from
// now (while the run is still sending).
func (w *worker) closeConn(c *conn, delay int64) {
	if c.state == connConnecting {
		w.connecting--
	}
	unix.Close(c.fd)
	c.fd = -1
	c.gen++
	c.state = connDown
	c.writing = false
	c.in, c.out, c.outOff = c.in[:0], c.out[:0], 0
	c.skipped = 0
	c.killing = false
	c.carried = 0
	c.retryAt = w.clock() + delay
	if w.down == 0 || c.retryAt < w.nextRetry {
		w.nextRetry = c.retryAt
	}
	w.down++
	w.nextTick = min(w.nextTick, c.retryAt)
}

// reconnect starts connecting every down connection whose retry time has
// come.
func (w *worker) reconnect(now int64) {
	w.nextRetry = math.MaxInt64
	for _, c := range w.conns {
		if c.state != connDown {
			continue
		}
		if c.retryAt > now {
			w.nextRetry = min(w.nextRetry, c.retryAt)
			continue
		}
		w.dial(c, now)
	}
}

// dial starts a non-blocking connect for c.
func (w *worker) dial(c *conn, now int64) {
	fd, err := unix.Socket(w.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		w.st.errs[errConnect]++
		w.retryLater(c, now)
		return
	}
	w.down--
	c.fd, c.connStart = fd, now
	enableRxTimestamps(fd)
	switch err := unix.Connect(fd, w.sa); err {
	case nil:
		c.state = connConnecting // up() expects a connect in progress
		w.connecting++
		w.up(c, unix.EPOLL_CTL_ADD)
	case unix.EINPROGRESS:
		c.state = connConnecting
		w.connecting++
		if w.ctl(c, unix.EPOLL_CTL_ADD, unix.EPOLLOUT) != nil {
			w.connectFailed(c)
		}
	default:
		unix.Close(fd)
		c.fd = -1
		w.down++
		w.st.errs[errConnect]++
		w.retryLater(c, now)
	}
}

// retryLater schedules a down connection's next attempt with backoff.
func (w *worker) retryLater(c *conn, now int64) {
	c.backoff = nextBackoff(c.backoff)
	c.retryAt = now + c.backoff
	w.nextRetry = min(w.nextRetry, c.retryAt)
}

// connected finishes c's non-blocking connect.
func (w *worker) connected(c *conn) {
	if soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil || soerr != 0 {
		w.connectFailed(c)
		return
	}
	w.up(c, unix.EPOLL_CTL_MOD)
}

// connectFailed counts a failed connect of c and schedules another after
// a backoff.
func (w *worker) connectFailed(c *conn) {
	w.st.errs[errConnect]++
	c.backoff = nextBackoff(c.backoff)
	w.closeConn(c, c.backoff)
}

// nextBackoff doubles a reconnection backoff within [minBackoff, maxBackoff].
func nextBackoff(b int64) int64 { return min(max(2*b, minBackoff), maxBackoff) }

// up makes a connected c usable: no Nagle, readable interest, and (closed
// loop) its requests.
func (w *worker) up(c *conn, op int) {
	w.connecting--
	c.state = connUp
	unix.SetsockoptInt(c.fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if err := w.ctl(c, op, unix.EPOLLIN); err != nil {
		w.connectFailed(c)
		return
	}
	c.backoff = 0
	c.fresh = true
	w.st.reconnects++
	if w.closed {
		w.fill(c, w.clock())
	}
}
